"""Static vs nondet vs dynamic oracle on the same data (cf. Goldberg et al. 2014, Table 1).

Every run trains the labelled greedy perceptron on the optimally
projectivized training trees (so only the oracle differs) and scores the
test set without punctuation; the table is the mean over seeds.

Usage:
  python docs/experiments/oracle_comparison.py --data DIR --lang el \
      --systems arc_standard arc_eager --epochs 10 --seeds 1 2 --jobs 2 --out FILE.md
"""
import argparse
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from nonprojective_training import LANGUAGES

ORACLES = ("static", "nondet", "dynamic")


def one_run(job):
    from semiparse.train import Trainer, evaluate_model, read_trees

    data, lang, system, oracle, seed, epochs = job
    folder, prefix = LANGUAGES[lang]
    train = read_trees(Path(data) / "ud" / folder / f"{prefix}-ud-train.conllu")
    test = read_trees(Path(data) / "ud" / folder / f"{prefix}-ud-test.conllu")
    model = Trainer(system=system, oracle=oracle, epochs=epochs, seed=seed, progress=False).run(
        train, nonproj="projectivize")
    return (system, oracle, evaluate_model(model, test))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--lang", default="el", choices=list(LANGUAGES))
    p.add_argument("--systems", nargs="+", default=["arc_standard"])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    jobs = [(args.data, args.lang, s, o, seed, args.epochs)
            for seed in args.seeds for s in args.systems for o in ORACLES]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one_run, jobs))
    lines = [
        f"# Static vs nondet vs dynamic oracle ({args.lang}, cf. Goldberg et al. 2014, Table 1)", "",
        "Command: `python " + " ".join(sys.argv if argv is None else ["oracle_comparison.py"] + argv) + "`",
        "", "Greedy averaged perceptron, projectivized training trees, test set without punctuation, "
        f"mean over seeds {' '.join(map(str, args.seeds))}.", "",
        "| system | oracle | UAS | LAS |", "|---|---|---|---|",
    ]
    for system in args.systems:
        for oracle in ORACLES:
            rows = [r for s, o, r in results if s == system and o == oracle]
            lines.append(f"| {system} | {oracle} | {statistics.mean(r['uas_nopunct'] for r in rows):.2f} | "
                         f"{statistics.mean(r['las_nopunct'] for r in rows):.2f} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

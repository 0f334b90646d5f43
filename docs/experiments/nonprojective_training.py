"""Seed 002 Table 7 with our parser: does training on all trees help?

Trains the labelled arc-standard greedy perceptron on the shared UD Greek,
Gothic and Hungarian training sets (42,326 / 35,024 / 20,166 tokens, the
sizes of Nederhof 2019, Table 7) in three set-ups, each with several seeds, scores
the test sets and writes a Markdown table (mean and standard deviation over
seeds) plus the raw numbers as JSON:

  subset+static      projective training trees only, static oracle
  proj+dynamic       all trees, optimally projectivized, dynamic oracle
  all+nonproj        all trees as they are, dynamic (non-projective) oracle

Usage:
  python docs/experiments/nonprojective_training.py --data DIR --epochs N \
      --seeds 1 2 3 --jobs 2 --out docs/experiments/results
"""
import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

LANGUAGES = {
    "el": ("UD_Greek-GDT", "el_gdt"),
    "got": ("UD_Gothic-PROIEL", "got_proiel"),
    "hu": ("UD_Hungarian-Szeged", "hu_szeged"),
}
SETUPS = {
    "subset+static": dict(nonproj="skip", oracle="static"),
    "proj+dynamic": dict(nonproj="projectivize", oracle="dynamic"),
    "all+nonproj": dict(nonproj="oracle", oracle="dynamic"),
}


def one_run(job):
    from semiparse.train import Trainer, evaluate_model, read_trees

    data, lang, setup, seed, epochs, system = job
    folder, prefix = LANGUAGES[lang]
    train = read_trees(Path(data) / "ud" / folder / f"{prefix}-ud-train.conllu")
    test = read_trees(Path(data) / "ud" / folder / f"{prefix}-ud-test.conllu")
    start = time.time()
    trainer = Trainer(system=system, trainer="perceptron", epochs=epochs, seed=seed,
                      progress=False, oracle=SETUPS[setup]["oracle"])
    model = trainer.run(train, nonproj=SETUPS[setup]["nonproj"])
    seconds = time.time() - start
    scores = evaluate_model(model, test)
    return {"lang": lang, "setup": setup, "seed": seed, "epochs": epochs, "system": system,
            "train_tokens": model.meta["train_tokens"], "train_seconds": round(seconds, 1), **scores}


def table(results, command):
    lines = [
        "# Training on non-projective treebanks (cf. Nederhof 2019, Table 7)",
        "",
        f"Command: `{command}`",
        "",
        "Labelled arc-standard, greedy averaged perceptron, test sets, scores without "
        "punctuation (UPOS PUNCT), mean ± standard deviation over seeds "
        f"({', '.join(str(s) for s in sorted({r['seed'] for r in results}))}).",
        "`train tokens`: tokens actually trained on.",
        "",
        "| language | set-up | train tokens | LAS | UAS | train s/run |",
        "|---|---|---|---|---|---|",
    ]
    for lang in LANGUAGES:
        for setup in SETUPS:
            rows = [r for r in results if r["lang"] == lang and r["setup"] == setup]
            if not rows:
                continue
            las = [r["las_nopunct"] for r in rows]
            uas = [r["uas_nopunct"] for r in rows]
            sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
            lines.append(
                f"| {lang} | {setup} | {rows[0]['train_tokens']:,} | "
                f"{statistics.mean(las):.2f} ± {sd(las):.2f} | {statistics.mean(uas):.2f} ± {sd(uas):.2f} | "
                f"{statistics.mean(r['train_seconds'] for r in rows):.0f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="shared data directory (holds ud/)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=list(LANGUAGES))
    p.add_argument("--system", default="arc_standard")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="docs/experiments/results")
    args = p.parse_args(argv)
    command = "python docs/experiments/nonprojective_training.py " + " ".join(argv or sys.argv[1:])
    # seed-major order: an interrupted run still has complete tables for the first seeds
    jobs = [(args.data, lang, setup, seed, args.epochs, args.system)
            for seed in args.seeds for lang in args.languages for setup in SETUPS]
    out = Path(args.out)
    results = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(one_run, jobs):
            results.append(result)
            print(json.dumps(result), flush=True)
            out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
            out.with_suffix(".md").write_text(table(results, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())

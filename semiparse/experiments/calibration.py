"""Calibration of a probabilistic model (cf. Goldberg 2013, Table 4).

An RDA model trained with the dynamic oracle (exploration by sampling from
the second epoch on) on projectivized trees; on the test set (greedy
decoding) every decision is binned by the probability the model gave it,
with the share of decisions the dynamic oracle rates correct (optimal move
and, for a gold arc, the gold label).
"""
import tempfile
from pathlib import Path

from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, mean_sd, read_ud, select, ud_files

TITLE = "Calibration of a probabilistic model (cf. Goldberg 2013, Table 4)"
SUMMARY = "probability bins of an RDA model's test decisions and their accuracy (Goldberg 2013, Table 4)"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 3, "seeds": [1], "languages": ["el"], "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS


files = ud_files


def jobs(settings):
    return [(settings["data"], lang, system, seed, settings["epochs"], settings["limit"])
            for seed in settings["seeds"] for lang in settings["languages"] for system in settings["systems"]]


def run_job(job):
    """Train, parse the test set recording probabilities (as ``semiparse parse
    --probabilities`` writes them), and bin the decisions."""
    from semiparse.perceptron import RDAOptions, Trainer, attachment_scores, calibration, read_trees
    from semiparse.perceptron.calibration import steps_metadata

    data, lang, system, seed, epochs, limit = job
    train, test = read_ud(data, lang, "train", limit), read_ud(data, lang, "test", limit)
    model = Trainer(system, "dynamic", RDAOptions(), epochs, seed, progress=False).run(
        train, nonproj="projectivize")
    with tempfile.TemporaryDirectory() as tmp:
        parsed = Path(tmp) / "parsed.conllu"
        with open(parsed, "wb") as out:
            for tree in test:
                heads, labels, steps = model.parse(tree, with_probabilities=True)
                out.write(tree.source.relabeled(heads, labels, steps_metadata(model.system, steps)))
        output = read_trees(parsed)
    scores = attachment_scores(test, [(t.heads, t.labels) for t in output])
    bins = [dict(zip(("low", "high", "count", "correct"), row)) for row in calibration(test, output)]
    return {"lang": lang, "system": system, "seed": seed, "epochs": epochs,
            "nonzero_parameters": int(model.n_nonzero()), **scores, "calibration": bins}


def table(results, settings):
    lines = [
        "`--trainer rda --oracle dynamic --nonproj projectivize` (rho = 0.01, alpha = 1, "
        "lambda = 1/(20 |D|)), greedy decoding of the test set.  Scores without punctuation, "
        "mean ± standard deviation over seeds; bin counts summed over seeds.", "",
    ]
    for lang in settings["languages"]:
        for system in settings["systems"]:
            rows = select(results, lang=lang, system=system)
            if not rows:
                continue
            lines += [f"## {lang}, {system}", "",
                      f"UAS {mean_sd([r['uas_nopunct'] for r in rows])}, "
                      f"LAS {mean_sd([r['las_nopunct'] for r in rows])} ({len(rows)} seed(s))", "",
                      "| probability | decisions | correct |", "|---|---|---|"]
            for i, b in enumerate(rows[0]["calibration"]):
                count = sum(r["calibration"][i]["count"] for r in rows)
                ok = sum(r["calibration"][i]["correct"] for r in rows)
                share = f"{100.0 * ok / count:.1f}%" if count else "-"
                lines.append(f"| {b['low']:.1f}-{b['high']:.1f} | {count} | {share} |")
            lines.append("")
    return lines

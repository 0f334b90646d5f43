"""Does training on all trees help? (the set-up of Nederhof 2019, Table 7).

The labelled arc-standard greedy averaged perceptron on the shared UD Greek,
Gothic and Hungarian training sets (42,326 / 35,024 / 20,166 tokens, the
sizes of the paper's) in three set-ups, scored on the test sets without
punctuation, mean and standard deviation over seeds:

  subset+static      projective training trees only, static oracle
  proj+dynamic       all trees, optimally projectivized, dynamic oracle
  all+nonproj        all trees as they are, dynamic (non-projective) oracle
"""
from semiparse.experiments.common import (GOLD_UPOS, LANGUAGES, cpu_seconds, job_fields, markdown_table,
                                          mean_sd, read_parts, table_rows, timed, ud_files, ud_jobs)

TITLE = "Training on non-projective treebanks (cf. Nederhof 2019, Table 7)"
SUMMARY = "subset+static vs projectivized+dynamic vs all trees+non-projective oracle (Nederhof 2019, Table 7)"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
SETUPS = {
    "subset+static": dict(nonproj="skip", oracle="static"),
    "proj+dynamic": dict(nonproj="projectivize", oracle="dynamic"),
    "all+nonproj": dict(nonproj="oracle", oracle="dynamic"),
}


files = ud_files


def jobs(settings):
    return ud_jobs(settings, SETUPS)


def run_job(job):
    from semiparse.perceptron import Trainer, evaluate_model

    data, lang, system, setup, seed, epochs, limit = job
    train, test = read_parts(data, lang, limit)
    model, seconds = timed(lambda: Trainer(
        system=system, epochs=epochs, seed=seed, progress=False,
        oracle=SETUPS[setup]["oracle"]).run(train, nonproj=SETUPS[setup]["nonproj"]))
    return {**job_fields(job, "setup"), "train_tokens": model.meta["train_tokens"],
            "train_cpu_seconds": seconds, **evaluate_model(model, test)}


def table(results, settings):
    return markdown_table(
        "Greedy averaged perceptron, labelled transitions, test sets, scores without punctuation "
        "(UPOS PUNCT), mean ± standard deviation over seeds.  `train tokens`: tokens actually "
        "trained on.",
        ["language", "system", "set-up", "train tokens", "LAS", "UAS", "train CPU s/run"],
        [[lang, system, setup, f"{runs[0]['train_tokens']:,}",
          mean_sd([r["las_nopunct"] for r in runs]), mean_sd([r["uas_nopunct"] for r in runs]),
          cpu_seconds(runs)]
         for lang, system, setup, runs in table_rows(results, settings, "setup", SETUPS)])

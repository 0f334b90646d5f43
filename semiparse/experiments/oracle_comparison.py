"""Static vs nondet vs dynamic oracle on the same data (cf. Goldberg, Sartorio and Satta 2014, Table 1).

Every run trains the labelled greedy perceptron on the optimally
projectivized training trees (so only the oracle differs) and scores the
test set without punctuation; the table is the mean over seeds.
"""
from semiparse.experiments.common import (GOLD_UPOS, LANGUAGES, job_fields, markdown_table, mean_sd,
                                          read_parts, table_rows, ud_files, ud_jobs)

TITLE = "Static vs nondet vs dynamic oracle (cf. Goldberg, Sartorio and Satta 2014, Table 1)"
SUMMARY = "static vs nondet vs dynamic oracle, greedy perceptron on projectivized trees"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")
DEFAULTS = {"epochs": 10, "seeds": [1], "languages": ["el"], "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
ORACLES = ("static", "nondet", "dynamic")


files = ud_files


def jobs(settings, oracles=ORACLES):
    return ud_jobs(settings, oracles)


def run_job(job):
    from semiparse.perceptron import Trainer, evaluate_model

    data, lang, system, oracle, seed, epochs, limit = job
    train, test = read_parts(data, lang, limit)
    model = Trainer(system=system, oracle=oracle, epochs=epochs, seed=seed, progress=False).run(
        train, nonproj="projectivize")
    return {**job_fields(job, "oracle"), **evaluate_model(model, test)}


def table(results, settings, oracles=ORACLES):
    return markdown_table(
        "Greedy averaged perceptron, projectivized training trees, test set without punctuation, "
        "mean ± standard deviation over seeds.",
        ["language", "system", "oracle", "UAS", "LAS"],
        [[lang, system, oracle, mean_sd([r["uas_nopunct"] for r in runs]),
          mean_sd([r["las_nopunct"] for r in runs])]
         for lang, system, oracle, runs in table_rows(results, settings, "oracle", oracles)])

"""Static vs non-deterministic vs dynamic oracle with exploration, neural parser
(cf. Goldberg, Sartorio and Satta 2014, Table 1).

The runs of ``oracle-comparison`` with the BiLSTM parser of
``semiparse.neural`` in place of the perceptron: all training trees
optimally projectivized (so only the oracle differs), the epoch with the
best dev LAS kept, test LAS/UAS by the CoNLL 2018 scorer and without
punctuation.  ``static`` follows the canonical transition sequence,
``nondet`` counts every optimal transition as correct and follows the
model's best optimal one, ``dynamic`` also follows the model's own wrong
transitions (probability 0.9, from the second epoch on).  LR-spine is not
offered: its transitions are families (``left_arc_K``), which the neural
parser's fixed output layer refuses.
"""
from semiparse.experiments.common import GOLD_UPOS, markdown_table, table_rows, ud_jobs
from semiparse.experiments.neural_common import (SCORE_COLUMNS, best_epochs, job_result, score_cells,
                                                 ud_files_with_dev)
from semiparse.experiments.oracle_comparison import ORACLES

TITLE = "Static vs nondet vs dynamic oracle, neural parser (cf. Goldberg, Sartorio and Satta 2014, Table 1)"
SUMMARY = "neural parser: static vs nondet vs dynamic oracle with exploration, projectivized trees (GSS 2014, Table 1)"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
LANGUAGES = ("el", "got", "hu")
DEFAULTS = {"epochs": 10, "seeds": [1], "languages": ["el"], "systems": ["arc_standard", "arc_hybrid"]}
POS_TAGS = GOLD_UPOS

files = ud_files_with_dev


def jobs(settings):
    return ud_jobs(settings, ORACLES)


def run_job(job, device="cpu"):
    return job_result(job, "oracle", oracle=job[3], nonproj="projectivize", device=device)


def table(results, settings):
    return markdown_table(
        "BiLSTM parser (`semiparse.neural`, default network), projectivized training trees, the "
        "epoch with the best dev LAS kept, test sets, LAS/UAS by the CoNLL 2018 scorer and without "
        "punctuation, mean ± standard deviation over seeds.",
        ["language", "system", "oracle", *SCORE_COLUMNS, "best epoch"],
        [[lang, system, oracle, *score_cells(runs), best_epochs(runs)]
         for lang, system, oracle, runs in table_rows(results, settings, "oracle", ORACLES)])

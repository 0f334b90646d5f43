"""Transition systems side by side, neural parser.

Arc-standard, arc-hybrid and arc-eager (shipped) and arc-standard with the
root at the end of the buffer (Ballesteros and Nivre 2013), a system
declared in a TOML file (the shipped ``systems/arc_standard_root_end.toml``,
read from its file as a user's system file is), each trained with the BiLSTM parser of
``semiparse.neural`` on all training trees with the dynamic
(non-projective) oracle, the epoch with the best dev LAS kept; test LAS/UAS
by the CoNLL 2018 scorer and without punctuation.  Every system's feature
positions are its default (``semiparse.neural.features``).
"""
from semiparse.experiments.common import GOLD_UPOS, cpu_seconds, markdown_table, table_rows, ud_jobs
from semiparse.experiments.neural_common import (SCORE_COLUMNS, SYSTEM_FILES, best_epochs, job_result,
                                                 score_cells, ud_files_with_dev)

TITLE = "Transition systems side by side, neural parser"
SUMMARY = "neural parser: arc-standard, arc-hybrid, arc-eager and a declared root-at-end arc-standard"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", *SYSTEM_FILES)
LANGUAGES = ("el", "got", "hu")
DEFAULTS = {"epochs": 10, "seeds": [1], "languages": ["el"], "systems": list(SYSTEMS)}
POS_TAGS = GOLD_UPOS
SETTINGS = dict(oracle="dynamic", nonproj="oracle")

files = ud_files_with_dev


def jobs(settings):
    return ud_jobs(settings, ["all+nonproj"])


def run_job(job, device="cpu"):
    return job_result(job, None, **SETTINGS, device=device)


def table(results, settings):
    return markdown_table(
        "BiLSTM parser (`semiparse.neural`, default network), all training trees, dynamic "
        "(non-projective) oracle with exploration, the epoch with the best dev LAS kept, test sets, "
        "LAS/UAS by the CoNLL 2018 scorer and without punctuation, mean ± standard deviation over "
        "seeds.  `multi-root`: test sentences parsed with several words attached to the root (the "
        "official scorer refuses such a file; its LAS/UAS are then counted here the scorer's way, "
        "`semiparse.experiments.neural_common.score_test_set`).  "
        "`arc_standard_root_end`: `systems/arc_standard_root_end.toml`, read from its file as a user's system is.",
        ["language", "system", *SCORE_COLUMNS, "multi-root", "best epoch", "train CPU s/run"],
        [[lang, system, *score_cells(runs), " ".join(str(r["multiroot_sentences"]) for r in runs),
          best_epochs(runs), cpu_seconds(runs)]
         for lang, system, _, runs in table_rows(results, settings)])

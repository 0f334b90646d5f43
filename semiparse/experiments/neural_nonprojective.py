"""Does training on all trees help the neural parser? (the set-up of Nederhof 2019, Table 7).

The three set-ups of ``nonprojective-training`` (subset+static, proj+dynamic
and all+nonproj: :mod:`semiparse.experiments.nonprojective_training`) with
the BiLSTM parser of ``semiparse.neural`` in place of the perceptron:
labelled arc-standard on the shared UD Greek, Gothic and Hungarian training
sets, the epoch with the best dev LAS kept, test LAS/UAS by the CoNLL 2018
scorer and without punctuation.
"""
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, cpu_seconds, markdown_table, table_rows, ud_jobs
from semiparse.experiments.neural_common import SCORE_COLUMNS, job_result, score_cells, ud_files_with_dev
from semiparse.experiments.nonprojective_training import SETUPS as PERCEPTRON_SETUPS

TITLE = "Training the neural parser on non-projective treebanks (cf. Nederhof 2019, Table 7)"
SUMMARY = "neural parser: subset+static vs projectivized+dynamic vs all trees+non-projective oracle (Nederhof 2019, Table 7)"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
# the perceptron experiment's set-ups; the neural trainer calls "skip" "subset"
SETUPS = {name: dict(setup, nonproj={"skip": "subset"}.get(setup["nonproj"], setup["nonproj"]))
          for name, setup in PERCEPTRON_SETUPS.items()}

files = ud_files_with_dev


def jobs(settings):
    return ud_jobs(settings, SETUPS)


def run_job(job, device="cpu"):
    return job_result(job, "setup", **SETUPS[job[3]], device=device)


def table(results, settings):
    return markdown_table(
        "BiLSTM parser (`semiparse.neural`, default network), the epoch with the best dev LAS kept, "
        "test sets, LAS/UAS by the CoNLL 2018 scorer and without punctuation (UPOS PUNCT), "
        "mean ± standard deviation over seeds.  `train tokens`: tokens actually trained on.",
        ["language", "system", "set-up", "train tokens", *SCORE_COLUMNS, "train CPU s/run"],
        [[lang, system, setup, f"{runs[0]['train_tokens']:,}", *score_cells(runs), cpu_seconds(runs)]
         for lang, system, setup, runs in table_rows(results, settings, "setup", SETUPS)])

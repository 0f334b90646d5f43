"""The neural parser's accuracy against the perceptron and a published reference line.

The BiLSTM parser of ``semiparse.neural`` (Kiperwasser and Goldberg 2016,
default network), the same network with an embedding of the gold FEATS
column beside UPOS (``neural-feats``: the morphology UDPipe 1's reference
figures had), the same with an embedding of the gold LEMMA column too
(``neural-morph``: all of that gold morphology), the same with dropout
0.33 on the BiLSTM (``neural-morph+dropout``), and the greedy averaged
perceptron, trained under the same
settings -- the system, all training trees optimally projectivized, the
dynamic oracle with exploration, the epoch with the best dev LAS kept -- on
the shared UD Greek, Gothic and Hungarian treebanks with gold tokens and
gold UPOS; test LAS/UAS by the official CoNLL 2018 scorer.  The reference
line is UDPipe 1's published LAS for gold tokenization and morphology with
its UD 2.5 models (another UD release than the shared treebanks').
"""
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, cpu_seconds, markdown_table, table_rows, ud_jobs
from semiparse.experiments.neural_common import (SCORE_COLUMNS, best_epochs, job_result, neural_run,
                                                 perceptron_run, score_cells, ud_files_with_dev)


TITLE = "The neural parser's accuracy (gold tokens and UPOS; UDPipe 1 as a reference line)"
SUMMARY = "BiLSTM parser vs the perceptron, dev-selected, CoNLL 2018 LAS/UAS; UDPipe 1 (UD 2.5) reference"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
VARIANTS = ("neural", "neural-feats", "neural-morph", "neural-morph+dropout", "perceptron")
# the FEATS embedding of the neural-feats and neural-morph runs (the size of
# the UPOS one), and the LEMMA embedding of the neural-morph runs (the size of
# the word one)
EXTRA = {"neural": {}, "neural-feats": {"feats_dim": 25},
         "neural-morph": {"feats_dim": 25, "lemma_dim": 100},
         "neural-morph+dropout": {"feats_dim": 25, "lemma_dim": 100, "dropout": 0.33}}
# UDPipe 1, UD 2.5 models, gold tokenization and morphology: LAS (a reference line only)
UDPIPE1_UD25_LAS = {"el": 87.9, "got": 76.0, "hu": 77.6}
SETTINGS = dict(oracle="dynamic", nonproj="projectivize")

files = ud_files_with_dev


def jobs(settings):
    """The runs of each variant in turn (the neural parser's first), seed-major
    within each: a run cut short has the neural parser's seeds first."""
    runs = ud_jobs(settings, VARIANTS)
    return [job for model in VARIANTS for job in runs if job[3] == model]


def run_job(job, device="cpu"):
    if job[3] == "perceptron":
        return job_result(job, "model", perceptron_run, **SETTINGS)
    return job_result(job, "model", neural_run, **SETTINGS, **EXTRA[job[3]], device=device)


def table(results, settings):
    return markdown_table(
        "All training trees optimally projectivized, dynamic oracle with exploration, the epoch "
        "with the best dev LAS kept; test sets; LAS and UAS by the CoNLL 2018 scorer (every word), "
        "then without punctuation; mean ± standard deviation over seeds; neural-feats: the "
        "BiLSTM parser with gold FEATS embedded beside gold UPOS; neural-morph: with gold LEMMA "
        "embedded too; neural-morph+dropout: and dropout 0.33 on the BiLSTM.  UDPipe 1: its published "
        "LAS with gold tokenization and morphology, UD 2.5 models -- another UD release, a "
        "reference line only.",
        ["language", "system", "model", *SCORE_COLUMNS, "best epoch", "UDPipe 1 LAS (UD 2.5, reference)",
         "train CPU s/run"],
        [[lang, system, model, *score_cells(runs), best_epochs(runs), UDPIPE1_UD25_LAS[lang],
          cpu_seconds(runs)]
         for lang, system, model, runs in table_rows(results, settings, "model", VARIANTS)])

"""The neural parser's accuracy against the perceptron and a published reference line.

The BiLSTM parser of ``semiparse.neural`` (Kiperwasser and Goldberg 2016,
default network) and the greedy averaged perceptron, trained under the same
settings -- the system, all training trees optimally projectivized, the
dynamic oracle with exploration, the epoch with the best dev LAS kept -- on
the shared UD Greek, Gothic and Hungarian treebanks with gold tokens and
gold UPOS; test LAS/UAS by the official CoNLL 2018 scorer.  The reference
line is UDPipe 1's published LAS for gold tokenization and morphology with
its UD 2.5 models (another UD release than the shared treebanks').
"""
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, select, ud_jobs
from semiparse.experiments.neural_common import cell, neural_run, perceptron_run, ud_files_with_dev


TITLE = "The neural parser's accuracy (gold tokens and UPOS; UDPipe 1 as a reference line)"
SUMMARY = "BiLSTM parser vs the perceptron, dev-selected, CoNLL 2018 LAS/UAS; UDPipe 1 (UD 2.5) reference"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
MODELS = ("neural", "perceptron")
# UDPipe 1, UD 2.5 models, gold tokenization and morphology: LAS (a reference line only)
UDPIPE1_UD25_LAS = {"el": 87.9, "got": 76.0, "hu": 77.6}
SETTINGS = dict(oracle="dynamic", nonproj="projectivize")

files = ud_files_with_dev


def jobs(settings):
    """The neural parser's runs, seed-major, then the perceptron's: a run cut
    short has the neural parser's seeds first."""
    runs = ud_jobs(settings, MODELS)
    return [job for model in MODELS for job in runs if job[3] == model]


def run_job(job):
    data, lang, system, model, seed, epochs, limit = job
    train = neural_run if model == "neural" else perceptron_run
    return {"lang": lang, "system": system, "model": model, "seed": seed, "epochs": epochs,
            **train(data, lang, system, seed, epochs, limit, **SETTINGS)}


def table(results, settings):
    lines = [
        "All training trees optimally projectivized, dynamic oracle with exploration, the epoch "
        "with the best dev LAS kept; test sets; LAS and UAS by the CoNLL 2018 scorer (every word), "
        "then without punctuation; mean ± standard deviation over seeds.  UDPipe 1: its published "
        "LAS with gold tokenization and morphology, UD 2.5 models -- another UD release, a "
        "reference line only.", "",
        "| language | system | model | LAS | UAS | LAS no punct | UAS no punct | best epoch | "
        "UDPipe 1 LAS (UD 2.5, reference) | train CPU s/run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang in settings["languages"]:
        for system in settings["systems"]:
            for model in MODELS:
                rows = select(results, lang=lang, system=system, model=model)
                if rows:
                    lines.append(
                        f"| {lang} | {system} | {model} | {cell(rows, 'las')} | {cell(rows, 'uas')} | "
                        f"{cell(rows, 'las_nopunct')} | {cell(rows, 'uas_nopunct')} | "
                        f"{' '.join(str(r['best_epoch']) for r in rows)} | {UDPIPE1_UD25_LAS[lang]} | "
                        f"{sum(r['train_cpu_seconds'] for r in rows) / len(rows):.0f} |")
    return lines

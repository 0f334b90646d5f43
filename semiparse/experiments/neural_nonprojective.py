"""Does training on all trees help the neural parser? (the set-up of Nederhof 2019, Table 7).

The three set-ups of ``nonprojective-training`` with the BiLSTM parser of
``semiparse.neural`` in place of the perceptron: labelled arc-standard on
the shared UD Greek, Gothic and Hungarian training sets, the epoch with the
best dev LAS kept, test LAS/UAS by the CoNLL 2018 scorer and without
punctuation:

  subset+static      projective training trees only, static oracle
  proj+dynamic       all trees, optimally projectivized, dynamic oracle
  all+nonproj        all trees as they are, dynamic (non-projective) oracle
"""
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, select, ud_jobs
from semiparse.experiments.neural_common import cell, neural_run, ud_files_with_dev
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


def run_job(job):
    data, lang, system, setup, seed, epochs, limit = job
    return {"lang": lang, "system": system, "setup": setup, "seed": seed, "epochs": epochs,
            **neural_run(data, lang, system, seed, epochs, limit, **SETUPS[setup])}


def table(results, settings):
    lines = [
        "BiLSTM parser (`semiparse.neural`, default network), the epoch with the best dev LAS kept, "
        "test sets, LAS/UAS by the CoNLL 2018 scorer and without punctuation (UPOS PUNCT), "
        "mean ± standard deviation over seeds.  `train tokens`: tokens actually trained on.", "",
        "| language | system | set-up | train tokens | LAS | UAS | LAS no punct | UAS no punct | "
        "train CPU s/run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for lang in settings["languages"]:
        for system in settings["systems"]:
            for setup in SETUPS:
                rows = select(results, lang=lang, system=system, setup=setup)
                if rows:
                    lines.append(
                        f"| {lang} | {system} | {setup} | {rows[0]['train_tokens']:,} | {cell(rows, 'las')} | "
                        f"{cell(rows, 'uas')} | {cell(rows, 'las_nopunct')} | {cell(rows, 'uas_nopunct')} | "
                        f"{sum(r['train_cpu_seconds'] for r in rows) / len(rows):.0f} |")
    return lines

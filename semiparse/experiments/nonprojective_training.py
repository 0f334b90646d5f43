"""Does training on all trees help? (the set-up of Nederhof 2019, Table 7).

The labelled arc-standard greedy averaged perceptron on the shared UD Greek,
Gothic and Hungarian training sets (42,326 / 35,024 / 20,166 tokens, the
sizes of the paper's) in three set-ups, scored on the test sets without
punctuation, mean and standard deviation over seeds:

  subset+static      projective training trees only, static oracle
  proj+dynamic       all trees, optimally projectivized, dynamic oracle
  all+nonproj        all trees as they are, dynamic (non-projective) oracle
"""
import time

from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, mean_sd, read_ud, select, ud_files, ud_jobs

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
    from semiparse.train import Trainer, evaluate_model

    data, lang, system, setup, seed, epochs, limit = job
    train, test = read_ud(data, lang, "train", limit), read_ud(data, lang, "test", limit)
    start = time.process_time()
    model = Trainer(system=system, oracle=SETUPS[setup]["oracle"], epochs=epochs, seed=seed,
                    progress=False).run(train, nonproj=SETUPS[setup]["nonproj"])
    seconds = time.process_time() - start
    return {"lang": lang, "system": system, "setup": setup, "seed": seed, "epochs": epochs,
            "train_tokens": model.meta["train_tokens"], "train_cpu_seconds": round(seconds, 1),
            **evaluate_model(model, test)}


def table(results, settings):
    lines = [
        "Greedy averaged perceptron, labelled transitions, test sets, scores without punctuation "
        "(UPOS PUNCT), mean ± standard deviation over seeds.  `train tokens`: tokens actually "
        "trained on.", "",
        "| language | system | set-up | train tokens | LAS | UAS | train CPU s/run |",
        "|---|---|---|---|---|---|---|",
    ]
    for lang in settings["languages"]:
        for system in settings["systems"]:
            for setup in SETUPS:
                rows = select(results, lang=lang, system=system, setup=setup)
                if rows:
                    lines.append(
                        f"| {lang} | {system} | {setup} | {rows[0]['train_tokens']:,} | "
                        f"{mean_sd([r['las_nopunct'] for r in rows])} | "
                        f"{mean_sd([r['uas_nopunct'] for r in rows])} | "
                        f"{sum(r['train_cpu_seconds'] for r in rows) / len(rows):.0f} |")
    return lines

"""Global training for beam search with static and dynamic oracles (the shape of
Aufrant, Wisniewski and Yvon 2017, Table 1).

The beam perceptron (``beam-early`` / ``beam-maxv``, beam 8) on the optimally
projectivized training trees, with a static oracle (an item is correct while
it follows the canonical sequence) or the global dynamic oracle (while every
transition was zero-cost), and each restart strategy the trainer has:
``none`` (next sentence after the update), ``positive`` (resume from the
best correct item c+) and, with the dynamic oracle only, ``negative``
(resume from the predicted item c-, i.e. exploration).  Test set decoded
with the same beam, scores without punctuation.
"""
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES, mean_sd, read_ud, select, ud_files

TITLE = "Global beam training: static vs dynamic oracle, update and restart (cf. Aufrant, Wisniewski and Yvon 2017, Table 1)"
SUMMARY = "beam perceptron: static/dynamic oracle x early update/max-violation x restart none/positive/negative"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")  # the beam trainers do not support LR-spine
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_eager"]}
POS_TAGS = GOLD_UPOS
BEAM = 8
UPDATES = {"early": "early", "max-violation": "maxv"}  # the table's name: BeamOptions.update
# (oracle, restart) in table order; restarting from c- explores, so it needs the dynamic oracle
ORACLE_RESTARTS = [("static", "none"), ("static", "positive"),
            ("dynamic", "none"), ("dynamic", "positive"), ("dynamic", "negative")]


files = ud_files


def jobs(settings):
    return [(settings["data"], lang, system, update, oracle, restart, seed, settings["epochs"], settings["limit"])
            for seed in settings["seeds"] for lang in settings["languages"] for system in settings["systems"]
            for update in UPDATES for oracle, restart in ORACLE_RESTARTS]


def run_job(job):
    from semiparse.perceptron import BeamOptions, Trainer, evaluate_model

    data, lang, system, update, oracle, restart, seed, epochs, limit = job
    train, test = read_ud(data, lang, "train", limit), read_ud(data, lang, "test", limit)
    options = BeamOptions(size=BEAM, update=UPDATES[update], restart=restart)
    model = Trainer(system, oracle, options, epochs, seed, progress=False).run(
        train, nonproj="projectivize")
    return {"lang": lang, "system": system, "update": update, "oracle": oracle, "restart": restart,
            "beam": BEAM, "seed": seed, "epochs": epochs, **evaluate_model(model, test)}


def table(results, settings):
    langs = settings["languages"]
    lines = [
        f"Beam {BEAM} in training and test, projectivized training trees, UAS / LAS without "
        "punctuation on the test sets, mean ± standard deviation over seeds.  Restart `negative` "
        "(exploration) exists only with the dynamic oracle.", "",
        "| system | update | oracle | restart | " + " | ".join(f"{l} UAS | {l} LAS" for l in langs) + " |",
        "|---|---|---|---|" + "---|---|" * len(langs),
    ]
    for system in settings["systems"]:
        for update in UPDATES:
            for oracle, restart in ORACLE_RESTARTS:
                cells = []
                for lang in langs:
                    rows = select(results, lang=lang, system=system, update=update, oracle=oracle,
                                  restart=restart)
                    cells += ([mean_sd([r["uas_nopunct"] for r in rows]), mean_sd([r["las_nopunct"] for r in rows])]
                              if rows else ["", ""])
                if any(cells):
                    lines.append(f"| {system} | {update} | {oracle} | {restart} | " + " | ".join(cells) + " |")
    return lines

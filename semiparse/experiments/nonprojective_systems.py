"""Non-projective transition systems against projectivization
(``nonprojective-systems``).

The labelled greedy averaged perceptron on the shared UD Greek, Gothic and
Hungarian training sets, for a base system S (arc-hybrid by default, also
arc-standard), three ways, and Covington's system two ways, scored on the
test sets without punctuation:

  proj+head      S on the optimal projectivization of each training tree,
                 the changed arcs' labels in the ``head`` encoding, the
                 output decoded (as in ``encoded-training``)
  swap+static    S with swap (``S_swap``) on the trees as they are, its
                 static oracle (lazy for arc-standard, eager for arc-hybrid:
                 semiparse.transitions.oracles.swap_static)
  swap+dynamic   ``S_swap`` on the trees as they are, the exact dynamic
                 oracle (the bounded search) with exploration; a sentence
                 whose search runs past the training budget is left for the
                 epoch and counted (``over budget``)
  covington+static   ``covington`` on the trees as they are, its static
                 oracle (the first optimal move in its static order)
  covington+dynamic  ``covington``, its exact dynamic oracle (the spanning
                 completion, O(n) per move) with exploration

The Covington set-ups do not depend on S: they run once, under the first
system of the settings, and their rows name ``covington``.

Besides LAS and UAS, the precision and recall of the non-projective arcs:
of the predicted arcs that are non-projective in the predicted tree, the
share whose head is the gold head; of the gold non-projective arcs, the
share predicted with their gold head (punctuation left out of both).
"""
from semiparse.experiments.common import (GOLD_UPOS, LANGUAGES, cpu_seconds, job_fields,
                                          markdown_table, mean_sd, read_parts, table_rows,
                                          timed, ud_files, ud_jobs)
from semiparse.experiments.encoded_training import (decoded_parse, encoded_tree,
                                                    nonprojective_words)

TITLE = ("Non-projective transition systems: swap and Covington with static and exact "
         "dynamic oracles")
SUMMARY = ("projectivization + head encoding vs swap and Covington's system, each with its "
           "static oracle and its exact dynamic oracle (perceptron)")
SYSTEMS = ("arc_hybrid", "arc_standard")
DEFAULTS = {"epochs": 5, "seeds": [1], "languages": list(LANGUAGES), "systems": ["arc_hybrid"]}
POS_TAGS = GOLD_UPOS
SETUPS = ("proj+head", "swap+static", "swap+dynamic", "covington+static", "covington+dynamic")
VARIANTS = SETUPS  # --variants runs some of them


files = ud_files


def jobs(settings):
    first = settings["systems"][0]
    return [job for job in ud_jobs(settings, SETUPS)
            if not job[3].startswith("covington") or job[2] == first]


def _precision_recall(test, predicted):
    """``(precision, recall, gold arcs)`` of the non-projective arcs, in percent."""
    right_p = total_p = right_r = total_r = 0
    for tree, (heads, _) in zip(test, predicted):
        for d in nonprojective_words(heads):
            if tree.tags[d] != "PUNCT":
                total_p += 1
                right_p += heads[d] == tree.heads[d]
        for d in nonprojective_words(tree.heads):
            if tree.tags[d] != "PUNCT":
                total_r += 1
                right_r += heads[d] == tree.heads[d]
    pct = lambda a, b: round(100.0 * a / b, 2) if b else None
    return pct(right_p, total_p), pct(right_r, total_r), total_r


def run_job(job):
    from semiparse.perceptron import Trainer, attachment_scores

    data, lang, system, setup, seed, epochs, limit = job
    train, test = read_parts(data, lang, limit)
    if setup == "proj+head":
        trees = [encoded_tree(t, "optimal+head") for t in train]
        trainer = Trainer(system=system, epochs=epochs, seed=seed, progress=False,
                          oracle="dynamic")
        model, seconds = timed(lambda: trainer.run(trees, nonproj="skip"))
        predicted = [decoded_parse(*model.parse(t)[:2], "optimal+head") for t in test]
    else:
        name = "covington" if setup.startswith("covington") else f"{system}_swap"
        trainer = Trainer(system=name, epochs=epochs, seed=seed, progress=False,
                          oracle=setup.split("+")[1])
        model, seconds = timed(lambda: trainer.run(train, nonproj="oracle"))
        predicted = [model.parse(t)[:2] for t in test]
    precision, recall, gold = _precision_recall(test, predicted)
    return {**job_fields(job, "setup"), "train_cpu_seconds": seconds,
            "over_budget": trainer.over_budget, "nonprojective_arcs": gold,
            "precision_nonprojective": precision, "recall_nonprojective": recall,
            **attachment_scores(test, predicted)}


def _mean(runs, key):
    values = [r[key] for r in runs if r[key] is not None]
    return mean_sd(values) if values else "-"


def table(results, settings):
    return markdown_table(
        "Greedy averaged perceptron, labelled transitions, test sets, scores without punctuation "
        "(UPOS PUNCT), mean ± standard deviation over seeds.  `non-proj. P / R`: precision and "
        "recall of the non-projective arcs (heads; `arcs`: gold non-projective arcs).  `over "
        "budget`: training sentences left, summed over epochs, where the exact search ran past "
        "its budget (semiparse.training.loop.SEARCH_BUDGET).",
        ["language", "system", "set-up", "LAS", "UAS", "non-proj. P", "non-proj. R", "arcs",
         "over budget", "train CPU s/run"],
        [[lang, "covington" if setup.startswith("covington") else system,
          setup.replace("covington+", ""), mean_sd([r["las_nopunct"] for r in runs]),
          mean_sd([r["uas_nopunct"] for r in runs]), _mean(runs, "precision_nonprojective"),
          _mean(runs, "recall_nonprojective"), runs[0]["nonprojective_arcs"],
          sum(r["over_budget"] for r in runs), cpu_seconds(runs)]
         for lang, system, setup, runs in table_rows(results, settings, "setup", SETUPS)])

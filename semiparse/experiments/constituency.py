"""Greedy top-down and in-order constituent parsers, static vs dynamic oracle
(cf. Fernández-González and Gómez-Rodríguez 2018, Table 1).

The averaged-perceptron parser of :mod:`semiparse.constituency.train` on the
shared Penn Treebank sample with a fixed split (the first ``TRAIN`` trees for
training, the rest for testing), trained with the static oracle or with the
dynamic oracle and exploration; labelled bracket F1 with evalb's conventions
(:mod:`semiparse.treebank.evalb`).
"""
import functools
from pathlib import Path

from semiparse.experiments.common import mean_sd, select

TITLE = "Top-down and in-order constituent parsing: static vs dynamic oracle (cf. Fernández-González and Gómez-Rodríguez 2018, Table 1)"
SUMMARY = "greedy perceptron constituent parsers on the PTB sample, static vs dynamic oracle with exploration, F1"
LANGUAGES = ("en",)
# SYSTEMS and DEFAULTS (below, __getattr__): the constituent systems of the
# registry, asked when first read so that listing experiments stays light
POS_TAGS = "gold POS tags at training and test time (the preterminals of the treebank)"
PTB = "ptb/wsj_sample_combined.mrg"
TRAIN = 3500  # trees; the rest of the sample is the test set
ORACLES = ("static", "dynamic")


def files(settings):
    return [PTB]


def jobs(settings):
    return [(settings["data"], system, oracle, seed, settings["epochs"], settings["limit"])
            for seed in settings["seeds"] for system in settings["systems"] for oracle in ORACLES]


def split(data, limit):
    """(train, test) trees of the fixed split, each cut to ``limit`` trees if given."""
    trees = _read(Path(data) / PTB)
    train, test = trees[:TRAIN], trees[TRAIN:]
    return (train[:limit], test[:limit]) if limit else (train, test)


@functools.lru_cache(maxsize=1)
def _read(path):
    """The treebank, read once per process (training does not change the trees)."""
    from semiparse.constituency import read_ptb

    return list(read_ptb(path))


def run_job(job):
    from semiparse.constituency import evaluate
    from semiparse.constituency.train import train as train_parser

    data, system, oracle, seed, epochs, limit = job
    train, test = split(data, limit)
    parser = train_parser(train, system, oracle=oracle, epochs=epochs, seed=seed)
    scores = evaluate(test, [parser.parse(t.leaves()) for t in test])
    return {"lang": "en", "system": system, "oracle": oracle, "seed": seed, "epochs": epochs,
            "train_trees": len(train), "test_trees": len(test), "matched": scores.matched,
            "gold": scores.gold, "test": scores.test, "precision": 100 * scores.precision,
            "recall": 100 * scores.recall, "f1": 100 * scores.f1}


def table(results, settings):
    lines = [
        f"Penn Treebank sample: the first {TRAIN} trees train, the rest test (cut to the --limit if "
        "given).  Greedy decoding, labelled brackets with evalb's conventions (COLLINS.prm), "
        "mean ± standard deviation over seeds.", "",
        "| system | oracle | train trees | test trees | P | R | F1 |", "|---|---|---|---|---|---|---|",
    ]
    for system in settings["systems"]:
        for oracle in ORACLES:
            rows = select(results, system=system, oracle=oracle)
            if rows:
                lines.append(f"| {system} | {oracle} | {rows[0]['train_trees']} | {rows[0]['test_trees']} | "
                             f"{mean_sd([r['precision'] for r in rows])} | {mean_sd([r['recall'] for r in rows])} | "
                             f"{mean_sd([r['f1'] for r in rows])} |")
    return lines


def __getattr__(name):
    """``SYSTEMS`` (the constituent systems of the registry, in registration
    order: top-down, in-order) and ``DEFAULTS``, made on first use."""
    if name == "SYSTEMS":
        from semiparse.transitions.systems.registry import registered_systems

        return tuple(registered_systems("constituent", ordered=True))
    if name == "DEFAULTS":
        return {"epochs": 5, "seeds": [1, 2, 3], "languages": ["en"],
                "systems": list(__getattr__("SYSTEMS"))}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

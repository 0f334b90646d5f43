"""Static oracle vs training with exploration (the shape of Goldberg, Sartorio and Satta 2014, Table 1).

Arc-standard and LR-spine, greedy averaged perceptron on the optimally
projectivized training trees: the static oracle (canonical sequence) against
the dynamic oracle with exploration (the model's own wrong move followed with
probability 0.9 from the second epoch on).  The runs are those of
``oracle-comparison`` with the two oracles of the paper's table.
"""
from semiparse.experiments import oracle_comparison
from semiparse.experiments.common import GOLD_UPOS, LANGUAGES

TITLE = "Static vs exploration training (cf. Goldberg, Sartorio and Satta 2014, Table 1)"
SUMMARY = "static oracle vs dynamic oracle with exploration, arc-standard and LR-spine"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")
DEFAULTS = {"epochs": 10, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard", "lr_spine"]}
POS_TAGS = GOLD_UPOS
ORACLES = ("static", "dynamic")
files = oracle_comparison.files
run_job = oracle_comparison.run_job


def jobs(settings):
    return oracle_comparison.jobs(settings, ORACLES)


def table(results, settings):
    return oracle_comparison.table(results, settings, ORACLES)

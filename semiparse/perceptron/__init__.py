"""The perceptron parsers: transition-based parsers on sparse features,
trained with the project's oracles.

Greedy averaged perceptron (static / nondet / dynamic oracles with
exploration), probabilistic models trained with AdaGrad-RDA, and global beam
training with early update or max-violation; see ``docs/training.md``.
"""
from semiparse.treebank.data import Tree, read_trees
from semiparse.treebank.scoring import attachment_scores
from semiparse.perceptron.calibration import calibration
from semiparse.perceptron.model import Model, ModelError, SYSTEMS
from semiparse.perceptron.options import TRAINERS, BeamOptions, PerceptronOptions, RDAOptions, options_for
from semiparse.perceptron.trainer import NONPROJ, ORACLES, Trainer, evaluate_model, prepare

__all__ = ["BeamOptions", "Model", "ModelError", "NONPROJ", "ORACLES", "PerceptronOptions",
           "RDAOptions", "SYSTEMS", "TRAINERS", "Trainer", "Tree", "attachment_scores",
           "calibration", "evaluate_model", "options_for", "prepare", "read_trees"]

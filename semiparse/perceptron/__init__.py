"""Transition-based parsers trained with the project's oracles.

Greedy averaged perceptron (static / nondet / dynamic oracles with
exploration), probabilistic models trained with AdaGrad-RDA, and global beam
training with early update or max-violation; see ``docs/training.md``.
"""
from semiparse.train.data import Tree, read_trees
from semiparse.train.evaluate import attachment_scores, calibration
from semiparse.train.model import Model, ModelError, SYSTEMS
from semiparse.train.options import TRAINERS, BeamOptions, PerceptronOptions, RDAOptions, options_for
from semiparse.train.trainer import NONPROJ, ORACLES, Trainer, evaluate_model, prepare

__all__ = ["BeamOptions", "Model", "ModelError", "NONPROJ", "ORACLES", "PerceptronOptions",
           "RDAOptions", "SYSTEMS", "TRAINERS", "Trainer", "Tree", "attachment_scores",
           "calibration", "evaluate_model", "options_for", "prepare", "read_trees"]

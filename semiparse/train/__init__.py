"""Transition-based parsers trained with the project's oracles.

Greedy averaged perceptron (static / nondet / dynamic oracles with
exploration), probabilistic models trained with AdaGrad-RDA, and global beam
training with early update or max-violation; see ``docs/training.md``.
"""
from .data import Tree, read_trees
from .evaluate import attachment_scores, calibration
from .model import Model, ModelError, SYSTEMS
from .trainer import NONPROJ, ORACLES, TRAINERS, Trainer, evaluate_model, prepare

__all__ = ["Model", "ModelError", "NONPROJ", "ORACLES", "SYSTEMS", "TRAINERS", "Trainer", "Tree",
           "attachment_scores", "calibration", "evaluate_model", "prepare", "read_trees"]

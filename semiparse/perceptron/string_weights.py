"""Perceptron weights over feature strings, for parsers whose features are
not the C templates of :mod:`semiparse.perceptron.features` (the constituent
parser of :mod:`semiparse.constituency.train`).

The weights are the dependency trainer's table (:class:`_core.Weights`):
the same lazily averaged perceptron update and final average, with each
string stored under its stable 64-bit hash (:func:`stable_hash`, odd, as
the table's keys are).
"""
import numpy as np

from semiparse.perceptron import _core
from semiparse.treebank.data import stable_hash


class StringWeights:
    """Per-class weight rows of feature strings (``n_classes`` columns)."""

    def __init__(self, n_classes):
        self.table = _core.Weights(n_classes)
        self._keys = {}  # feature string -> key, hashed once

    def keys(self, features):
        """The table keys of a list of feature strings."""
        known = self._keys
        out = np.empty(len(features), dtype=np.uint64)
        for i, f in enumerate(features):
            key = known.get(f)
            if key is None:
                key = known[f] = stable_hash(f) | 1
            out[i] = key
        return out

    def scores(self, keys):
        """The sum of the rows of ``keys`` (absent ones count zero), per class."""
        return self.table.scores(keys)

    def update(self, keys, good, bad, t):
        """The perceptron update at time ``t``: towards class ``good``, away from ``bad``."""
        self.table.perceptron_step(keys, good, bad, t)

    def average(self, t):
        """Replace the weights by their average over the ``t`` time steps (once, after training)."""
        self.table.finalize(t)

    def __setitem__(self, feature, row):
        """Set the row of one feature string (e.g. a hand-made model)."""
        self.table.load(self.keys([feature]), np.asarray([row], dtype=float))

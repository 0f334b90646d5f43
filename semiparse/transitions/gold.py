"""Gold trees, checked once and prepared for the oracles."""
import numpy as np

from semiparse.heads import check_tree, no_crossing


class Gold:
    """A validated gold tree: ``heads`` (tuple), ``n``, ``projective`` and
    ``delta``, an ``(n + 2) x (n + 2)`` array with ``delta[h, d] = 1.0`` for gold
    edges; its last row and column (index -1) are zero, for virtual string
    positions.  ``projective`` and ``delta`` are computed on first use (the
    fast methods never need ``delta``)."""

    __slots__ = ("heads", "n", "_delta", "_projective")

    def __init__(self, heads):
        self.heads = check_tree(heads)
        self.n = len(self.heads) - 1
        self._delta = self._projective = None

    @property
    def projective(self):
        if self._projective is None:
            self._projective = no_crossing(self.heads)
        return self._projective

    @property
    def delta(self):
        if self._delta is None:
            self._delta = np.zeros((self.n + 2, self.n + 2))
            self._delta[np.array(self.heads[1:], dtype=int), np.arange(1, self.n + 1)] = 1.0
        return self._delta

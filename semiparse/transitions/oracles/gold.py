"""Gold trees, checked once and prepared for the oracles."""
import numpy as np

from semiparse.heads import check_tree, no_crossing
from semiparse.transitions.oracles.protocol import GoldTree
from semiparse.treebank.partial import UNKNOWN, check_partial_tree, partial_flag


class Gold(GoldTree):
    """A validated gold tree: ``heads`` (tuple), ``n``, ``partial``,
    ``projective`` and ``delta``, an ``(n + 2) x (n + 2)`` array with
    ``delta[h, d] = 1.0`` for gold edges; its last row and column (index -1)
    are zero, for virtual string positions.

    With ``partial=True`` a head may be ``-1``, unknown
    (:mod:`semiparse.treebank.partial`); ``partial`` then says whether one
    is.  A word with an unknown head has no gold edge: every edge into it
    scores 0, so it counts towards no tree's score.  A tree with unknown
    heads is not ``projective`` (the methods exact only for projective trees
    assume complete ones).  ``projective`` and ``delta`` are computed on
    first use (the fast methods never need ``delta``)."""

    __slots__ = ("heads", "n", "partial", "_delta", "_projective")

    def __init__(self, heads, partial=False):
        self.heads = check_partial_tree(heads) if partial_flag(partial) else check_tree(heads)
        self.n = len(self.heads) - 1
        self.partial = UNKNOWN in self.heads[1:]
        self._delta = self._projective = None

    @property
    def projective(self):
        if self._projective is None:
            self._projective = not self.partial and no_crossing(self.heads)
        return self._projective

    @property
    def delta(self):
        if self._delta is None:
            self._delta = np.zeros((self.n + 2, self.n + 2))
            known = [d for d in range(1, self.n + 1) if self.heads[d] != UNKNOWN]
            self._delta[np.array([self.heads[d] for d in known], dtype=int),
                        np.array(known, dtype=int)] = 1.0
        return self._delta

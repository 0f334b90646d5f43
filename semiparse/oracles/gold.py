"""Gold trees, checked once and prepared for the oracles."""
import numpy as np

from ..projectivity import no_crossing
from .system import find_cycle, int_tuple


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


def check_tree(heads):
    """``heads`` as a tuple of ints, or ValueError if it is not a tree rooted in 0."""
    heads = int_tuple(heads, "heads must be a sequence of integer heads")
    n = len(heads) - 1
    if n < 0 or heads[0] != -1:
        raise ValueError(f"heads must start with -1 for the root 0, got {list(heads[:1])}")
    for d in range(1, n + 1):
        if not 0 <= heads[d] <= n or heads[d] == d:
            raise ValueError(f"heads[{d}] = {heads[d]} is not a head: expected a position "
                             f"0..{n} other than {d}")
    cycle = find_cycle(heads)
    if cycle:
        raise ValueError(f"heads is not a tree: node {cycle[0]} is on a cycle "
                         f"({' -> '.join(map(str, cycle))})")
    return heads


"""Gold trees, checked once and prepared for the oracles."""
import numpy as np


class Gold:
    """A validated gold tree: ``heads`` (tuple), ``n``, ``projective`` and
    ``delta``, an ``(n + 2) x (n + 2)`` array with ``delta[h, d] = 1.0`` for gold
    edges; its last row and column (index -1) are zero, for virtual string
    positions."""

    __slots__ = ("heads", "n", "delta", "_projective")

    def __init__(self, heads):
        self.heads = check_tree(heads)
        self.n = len(self.heads) - 1
        self.delta = np.zeros((self.n + 2, self.n + 2))
        d = np.arange(1, self.n + 1)
        self.delta[np.array(self.heads[1:], dtype=int), d] = 1.0
        self._projective = None

    @property
    def projective(self):
        if self._projective is None:
            self._projective = is_projective_tree(self.heads)
        return self._projective


def check_tree(heads):
    """``heads`` as a tuple of ints, or ValueError if it is not a tree rooted in 0."""
    try:
        heads = tuple(int(h) for h in (heads.tolist() if hasattr(heads, "tolist") else heads))
    except (TypeError, ValueError):
        raise ValueError("heads must be a sequence of integer heads") from None
    n = len(heads) - 1
    if n < 0 or heads[0] != -1:
        raise ValueError(f"heads must start with -1 for the root 0, got {list(heads[:1])}")
    for d in range(1, n + 1):
        if not 0 <= heads[d] <= n or heads[d] == d:
            raise ValueError(f"heads[{d}] = {heads[d]} is not a head: expected a position "
                             f"0..{n} other than {d}")
    state = [0] * (n + 1)  # 0 unseen, 1 on the current path, 2 reaches the root
    state[0] = 2
    for d in range(1, n + 1):
        path, x = [], d
        while state[x] == 0:
            state[x] = 1
            path.append(x)
            x = heads[x]
        if state[x] == 1:
            raise ValueError(f"heads is not a tree: node {x} is on a cycle "
                             f"({' -> '.join(map(str, path[path.index(x):] + [x]))})")
        for y in path:
            state[y] = 2
    return heads


def is_projective_tree(heads):
    """Whether every subtree covers consecutive positions (root 0 included)."""
    n = len(heads) - 1
    lo, hi, size = list(range(n + 1)), list(range(n + 1)), [1] * (n + 1)
    for d in range(1, n + 1):
        h = heads[d]
        while h >= 0:  # d is in the subtree of each of its ancestors
            lo[h] = min(lo[h], d)
            hi[h] = max(hi[h], d)
            size[h] += 1
            h = heads[h]
    return all(hi[x] - lo[x] + 1 == size[x] for x in range(n + 1))

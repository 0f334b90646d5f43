"""A grammar's combinations grouped into blocks, for the max-plus column chart
(:c:func:`maxplus_columns` in ``_cky.pyx``).

A left combination ``(B2, Bd, B, Cd)`` adds to the left item ``L[B2][i][j]``
the best over split points d of ``L[Bd][i][d] + IL[B, Cd][j][d]``: a dot
product of two chart rows.  The rows of a generated grammar are the product
of attaching rules and finish rules, so many combinations of one target
state take every pair of a set of first rows and a set of second rows.  In
max-plus such a *block* A x B needs one dot product: that of the entrywise
maxima of the rows of A and of B (max over a, b of x_a + y_b is
max x_a + max y_b, exactly also in floating point, as rounded addition is
monotone).  The maxima are kept in the chart as *virtual rows*, each entry
written once, when its members' entries are, so the cubic work of a block
is that of one combination.  (Sums of products factor the same way, but
the counting kernels keep duplicate combinations, one per derivation step;
this grouping is for max-plus, where a repeated combination changes
nothing.)
"""

from collections import defaultdict

import numpy as np


def blocks(combos):
    """Partition ``(target, a, b)`` triples (repeats dropped) into blocks
    ``(target, A, B)`` whose products A x B are the triples of that target:
    the first rows grouped by the set of second rows each takes, or the
    other way round, whichever gives fewer blocks (a partition into the
    fewest blocks is a hard problem; this one is exact and finds the
    products that generated grammars have)."""
    by_target = defaultdict(set)
    for target, a, b in combos:
        by_target[target].add((a, b))
    out = []
    for target in sorted(by_target):
        found = [_grouped(by_target[target], flip) for flip in (False, True)]
        out += [(target, a, b) for a, b in min(found, key=len)]
    return out


def _grouped(pairs, flip):
    """The blocks ``(A, B)`` of ``pairs`` with the rows of one side grouped by
    the set of the other side's rows they take (side a unless ``flip``)."""
    partners = defaultdict(set)
    for a, b in pairs:
        key, other = (b, a) if flip else (a, b)
        partners[key].add(other)
    groups = defaultdict(list)
    for key, others in partners.items():
        groups[frozenset(others)].append(key)
    out = []
    for others, keys in groups.items():
        side, rest = tuple(sorted(keys)), tuple(sorted(others))
        out.append((rest, side) if flip else (side, rest))
    return sorted(out)


class Rows:
    """The virtual rows of one chart array: a set of two or more real rows
    (below ``n_real``) gets the index ``n_real + k`` and its members in CSR
    form (``starts``, ``members``)."""

    def __init__(self, n_real):
        self.n_real = n_real
        self.sets = {}

    def index(self, rows):
        if len(rows) == 1:
            return rows[0]
        return self.sets.setdefault(rows, self.n_real + len(self.sets))

    def arrays(self):
        ordered = sorted(self.sets, key=self.sets.get)
        starts = np.cumsum([0] + [len(s) for s in ordered]).astype(np.intc)
        members = np.array([m for s in ordered for m in s], dtype=np.intc)
        return starts, members


def grouped_tables(tables, left_reach, right_reach):
    """The max-plus column chart's view of ``tables`` (:class:`semiparse.
    grammar.Tables`), as a dict of int32 / uint8 arrays:

    - ``left`` rows ``(B2, A, B)``: ``L[B2][i][j]`` takes the dot product of
      left-item row A (from ``L[Bd]``; virtual from n_left) and left
      attachment row B (``IL[B, Cd]`` at index ``B * n_right + Cd``; virtual
      from n_left * n_right); ``right`` rows ``(C2, A, B)``: attachment row A
      (``IR[Bd, C]`` at ``Bd * n_right + C``) and right-item row B (``R[Cd]``;
      virtual from n_right);
    - ``left_ok[s, k]``: left block k may apply to a head whose left start
      state is s (one of its heads' states B is reachable from s, by
      ``left_reach``); ``right_ok`` likewise by C and ``right_reach``;
    - ``virtual``: for the arrays L, R, IL, IR in that order, the
      ``(starts, members)`` of their virtual rows.
    """
    nl, nr = tables.n_left, tables.n_right
    rows = [Rows(nl), Rows(nr), Rows(nl * nr), Rows(nl * nr)]
    lc = [tuple(map(int, r)) for r in np.asarray(tables.left_combos).tolist()]
    rc = [tuple(map(int, r)) for r in np.asarray(tables.right_combos).tolist()]
    left = blocks([(b2, bd, b * nr + cd) for b2, bd, b, cd in lc])
    right = blocks([(c2, bd * nr + c, cd) for c2, c, bd, cd in rc])
    left_rows = [(b2, rows[0].index(a), rows[2].index(b)) for b2, a, b in left]
    right_rows = [(c2, rows[3].index(a), rows[1].index(b)) for c2, a, b in right]
    left_ok = np.array([[any(left_reach[s, b // nr] for b in bs) for _, _, bs in left]
                        for s in range(nl)], dtype=np.uint8).reshape(nl, len(left))
    right_ok = np.array([[any(right_reach[s, a % nr] for a in as_) for _, as_, _ in right]
                         for s in range(nr)], dtype=np.uint8).reshape(nr, len(right))
    return {
        "left": np.array(left_rows, dtype=np.intc).reshape(len(left_rows), 3),
        "right": np.array(right_rows, dtype=np.intc).reshape(len(right_rows), 3),
        "left_ok": left_ok,
        "right_ok": right_ok,
        "virtual": [r.arrays() for r in rows],
    }

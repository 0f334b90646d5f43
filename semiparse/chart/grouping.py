"""A grammar's combinations grouped into blocks, for the max-plus column chart
(:c:func:`maxplus_columns` in ``_columns.pyx``, the grammar oracle's).

Every item of the chart is a maximum of dot products of two chart rows: a
left combination ``(B2, Bd, B, Cd)`` adds to ``L[B2][i][j]`` the best over
split points d of ``L[Bd][i][d] + IL[B, Cd][j][d]``, and an attachment item
``IL[B, C]`` or ``IR[B, C]`` is the dot product of ``R[C]`` and ``L[B]``
plus the edge's weight.  The combinations of a generated grammar are the
product of attaching rules and finish rules, so many combinations of one
target take every pair of a set of first rows and a set of second rows.  In
max-plus such a *block* A x B needs one dot product: that of the entrywise
maxima of the rows of A and of B (max over a, b of x_a + y_b is max x_a +
max y_b, exactly also in floating point, as rounded addition is monotone).
The maxima are kept in the chart as *virtual rows*, each entry written once,
when its members' entries are, so the cubic work of a block is that of one
combination.  The attachment items are built only where a block reads them,
and a virtual one directly from virtual rows of ``L`` and ``R``.

Sums of products factor the same way, but the counting kernels keep
duplicate combinations, one per derivation step; this grouping is for
max-plus, where a repeated combination changes nothing.
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
    return [(target, a, b) for target in sorted(by_target)
            for a, b in product_blocks(by_target[target])]


def product_blocks(pairs):
    """``pairs`` as a list of blocks ``(A, B)`` (sorted tuples) whose products
    partition it (see :func:`blocks`)."""
    found = [_grouped(pairs, flip) for flip in (False, True)]
    return min(found, key=len)


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
    """The rows of one chart array: a set of two or more of its ``n_real`` own
    rows gets the index ``n_real + k`` of a virtual row."""

    def __init__(self, n_real):
        self.n_real = n_real
        self.sets = {}

    def index(self, rows):
        if len(rows) == 1:
            return rows[0]
        return self.sets.setdefault(rows, self.n_real + len(self.sets))

    def members(self, index):
        """The set of rows a row index stands for."""
        if index < self.n_real:
            return (index,)
        return next(s for s, k in self.sets.items() if k == index)

    def csr(self):
        """``(starts, members)``: the members of virtual row v are
        ``members[starts[v]:starts[v + 1]]``."""
        ordered = sorted(self.sets, key=self.sets.get)
        starts = np.cumsum([0] + [len(s) for s in ordered]).astype(np.intc)
        members = np.array([m for s in ordered for m in s], dtype=np.intc)
        return starts, members


def _int_rows(rows, width):
    return np.array(rows, dtype=np.intc).reshape(len(rows), width)


def _gates(sets, reach):
    """``ok[s, k]``: one state of ``sets[k]`` is reachable from start state s."""
    n = reach.shape[0]
    return np.array([[any(reach[s, x] for x in states) for states in sets] for s in range(n)],
                    dtype=np.uint8).reshape(n, len(sets))


def grouped_tables(tables, left_reach, right_reach):
    """The max-plus column chart's view of ``tables`` (:class:`semiparse.
    grammar.Tables`), as a dict of int32 / uint8 arrays; rows of the arrays
    L (by start), L (by end), R (by start), R (by end) are numbered as in
    the chart (states), with the virtual rows after each array's own; IL
    and IR hold the rows the blocks read only (see ``attach_rows``):

    - ``left`` rows ``(B2, A, B)``: ``L[B2][i][j]`` takes the dot product of
      row A of L and row B of IL; ``right`` rows ``(C2, A, B)``: row A of
      IR and row B of R (by end);
    - ``attach`` rows ``(Lb, Rf, il, ir, il_first, ir_first)``: the dot
      product of row Rf of R and row Lb of L (by end), plus the edge's
      weight, goes to row il of IL and row ir of IR (-1: not to that side),
      written by the first row that goes there, else maximized;
    - ``left_ok[s, k]``, ``right_ok[s, k]``: left block k may apply at a head
      whose left start state is s (one of its heads' states is reachable
      from s by ``left_reach``), right block k likewise (``right_reach``);
      ``attach_left[s, k]``, ``attach_right[s, k]``: the same for attachment
      k's head (left states) and dependent (right states);
    - ``virtual``: ``(starts, members)`` (:meth:`Rows.csr`) for the virtual
      rows of L by start, L by end, R by start, R by end;
      ``attach_rows``: how many rows IL and IR have: only those the blocks
      read (of the real and virtual ones), in the order of their numbers.
    """
    nl, nr = tables.n_left, tables.n_right
    lf, lb, rf, rb, il, ir = (Rows(nl), Rows(nl), Rows(nr), Rows(nr), Rows(nl * nr),
                              Rows(nl * nr))
    lc = np.asarray(tables.left_combos).tolist()
    rc = np.asarray(tables.right_combos).tolist()
    left = blocks([(b2, bd, b * nr + cd) for b2, bd, b, cd in lc])
    right = blocks([(c2, bd * nr + c, cd) for c2, c, bd, cd in rc])
    left_rows = [(b2, lf.index(a), il.index(b)) for b2, a, b in left]
    right_rows = [(c2, ir.index(a), rb.index(b)) for c2, a, b in right]
    # the chart holds only the attachment rows the blocks read, numbered anew
    il_kept = {x: k for k, x in enumerate(sorted({b for _, _, b in left_rows}))}
    ir_kept = {x: k for k, x in enumerate(sorted({a for _, a, _ in right_rows}))}
    # the attachment rows the blocks read, each as blocks of (heads, dependents)
    dots = defaultdict(lambda: ([], []))
    for side, rows, kept in ((0, il, il_kept), (1, ir, ir_kept)):
        for target in kept:
            pairs = {(x // nr, x % nr) for x in rows.members(target)}
            for heads, deps in product_blocks(pairs):
                dots[heads, deps][side].append(kept[target])
    attach, gated, written = [], [], set()
    for (heads, deps), (to_il, to_ir) in sorted(dots.items()):
        # a block in two rows of one side: a row for each, one after the other
        # (the chart computes their dot product once)
        for k in range(max(len(to_il), len(to_ir))):
            x = to_il[k] if k < len(to_il) else -1
            y = to_ir[k] if k < len(to_ir) else -1
            attach.append((lb.index(heads), rf.index(deps), x, y,
                           x >= 0 and ("il", x) not in written, y >= 0 and ("ir", y) not in written))
            written |= {("il", x), ("ir", y)}
            gated.append((heads, deps))
    return {
        "left": _int_rows([(b2, a, il_kept[b]) for b2, a, b in left_rows], 3),
        "right": _int_rows([(c2, ir_kept[a], b) for c2, a, b in right_rows], 3),
        "attach": _int_rows(attach, 6),
        "left_ok": _gates([[b // nr for b in bs] for _, _, bs in left], left_reach),
        "right_ok": _gates([[a % nr for a in as_] for _, as_, _ in right], right_reach),
        "attach_left": _gates([heads for heads, _ in gated], left_reach),
        "attach_right": _gates([deps for _, deps in gated], right_reach),
        "virtual": [rows.csr() for rows in (lf, lb, rf, rb)],
        "attach_rows": [len(il_kept), len(ir_kept)],
    }

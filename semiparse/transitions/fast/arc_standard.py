"""Fast exact arc-standard oracles (registered in :mod:`semiparse.transitions.fast`).

- ``right_stack``: the right stack of maximal bottom-up-complete gold
  fragments and Algorithm 1 of Goldberg et al. 2014, in C (:mod:`._arcstd`).
  Projective gold trees; strategies none, lbr and strict_lbr (under rbl, a
  top that may no longer take right children can make it worth breaking a
  gold fragment of the buffer, so collapsing fragments is not exact there).
- ``linear``: Algorithm 1 on the stack and a compressed list of critical
  nodes, restricted to O(k + m) cells of its table and pruned to the roots
  that can still matter (:func:`._arcstd.linear_value`, docs/fast-oracles.md).
  Projective gold trees, strategy none.
- ``cubic_critical``: the grammar path (the arc-standard grammar of Nederhof
  2019, Table 4, ``grammars/arc_standard.grammar``) on the configuration
  string with the non-critical buffer nodes removed wherever that is valid,
  any gold tree, every strategy for which removal is exact.

Every method returns the sigma dict of ``oracle("arc_standard", strategy)``.
"""
import numpy as np

from semiparse.chart.engine import parse
from semiparse.heads import no_crossing
from semiparse.transitions.loading import load_system
from semiparse.transitions.fast import _arcstd

NEG_INF = float("-inf")
CODES = _arcstd.STRATEGY_CODES


class _Cache:
    """Per-gold-tree preparation, kept for the last gold tree seen (oracles are
    called many times in a row for the configurations of one sentence)."""

    def __init__(self, build):
        self.build = build
        self.key = None
        self.value = None

    def get(self, heads):
        if heads is not self.key and heads != self.key:
            if -1 in heads[1:]:
                raise ValueError(f"the fast oracle methods need a complete gold tree: word "
                                 f"{heads.index(-1, 1)} has an unknown head (-1); partial "
                                 f"trees take method 'grammar' (or 'auto', which uses it)")
            self.value = self.build(heads)
            self.key = heads
        return self.value


_work = _Cache(_arcstd.Work)


def right_stack(stack, buffer, heads, arcs, strategy):
    """sigma by the right stack and Algorithm 1 (projective gold trees)."""
    return _arcstd.right_stack_scores(_work.get(heads), tuple(stack), tuple(buffer),
                                      CODES[strategy])


def linear(stack, buffer, heads, arcs, strategy):
    """sigma by the banded, pruned Algorithm 1 (projective gold trees, strategy none)."""
    if strategy != "none":
        raise ValueError(f"oracle method 'linear' supports only strategy 'none', not {strategy!r}")
    return _arcstd.linear_scores(_work.get(heads), tuple(stack), tuple(buffer), 0)


# -- cubic with critical nodes only ----------------------------------------------

class _Fragments:
    """For every buffer start position: which buffer nodes may be dropped.

    A buffer node is *critical* when its gold head or one of its gold
    descendants lies outside the buffer (Nederhof 2019, section 5).  A non-critical
    node belongs to the fragment of its nearest critical ancestor r: r and
    the whole gold subtrees of r's non-critical children.  The fragment is
    collapsed into r when its positions are consecutive and its gold subtree
    is projective: it can then be built by itself with all its edges gold,
    and an optimal computation exists that does so.  That always holds for a
    projective gold tree; for a non-projective one, fragments that fail the
    test are kept whole.
    """

    def __init__(self, heads):
        self.heads = heads
        self.n = len(heads) - 1
        self.projective = no_crossing(heads)
        kids = [[] for _ in range(self.n + 1)]
        for d in range(1, self.n + 1):
            kids[heads[d]].append(d)
        self.kids = kids
        self._memo = {}

    def kept(self, bstart):
        """Buffer nodes (from ``bstart``) to keep, and how many were dropped."""
        got = self._memo.get(bstart)
        if got is None:
            got = self._memo[bstart] = self._compute(bstart)
        return got

    def _compute(self, bstart):
        heads, n, kids = self.heads, self.n, self.kids
        outside_desc = [False] * (n + 1)
        for x in range(1, bstart):
            h = heads[x]
            while h >= bstart and not outside_desc[h]:
                outside_desc[h] = True
                h = heads[h]
        critical = [b for b in range(bstart, n + 1) if heads[b] < bstart or outside_desc[b]]
        drop = set()
        for r in critical:
            members = []
            todo = [c for c in kids[r] if c >= bstart and not outside_desc[c]]
            while todo:
                x = todo.pop()
                members.append(x)
                todo.extend(kids[x])
            if not members:
                continue
            span = members + [r]
            lo, hi = min(span), max(span)
            if hi - lo + 1 != len(span):
                continue
            if not self.projective and not _projective_part(heads, r, span):
                continue
            drop.update(members)
        kept = [b for b in range(bstart, n + 1) if b not in drop]
        return kept, len(drop)


def _projective_part(heads, root, nodes):
    """Whether the gold subtree on ``nodes`` (rooted in ``root``) is projective."""
    index = {x: i for i, x in enumerate(sorted(nodes))}
    local = [-1] * len(index)
    for x in nodes:
        if x != root:
            local[index[x]] = index[heads[x]]
    # re-root at a virtual position so the checker sees one tree rooted at 0
    shifted = [-1] + [h + 1 if h >= 0 else 0 for h in local]
    return no_crossing(shifted)


_fragments = _Cache(_Fragments)
_system = None


def _arc_standard():
    global _system
    if _system is None:
        _system = load_system("arc_standard")
    return _system


def cubic_critical(stack, buffer, heads, arcs, strategy):
    """sigma by the Table 4 grammar on the stack plus the kept buffer nodes."""
    system = _arc_standard()
    grammar = system.grammar
    frag = _fragments.get(heads)
    stack, buffer = tuple(stack), tuple(buffer)
    out = {}
    for t, s2, b2, _, edge in system.successors(stack, buffer, None):
        gain = 0 if edge is None else int(heads[edge[1]] == edge[0])
        kept, dropped = frag.kept(b2[0] if b2 else frag.n + 1)
        nodes = list(s2) + kept
        idx = np.array(nodes)
        h = np.array(heads)
        w = (h[idx][None, :] == idx[:, None]).astype(float)
        if strategy != "none":
            pos = {x: i for i, x in enumerate(nodes)}
            for x, side in system.forbidden(strategy, t, stack, buffer, s2, b2):
                i = pos[x]
                if side == "left":
                    w[i, :i] = NEG_INF
                else:
                    w[i, i + 1:] = NEG_INF
        value = parse(grammar, "p" * (len(s2) - 1) + "s" * (len(kept) + 1), w, "maxplus").value
        out[t] = NEG_INF if value == NEG_INF else gain + dropped + int(value)
    return out

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
from semiparse.transitions.oracles._grammar_rows import grammar_kernel
from semiparse.transitions.systems.loading import load_system
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


_work = _Cache(_arcstd.ArcStandardGold)


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

def _critical_work(heads):
    """The grammar kernel's work for a gold tree: its buffer reduction
    (``GrammarGold.buffer_kept``) is the one this method applies."""
    return grammar_kernel(_arc_standard()).gold_type(heads)


_critical = _Cache(_critical_work)
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
    work = _critical.get(heads)
    stack, buffer = tuple(stack), tuple(buffer)
    h = np.array(heads)
    out = {}
    for t, s2, b2, _, edge in system.successors(stack, buffer, None):
        gain = 0 if edge is None else int(heads[edge[1]] == edge[0])
        kept, dropped = work.buffer_kept(s2, b2)
        nodes = list(s2) + kept
        idx = np.array(nodes)
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

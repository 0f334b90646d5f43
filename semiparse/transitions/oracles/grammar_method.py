"""The grammar-defined oracle (Nederhof 2019, section 4, for any system).

For each legal transition t from c: sigma_t = (1 if t's edge is gold) + the
max-plus value of the system's completion grammar on the configuration t(c),
with w(i, j) = delta_gold(c_i, c_j) (0 for every edge into a word whose
gold head is unknown, in a partial gold tree), virtual positions scored 0, the
strategy's restrictions as -inf weights, and every edge already built between
nodes of the string fixed: its dependent may take no other head, and the edge
scores 0 (it is not counted again).  A node whose built head has left the
string (as after a rule that pops the node under a headed one) takes no other
head either: every edge into it scores 0.

:func:`masked_scores` is the same computation for a system that also declares
its completion as the projective grammar with some edges forbidden
(``[completion.projective]``): the same trees, one state instead of several,
hence a faster parse.
"""
import numpy as np

from semiparse.chart import kernels
from semiparse.chart.inputs import compiled
from semiparse.grammar import load_grammar
from semiparse.transitions.systems.interface import NEG_INF, edge_masks, initial_masks
from semiparse.transitions.oracles.gold import Gold


def grammar_scores(system, gold, stack, buffer, arcs, strategy, memo=None):
    """``{transition: sigma}`` by the completion grammar (see module doc).

    ``memo`` (strategy ``none`` only): values of configurations of this gold
    tree, ``{(stack, buffer, arcs or None): value}``.  A successor found there
    costs no parse, and this configuration's value, the best sigma, is
    added: the best completion of a configuration is one transition followed
    by a best completion of its result, as the completion grammar describes
    exactly the trees a configuration can still reach.  (A strategy's
    restrictions on a successor depend on the transition that made it, so
    its values are not kept.)"""
    out = _scores(system, gold, stack, buffer, arcs, strategy, system.grammar, None, memo)
    if memo is not None and out:
        best = max(out.values())
        if best != NEG_INF:
            memo[stack, buffer, arcs] = best
    return out


def masked_scores(system, gold, stack, buffer, arcs, strategy):
    """``{transition: sigma}`` by the projective grammar with forbidden edges."""
    global _projective
    if _projective is None:
        _projective = load_grammar("projective")
    return _scores(system, gold, stack, buffer, arcs, strategy, _projective, system.forbidden_edges)


_projective = None

# From about this k + m on (stack size - 1 + buffer size) the masked
# projective grammar beats the system's own completion grammar, whose path
# runs in C (strategy none), where the buffer is not reduced: for copies of
# arc-hybrid and arc-eager without critical_buffer, on configurations of long
# UD sentences, each call the first for its tree (`semiparse bench oracle`),
# the grammar path takes 0.3-0.9x the masked path's time below 60, and from
# 60 to 100 1.0-1.4x for arc-eager, 0.7-1.0x for arc-hybrid.  `method="auto"`
# uses the grammar path below.
MASKED_MIN_SIZE = 60


def masked_method(system):
    """``masked_scores`` for ``system`` as a registered method
    ``fn(stack, buffer, heads, arcs, strategy)`` (the gold tree's preparation is
    cached across calls with the same ``heads`` object).  Exact for partial
    gold trees, as the grammar path is (``fn.partial``); the oracle has
    checked ``heads`` under the caller's ``partial`` before calling it."""
    last = [None, None]

    def fn(stack, buffer, heads, arcs, strategy):
        if last[0] is not heads:
            last[0], last[1] = heads, Gold(heads, partial=True)
        return masked_scores(system, last[1], stack, buffer, arcs, strategy)

    fn.partial = True
    return fn


def _scores(system, gold, stack, buffer, arcs, strategy, grammar, forbidden_edges, memo=None):
    rules, tables = compiled(grammar), grammar.tables
    masks = initial_masks(system, strategy, stack, buffer, arcs, gold.n)
    heads, delta = gold.heads, gold.delta
    tracks_arcs = arcs is not None
    out = {}
    for t, s2, b2, a2, edge in system.successors(stack, buffer, arcs):
        gain = 0
        if edge is not None:
            if masks is not None and edge_masks(masks, edge) is None:
                out[t] = NEG_INF
                continue
            gain = 1 if heads[edge[1]] == edge[0] else 0
        if memo is not None:
            known = memo.get((s2, b2, a2 if tracks_arcs else None))
            if known is not None:
                out[t] = gain + known
                continue
        nodes, ids, fixed, cut, weights = _chart_input(system, delta, strategy, t, stack, buffer,
                                                       s2, b2, a2)
        forbid = None
        if forbidden_edges is not None:
            # the projective grammar: its one terminal at every position, and
            # the edges the system's projective form forbids at -inf
            ids = [0] * len(nodes)
            forbid = forbidden_edges(len(nodes) - len(s2) - len(b2), s2, b2, a2).view(np.uint8)
        value = kernels.maxplus_gathered(rules, tables.term_left, tables.term_right, weights,
                                      nodes, ids, fixed, cut, forbid)
        out[t] = NEG_INF if value == NEG_INF else gain + int(value)
    return out


def _chart_input(system, delta, strategy, t, stack, buffer, s2, b2, a2):
    """``(nodes, ids, fixed, cut, weights)``: the completion string of the
    configuration ``s2, b2, a2`` that ``t`` made of ``stack, buffer``, the
    edges built before that stay fixed, the sides the strategy cuts and the
    gold weights (see :func:`semiparse.chart.kernels.maxplus_gathered`)."""
    nodes, ids = system.completion(s2, b2, a2)
    fixed, weights = [], delta
    if a2 is not None:
        pos = {x: i for i, x in enumerate(nodes) if x >= 0}
        # built before: kept in every completion, and not counted; where
        # the head has left the string, no edge into its dependent counts
        built = [x for x in s2 + b2 if a2[x] >= 0]
        fixed = [(pos[a2[x]], pos[x]) for x in built if a2[x] in pos]
        gone = [x for x in built if a2[x] not in pos]
        if gone:
            weights = delta.copy()
            weights[:, gone] = 0.0
    cut = []
    if strategy != "none":
        forbid = system.forbidden(strategy, t, stack, buffer, s2, b2)
        if forbid:
            where = {x: i for i, x in enumerate(nodes) if x >= 0}
            cut = [(where[x], 0 if side == "left" else 1) for x, side in forbid]
    return nodes, ids, fixed, cut, weights


def grammar_tree(system, gold, stack, buffer, arcs, strategy, transition):
    """``{dependent: head}``: the edges between words that a best tree the
    completion grammar derives over the configuration ``transition`` makes
    of ``stack, buffer, arcs`` (validated) adds to it (the edges built before
    and those from virtual nodes left out), for a counterexample of
    ``semiparse check``; None where the grammar derives no tree there (or
    the strategy forbids the transition's edge).  The whole buffer is in the
    string: the reduction of ``critical_buffer`` is the C kernel's."""
    masks = initial_masks(system, strategy, stack, buffer, arcs, gold.n)
    step = next((s for s in system.successors(stack, buffer, arcs) if s[0] == transition), None)
    if step is None:
        raise ValueError(f"transition {transition!r} does not apply here")
    t, s2, b2, a2, edge = step
    if edge is not None and masks is not None and edge_masks(masks, edge) is None:
        return None
    nodes, ids, fixed, cut, weights = _chart_input(system, gold.delta, strategy, t, stack, buffer,
                                                   s2, b2, a2)
    at = [x if x >= 0 else len(weights) - 1 for x in nodes]
    w = np.ascontiguousarray(weights[np.ix_(at, at)], dtype=float)
    for h, d in fixed:
        w[:, d] = NEG_INF
        w[h, d] = 0.0
    for a, side in cut:
        if side == 0:
            w[a, :a] = NEG_INF
        else:
            w[a, a + 1:] = NEG_INF
    tables = system.grammar.tables
    ids = np.asarray(ids, dtype=np.intp)
    pl = np.ascontiguousarray(np.asarray(tables.term_left)[ids], dtype=np.intc)
    pr = np.ascontiguousarray(np.asarray(tables.term_right)[ids], dtype=np.intc)
    _, heads = kernels.best_tree(compiled(system.grammar), pl, pr, w)
    if heads is None:
        return None
    built = {d for _, d in fixed}
    return {nodes[d]: nodes[h] for d, h in enumerate(heads.tolist())
            if h >= 0 and d not in built and nodes[d] >= 0 and nodes[h] >= 0}

"""The value of a spanning completion by a maximum branching
(Chu-Liu-Edmonds, :mod:`semiparse.heads.branching`) over the arcs the
system declares reachable (:mod:`semiparse.transitions.systems.format.spanning`):
the reference the oracle's O(n) kernel (``_spanning.pyx``) is tested
against, and the form that takes arbitrary arc weights."""
import numpy as np

from semiparse.heads.branching import max_branching


def branching_value(system, stack, buffer, arcs, weights):
    """The greatest total weight of the arcs a forest keeping the arcs built
    can add from a configuration of ``system`` (a declared system with a
    spanning completion), each added arc reachable by itself;
    ``weights[h, d]`` the weight of arc h -> d (an (n + 1) square array)."""
    weights = np.asarray(weights, dtype=float)
    n = weights.shape[0] - 1
    arcs = (-1,) * (n + 1) if arcs is None else arcs
    reach = system.reachable.matrix(stack, buffer, arcs, n, system.set_aside(stack, buffer, n))
    w = np.where(reach, weights, -np.inf)
    # the arcs built weigh more than all the others together: every maximum
    # branching keeps them (dropping one frees at most one cycle's arc)
    forced = n * (float(np.abs(weights).max()) + 1) + 1
    for d, h in enumerate(arcs):
        if h >= 0:
            w[:, d] = -np.inf
            w[h, d] = forced
    total, _ = max_branching(w)
    return total - forced * sum(1 for h in arcs if h >= 0)


def gold_weights(heads):
    """Weights of 1 on the gold arcs of ``heads`` (-1: unknown), 0 elsewhere."""
    n = len(heads) - 1
    w = np.zeros((n + 1, n + 1))
    for d, h in enumerate(heads):
        if h >= 0:
            w[h, d] = 1.0
    return w


def branching_scores(system, stack, buffer, arcs, heads):
    """``{transition: sigma}`` for a configuration by :func:`branching_value`
    with gold weights: the gold edge each legal move adds plus the value
    after it."""
    w = gold_weights(heads)
    arcs = tuple(arcs) if arcs is not None else (-1,) * len(heads)
    out = {}
    for name, s, b, a, edge in system.successors(tuple(stack), tuple(buffer), arcs):
        gain = 1 if edge is not None and heads[edge[1]] == edge[0] else 0
        out[name] = gain + round(branching_value(system, s, b, a, w))
    return out

"""Maximum-weight branchings (Chu and Liu 1965; Edmonds 1967): the forest
of arcs, each node with at most one head and no cycle, of the greatest total
weight.  The spanning completion of a transition system
(:mod:`semiparse.transitions.oracles.spanning`) takes its value from one;
O(n^3) per call, for checks and arbitrary weights, where the oracle's own
kernel counts cycles in O(n) for gold weights."""
import numpy as np

from semiparse.heads import find_cycle


def max_branching(weights):
    """``(total, heads)`` of a maximum-weight branching of the arcs
    ``weights[h, d]`` (a square array; ``-inf`` where there is no arc, the
    diagonal ignored): ``heads[d]`` is ``d``'s head or -1.  Nodes may stay
    headless; arcs of negative weight are never worth taking."""
    w = np.array(weights, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be a square matrix, got shape {w.shape}")
    if np.isnan(w).any() or (w == np.inf).any():
        raise ValueError("weights must be finite or -inf")
    n = w.shape[0]
    # a virtual root (node n) with an arc of weight 0 into every node: a
    # branching is then a spanning arborescence of the virtual root
    full = np.full((n + 1, n + 1), -np.inf)
    full[:n, :n] = w
    full[n, :n] = 0.0
    np.fill_diagonal(full, -np.inf)
    heads = _arborescence(full, n)
    out = [-1 if h == n else int(h) for h in heads[:n]]
    total = float(sum(w[h, d] for d, h in enumerate(out) if h >= 0))
    return total, out


def _arborescence(w, root):
    """Heads of a maximum spanning arborescence of ``w`` rooted at ``root``,
    every node having an arc from the root (recursive contraction)."""
    n = w.shape[0]
    heads = np.argmax(w, axis=0)
    heads[root] = -1
    found = find_cycle(heads)
    if found is None:
        return heads
    cycle = found[:-1]
    inside = np.zeros(n, dtype=bool)
    inside[cycle] = True
    keep = [x for x in range(n) if not inside[x]]
    c = len(keep)  # the contracted node
    index = {x: i for i, x in enumerate(keep)}
    sub = np.full((c + 1, c + 1), -np.inf)
    sub[:c, :c] = w[np.ix_(keep, keep)]
    # into the cycle: the arc's weight less that of the cycle arc it replaces
    kept_in = w[np.ix_(keep, cycle)] - w[heads[cycle], cycle][None, :]
    enter = np.argmax(kept_in, axis=1)           # which cycle node each outside head enters
    sub[:c, c] = kept_in[np.arange(c), enter]
    leave = np.argmax(w[np.ix_(cycle, keep)], axis=0)  # which cycle node heads each outside node
    sub[c, :c] = w[np.ix_(cycle, keep)][leave, np.arange(c)]
    inner = _arborescence(sub, index[root])
    out = heads.copy()
    for i, x in enumerate(keep):
        h = inner[i]
        out[x] = -1 if h < 0 else cycle[leave[i]] if h == c else keep[h]
    h = keep[inner[c]]                            # the arc that enters the cycle
    out[cycle[enter[index[h]]]] = h
    return out


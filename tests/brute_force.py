"""The brute-force references the tests compare the library against.

Each one enumerates what the library computes by dynamic programming or by a
shortcut: every tree, every projective tree, every derivation of a split
grammar with every labelling, every optimal projectivization.  None of them
calls the code it checks; tests/test_brute_force.py checks the enumerations
themselves.
"""
import functools
import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import sympy

NEG_INF = float("-inf")


# -- trees ----------------------------------------------------------------------

def is_tree(heads):
    """Every word reaches the root 0 without meeting itself."""
    for d in range(1, len(heads)):
        seen = set()
        while d != 0:
            if d in seen or heads[d] == d:
                return False
            seen.add(d)
            d = heads[d]
    return True


def is_projective(heads):
    """Every word between a head and its dependent descends from the head."""
    for d in range(1, len(heads)):
        lo, hi = sorted((d, heads[d]))
        for x in range(lo + 1, hi):
            while x not in (0, heads[d]):
                x = heads[x]
            if x != heads[d]:
                return False
    return True


def crossing(heads):
    """Do two edges cross?"""
    spans = [(min(h, d), max(h, d)) for d, h in enumerate(heads) if d]
    return any(a < c < b < e for a, b in spans for c, e in spans)


def all_trees(n):
    """Every tree over n words (tuples, position 0 the root), from every head array."""
    for rest in itertools.product(range(n + 1), repeat=n):
        heads = (-1, *rest)
        if is_tree(heads):
            yield heads


@functools.lru_cache(maxsize=None)
def projective_trees(n1):
    """Every projective head array over positions 0..n1-1 rooted at 0, built
    recursively: a head's subtree covers an interval, split into the
    consecutive intervals of its children."""

    @functools.lru_cache(maxsize=None)
    def subtree(lo, hi, h):  # edge lists of h's subtree covering exactly lo..hi
        return [a + b for a in children(lo, h - 1, h) for b in children(h + 1, hi, h)]

    @functools.lru_cache(maxsize=None)
    def children(lo, hi, h):  # edge lists of h's children tiling lo..hi
        if lo > hi:
            return [()]
        return [((c, h),) + sub + rest
                for end in range(lo, hi + 1) for c in range(lo, end + 1)
                for sub in subtree(lo, end, c) for rest in children(end + 1, hi, h)]

    trees = []
    for edges in subtree(0, n1 - 1, 0):
        heads = [-1] * n1
        for d, h in edges:
            heads[d] = h
        trees.append(heads)
    return trees


@functools.lru_cache(maxsize=None)
def all_projective(n):
    """Array (trees x n+1) of every projective tree over n words (column 0 is -1)."""
    return np.array(projective_trees(n + 1), dtype=np.int64).reshape(-1, n + 1)


def projective_optima(heads, single_root=False, only=None):
    """``(optima, kept)``: the projective trees that keep the most heads of
    ``heads`` (single-rooted ones with ``single_root``; keeping every head
    outside ``only`` when it is given) and how many they keep; ``(empty,
    None)`` when no projective tree qualifies."""
    found = all_projective(len(heads) - 1)
    if single_root:
        found = found[(found[:, 1:] == 0).sum(axis=1) == 1]
    if only is not None:
        fixed = [d for d in range(1, len(heads)) if d not in only]
        found = found[(found[:, fixed] == np.asarray(heads)[fixed]).all(axis=1)]
    if not len(found):
        return found, None
    scores = (found[:, 1:] == np.asarray(heads[1:])).sum(axis=1)
    return found[scores == scores.max()], int(scores.max())


# -- derivations of split grammars ----------------------------------------------------

def derivation_count(grammar, terms, heads, root=0):
    """Number of derivations of the tree ``heads`` over ``terms``, node by
    node with the head automata of the grammar, the whole string headed by
    position ``root`` (its entry in ``heads`` ignored)."""
    rules = grammar.rules
    finish = [r.symbols for r in rules if r.form == "finish"]
    left = [r.symbols for r in rules if r.form == "left"]
    right = [r.symbols for r in rules if r.form == "right"]
    n1 = len(heads)
    children = {h: [d for d in range(n1) if d != root and heads[d] == h] for h in range(n1)}

    def ways(h):  # constituent type -> number of derivations of h's subtree
        lefts = sorted((d for d in children[h] if d < h), reverse=True)
        rights = sorted(d for d in children[h] if d > h)
        b0, c0 = grammar.terminals[terms[h]]
        lstates = Counter({b0: 1})
        for d in lefts:
            dw = ways(d)
            nxt = Counter()
            for b2, a, b in left:
                if lstates[b] and dw[a]:
                    nxt[b2] += lstates[b] * dw[a]
            lstates = nxt
        rstates = Counter({c0: 1})
        for d in rights:
            dw = ways(d)
            nxt = Counter()
            for c2, c, a in right:
                if rstates[c] and dw[a]:
                    nxt[c2] += rstates[c] * dw[a]
            rstates = nxt
        out = Counter()
        for a, b, c in finish:
            out[a] += lstates[b] * rstates[c]
        return out

    return ways(root)[grammar.start]


def semiring_value(ring, grammar, terms, w):
    """The sum over derivations of the product of edge weights, in ``ring``."""
    total = ring.zero
    for heads in projective_trees(len(terms)):
        count = derivation_count(grammar, terms, heads)
        if not count:
            continue
        value = ring.one
        for d in range(1, len(heads)):
            h = heads[d]
            value = ring.times(value, ring.zero if w[h, d] == NEG_INF
                               else ring.weight(float(w[h, d]), h, d))
        for _ in range(count):
            total = ring.plus(total, value)
    return total


def tree_score(heads, w):
    return sum(w[heads[d], d] for d in range(1, len(heads)))


def labelled_derivations(grammar, terms, w3):
    """``[(score, heads, labels)]``, each labelled derivation once (a tree with c
    derivations appears c times per labelling), forbidden edges left out."""
    out = []
    for heads in projective_trees(len(terms)):
        count = derivation_count(grammar, terms, heads)
        options = [[l for l in range(w3.shape[2]) if w3[heads[d], d, l] > NEG_INF]
                   for d in range(1, len(heads))]
        for labels in itertools.product(*options):
            labels = (-1, *labels)
            score = sum(w3[heads[d], d, labels[d]] for d in range(1, len(heads)))
            out += [(score, heads, list(labels))] * count
    return out


def log_partition(derivations):
    if not derivations:
        return NEG_INF
    top = max(s for s, _, _ in derivations)
    return top + math.log(sum(math.exp(s - top) for s, _, _ in derivations))


def derivation_entropy(derivations):
    log_z = log_partition(derivations)
    return -sum(math.exp(s - log_z) * (s - log_z) for s, _, _ in derivations)


def derivation_expectation(derivations, values):
    """The expectation of the sum of ``values[h, d]`` (or ``values[h, d, l]``)
    over a derivation's edges."""
    log_z = log_partition(derivations)
    total = 0.0
    for s, heads, labels in derivations:
        picked = [values[heads[d], d] if values.ndim == 2 else values[heads[d], d, labels[d]]
                  for d in range(1, len(heads))]
        total += math.exp(s - log_z) * sum(picked)
    return total


def projective_distribution(w):
    """``(marginals, entropy, [(tree, probability)])`` of p(T) proportional to
    exp(score(T)) over the projective trees (one at least without -inf),
    computed from exact score differences, so that scores of any size give
    the exact distribution."""
    n1 = len(w)
    trees = projective_trees(n1)
    scores = [None if any(w[h[d], d] == NEG_INF for d in range(1, n1))
              else sum(Fraction(w[h[d], d]) for d in range(1, n1)) for h in trees]
    best = max(s for s in scores if s is not None)
    gaps = [-math.inf if s is None or s - best < -2000 else float(s - best) for s in scores]
    weights = [math.exp(g) for g in gaps]
    z = math.fsum(weights)
    probs = [x / z for x in weights]
    mu = np.zeros((n1, n1))
    for heads, p in zip(trees, probs):
        for d in range(1, n1):
            mu[heads[d], d] += p
    h = -math.fsum(p * (g - math.log(z)) for p, g in zip(probs, gaps) if p > 0)
    return mu, h, list(zip(trees, probs))


# -- statistics -----------------------------------------------------------------------

def chi_square_p(observed, probabilities):
    """p-value of Pearson's chi-square statistic (len - 1 degrees of freedom)."""
    total = sum(observed)
    statistic = sum((o - total * p) ** 2 / (total * p) for o, p in zip(observed, probabilities))
    dof = sympy.Rational(len(observed) - 1, 2)
    return float(sympy.uppergamma(dof, sympy.Float(statistic) / 2) / sympy.gamma(dof))


def labelled_distribution(grammar, terms, w3):
    """log Z, and per labelled edge (h, d, l): the marginal, the gradient of
    the entropy, the gradient of E[sum of values] (values = a fixed array),
    by enumerating derivations."""
    derivations = labelled_derivations(grammar, terms, w3)
    log_z = log_partition(derivations)
    shape = w3.shape
    values = np.arange(np.prod(shape), dtype=float).reshape(shape) % 5 - 2.0
    mu, e_sx, e_vx = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    e_s = e_v = entropy = 0.0
    for s, heads, labels in derivations:
        p = math.exp(s - log_z)
        v = sum(values[heads[d], d, labels[d]] for d in range(1, len(heads)))
        e_s, e_v, entropy = e_s + p * s, e_v + p * v, entropy - p * (s - log_z)
        for d in range(1, len(heads)):
            mu[heads[d], d, labels[d]] += p
            e_sx[heads[d], d, labels[d]] += p * s
            e_vx[heads[d], d, labels[d]] += p * v
    return {"derivations": derivations, "log_z": log_z, "mu": mu, "entropy": entropy,
            "d_entropy": -(e_sx - e_s * mu), "values": values, "expected": e_v,
            "d_expected": e_vx - e_v * mu}

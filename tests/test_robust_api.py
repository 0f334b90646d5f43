"""Robustness of the public API: sampling at any length, and misuse giving ValueError."""
import random
from collections import Counter

import numpy as np
import pytest
import sympy

from semiparse import _cky
from semiparse.engine import parse
from semiparse.grammar import load_grammar
from semiparse.projectivity import (
    _grammar,
    _terminals,
    gold_weights,
    is_projective,
    projectivize,
)


def _random_tree(n, seed):
    """Heads of a random tree over n words (each head left of its word): non-projective."""
    rng = random.Random(seed)
    return [-1, 0] + [rng.randrange(1, d) for d in range(2, n + 1)]


# -- item: uniform sampling past the range of a double -----------------------------

@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", [600, 1000])
def test_random_tie_break_is_optimal_when_counts_overflow_doubles(n, single_root):
    heads = _random_tree(n, seed=n)
    g, terminals, w = _grammar(single_root), _terminals(n + 1, single_root), gold_weights(heads)
    _, pl, pr = g.encode(terminals)
    assert _cky.inside("maxcountf", g.compiled, pl, pr, w)[1] == np.inf  # the log path
    out = projectivize(heads, "random", seed=3, single_root=single_root)
    assert len(out) == n + 1 and out[0] == -1 and all(type(h) is int for h in out)
    assert is_projective(out)  # also checks it is a tree
    assert not single_root or out.count(0) == 1
    kept = sum(out[d] == heads[d] for d in range(1, n + 1))
    assert kept == parse(g, terminals, w).value  # the max-plus optimum


def _chi_square_p(observed, expected):
    statistic = sum((o - expected) ** 2 / expected for o in observed)
    k = sympy.Rational(len(observed) - 1, 2)
    return float(sympy.uppergamma(k, sympy.Float(statistic) / 2) / sympy.gamma(k))


@pytest.mark.parametrize("log_counts", [False, True])
def test_sampling_is_uniform_with_double_and_log_counts(log_counts):
    gold = [-1, 3, 5, 0, 1, 3, 2]
    g = load_grammar("projective")
    ids, pl, pr = g.encode("s" * 7)
    w = gold_weights(gold)
    best, count = parse(g, "s" * 7, w, "maxcount").value
    assert count >= 4
    rng = np.random.default_rng(5)
    draws = Counter()
    for _ in range(150 * count):
        score, heads = _cky.best_tree(g.compiled, pl, pr, w, rng.random(8 * 7 + 8), log_counts)
        draws[tuple(heads.tolist())] += 1
    assert len(draws) == count
    for tree in draws:
        assert is_projective(list(tree)) and sum(tree[d] == gold[d] for d in range(1, 7)) == best
    assert _chi_square_p(list(draws.values()), 150) > 1e-3

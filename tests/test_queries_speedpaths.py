"""The fast paths of the semiring queries agree with the plain ones.

The log kernel sums each row of terms aligned on the exponent of a few sample
terms, and falls back to aligning on the largest exponent when a term lies
too far above them or when they are all zero; these tests reach both
fallbacks and compare with the generic Python engine (logs added one by one).
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from semiparse import load_grammar, marginals, parse
from semiparse.engine import outside_generic
from semiparse import semiring as sr

NEG_INF = float("-inf")


def log_inside_both(grammar, w):
    """The log value of the whole input from the Cython and the Python engine."""
    terms = "s" * len(w)
    return (parse(grammar, terms, w, "log").value,
            parse(grammar, terms, w, "log", engine="python").value)


@pytest.mark.parametrize("n1", [5, 9, 14])
def test_log_inside_with_scores_far_apart(n1):
    # Scores of thousands put terms of a row dozens of steps of 2**64 apart,
    # far above the sample terms of some rows.
    w = np.random.default_rng(1).normal(size=(n1, n1)) * 3000
    fast, slow = log_inside_both("projective", w)
    assert math.isclose(fast, slow, rel_tol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_log_inside_with_most_edges_forbidden(seed):
    # Forbidden edges make the first, middle and last terms of many rows zero;
    # a chain 0 -> 1 -> 2 ... keeps a tree.
    rng = np.random.default_rng(seed)
    n1 = 14
    w = np.where(rng.random((n1, n1)) < 0.7, NEG_INF, rng.normal(size=(n1, n1)) * 30)
    w[np.arange(n1 - 1), np.arange(1, n1)] = 1.0
    fast, slow = log_inside_both("projective", w)
    assert math.isclose(fast, slow, rel_tol=1e-9)


@given(st.integers(2, 12), st.integers(0, 2**32 - 1),
       st.sampled_from([1.0, 100.0, 700.0, 3000.0]), st.floats(0.0, 0.8))
def test_log_inside_matches_generic_engine(n1, seed, scale, forbidden):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n1, n1)) * scale
    w[rng.random((n1, n1)) < forbidden] = NEG_INF
    w[np.arange(n1 - 1), np.arange(1, n1)] = rng.normal(size=n1 - 1) * scale
    fast, slow = log_inside_both("projective", w)
    assert math.isclose(fast, slow, rel_tol=1e-9, abs_tol=1e-9)


def test_marginals_with_scores_far_apart_match_generic_engine():
    rng = np.random.default_rng(7)
    w = rng.normal(size=(10, 10)) * 400
    grammar = load_grammar("projective")
    ids = grammar.encode("s" * 10)[0]
    total, edges = outside_generic(sr.Log(), grammar.tables, ids, w)
    expected = np.exp(np.array(edges) - total)
    np.testing.assert_allclose(marginals(grammar, "s" * 10, w), expected, rtol=1e-9, atol=1e-12)

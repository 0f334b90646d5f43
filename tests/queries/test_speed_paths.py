"""The fast paths of the semiring queries agree with the plain ones.

The log kernel first fills a chart of plain probabilities (each dependent's
weights divided by the largest), and fills it again with scaled numbers when
an entry leaves the range where plain doubles are exact; these tests run both
paths alone and together against brute force, check that entries drifting
away from 1 (down with peaked scores, up with flat ones) are rescaled and
stay on the plain path, and reach the range's limits through the weights and
through entries of one width spread too far.
The scaled numbers' sum aligns each row of terms on the exponent of a few
sample terms, and falls back to aligning on the largest exponent when a term
lies too far above them or when they are all zero; these tests reach both
fallbacks and compare with the generic Python engine (logs added one by one).
The max-plus kernel and the hand-written floors keep four running maxima or
sums per row; they are compared with the generic engine on rows long enough
to use them.
A batch of marginals runs each thread's kernels in one call without the GIL;
its results equal single calls and its errors name the first bad item.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse import load_grammar, marginals, parse
from semiparse import semiring as sr
from semiparse.bench._eisner import eisner_best_score, eisner_marginals
from semiparse.chart.kernels import edge_marginals, edge_marginals_batch, inside
from semiparse.chart.generic import outside_generic
from semiparse.chart.inputs import check_input, compiled

from brute_force import semiring_value
from support import grammar_and_input

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


def kernel_args(grammar, terms, w):
    grammar = load_grammar(grammar) if isinstance(grammar, str) else grammar
    (_, pl, pr), wc = check_input(grammar, terms, w)
    return compiled(grammar), pl, pr, wc


@settings(max_examples=80)
@given(case=grammar_and_input(max_len=6))
def test_both_log_paths_equal_brute_force(case):
    g, terms, w = case
    expected = semiring_value(sr.Log(), g, terms, w)
    args = kernel_args(g, terms, w)
    values = {k: inside(k, *args) for k in ("log", "logplain", "logscaled")}
    # scores of 0, 1 and 2 keep every entry in the plain path's range
    assert not math.isnan(values["logplain"])
    for got in values.values():
        assert got == expected or math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    plain_total, plain = edge_marginals("logplain", *args)
    scaled_total, scaled = edge_marginals("logscaled", *args)
    assert (plain is None) == (scaled is None) == (expected == NEG_INF)
    if plain is not None:
        np.testing.assert_allclose(plain, scaled, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(edge_marginals("log", *args)[1], plain)


def spread_too_far(n1=9):
    """Half of the columns with their largest score 200 above the others on
    the diagonal, an edge no tree has: the weights stay in the plain path's
    range (at least 1e-100), but the entries of one width then spread over
    more than it."""
    w = np.zeros((n1, n1))
    w[np.arange(1, n1 // 2 + 1), np.arange(1, n1 // 2 + 1)] = 200.0
    return w


def far_below_the_diagonal(n1=9, noise=0.0):
    """Every edge a tree can use 150 below its column's largest score (on
    the diagonal): the entries of width 1 are near 1e-65, so the chart must
    rescale to stay in its range."""
    w = np.random.default_rng(n1).normal(size=(n1, n1)) * noise - 150.0
    np.fill_diagonal(w, 0.0)
    return w


OUT_OF_RANGE = {
    "a width's entries spread too far": spread_too_far,
    "a weight below the range": lambda: np.where(np.eye(9, k=1) > 0, -240.0, 0.0),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE))
def test_log_kernel_falls_back_where_plain_doubles_are_not_exact(case):
    w = OUT_OF_RANGE[case]()
    terms = "s" * len(w)
    args = kernel_args("projective", terms, w)
    assert math.isnan(inside("logplain", *args))
    assert edge_marginals("logplain", *args)[1] is None
    scaled_total, scaled = edge_marginals("logscaled", *args)
    total, edges = edge_marginals("log", *args)
    assert inside("log", *args) == total == inside("logscaled", *args) == scaled_total
    np.testing.assert_array_equal(edges, scaled)
    floor_total, floor_edges = eisner_marginals(w)
    assert floor_total == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(floor_edges, edges, rtol=1e-9, atol=1e-12)
    assert math.isclose(total, parse("projective", terms, w, "log", engine="python").value,
                        rel_tol=1e-9)


RESCALED = {  # entries drifting away from 1, down or up, and how far to compare
    "every edge far below its column's largest": (far_below_the_diagonal, True),
    "the same with noise": (lambda: far_below_the_diagonal(noise=2.0), True),
    "all scores equal over 200 words (1e166 trees)": (lambda: np.zeros((201, 201)), False),
    "peaked scores over 160 words": (
        lambda: np.random.default_rng(0).normal(size=(161, 161)) * 10, False),
}


@pytest.mark.parametrize("case", sorted(RESCALED))
def test_plain_path_rescales_entries_that_drift(case):
    make, small = RESCALED[case]
    w = make()
    terms = "s" * len(w)
    args = kernel_args("projective", terms, w)
    plain_total, plain = edge_marginals("logplain", *args)
    scaled_total, scaled = edge_marginals("logscaled", *args)
    assert plain is not None  # the plain path stayed exact by rescaling
    assert plain_total == pytest.approx(scaled_total, rel=1e-12)
    np.testing.assert_allclose(plain, scaled, rtol=1e-9, atol=1e-12)
    floor_total, floor_edges = eisner_marginals(w)
    assert floor_total == pytest.approx(plain_total, rel=1e-12)
    np.testing.assert_allclose(floor_edges, plain, rtol=1e-9, atol=1e-12)
    if small:
        assert math.isclose(plain_total, semiring_value(sr.Log(), load_grammar("projective"), terms, w),
                            rel_tol=1e-9)


@settings(max_examples=40)
@given(st.integers(1, 16), st.integers(0, 2**32 - 1), st.floats(0.0, 0.5))
def test_maxplus_kernel_and_floors_match_generic_engine(n1, seed, forbidden):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n1, n1))
    w[rng.random((n1, n1)) < forbidden] = NEG_INF
    w[np.arange(n1 - 1), np.arange(1, n1)] = rng.normal(size=n1 - 1)  # a tree exists
    terms = "s" * n1
    slow = parse("projective", terms, w, "maxplus", engine="python").value
    assert math.isclose(inside("maxplus", *kernel_args("projective", terms, w)), slow,
                        rel_tol=1e-12, abs_tol=1e-12)
    assert math.isclose(eisner_best_score(w), slow, rel_tol=1e-12, abs_tol=1e-12)
    finite = np.where(w == NEG_INF, -30.0, w)
    log_z, post = eisner_marginals(finite)
    total, edges = edge_marginals("log", *kernel_args("projective", terms, finite))
    assert math.isclose(log_z, total, rel_tol=1e-12, abs_tol=1e-12)
    np.testing.assert_allclose(post, edges, rtol=1e-9, atol=1e-12)


def test_marginals_with_scores_far_apart_match_generic_engine():
    rng = np.random.default_rng(7)
    w = rng.normal(size=(10, 10)) * 400
    grammar = load_grammar("projective")
    ids = grammar.encode("s" * 10)[0]
    total, edges = outside_generic(sr.Log(), grammar.tables, ids, w)
    expected = np.exp(np.array(edges) - total)
    np.testing.assert_allclose(marginals(grammar, "s" * 10, w), expected, rtol=1e-9, atol=1e-12)


def mixed_batch(rng):
    """Sentences of several lengths, one with labelled weights."""
    batch = [("s" * n1, rng.normal(size=(n1, n1))) for n1 in (1, 2, 5, 9, 3, 12, 7)]
    batch.append(("s" * 6, rng.normal(size=(6, 6, 3))))
    return batch


@pytest.mark.parametrize("query", ["marginals", "max_marginals"])
@pytest.mark.parametrize("n_jobs", [1, 2, 3])
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_batch_equals_single_calls(query, n_jobs, engine):
    fn = getattr(semiparse, query)
    batch = mixed_batch(np.random.default_rng(3))
    got = fn("projective", batch, n_jobs=n_jobs, engine=engine)
    assert len(got) == len(batch)
    for (terms, w), out in zip(batch, got):
        np.testing.assert_array_equal(out, fn("projective", terms, w, engine=engine))


def test_edge_marginals_batch_equals_single_kernel_calls():
    grammar = load_grammar("projective")
    items = [kernel_args(grammar, "s" * n1, np.random.default_rng(n1).normal(size=(n1, n1)))[1:]
             for n1 in (1, 4, 8)]
    items.append(kernel_args(grammar, "sss", np.full((3, 3), NEG_INF))[1:])
    for kernel in ("log", "maxplus"):
        got = edge_marginals_batch(kernel, compiled(grammar), items)
        for (pl, pr, w), (total, edges) in zip(items, got):
            want_total, want_edges = edge_marginals(kernel, compiled(grammar), pl, pr, w)
            assert total == want_total
            if want_edges is None:
                assert edges is None
            else:
                np.testing.assert_array_equal(edges, want_edges)
    assert edge_marginals_batch("log", compiled(grammar), []) == []
    with pytest.raises(ValueError, match="unknown kernel 'max'"):
        edge_marginals_batch("max", compiled(grammar), items)


NO_TREE = ("sss", np.full((3, 3), NEG_INF))
BAD_SHAPE = ("sss", np.zeros((2, 2)))


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("bad, index, message", [
    ({3: NO_TREE, 5: BAD_SHAPE}, 3, "no tree"),           # a kernel's error before a check's
    ({1: NO_TREE, 2: BAD_SHAPE}, 1, "no tree"),
    ({2: BAD_SHAPE, 4: NO_TREE}, 2, r"weights have shape \(2, 2\)"),   # a check's error before a kernel's
    ({1: NO_TREE, 2: "not a pair"}, 1, "no tree"),
    ({0: "not a pair", 1: NO_TREE}, 0, "expected a .terminals, weights. pair"),
    ({30: NO_TREE}, 30, "no tree"),                        # in the second thread's share
    ({37: NO_TREE, 39: BAD_SHAPE}, 37, "no tree"),         # in a later group of kernel calls
    ({18: BAD_SHAPE, 33: NO_TREE}, 18, "weights have shape"),
])
def test_batch_error_names_first_bad_item(n_jobs, bad, index, message):
    rng = np.random.default_rng(0)
    batch = [("s" * 4, rng.normal(size=(4, 4))) for _ in range(40)]
    for i, item in bad.items():
        batch[i] = item
    with pytest.raises(ValueError, match=rf"^batch item {index}: {message}"):
        semiparse.marginals("projective", batch, n_jobs=n_jobs)

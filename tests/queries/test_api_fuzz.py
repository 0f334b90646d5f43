"""Fuzzing the public API: queries with scores of every size, and arguments
of every type.

- Queries (``parse`` in each semiring, marginals, max-marginals, entropy,
  expectations, samples; labelled weights; batches) of scores plus a
  constant up to +-1e300 give what the scores without it give: the
  distribution over trees is the same, score values move by the constant
  times the number of words, or a ValueError says the total is beyond a
  double.  Scores with huge finite values and -inf mixed in give brute
  force's numbers or a ValueError, never NaN or a wrong number.
- The API's functions, given wrong types, None, floats for ints, huge and
  negative ints, bools, wrong shapes or numpy scalars, answer or raise
  ValueError: no other exception, no crash.
"""
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import semiparse
from semiparse import heads as tree_heads
from semiparse.chart.score_shift import ROUNDING_LIMIT

from brute_force import (crossing, is_projective, is_tree, projective_distribution, projective_optima,
                         projective_trees)
from support import REFUSED, split_grammars, value_error_or_result

NEG_INF = float("-inf")
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- queries: a constant added to every score --------------------------------------------

# queries whose trees come with their scores
SCORED = ("viterbi heads", "kbest heads", "maxcount count", "polynomial counts")


@st.composite
def shifted_cases(draw):
    """``(grammar, terminals, w, c)``: a random split grammar, scores in
    [-20, 20] with some -inf, optionally a label axis, and a constant c with
    |c| >= 64 so that ``(w + c) - c`` is exact (the two are within a factor
    of 2)."""
    g = draw(split_grammars())
    n1 = draw(st.integers(2, 5))
    terms = draw(st.lists(st.sampled_from(sorted(g.terminals)), min_size=n1, max_size=n1))
    labels = draw(st.sampled_from([0, 0, 2]))
    shape = (n1, n1, labels) if labels else (n1, n1)
    size = int(np.prod(shape))
    finite = st.floats(-20, 20, allow_nan=False).map(lambda x: round(x, 3))
    w = np.array(draw(st.lists(st.one_of(finite, finite, finite, st.just(NEG_INF)),
                               min_size=size, max_size=size))).reshape(shape)
    c = draw(st.one_of(st.floats(64, 1e300), st.floats(-1e300, -64),
                       st.sampled_from([1e16, -1e16, 3e15, 1e300, -1e300, 1.7e308])))
    return g, "".join(terms), w, c


def outcome(call):
    """``("value", result)`` or ``("error", message)`` for a ValueError."""
    try:
        return "value", call()
    except ValueError as exc:
        return "error", str(exc)


def same(a, b):
    """Equal results: arrays and nested lists element by element (NaN never)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and not np.isnan(a).any() and np.array_equal(a, b)
    return a == b


@pytest.mark.slow
@settings(FAST, max_examples=500)  # 30 ms an example: 1000 took 30-60 s of the test run
@given(case=shifted_cases(), seed=st.integers(0, 9))
def test_a_constant_added_to_every_score_changes_no_distribution(case, seed):
    g, t, w, c = case
    big = w + c
    small = big - c
    words = len(t) - 1
    distribution = {
        "entropy": lambda x: semiparse.entropy(g, t, x),
        "marginals": lambda x: semiparse.marginals(g, t, x),
        "expected": lambda x: semiparse.expected(g, t, x, np.ones(x.shape)),
        "sample": lambda x: semiparse.sample(g, t, x, rng=random.Random(seed), k=3),
        "viterbi heads": lambda x: semiparse.parse(g, t, x, "viterbi").heads,
        "counting": lambda x: semiparse.parse(g, t, x, "counting").value,
        "boolean": lambda x: semiparse.parse(g, t, x, "boolean").value,
        "batch": lambda x: semiparse.marginals(g, [(t, x), (t, x)], n_jobs=2),
    }
    if w.ndim == 2:
        distribution.update({
            "maxcount count": lambda x: semiparse.parse(g, t, x, "maxcount").value[1],
            "kbest heads": lambda x: [h for _, h in semiparse.parse(g, t, x, "kbest", k=3).trees],
            "polynomial counts": lambda x: sum(semiparse.parse(g, t, x, "polynomial").value.values()),
            "uniform best": lambda x: semiparse.chart.engine.sample_best_tree(g, t, x, random.Random(seed)),
        })
    for name, query in distribution.items():
        kind, got = outcome(lambda: query(big))
        expected_kind, expected = outcome(lambda: query(small))
        if expected_kind == "error":  # no tree, or rounding the small scores could spoil
            assert kind == "error", name
            continue
        if kind == "error":  # trees come with their scores, which may be beyond a double
            assert name in SCORED and "overflows a double" in got and abs(words * c) > 1e308, \
                (name, got)
            continue
        if name == "batch":
            assert all(same(x, y) for x, y in zip(got, expected)), name
        else:
            assert same(got, expected), name
    # score values: those of the small scores plus words * c, or beyond a double
    total = words * c
    scores = {
        "maxplus": lambda x: semiparse.parse(g, t, x, "maxplus").value,
        "log": lambda x: semiparse.parse(g, t, x, "log").value,
        "max_marginals": lambda x: semiparse.max_marginals(g, t, x),
    }
    for name, query in scores.items():
        kind, got = outcome(lambda: query(big))
        expected_kind, expected = outcome(lambda: query(small))
        if expected_kind == "error":
            assert kind == "error", name
            continue
        expected = np.asarray(expected, dtype=float)
        reachable = np.isfinite(expected)
        if not reachable.any():
            assert kind == "value" and np.array_equal(got, expected), name
            continue
        largest = abs(total) + np.abs(expected[reachable]).max()  # inf when beyond a double
        if kind == "error":  # only what a double cannot hold
            assert "overflows a double" in got and largest > 1.7e308, (name, got)
            continue
        got = np.asarray(got, dtype=float)
        assert np.array_equal(np.isfinite(got), reachable), name
        assert np.allclose(got[reachable], expected[reachable] + total, rtol=1e-12,
                           atol=1e-9 * (1 + abs(total))), name


# -- queries: huge finite scores against brute force --------------------------------------

@st.composite
def extreme_scores(draw):
    """Projective-grammar scores over 2 to 4 words mixing small values, huge
    ones (up to +-1.7e308) and -inf."""
    n1 = draw(st.integers(3, 5))
    scale = draw(st.sampled_from([1.0, 1e8, 1e15, 1e100, 1e300]))
    entry = st.one_of(
        st.floats(-30, 30).map(lambda x: round(x, 2)),
        st.floats(-1, 1).map(lambda x: x * scale),
        st.sampled_from([1.7e308, -1.7e308, 1e300, -1e300, NEG_INF]),
    )
    w = np.array(draw(st.lists(entry, min_size=n1 * n1, max_size=n1 * n1))).reshape(n1, n1)
    w[0, 1:] = np.where(np.isneginf(w[0, 1:]), 0.0, w[0, 1:])  # a flat tree stays possible
    return w


def exact_best(w):
    """``(best score as a Fraction, number of trees)`` of the projective trees."""

    scores = [sum(Fraction(w[h[d], d]) for d in range(1, len(w))) for h in projective_trees(len(w))
              if all(w[h[d], d] > NEG_INF for d in range(1, len(w)))]
    return max(scores), len(scores)


@pytest.mark.slow
@settings(FAST, max_examples=1000)
@given(w=extreme_scores())
def test_extreme_scores_give_brute_force_or_a_value_error(w):
    t = "s" * len(w)
    best, count = exact_best(w)
    representable = abs(best) <= Fraction(np.finfo(float).max)
    mu, entropy, trees = projective_distribution(w)
    kind, got = outcome(lambda: semiparse.marginals("projective", t, w))
    if kind == "value":
        assert not np.isnan(got).any() and np.allclose(got, mu, atol=1e-9)
    else:
        assert "too large for log-space queries" in got or "differ by more than" in got
    kind, got = outcome(lambda: semiparse.entropy("projective", t, w))
    if kind == "value":
        assert math.isfinite(got) and abs(got - entropy) <= 1e-6
    kind, got = outcome(lambda: semiparse.parse("projective", t, w, "maxplus").value)
    if kind == "value":
        # within the engine's contract: a billionth of the value, or ROUNDING_LIMIT (a
        # best tree of 1.62 over edges of 1e8 and -1e8 reads 1.6200000048)
        assert representable and math.isclose(got, float(best), rel_tol=1e-9, abs_tol=ROUNDING_LIMIT)
    else:  # the scores do not fit a double, or the best tree's cancel
        assert "differ by more than" in got or "lost its digits" in got or (
            "overflows a double" in got and abs(best) > Fraction(1.6e308)), got
    kind, got = outcome(lambda: semiparse.parse("projective", t, w, "viterbi"))
    if kind == "value":
        score = sum(Fraction(w[got.heads[d], d]) for d in range(1, len(w)))
        assert abs(score - best) <= abs(best) * Fraction(1e-9) + Fraction(ROUNDING_LIMIT)
    assert semiparse.parse("projective", t, w, "counting").value == count
    kind, got = outcome(lambda: semiparse.sample("projective", t, w, rng=random.Random(0), k=4))
    if kind == "value":
        possible = {tuple(h) for h, p in trees if p > 1e-12}
        assert all(tuple(h) in possible for h in got)


# -- argument types --------------------------------------------------------------------------

def junk():
    """Values of every type a caller might pass by mistake."""
    return st.one_of(
        st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.integers(-3, 6),
        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4), st.binary(max_size=3),
        st.lists(st.one_of(st.integers(-3, 6), st.floats(-3, 6), st.none(), st.booleans()),
                 max_size=5),
        st.tuples(st.integers(-3, 6), st.integers(-3, 6)),
        st.sampled_from([np.int64(2), np.int32(-1), np.float64(1.5), np.bool_(True), np.uint8(3),
                         np.array([-1, 0, 1]), np.array([[-1, 0]]), np.array([-1.0, 0.0]),
                         np.array([], dtype=int), np.zeros((2, 2)), {}, {1: 2}, object(),
                         [-1, 0, 1], [-1, 2, 0, 1], (-1, 0), range(3), 2 ** 31, -2 ** 31 - 1]),
    )


def _candidate(heads):
    """Heads the brute-force references read: -1 for the root, then positions."""
    return bool(heads) and heads[0] == -1 and all(0 <= h < len(heads) for h in heads[1:])


def _only(value):
    """``only`` as the brute force reads it (None if it is not positions)."""
    if value is None:
        return None
    positions = value_error_or_result(tree_heads.int_tuple, value, "only")
    return None if positions is REFUSED else set(positions)


def _is_optimal(out, heads, single_root=False, only=None):
    """``out`` is one of brute force's optimal projectivizations of ``heads``."""
    optima, _ = projective_optima(list(heads), single_root, only)
    return list(out) in optima.tolist()


def _optimal_count(heads, single_root=False, only=None):
    optima, kept = projective_optima(list(heads), single_root, only)
    return kept, len(optima)


@pytest.mark.slow
@settings(FAST, max_examples=1000)
@given(a=junk(), b=junk(), c=junk())
def test_tree_functions_take_any_argument(a, b, c):
    n = a if not isinstance(a, int) or a < 200 else a * 2 ** 40
    count = value_error_or_result(semiparse.count_projective, n)
    if count is not REFUSED:
        assert count == math.comb(3 * int(n), int(n)) // (2 * int(n) + 1)
    # the answers on ``a`` against brute force on ``a`` as the API reads it
    heads = value_error_or_result(tree_heads.int_tuple, a, "heads")
    candidate = heads is not REFUSED and _candidate(heads)
    tree = candidate and is_tree(heads)
    answered = {check: value_error_or_result(check, a)
                for check in (tree_heads.is_tree, tree_heads.no_crossing, tree_heads.check_tree,
                              tree_heads.tree_problems, tree_heads.find_cycle, semiparse.is_projective)}
    if candidate:
        assert answered[tree_heads.is_tree] is tree
        assert (answered[tree_heads.find_cycle] is None) is tree
        if tree or answered[tree_heads.no_crossing] is not REFUSED:
            assert answered[tree_heads.no_crossing] is (not crossing(heads))
        assert (answered[tree_heads.check_tree] == heads) if tree else (
            answered[tree_heads.check_tree] is REFUSED)
        problems = answered[tree_heads.tree_problems]
        assert (not [p for p in problems if not p[2]]) is tree
    for check in (tree_heads.check_tree, semiparse.is_projective):
        if answered[check] is not REFUSED:
            assert tree
    if answered[semiparse.is_projective] is not REFUSED:
        assert answered[semiparse.is_projective] is is_projective(heads)
    out = value_error_or_result(semiparse.projectivize, a)
    if out is not REFUSED:
        assert tree and _is_optimal(out, heads)
    out = value_error_or_result(semiparse.count_optimal_projectivizations, a)
    if out is not REFUSED:
        assert tree and out == _optimal_count(heads)
    for fixed in ([-1, 2, 0, 1], [-1, 0, 1]):
        for out, single_root, only in (
                (value_error_or_result(semiparse.projectivize, fixed, a), False, None),
                (value_error_or_result(semiparse.projectivize, fixed, "random", a), False, None),
                (value_error_or_result(semiparse.projectivize, fixed, "first", None, a, engine=b), a, None),
                (value_error_or_result(semiparse.projectivize, fixed, "closest", only=a), False, a)):
            if out is not REFUSED:
                assert _is_optimal(out, fixed, bool(single_root), _only(only))
        out = value_error_or_result(semiparse.count_optimal_projectivizations, fixed, a, b)
        if out is not REFUSED:
            assert out == _optimal_count(fixed, bool(a))
        out = value_error_or_result(semiparse.count_optimal_projectivizations, fixed, False, "auto", c)
        if out is not REFUSED:
            assert out == _optimal_count(fixed, False, _only(c))


def _same_answer(got, expected):
    """The fast oracle's answer is the exhaustive one: dicts and sets
    equal, score arrays equal (-inf included)."""
    if isinstance(got, np.ndarray):
        return np.array_equal(got, expected)
    if isinstance(got, list):
        return len(got) == len(expected) and all(map(_same_answer, got, expected))
    return got == expected


SYSTEMS = ("arc_standard", "arc_eager", "arc_hybrid", "lr_spine")


@pytest.mark.slow
@settings(FAST, max_examples=1000)
@given(name=st.sampled_from(SYSTEMS), a=junk(), b=junk(), c=junk(), steps=st.integers(0, 4))
def test_oracles_and_configurations_take_any_argument(name, a, b, c, steps):
    system = semiparse.system(name)
    oracle = system.oracle()
    config = system.initial(3)
    for _ in range(steps):
        if config.legal():
            config = config.apply(config.legal()[-1])
    gold = [-1, 2, 0, 2]
    # the reference: the exhaustive search, through the same interface
    reference = semiparse.oracle(name, method="exhaustive")
    value_error_or_result(semiparse.oracle, a)
    value_error_or_result(semiparse.oracle, name, a, b)
    started = value_error_or_result(system.initial, a)
    if started is not REFUSED:
        assert list(started.stack) == [0] and list(started.buffer) == list(range(1, int(a) + 1))
    for args in ((a,), ("shift", a)):
        after = value_error_or_result(config.apply, *args)
        if after is not REFUSED:
            assert args[0] in config.legal() and after is not config
    for method in (config.valid, config.arc, config.copy().do):
        value_error_or_result(method, a)
    for query, args in (
            ("scores", (config, a)), ("scores", (a, gold)), ("scores", (a, b, gold)),
            ("scores", (config.stack, config.buffer, a, b)),
            ("scores", (config.stack, config.buffer, gold, a)),
            ("optimal", (a, b, c)), ("optimal", (config, a)),
            ("scores_batch", (a, b)), ("scores_batch", ([config, a], [gold, gold])),
            ("scores_batch", ([config], [a])), ("scores_batch", ([config], [gold], a))):
        got = value_error_or_result(getattr(oracle, query), *args)
        if got is not REFUSED:
            expected = value_error_or_result(getattr(reference, query), *args)
            assert expected is not REFUSED, f"the exhaustive oracle refuses what {query} answers"
            assert _same_answer(got, expected), (query, got, expected)

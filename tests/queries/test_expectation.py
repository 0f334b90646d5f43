"""Entropy, expectations, exact sampling and labelled edges against brute force.

The brute force enumerates every labelled derivation of a small input: every
projective tree (a split grammar derives no other) with its number of
derivations under the grammar's head automata (tests/brute_force.py), times every
assignment of an allowed label to each edge.
"""
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings

import semiparse
from semiparse import semiring as sr
from semiparse.chart.engine import parse
from semiparse.chart.labels import reduce_labels

from brute_force import (
    chi_square_p,
    derivation_count,
    derivation_entropy,
    derivation_expectation,
    is_projective,
    labelled_derivations,
    log_partition,
    projective_trees,
)
from support import BAD_INPUTS, labelled_cases

NEG_INF = float("-inf")
# -- brute force ------------------------------------------------------------------

def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# -- strategies ---------------------------------------------------------------------

def unlabelled(w):
    return w[:, :, None]


# -- entropy and expectations ---------------------------------------------------------

@settings(max_examples=80)
@given(case=labelled_cases(max_len=5, labelled=False))
def test_entropy_and_expected_equal_brute_force(case):
    g, terms, w, values = case
    derivations = labelled_derivations(g, terms, unlabelled(w))
    if not derivations:
        for query in (lambda: semiparse.entropy(g, terms, w),
                      lambda: semiparse.expected(g, terms, w, values)):
            with pytest.raises(ValueError, match="no tree"):
                query()
        return
    assert close(semiparse.entropy(g, terms, w), derivation_entropy(derivations))
    assert close(semiparse.expected(g, terms, w, values), derivation_expectation(derivations, values))


def test_expected_gold_edges_and_uniform_entropy():
    # All scores 0: uniform over the 12 projective trees of 3 words.
    w = np.zeros((4, 4))
    assert close(semiparse.entropy("projective", "ssss", w), math.log(12))
    gold = np.zeros((4, 4))
    gold[0, 1] = gold[1, 2] = gold[2, 3] = 1.0
    trees = projective_trees(4)
    mean = sum(sum(gold[t[d], d] for d in range(1, 4)) for t in trees) / len(trees)
    assert close(semiparse.expected("projective", "ssss", w, gold), mean)


def test_expectation_semiring_is_a_user_semiring_of_parse():
    w = np.random.default_rng(5).normal(size=(5, 5))
    log_z, mean = parse("projective", "sssss", w, sr.Expectation(w)).value
    assert close(log_z, parse("projective", "sssss", w, "log").value)
    assert close(log_z - mean, semiparse.entropy("projective", "sssss", w))


# -- labelled edges ----------------------------------------------------------------------

@settings(max_examples=80)
@given(case=labelled_cases())
def test_labelled_queries_equal_brute_force(case):
    g, terms, w, values = case
    derivations = labelled_derivations(g, terms, w)
    best = max((s for s, _, _ in derivations), default=NEG_INF)
    parsed = {name: semiparse.parse_labelled(g, terms, w, name)
              for name in ("boolean", "counting", "maxplus", "viterbi", "log")}
    assert parsed["boolean"].value == bool(derivations)
    assert parsed["counting"].value == len(derivations)
    assert parsed["maxplus"].value == parsed["viterbi"].value == best
    got = parsed["log"].value
    assert got == log_partition(derivations) or close(got, log_partition(derivations))
    viterbi = parsed["viterbi"]
    if not derivations:
        assert viterbi.heads is None and viterbi.labels is None
        with pytest.raises(ValueError, match="no tree"):
            semiparse.entropy(g, terms, w)
        return
    assert (best, viterbi.heads, viterbi.labels) in [(s, h, l) for s, h, l in derivations]
    assert close(semiparse.entropy(g, terms, w), derivation_entropy(derivations))
    assert close(semiparse.expected(g, terms, w, values), derivation_expectation(derivations, values))
    per_edge = values[:, :, 0]
    assert close(semiparse.expected(g, terms, w, per_edge), derivation_expectation(derivations, per_edge))


@settings(max_examples=40)
@given(case=labelled_cases(max_len=5, labelled=False))
def test_one_label_is_the_unlabelled_parse(case):
    g, terms, w, _ = case
    for name in ("counting", "maxplus", "viterbi", "log", "boolean"):
        one = semiparse.parse_labelled(g, terms, unlabelled(w), name)
        plain = parse(g, terms, w, name)
        assert (one.value, one.heads) == (plain.value, plain.heads)


def test_label_reduction_and_posterior():
    w = np.array([[[0.0, NEG_INF, math.log(3)], [NEG_INF, NEG_INF, NEG_INF]]])
    red = reduce_labels(w)
    assert red.best.tolist() == [[math.log(3), NEG_INF]] and red.argmax[0, 0] == 2
    assert red.count.tolist() == [[2, 0]]
    assert close(red.logsumexp[0, 0], math.log(4)) and red.logsumexp[0, 1] == NEG_INF
    assert np.allclose(red.posterior(), [[[0.25, 0.0, 0.75], [0.0, 0.0, 0.0]]])


# -- sampling ---------------------------------------------------------------------------------

def sampled_frequencies_fit(draws, derivations, temperature=1.0):
    """Chi-square p-value of the draws against p proportional to exp(score / T)."""
    scores = Counter()
    for s, heads, labels in derivations:
        scores[tuple(heads), tuple(labels)] = s / temperature  # one derivation per tree here
    top = max(scores.values())
    z = sum(math.exp(s - top) for s in scores.values())
    keys = list(scores)
    seen = Counter(draws)
    assert set(seen) <= set(keys)
    return chi_square_p([seen[key] for key in keys], [math.exp(scores[key] - top) / z for key in keys])


@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_sample_frequencies_pass_chi_square(temperature):
    w = np.random.default_rng(11).normal(scale=1.5, size=(4, 4))
    derivations = labelled_derivations(semiparse.load_grammar("projective"), "ssss", unlabelled(w))
    rng = random.Random(2024)
    draws = semiparse.sample("projective", "ssss", w, temperature, rng, k=3000)
    draws += [semiparse.sample("projective", "ssss", w, temperature, rng)[0] for _ in range(600)]
    assert len(draws) == 3600
    keys = [(tuple(h), (-1, 0, 0, 0)) for h in draws]
    assert sampled_frequencies_fit(keys, derivations, temperature) > 1e-3


def test_labelled_sample_frequencies_pass_chi_square():
    w = np.random.default_rng(3).normal(size=(4, 4, 2))
    w[0, 2, 1] = w[1, 3, 0] = NEG_INF
    derivations = labelled_derivations(semiparse.load_grammar("projective"), "ssss", w)
    draws = semiparse.sample("projective", "ssss", w, rng=random.Random(9), k=4000)
    keys = [(tuple(h), tuple(l)) for h, l in draws]
    assert sampled_frequencies_fit(keys, derivations) > 1e-3


def test_temperature_divides_the_scores():
    w = np.random.default_rng(4).normal(size=(6, 6, 2))
    hot = semiparse.sample("projective", "s" * 6, w, 3.0, random.Random(1), k=50)
    scaled = semiparse.sample("projective", "s" * 6, w / 3.0, 1.0, random.Random(1), k=50)
    assert hot == scaled
    assert semiparse.sample("projective", "s" * 6, w, 1.0, random.Random(1), k=50) != hot


def test_sample_follows_forbidden_edges_and_grammar():
    # arc_standard derives only some projective trees; -inf edges are never drawn.
    g = semiparse.load_grammar("arc_standard")
    w = np.random.default_rng(8).normal(size=(4, 4))
    w[0, 2] = NEG_INF
    for heads in semiparse.sample(g, "ppss", w, rng=random.Random(0), k=200):
        assert heads[2] != 0 and derivation_count(g, "ppss", heads) > 0


def test_sample_returns_lists_of_heads():
    draws = semiparse.sample("projective", "sss", np.zeros((3, 3)), rng=random.Random(0), k=2)
    assert isinstance(draws, list) and len(draws) == 2
    assert all(isinstance(h, list) and h[0] == -1 and len(h) == 3 for h in draws)


# -- long inputs: no overflow or underflow ------------------------------------------------------

@pytest.mark.parametrize("n, scale", [(100, 50.0), (30, 2000.0)])
def test_long_inputs_with_large_scores_stay_finite(n, scale):
    rng = np.random.default_rng(n)
    w = rng.uniform(-scale, scale, (n + 1, n + 1))
    terms = "s" * (n + 1)
    h = semiparse.entropy("projective", terms, w)
    assert math.isfinite(h) and h >= 0
    values = rng.integers(0, 2, (n + 1, n + 1)).astype(float)
    assert 0 <= semiparse.expected("projective", terms, w, values) <= n
    (heads,) = semiparse.sample("projective", terms, w, rng=random.Random(n))
    assert heads[0] == -1 and is_projective(heads)
    labelled = rng.uniform(-scale, scale, (n + 1, n + 1, 3))
    heads, labels = semiparse.sample("projective", terms, labelled, rng=random.Random(n))[0]
    assert is_projective(heads) and labels[0] == -1 and set(labels[1:]) <= {0, 1, 2}
    assert math.isfinite(semiparse.parse_labelled("projective", terms, labelled, "log").value)


# -- bad input ----------------------------------------------------------------------------------

QUERIES = {
    "entropy": lambda t, w: semiparse.entropy("projective", t, w),
    "expected": lambda t, w: semiparse.expected("projective", t, w, np.zeros(np.shape(w))),
    "sample": lambda t, w: semiparse.sample("projective", t, w),
}
LABELLED = dict(QUERIES, parse_labelled=lambda t, w: semiparse.parse_labelled("projective", t, w))


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    "terms, w, message",
    BAD_INPUTS + [
        ("ss", np.full((2, 2), NEG_INF), "no tree"),
        ((c for c in "ss"), np.zeros((2, 2)), "generator"),
    ],
)
def test_bad_input_is_a_clear_value_error(query, terms, w, message):
    with pytest.raises(ValueError, match=message):
        QUERIES[query](terms, w)


@pytest.mark.parametrize("query", LABELLED)
@pytest.mark.parametrize(
    "terms, w, message",
    [
        ("sss", np.zeros((3, 3, 0)), r"shape \(3, 3, 0\): expected \(3, 3, L\) with L >= 1"),
        ("sss", np.zeros((2, 2, 2)), r"shape \(2, 2, 2\): expected \(3, 3, L\)"),
        ("sss", np.where(np.arange(18).reshape(3, 3, 2) == 7, np.nan, 0.0),
         r"label 1 \(weights\[:, :, 1\]\): weights contain NaN \(first at w\[1, 0\]\)"),
        ("ss", np.array([[[0, 0], [0, np.inf]], [[0, 0], [0, 0]]]), r"label 1 .*\+inf"),
        ("sxs", np.zeros((3, 3, 2)), "terminal 'x'"),
        ("", np.zeros((0, 0, 1)), "empty input"),
        ("ss", np.zeros((2, 2, 2), dtype=complex), "real numbers"),
        ("ss", np.ma.masked_array(np.zeros((2, 2, 2))), "masked array"),
    ],
)
def test_bad_labelled_input_is_a_clear_value_error(query, terms, w, message):
    with pytest.raises(ValueError, match=message):
        LABELLED[query](terms, w)


@pytest.mark.parametrize("temperature", [0, -1.0, float("nan"), float("inf"), "1", True, None])
def test_bad_temperature(temperature):
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        semiparse.sample("projective", "ss", np.zeros((2, 2)), temperature)


def test_bad_sample_arguments():
    w = np.zeros((2, 2))
    with pytest.raises(ValueError, match="positive integer"):
        semiparse.sample("projective", "ss", w, k=0)
    with pytest.raises(ValueError, match="positive integer"):
        semiparse.sample("projective", "ss", w, k=2.0)
    with pytest.raises(ValueError, match="random.Random"):
        semiparse.sample("projective", "ss", w, rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    "values, message",
    [
        (np.zeros((2, 2)), r"shape \(2, 2\): expected \(3, 3\)"),
        (np.full((3, 3), np.nan), r"finite numbers, got nan at values\[0, 0\]"),
        (np.full((3, 3), np.inf), "finite"),
        (np.full((3, 3), "x"), "real numbers"),
        ([[0, 1], [2]], "real numbers"),
    ],
)
def test_bad_values(values, message):
    with pytest.raises(ValueError, match=message):
        semiparse.expected("projective", "sss", np.zeros((3, 3)), values)


def test_bad_labelled_values_and_semiring():
    w = np.zeros((3, 3, 2))
    with pytest.raises(ValueError, match=r"expected \(3, 3, 2\) like the weights or \(3, 3\)"):
        semiparse.expected("projective", "sss", w, np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match="support the semirings"):
        semiparse.parse_labelled("projective", "sss", w, "kbest")
    with pytest.raises(ValueError, match="three axes"):
        semiparse.parse_labelled("projective", "sss", np.zeros((3, 3)))

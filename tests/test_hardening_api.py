"""Hardening of the public API: queries with scores of any size, the C entry
points against out-of-range input, and argument types that must be
ValueErrors.  Each test failed before its fix.

The reference for the queries is brute force over the projective trees,
with tree scores summed exactly (``math.fsum``) and differences taken
before exponentiating, so that it holds at any size of the scores.
"""
import math
import random

import numpy as np
import pytest
from test_engine import projective_trees

import semiparse
from semiparse import engine

NEG_INF = float("-inf")


def brute(w):
    """``(marginals, entropy, [(tree, probability)])`` of p(T) proportional to
    exp(score(T)) over the projective trees, computed from exact score
    differences."""
    n1 = len(w)
    trees = projective_trees(n1)
    scores = [[w[h[d], d] for d in range(1, n1)] for h in trees]
    best = max(range(len(trees)), key=lambda t: math.fsum(scores[t]))
    gaps = [math.fsum(s + [-x for x in scores[best]]) for s in scores]  # exact, then rounded
    weights = [math.exp(g) for g in gaps]
    z = math.fsum(weights)
    probs = [x / z for x in weights]
    mu = np.zeros((n1, n1))
    for heads, p in zip(trees, probs):
        for d in range(1, n1):
            mu[heads[d], d] += p
    entropy = -math.fsum(p * (g - math.log(z)) for p, g in zip(probs, gaps) if p > 0)
    return mu, entropy, list(zip(trees, probs))


# -- 1. queries with large scores ------------------------------------------------------

@pytest.mark.parametrize("c", [1e16, -1e16, 1e300, -1e300, 1.7e308, -1.7e308])
def test_a_constant_shared_by_every_score_changes_no_distribution(c):
    """All scores equal: uniform over the 3 trees of 2 words, however large."""
    w, zero = np.full((3, 3), c), np.zeros((3, 3))
    assert semiparse.entropy("projective", "sss", w) == pytest.approx(math.log(3), abs=1e-12)
    assert semiparse.expected("projective", "sss", w, np.ones((3, 3))) == pytest.approx(2.0)
    assert np.allclose(semiparse.marginals("projective", "sss", w),
                       semiparse.marginals("projective", "sss", zero), atol=1e-12)
    # the shifted scores are those of all-zero scores: the same draws from the same seed
    assert semiparse.sample("projective", "sss", w, rng=random.Random(5), k=30) == \
        semiparse.sample("projective", "sss", zero, rng=random.Random(5), k=30)
    assert len({tuple(h) for h in semiparse.sample("projective", "sss", w,
                                                    rng=random.Random(5), k=30)}) == 3
    if abs(2 * c) < 1.7e308:  # the best score, 2c, is a double
        assert semiparse.parse("projective", "sss", w, "maxcount").value == (2 * c, 3)
        mm = semiparse.max_marginals("projective", "sss", w)
        assert np.array_equal(mm, np.where(np.isfinite(
            semiparse.max_marginals("projective", "sss", zero)), 2 * c, NEG_INF))


@pytest.mark.parametrize("c", [1e5, 3e15, -7e16, 1e300])
def test_a_constant_added_to_random_scores_changes_no_query(c):
    """``w + c`` rounds; ``(w + c) - c`` is exact (the two are within a
    factor 2), so both describe one distribution and every query agrees."""
    rng = np.random.default_rng(int(abs(c)) % 1000)
    w = rng.normal(scale=3.0, size=(5, 5))
    big = w + c
    small = big - c
    g, t = "projective", "sssss"
    assert semiparse.entropy(g, t, big) == pytest.approx(semiparse.entropy(g, t, small),
                                                          abs=1e-12)
    assert np.allclose(semiparse.marginals(g, t, big), semiparse.marginals(g, t, small),
                       atol=1e-12)
    assert semiparse.sample(g, t, big, rng=random.Random(1), k=5) == \
        semiparse.sample(g, t, small, rng=random.Random(1), k=5)
    for semiring in ("viterbi", "kbest"):
        assert semiparse.parse(g, t, big, semiring, k=3 if semiring == "kbest" else None).heads \
            == semiparse.parse(g, t, small, semiring, k=3 if semiring == "kbest" else None).heads
    assert semiparse.parse(g, t, big, "maxcount").value[1] == \
        semiparse.parse(g, t, small, "maxcount").value[1]
    batch = semiparse.marginals(g, [(t, big), (t, small)], n_jobs=2)
    assert np.allclose(batch[0], batch[1], atol=1e-12)
    labelled = np.stack([w, w - 1.0], axis=2)
    assert semiparse.entropy(g, t, labelled + c) == pytest.approx(
        semiparse.entropy(g, t, (labelled + c) - c), abs=1e-12)


def test_marginals_keep_their_digits_at_any_size_of_the_scores():
    """The words' best edges form a cycle (1 <-> 2), so every tree takes an
    edge about s below its word's best: the marginals depend on differences
    of 1 between scores of size s, which a rounded scaled number lost (0.29
    off near 1e15 before)."""
    rng = np.random.default_rng(3)
    for s in (1e3, 1e9, 1e12, 1e15, 1e16):
        for _ in range(3):
            w = -s + rng.normal(scale=20.0, size=(5, 5))
            w[2, 1] = w[1, 2] = 0.0
            mu, _, _ = brute(w)
            assert np.allclose(semiparse.marginals("projective", "sssss", w), mu, atol=1e-12)


def test_entropy_and_samples_refuse_what_rounding_would_spoil():
    """The same cycle with s = 1e12: log Z and E[score] are both near -1e12,
    and their difference would have lost 3 digits: a ValueError, not a number."""
    w = -1e12 + np.random.default_rng(4).normal(scale=2.0, size=(4, 4))
    w[2, 1] = w[1, 2] = 0.0
    with pytest.raises(ValueError, match="entropy: the likely trees score about 1e\\+12"):
        semiparse.entropy("projective", "ssss", w)
    with pytest.raises(ValueError, match="sample: the likely trees score about 1e\\+12"):
        semiparse.sample("projective", "ssss", w)
    w[2, 1] = w[1, 2] = -1e12 + 1e3  # still below the others by a 2-cycle, but close: exact
    _, entropy, _ = brute(w)
    assert semiparse.entropy("projective", "ssss", w) == pytest.approx(entropy, abs=1e-9)


def test_soft_forbidden_edges_cost_nothing():
    """-1e300 on edges no likely tree needs: the marginals are those of -inf
    there (they were refused as too large before)."""
    w = np.random.default_rng(6).normal(size=(6, 6))
    soft, hard = w.copy(), w.copy()
    soft[0, 3] = soft[4, 5] = -1e300
    hard[0, 3] = hard[4, 5] = NEG_INF
    for query in (semiparse.marginals, semiparse.entropy):
        assert np.allclose(query("projective", "ssssss", soft), query("projective", "ssssss", hard),
                           atol=1e-12)


def test_what_a_double_cannot_hold_is_a_value_error():
    w = np.zeros((3, 3))
    w[0, 1], w[2, 1] = 1.7e308, -1.7e308  # their difference is beyond a double
    for query in (semiparse.entropy, semiparse.marginals, semiparse.max_marginals,
                  lambda g, t, w: semiparse.parse(g, t, w, "viterbi")):
        with pytest.raises(ValueError, match="differ by more than a double holds"):
            query("projective", "sss", w)
    big = np.full((4, 4), 1e308)  # 3e308: the best score itself is beyond a double
    with pytest.raises(ValueError, match="overflows a double"):
        semiparse.parse("projective", "ssss", big)
    with pytest.raises(ValueError, match="overflows a double"):
        semiparse.max_marginals("projective", "ssss", big)
    assert semiparse.entropy("projective", "ssss", big) == pytest.approx(math.log(12))
    assert semiparse.parse("projective", "ssss", big, "counting").value == 12


def test_labelled_constants_keep_the_label_counts():
    """log 3 added to 1e16 is lost: the labels' log-sum-exp needs the shift
    first.  Uniform over 3 trees times 2 labels on each of 2 edges."""
    w = np.full((3, 3, 2), 1e16)
    assert semiparse.entropy("projective", "sss", w) == pytest.approx(math.log(12), abs=1e-12)
    assert semiparse.parse("projective", "sss", w, "counting").value == 12
    assert semiparse.parse("projective", "sss", w, "log").value == pytest.approx(2e16)
    mu = semiparse.marginals("projective", "sss", w)
    assert np.allclose(mu, semiparse.marginals("projective", "sss", np.zeros((3, 3, 2))))


def test_engine_shift_is_per_dependent_and_ignores_unused_entries():
    w = np.array([[0.0, 5.0, -3.0], [2e300, 1e300, 7.0], [-1.0, 3.0, 1e300]])
    shifted, shift = engine.shifted(w)
    assert shift.columns.tolist() == [0.0, 5.0, 7.0]  # column 0 and the diagonal are no edges
    assert shift.total == 12.0
    assert np.array_equal(shifted, [[NEG_INF, 0.0, -10.0], [NEG_INF, NEG_INF, 0.0],
                                    [NEG_INF, -2.0, NEG_INF]])

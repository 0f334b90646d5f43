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

import semiparse
from semiparse import heads as tree_heads
from semiparse.chart import engine
from semiparse.chart.engine import MAX_COUNT_WORDS

from brute_force import projective_distribution

NEG_INF = float("-inf")


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
            mu, _, _ = projective_distribution(w)
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
    _, entropy, _ = projective_distribution(w)
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


def test_scores_that_cancel_are_refused_not_rounded():
    """The best tree (0 -> 1 -> 3 -> 2) scores 0 + 0 + 1 = 1, but against its
    words' best edges it lies 1e100 below, and 1e100 - 1e100 + 1 keeps no
    digit of the 1 (0 came back, a tie with another tree)."""
    w = np.zeros((4, 4))
    w[0, 2], w[0, 3], w[2, 3], w[3, 2] = 1e100, -1e100, -1e100, 1.0
    for semiring in ("maxplus", "viterbi", "maxcount", "log"):
        with pytest.raises(ValueError, match="lost its digits"):
            semiparse.parse("projective", "ssss", w, semiring)
    with pytest.raises(ValueError, match="too large for log-space queries"):
        semiparse.marginals("projective", "ssss", w)


def test_no_tree_stays_minus_infinity_when_the_shift_overflows():
    w = np.full((4, 4), 1.7e308)
    w[:, 3] = NEG_INF  # word 3 has no head: no tree; the other words' shifts sum past a double
    assert semiparse.parse("projective", "ssss", w).value == NEG_INF
    assert semiparse.parse("projective", "ssss", w, "log").value == NEG_INF


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


# -- 8. the C entry points check what they index with ---------------------------------

# Each call indexed C arrays with a user's value (a crash, a silent overwrite,
# or a division by zero before): run in a child process, so that a crash fails
# this test instead of ending the run.
C_ENTRY_CALLS = r'''
import numpy as np
import semiparse
from semiparse import heads
from semiparse.chart import kernels
from semiparse.chart.inputs import compiled
from semiparse.transitions import Configuration
from semiparse.transitions.runtime import _configuration
from semiparse.transitions.fast import _arcstd, _costs, _lrspine

g = semiparse.load_grammar("projective")
i32 = lambda *v: np.array(v, dtype=np.intc)
w3 = np.zeros((3, 3))
calls = {
    "no_crossing negative head": lambda: heads.no_crossing([-1, -100000000]),
    "no_crossing huge head": lambda: heads.no_crossing([-1, 2 ** 40]),
    "no_crossing root not first": lambda: heads.no_crossing([3, 0, 0]),
    "no_crossing cycle": lambda: heads.no_crossing([-1, 2, 1]),
    "inside short start states": lambda: kernels.inside("maxplus", compiled(g), i32(0), i32(0), w3),
    "inside states out of range": lambda: kernels.inside("log", compiled(g), i32(0, 9, 0), i32(0, 0, 0), w3),
    "inside modulus 0": lambda: kernels.inside("countmod", compiled(g), i32(0, 0, 0), i32(0, 0, 0), w3, 0),
    "inside empty": lambda: kernels.inside("maxplus", compiled(g), i32(), i32(), np.zeros((0, 0))),
    "best_tree non-square": lambda: kernels.best_tree(compiled(g), i32(0, 0, 0), i32(0, 0, 0), np.zeros((3, 2))),
    "best_tree uniforms": lambda: kernels.best_tree(compiled(g), i32(0, 0, 0), i32(0, 0, 0), w3, np.full(40, 7.0)),
    "edge_marginals lengths": lambda: kernels.edge_marginals("log", compiled(g), i32(0, 0), i32(0, 0, 0), w3),
    "edge_marginals_batch lengths": lambda: kernels.edge_marginals_batch(
        "maxplus", compiled(g), [(i32(0, 0, 0), i32(0, 0, 0), w3), (i32(0), i32(0, 0, 0), w3)]),
    "configuration without state": lambda: Configuration().stack,
    "configuration without state do": lambda: Configuration().do(0),
    "fill_rows short out": lambda: _configuration.fill_rows(
        [semiparse.system("arc_standard").initial(2)] * 3, [[-1, 0, 1]] * 3,
        semiparse.system("arc_standard").machine, lambda h, i: (None, 2), lambda c, i: None,
        np.zeros((1, 3))),
    "arc-standard work not a tree": lambda: _arcstd.ArcStandardGold([-1, 5, 0]),
    "arc-standard stack beyond n": lambda: _arcstd.linear_scores(_arcstd.ArcStandardGold([-1, 0, 1]), (0, 9), (), 0),
    "arc-standard strategy code": lambda: _arcstd.linear_scores(_arcstd.ArcStandardGold([-1, 0, 1]), (0,), (1, 2), 7),
    "arc-eager arcs beyond n": lambda: _costs.eager_scores(_costs.CostsGold([-1, 0, 1]), (0,), (1, 2), (-1, 99, -1)),
    "arc-hybrid empty stack": lambda: _costs.hybrid_scores(_costs.CostsGold([-1, 0, 1]), (), (1, 2)),
    "lr-spine buffer before the stack": lambda: _lrspine.scores(_lrspine.SpineGold((-1, 0, 1, 2)), (0, 1), 0, (-1,) * 4),
    "lr-spine work not a tree": lambda: _lrspine.SpineGold((-1, -7)),
    "lr-spine spine beyond n": lambda: _lrspine.table_value(_lrspine.SpineGold((-1, 0)), [((9,), (0,))], [], 0),
}
for name, call in calls.items():
    try:
        call()
    except ValueError:
        continue
    raise SystemExit(f"{name}: no ValueError")
print("all refused")
'''


def test_c_entry_points_refuse_out_of_range_input(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", C_ENTRY_CALLS], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "all refused", \
        (done.returncode, done.stdout[-500:], done.stderr[-1500:])


@pytest.mark.parametrize("bad, reason", [
    ([-1, 1.5], "element 1 is 1.5"), ([-1, True], "element 1 is True"), (None, "got NoneType"),
    ("abc", "got (str|the string)"), ([-1, None], "element 1 is None"),
    (np.array([-1.0, 0.0]), "element 0"),
])
def test_tree_checks_refuse_what_is_not_integer_heads(bad, reason):
    for check in (tree_heads.is_tree, tree_heads.no_crossing, tree_heads.tree_problems):
        with pytest.raises(ValueError, match=reason):
            check(bad)


@pytest.mark.parametrize("bad", [{0: -1, 1: 0}, {-1, 0}])
def test_heads_are_not_read_from_mappings_or_sets(bad):
    for check in (tree_heads.check_tree, tree_heads.tree_problems):
        with pytest.raises(ValueError, match="got (dict|set)"):
            check(bad)


@pytest.mark.parametrize("bad", [[-1, 7], [-1, 1.5], [-1, None], None, [-1, 2 ** 70], {1: 2}])
def test_find_cycle_refuses_heads_beyond_the_positions(bad):
    with pytest.raises(ValueError, match="find_cycle needs a sequence of integer heads"):
        tree_heads.find_cycle(bad)


def test_tree_checks_still_answer_for_trees():
    assert tree_heads.is_tree([-1, 0, 1]) and tree_heads.no_crossing(np.array([-1, 0, 1]))
    assert not tree_heads.is_tree([-1, 2 ** 70])
    assert not tree_heads.no_crossing([-1, 2, 0, 1])


# -- 15. the API's integers: ValueError with the reason ---------------------------------

def test_count_projective_refuses_what_it_cannot_count():
    for n in (10 ** 30, MAX_COUNT_WORDS + 1):  # hours of work beyond the bound
        with pytest.raises(ValueError, match=f"count_projective takes n up to {MAX_COUNT_WORDS} "):
            semiparse.count_projective(n)
    assert semiparse.count_projective(np.int64(4)) == math.comb(12, 4) // 9


def test_configurations_take_integers_and_names_only():
    system = semiparse.system("arc_standard")
    with pytest.raises(ValueError, match="number of words n must be an integer from 0 to"):
        system.initial(2 ** 31)
    assert system.initial(np.int64(2)).buffer == (1, 2)
    config = system.initial(3)
    with pytest.raises(ValueError, match="name must be a transition name"):
        config.apply(3)
    for label in (1.5, 2 ** 40, "1", True):
        with pytest.raises(ValueError, match="label must be an integer"):
            config.apply("shift", label)
    for move in (1.5, None, "0", np.array([[1, 2]])):
        for method in (config.valid, config.copy().do, config.arc):
            with pytest.raises(ValueError, match="move must be an integer"):
                method(move)
    assert config.apply("shift", np.int64(3)).stack == (0, 1)
    assert not config.valid(2 ** 40) and config.arc(-5) is None


# -- 20. arguments blamed by name --------------------------------------------------------

def test_oracle_scores_names_the_configuration_it_was_given():
    oracle = semiparse.oracle("arc_standard")
    with pytest.raises(ValueError, match="config must be a Configuration .*got None"):
        oracle.scores(None, [-1, 0, 1])
    with pytest.raises(ValueError, match="config must be a Configuration"):
        oracle.optimal("shift", [-1, 0])
    with pytest.raises(ValueError, match="unknown oracle method"):
        semiparse.oracle("arc_standard", "none", ["grammar"])
    with pytest.raises(ValueError, match="both must be sequences"):
        oracle.scores_batch(None, [[-1, 0]])


def test_a_bad_seed_is_refused_for_every_tree():
    for heads in ([-1, 0, 1], [-1, 2, 0, 1]):  # projective, then not
        for tie_break in ("random", "first"):
            with pytest.raises(ValueError, match="seed must be None, an int or a random.Random"):
                semiparse.projectivize(heads, tie_break, seed=1.5)
    with pytest.raises(ValueError, match="only must be a collection of word positions"):
        semiparse.projectivize([-1, 2, 0, 1], only=[[1]])


def test_scores_the_shift_rounds_are_refused_by_every_log_space_query():
    """2 and 3 would each head the other at 1e16, so every tree takes an edge
    about 1e16 below its word's best, and 1.38 - 1e16 is rounded by 0.62:
    the marginals drifted by 0.15 (0.380 read 0.532).  Refused by marginals,
    expectations and entropy, labelled or not; at 1e6 the shift is exact
    enough and the marginals are brute force's."""
    w = np.zeros((5, 5))
    w[1, 3], w[2, 3], w[3, 2] = 1.38, 1e16, 1e16
    queries = (lambda x: semiparse.marginals("projective", "sssss", x),
               lambda x: semiparse.expected("projective", "sssss", x, np.ones(x.shape)),
               lambda x: semiparse.entropy("projective", "sssss", x))
    for query in queries:
        for weights in (w, np.stack([w, w - 1.0], axis=2)):
            with pytest.raises(ValueError, match="is rounded by (0.62|1) in a double"):
                query(weights)
    w[2, 3] = w[3, 2] = 1e6
    mu, entropy, _ = projective_distribution(w)
    assert np.allclose(semiparse.marginals("projective", "sssss", w), mu, atol=1e-9)
    assert semiparse.entropy("projective", "sssss", w) == pytest.approx(entropy, abs=1e-9)


@pytest.mark.parametrize("k", [10 ** 6 + 1, 2 ** 31, 10 ** 30])
def test_sampling_refuses_more_draws_than_it_can_hold(k):
    with pytest.raises(ValueError, match="up to 1,000,000"):
        semiparse.sample("projective", "sss", np.zeros((3, 3)), k=k)


@pytest.mark.parametrize("n_jobs", [2 ** 31, 10 ** 30])
def test_batches_take_any_number_of_threads(n_jobs):
    """More threads than items run one item per thread (np.array_split made
    n_jobs chunks before: a MemoryError or an OverflowError)."""
    batch = [("sss", np.zeros((3, 3)))] * 3
    for query in (semiparse.marginals, semiparse.entropy):
        assert len(query("projective", batch, n_jobs=n_jobs)) == 3


def test_trees_whose_scores_sum_beyond_a_double_are_too_large_not_missing():
    """Edges of 1.7e308 into three words, two of which cross the third: after
    the shift every projective tree scores below the most negative double,
    and the queries say the scores are too large (they used to say there was
    no tree, and parse gave -inf for a best tree of 1.7e308)."""
    w = np.zeros((5, 5))
    w[0, 3] = w[2, 4] = w[4, 2] = 1.7e308
    for query in (semiparse.marginals, semiparse.entropy):
        with pytest.raises(ValueError, match="too large for log-space queries"):
            query("projective", "sssss", w)
    for semiring in ("maxplus", "viterbi", "log"):  # its best score is 1.7e308, not -inf
        with pytest.raises(ValueError, match="differ by more than a double can sum"):
            semiparse.parse("projective", "sssss", w, semiring)

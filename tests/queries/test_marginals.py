"""Edge marginals and max-marginals (the outside pass), the fast log inside
pass, batches, and the hand-written inside-outside floor.

The reference is the brute force of tests/brute_force.py: every projective tree over
the input, weighed by its number of derivations under the grammar.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse import load_grammar, marginals, max_marginals, parse
from semiparse import semiring as sr
from semiparse.bench._eisner import eisner_by_width, eisner_marginals
from semiparse.chart.generic import outside_generic

from brute_force import derivation_count, projective_trees, tree_score
from support import BAD_INPUTS, REPO, grammar_and_input

NEG_INF = float("-inf")
SHIPPED = sorted(p.stem for p in (REPO / "grammars").glob("*.grammar"))


def derivable_trees(grammar, terms, w):
    """``(heads, score, number of derivations)`` of the trees with all edges allowed."""
    out = []
    for heads in projective_trees(len(terms)):
        count = derivation_count(grammar, terms, heads)
        score = tree_score(heads, w)
        if count and score > NEG_INF:
            out.append((heads, score, count))
    return out


def edges(heads):
    return [(heads[d], d) for d in range(1, len(heads))]


def close(a, b):
    return np.allclose(a, b, rtol=1e-9, atol=1e-12)


# -- against brute force ---------------------------------------------------------------

@settings(max_examples=80)
@given(case=grammar_and_input())
def test_marginals_equal_brute_force(case):
    g, terms, w = case
    trees = derivable_trees(g, terms, w)
    for engine in ("cython", "python"):
        if not trees:
            with pytest.raises(ValueError, match="no tree"):
                marginals(g, terms, w, engine=engine)
            continue
        top = max(score for _, score, _ in trees)
        expected = np.zeros(w.shape)
        for heads, score, count in trees:
            for h, d in edges(heads):
                expected[h, d] += count * math.exp(score - top)
        expected /= sum(count * math.exp(score - top) for _, score, count in trees)
        assert close(marginals(g, terms, w, engine=engine), expected)


@settings(max_examples=80)
@given(case=grammar_and_input())
def test_max_marginals_equal_brute_force(case):
    g, terms, w = case
    trees = derivable_trees(g, terms, w)
    expected = np.full(w.shape, NEG_INF)
    for heads, score, _ in trees:
        for h, d in edges(heads):
            expected[h, d] = max(expected[h, d], score)
    for engine in ("cython", "python"):
        if not trees:
            with pytest.raises(ValueError, match="no tree"):
                max_marginals(g, terms, w, engine=engine)
        else:
            got = max_marginals(g, terms, w, engine=engine)
            assert np.array_equal(got == NEG_INF, expected == NEG_INF)
            finite = expected > NEG_INF
            assert close(got[finite], expected[finite])


@settings(max_examples=60)
@given(case=grammar_and_input())
def test_generic_outside_counts_derivations_through_each_edge(case):
    g, terms, w = case
    expected = np.zeros(w.shape, dtype=int)
    for heads, _, count in derivable_trees(g, terms, w):
        for h, d in edges(heads):
            expected[h, d] += count
    total, got = outside_generic(sr.Counting(), g.tables, g.terminal_ids(terms), w)
    assert total == parse(g, terms, w, "counting").value
    assert np.array_equal(np.array(got), expected)


# -- properties ----------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=30)
@given(data=st.data())
def test_shipped_grammars_give_each_word_a_head_distribution(name, data):
    g = load_grammar(name)
    n1 = data.draw(st.integers(1, 9))
    terms = data.draw(st.lists(st.sampled_from(sorted(g.terminals)), min_size=n1, max_size=n1))
    w = np.random.default_rng(data.draw(st.integers(0, 99))).normal(scale=3, size=(n1, n1))
    if not parse(g, terms, w, "boolean").value:
        with pytest.raises(ValueError, match="no tree"):
            marginals(g, terms, w)
        return
    m = marginals(g, terms, w)
    assert np.all(m >= 0) and np.allclose(m.sum(axis=0)[1:], 1.0, atol=1e-12)
    assert m[:, 0].sum() == 0 and np.trace(m) == 0


@settings(max_examples=30)
@given(case=grammar_and_input(max_len=6), seed=st.integers(0, 99))
def test_marginals_are_the_gradient_of_the_log_partition(case, seed):
    g, terms, w = case
    w = np.where(w == NEG_INF, w, np.random.default_rng(seed).normal(size=w.shape))
    if parse(g, terms, w, "maxplus").value == NEG_INF:
        return
    m = marginals(g, terms, w)
    eps = 1e-5
    for h, d in np.argwhere(w > NEG_INF):
        up, down = w.copy(), w.copy()
        up[h, d] += eps
        down[h, d] -= eps
        grad = (parse(g, terms, up, "log").value - parse(g, terms, down, "log").value) / (2 * eps)
        assert abs(grad - m[h, d]) < 1e-6


@settings(max_examples=60)
@given(case=grammar_and_input(max_len=7), seed=st.integers(0, 99))
def test_fast_log_inside_equals_the_log_semiring(case, seed):
    g, terms, w = case
    rng = np.random.default_rng(seed)
    w = np.where(w == NEG_INF, w, rng.normal(scale=rng.choice([0.1, 1, 30]), size=w.shape))
    slow = parse(g, terms, w, "log", engine="python").value
    fast = parse(g, terms, w, "log", engine="cython").value
    assert fast == slow or math.isclose(fast, slow, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("score", [1e15, -1e15, 700.0, -745.0, 1e-300])
def test_log_inside_and_marginals_take_large_and_small_scores(score):
    w = np.full((5, 5), score)
    w[2, 3] = score / 2
    slow = parse("projective", "sssss", w, "log", engine="python").value
    assert math.isclose(parse("projective", "sssss", w, "log").value, slow, rel_tol=1e-9)
    m = marginals("projective", "sssss", w)
    assert np.allclose(m.sum(axis=0)[1:], 1.0, atol=1e-12)
    if abs(score) < 1e14:  # beyond, log-space differences have too few digits left
        assert close(m, marginals("projective", "sssss", w, engine="python"))
    else:  # the trees with the edge 2 -> 3 are infinitely less likely, or more
        assert m[2, 3] == pytest.approx(0.0 if score > 0 else 1.0, abs=1e-12)


@pytest.mark.parametrize("score", [1e300, -1e300, 1e17])
def test_huge_scores_log_inside_is_the_log_semiring_and_marginals_take_the_limit(score):
    """The edge 2 -> 3 scores score / 2 against score: infinitely less likely
    than the others into 3, or more, so the marginals are those of forbidding
    it, or of forcing it.  Likely trees whose own scores are that far apart
    are refused."""
    w = np.full((5, 5), score)
    w[2, 3] = score / 2
    assert parse("projective", "sssss", w, "log").value == \
        parse("projective", "sssss", w, "log", engine="python").value
    limit = np.zeros((5, 5))
    if score > 0:
        limit[2, 3] = NEG_INF
    else:
        limit[:, 3], limit[2, 3] = NEG_INF, 0.0
    assert close(marginals("projective", "sssss", w), marginals("projective", "sssss", limit))
    spread = np.random.default_rng(0).normal(size=(5, 5)) * abs(score) / 4
    with pytest.raises(ValueError, match="too large for log-space queries"):
        marginals("projective", "sssss", spread)


@pytest.mark.parametrize("n", [1, 2, 5, 20, 41])
def test_floor_equals_engine(n):
    w = np.random.default_rng(n).normal(size=(n + 1, n + 1))
    log_z, post = eisner_marginals(w)
    terms = "s" * (n + 1)
    assert math.isclose(log_z, parse("projective", terms, w, "log").value, rel_tol=1e-12)
    assert close(post, marginals("projective", terms, w))


@pytest.mark.parametrize("n", [1, 2, 5, 20, 41])
def test_the_c_eisner_of_the_benchmarks_equals_the_engine(n):
    """The C Eisner (eisner_src.c) that the log partition's first-order path
    and the benchmarks share, run alone on shifted scores."""
    w = np.random.default_rng(n).normal(size=(n + 1, n + 1))
    log_z, post = eisner_by_width(w)
    terms = "s" * (n + 1)
    assert math.isclose(log_z, parse("projective", terms, w, "log").value, rel_tol=1e-12)
    assert close(post, marginals("projective", terms, w))
    wide = np.random.default_rng(n).normal(size=(n + 1, n + 1)) * 1e3
    if n > 2:
        assert math.isnan(eisner_by_width(wide)[0])  # beyond its plain numbers: NaN, not a guess


def test_long_input_with_large_scores_is_finite():
    n = 300
    w = np.random.default_rng(5).uniform(-50, 50, size=(n + 1, n + 1))
    terms = "s" * (n + 1)
    log_z = parse("projective", terms, w, "log").value
    best = parse("projective", terms, w).value
    assert math.isfinite(log_z) and best <= log_z
    m = marginals("projective", terms, w)
    assert np.isfinite(m).all() and np.allclose(m.sum(axis=0)[1:], 1.0, atol=1e-9)
    mm = max_marginals("projective", terms, w)
    assert mm.max() == pytest.approx(best, rel=1e-12)
    assert log_z == pytest.approx(eisner_marginals(w)[0], rel=1e-12)


# -- batches ----------------------------------------------------------------------------

def batch_items(count, seed=0):
    rng = np.random.default_rng(seed)
    items = []
    for i in range(count):
        n1 = int(rng.integers(1, 12))
        w = rng.normal(size=(n1, n1))
        w[rng.random((n1, n1)) < 0.1] = NEG_INF
        items.append(("s" * n1, w))
    return items


def same(a, b):
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_batches_equal_single_calls(n_jobs):
    items = batch_items(40)
    g = load_grammar("arc_standard")
    stack = [(t.replace("s", "p", 1), w) for t, w in items]  # p: a stack node
    # the polynomial semiring on the inputs of up to 9 terminals (33 of the
    # 40): its values grow fast with the input, and the seven of 10 and 11
    # took 11 of the 11.5 s of its single calls (and as much again batched)
    short = [(t, w) for t, w in stack if len(t) <= 9]
    for semiring in ("maxplus", "log", "counting", "viterbi", "polynomial"):
        inputs = short if semiring == "polynomial" else stack
        got = parse(g, inputs, semiring=semiring, n_jobs=n_jobs)
        expected = [parse(g, t, w, semiring) for t, w in inputs]
        assert [r.value for r in got] == [r.value for r in expected]
        assert [r.heads for r in got] == [r.heads for r in expected]
    projective = [(t, np.where(w == NEG_INF, 0.0, w)) for t, w in items]  # every input has a tree
    for query in (marginals, max_marginals):
        got = query("projective", projective, n_jobs=n_jobs)
        assert len(got) == len(projective)
        assert all(same(a, query("projective", t, w)) for a, (t, w) in zip(got, projective))
    assert parse("projective", [], n_jobs=n_jobs) == []


def test_batch_error_names_the_first_bad_item():
    items = batch_items(10)
    items[7] = ("sss", np.zeros((2, 2)))
    items[3] = ("ss", np.full((2, 2), NEG_INF))  # no tree
    with pytest.raises(ValueError, match=r"batch item 7: weights have shape"):
        parse("projective", items, n_jobs=2)
    with pytest.raises(ValueError, match=r"batch item 3: no tree"):
        marginals("projective", items, n_jobs=2)
    with pytest.raises(ValueError, match=r"batch item 1: expected a \(terminals, weights\) pair"):
        max_marginals("projective", [items[0], "ss"])


# -- bad input --------------------------------------------------------------------------

@pytest.mark.parametrize("query", [marginals, max_marginals])
@pytest.mark.parametrize(
    "terms, w, message",
    BAD_INPUTS + [
        ("sss", np.full((3, 3), NEG_INF), "no tree"),
        ("sss", None, "weights missing"),
    ],
)
def test_bad_input_is_a_clear_value_error(query, terms, w, message):
    with pytest.raises(ValueError, match=message):
        query("projective", terms, w)


def test_bad_n_jobs_and_engine():
    w = np.zeros((2, 2))
    for n_jobs in (0, 1.5, True):
        with pytest.raises(ValueError, match="n_jobs must be a positive integer"):
            marginals("projective", [("ss", w)], n_jobs=n_jobs)
    with pytest.raises(ValueError, match="n_jobs is for batches"):
        parse("projective", "ss", w, n_jobs=2)
    with pytest.raises(ValueError, match="unknown engine"):
        max_marginals("projective", "ss", w, engine="fortran")


def test_single_root_has_no_edges():
    assert marginals("projective", "s", np.zeros((1, 1))).tolist() == [[0.0]]
    assert max_marginals("projective", "s", np.zeros((1, 1))).tolist() == [[NEG_INF]]


def test_exported():
    assert semiparse.marginals is marginals and semiparse.max_marginals is max_marginals


def test_bench_engine_checks_and_prints_every_table(capsys):
    from semiparse.cli import main

    assert main(["bench", "engine", "--lengths", "3", "6", "--seconds", "0.001",
                 "--python-max-n", "3", "--batch", "4", "5"]) == 0
    out = capsys.readouterr().out
    for header in ("kernel/eisner", "log/max-plus", "marginals/floor", "speed-up",
                   "public call", "kernels alone", "machine ceiling"):
        assert header in out
    assert main(["bench", "engine", "--lengths", "3", "--seconds", "0.001", "--parts", "log"]) == 0
    out = capsys.readouterr().out
    assert "log/max-plus" in out and "marginals/floor" not in out

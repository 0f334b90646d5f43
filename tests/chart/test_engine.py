"""The chart engines against brute-force enumeration, in every semiring.

The brute force is independent of the chart algorithm: it enumerates every
projective tree (a split grammar derives no other: each head's dependents
cover contiguous intervals), counts each tree's derivations node by node with
the head automata of the grammar, and sums tree values with that
multiplicity (tests/brute_force.py; tests/test_brute_force.py checks the
enumeration against every head array for small n).
"""
import math
import random
from collections import Counter

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse import semiring as sr
from semiparse.chart.kernels import maxplus_gathered, reachable
from semiparse.chart.engine import parse, sample_best_tree
from semiparse.chart.generic import inside_generic
from semiparse.chart.inputs import compiled

from brute_force import (
    chi_square_p,
    derivation_count,
    is_projective,
    projective_trees,
    semiring_value,
    tree_score,
)
from support import BAD_INPUTS, grammar_and_input, trees

NEG_INF = float("-inf")


# -- brute force ---------------------------------------------------------------

@st.composite
def gold_trees(draw, n):
    """Any tree over n words (projective or not): attach the words in a random
    order, each to the root or to a word attached before it."""
    order = draw(st.permutations(range(1, n + 1)))
    heads = [-1] * (n + 1)
    for i, d in enumerate(order):
        heads[d] = draw(st.sampled_from([0, *order[:i]]))
    return heads


# -- strategies -----------------------------------------------------------------

# -- engine vs brute force ---------------------------------------------------------

EXACT = ["boolean", "counting", "maxplus", "maxcount", "polynomial"]


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=60)
@given(case=grammar_and_input())
def test_engines_equal_brute_force(name, case):
    g, terms, w = case
    expected = semiring_value(sr.get(name), g, terms, w)
    assert parse(g, terms, w, name, engine="python").value == expected
    if name != "polynomial":
        assert parse(g, terms, w, name, engine="cython").value == expected


@settings(max_examples=60)
@given(case=grammar_and_input())
def test_log_semiring_equals_brute_force(case):
    g, terms, w = case
    expected = semiring_value(sr.Log(), g, terms, w)
    for engine in ("python", "cython"):
        got = parse(g, terms, w, "log", engine=engine).value
        assert got == expected or math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=60)
@given(case=grammar_and_input())
def test_viterbi_gives_a_best_derivable_tree(case):
    g, terms, w = case
    best = semiring_value(sr.MaxPlus(), g, terms, w)
    results = [parse(g, terms, w, "viterbi", engine=e) for e in ("python", "cython")]
    # Both engines break ties the same way: the first derivation in chart order.
    assert results[0].value == results[1].value == best
    assert results[0].heads == results[1].heads
    if best == NEG_INF:
        assert results[0].heads is None
    else:
        heads = results[0].heads
        assert heads[0] == -1 and tree_score(heads, w) == best
        assert derivation_count(g, terms, heads) > 0


@settings(max_examples=80)
@given(case=grammar_and_input())
def test_the_mirrored_grammar_derives_each_tree_reversed_as_often(case):
    """``Grammar.mirrored`` over the reversed string, headed by its last
    position: every projective tree's mirror image has as many derivations
    as the tree (brute force on both sides); terminals keep their ids, and
    mirroring twice gives the rules back."""
    g, terms, _ = case
    m, n1 = g.mirrored, len(terms)
    assert list(m.terminals) == list(g.terminals) and m.mirrored.rules == g.rules
    for heads in projective_trees(n1):
        mirror = [-1] * n1
        for d in range(1, n1):
            mirror[n1 - 1 - d] = n1 - 1 - heads[d]
        assert derivation_count(m, terms[::-1], mirror, root=n1 - 1) == derivation_count(g, terms, heads)


@settings(max_examples=40)
@given(case=grammar_and_input(), k=st.integers(1, 6))
def test_kbest_lists_the_k_best_derivations(case, k):
    g, terms, w = case
    scores = []
    for heads in projective_trees(len(terms)):
        scores += [tree_score(heads, w)] * derivation_count(g, terms, heads)
    expected = sorted((s for s in scores if s > NEG_INF), reverse=True)[:k]
    result = parse(g, terms, w, "kbest", k=k)
    assert result.value == expected
    for score, heads in result.trees:
        assert tree_score(heads, w) == score and derivation_count(g, terms, heads) > 0


@settings(max_examples=60)
@given(case=grammar_and_input(max_len=6))
def test_cython_equals_python_with_float_weights(case):
    g, terms, _ = case
    n1 = len(terms)
    w = np.random.default_rng(n1).normal(size=(n1, n1))
    for name in ("maxplus", "maxcount", "counting", "viterbi", "boolean"):
        a = parse(g, terms, w, name, engine="python")
        b = parse(g, terms, w, name, engine="cython")
        assert a.value == b.value and a.heads == b.heads


def test_user_defined_semiring():
    class MinPlus:
        zero, one = float("inf"), 0.0

        def plus(self, a, b):
            return min(a, b)

        def times(self, a, b):
            return a + b

        def weight(self, score, head, dep):
            return -score

    w = np.random.default_rng(3).integers(0, 4, (6, 6)).astype(float)
    assert parse("projective", "s" * 6, w, MinPlus()).value == -parse("projective", "s" * 6, w).value


class _Doubled(sr.MaxPlus):
    def weight(self, score, head, dep):
        return 2 * score


class _Pairs(sr.Counting):
    def weight(self, score, head, dep):
        return 2


class _Tempered(sr.Log):
    def weight(self, score, head, dep):
        return score / 10


class _SameMaxCount(sr.MaxCount):
    def describe(self):
        return "a method, the arithmetic unchanged"


@settings(max_examples=40)
@given(case=grammar_and_input())
def test_a_subclass_of_a_built_in_semiring_computes_its_own_arithmetic(case):
    # the built-in Cython kernel ran and ignored the overridden weight
    g, terms, w = case
    for ring in (_Doubled(), _Pairs(), _Tempered(), _SameMaxCount()):
        expected = semiring_value(ring, g, terms, w)
        got = parse(g, terms, w, ring).value
        assert got == expected or math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    assert sr.kernel_of(_SameMaxCount()) == "maxcount" and sr.kernel_of(_Doubled()) is None


def test_a_subclass_keeping_maxcount_parses_shifted_scores_as_maxcount():
    # unshifted, scores near 1e16 rounded ties apart: 55 optimal trees for 19
    w = np.random.default_rng(0).normal(size=(5, 5)) + 1e16
    assert parse("projective", "s" * 5, w, _SameMaxCount()).value == parse(
        "projective", "s" * 5, w, "maxcount").value


# -- projective grammar ------------------------------------------------------------

def test_count_projective_matches_closed_form_up_to_60():
    n = sympy.Symbol("n", integer=True)
    closed = sympy.binomial(3 * n, n) / (2 * n + 1)
    for words in range(61):
        assert semiparse.count_projective(words) == int(closed.subs(n, words))


def test_maxcount_counts_beyond_double_precision():
    # All edges scored 0: every projective tree is optimal.
    w = np.zeros((41, 41))
    score, count = parse("projective", "s" * 41, w, "maxcount").value
    assert score == 0 and count == semiparse.count_projective(40) > 2 ** 63


@settings(max_examples=150)
@given(n=st.integers(1, 7), data=st.data())
def test_projective_maxplus_is_best_projective_score(n, data):
    gold = data.draw(trees(n, n, single_root=False))
    w = np.zeros((n + 1, n + 1))
    for d in range(1, n + 1):
        w[gold[d], d] = 1.0
    best = max(tree_score(t, w) for t in projective_trees(n + 1))
    optimal = sum(1 for t in projective_trees(n + 1) if tree_score(t, w) == best)
    assert parse("projective", "s" * (n + 1), w).value == best
    assert parse("projective", "s" * (n + 1), w, "maxcount").value == (best, optimal)
    heads = parse("projective", "s" * (n + 1), w, "viterbi").heads
    assert is_projective(heads) and tree_score(heads, w) == best


def test_sample_is_uniform_over_optimal_trees():
    # gold 0->2, 2->4, 4->1, 1->3: non-projective, several optimal trees
    gold = [-1, 4, 0, 1, 2]
    w = np.zeros((5, 5))
    for d in range(1, 5):
        w[gold[d], d] = 1.0
    best, count = parse("projective", "sssss", w, "maxcount").value
    assert count > 1
    rng = random.Random(7)
    draws = Counter(tuple(sample_best_tree("projective", "sssss", w, rng)) for _ in range(400 * count))
    assert len(draws) == count
    assert all(tree_score(list(t), w) == best and is_projective(list(t)) for t in draws)
    assert chi_square_p(list(draws.values()), [1 / count] * count) > 0.001


def test_sample_without_tree_returns_none():
    w = np.full((3, 3), NEG_INF)
    assert sample_best_tree("projective", "sss", w) is None


# -- bad input ---------------------------------------------------------------------

@pytest.mark.parametrize("terms, w, message", BAD_INPUTS)
def test_bad_input_is_a_clear_value_error(terms, w, message):
    with pytest.raises(ValueError, match=message):
        parse("projective", terms, w)


def test_bad_semiring_and_engine():
    w = np.zeros((2, 2))
    with pytest.raises(ValueError, match="unknown semiring"):
        parse("projective", "ss", w, "tropical")
    with pytest.raises(ValueError, match="lacks 'zero'"):
        parse("projective", "ss", w, object())
    with pytest.raises(ValueError, match="semiring MaxCount: pass an instance"):
        parse("projective", "ss", w, sr.MaxCount)   # the class ran on unshifted scores
    with pytest.raises(ValueError, match="no Cython kernel"):
        parse("projective", "ss", w, "polynomial", engine="cython")
    with pytest.raises(ValueError, match="positive integer k"):
        parse("projective", "ss", w, "kbest", k=0)
    with pytest.raises(ValueError, match="n >= 0"):
        semiparse.count_projective(-1)


def test_generic_engine_accepts_terminal_names():
    g = semiparse.load_grammar("arc_standard")
    w = np.ones((4, 4))
    ids = g.terminal_ids(["p", "p", "s", "s"])
    assert inside_generic(sr.Counting(), g.tables, ids, w) == parse(g, "ppss", w, "counting").value


@given(n=st.integers(1, 6), data=st.data())
def test_reachable_states_are_the_closure_of_the_combinations(n, data):
    """The states a head can reach (the compiled chart skips the others)
    equal a search over the combination rows, each taking a head from one
    column's state to another's."""
    rows = data.draw(st.lists(st.lists(st.integers(0, n - 1), min_size=4, max_size=4), max_size=8))
    combos = np.array(rows, dtype=np.intc).reshape(-1, 4)
    frm, to = data.draw(st.sampled_from([(2, 0), (1, 0)]))
    got = reachable(combos, to, frm, n)
    for start in range(n):
        seen, todo = {start}, [start]
        while todo:
            s = todo.pop()
            for row in rows:
                if row[frm] == s and row[to] not in seen:
                    seen.add(row[to])
                    todo.append(row[to])
        assert {t for t in range(n) if got[start, t]} == seen


@settings(max_examples=60)
@given(case=grammar_and_input(max_len=6), data=st.data())
def test_gathered_maxplus_equals_brute_force_on_the_gathered_weights(case, data):
    """The grammar oracle's entry point: weights gathered from a node table
    (-1: a virtual node, scored 0), fixed edges, cut sides and forbidden
    edges applied, then the best derivable tree's score, as brute force finds it."""
    g, terms, _ = case
    n1 = len(terms)
    size = data.draw(st.integers(n1, n1 + 3))
    delta = np.zeros((size + 1, size + 1))
    delta[:size, :size] = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=size * size,
                                                      max_size=size * size))).reshape(size, size)
    nodes = data.draw(st.lists(st.integers(-1, size - 1), min_size=n1, max_size=n1))
    position = st.integers(0, n1 - 1)
    fixed = data.draw(st.lists(st.tuples(position, position).filter(lambda e: e[0] != e[1]), max_size=2))
    cut = data.draw(st.lists(st.tuples(position, st.integers(0, 1)), max_size=2))
    forbid = data.draw(st.none() | st.lists(st.booleans(), min_size=n1 * n1, max_size=n1 * n1).map(
        lambda bits: np.array(bits).reshape(n1, n1)))
    w = delta[np.array(nodes)[:, None], np.array(nodes)]
    for h, d in fixed:
        w[:, d] = NEG_INF
        w[h, d] = 0.0
    for a, side in cut:
        w[a, :a] = NEG_INF if side == 0 else w[a, :a]
        w[a, a + 1:] = NEG_INF if side == 1 else w[a, a + 1:]
    if forbid is not None:
        w[forbid] = NEG_INF
    expected = max([tree_score(heads, w) for heads in projective_trees(n1)
                    if derivation_count(g, terms, heads) > 0], default=NEG_INF)
    tables = g.tables
    got = maxplus_gathered(compiled(g), tables.term_left, tables.term_right, delta, nodes,
                           [int(t) for t in g.terminal_ids(terms)], fixed, cut,
                           None if forbid is None else forbid.view(np.uint8))
    assert got == expected


def test_gathered_maxplus_refuses_what_it_cannot_index():
    g = semiparse.load_grammar("projective")
    args = (compiled(g), g.tables.term_left, g.tables.term_right, np.zeros((3, 3)))
    for nodes, terms, fixed, cut, message in [
            ([0, 1], [0], [], [], "2 nodes, 1 terminals"),
            ([0, 2], [0, 0], [], [], "node 2 out of range"),
            ([0, 1], [0, 9], [], [], "terminal id 9"),
            ([0, 1], [0, 0], [(0, 5)], [], "fixed edge"),
            ([0, 1], [0, 0], [], [(3, 0)], "position 3")]:
        with pytest.raises(ValueError, match=message):
            maxplus_gathered(*args, nodes, terms, fixed, cut)
    with pytest.raises(ValueError, match="a \\(3, 3\\) forbid mask for 2 nodes"):
        maxplus_gathered(*args, [0, 1], [0, 0], [], [], np.zeros((3, 3), dtype=np.uint8))

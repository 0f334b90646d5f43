"""Robustness of the public API: sampling at any length, and misuse giving ValueError."""
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.chart import kernels
from semiparse.chart.engine import count_projective, parse, sample_best_tree
from semiparse.chart.inputs import compiled
from semiparse.grammar import load_grammar
from semiparse.heads import check_tree
from semiparse.treebank.projectivity import (
    _grammar,
    _terminals,
    count_optimal_projectivizations,
    gold_weights,
    is_projective,
    projectivize,
)

from brute_force import chi_square_p, projective_optima, projective_trees, tree_score
from brute_force import is_projective as brute_is_projective
from support import REFUSED, one_shot, value_error_or_result


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
    assert kernels.inside("maxcountf", compiled(g), pl, pr, w)[1] == np.inf  # the log path
    out = projectivize(heads, "random", seed=3, single_root=single_root)
    assert len(out) == n + 1 and out[0] == -1 and all(type(h) is int for h in out)
    assert is_projective(out)  # also checks it is a tree
    assert not single_root or out.count(0) == 1
    kept = sum(out[d] == heads[d] for d in range(1, n + 1))
    assert kept == parse(g, terminals, w).value  # the max-plus optimum


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
        score, heads = kernels.best_tree(compiled(g), pl, pr, w, rng.random(kernels.uniforms_needed(7)), log_counts)
        draws[tuple(heads.tolist())] += 1
    assert len(draws) == count
    for tree in draws:
        assert is_projective(list(tree)) and sum(tree[d] == gold[d] for d in range(1, 7)) == best
    assert chi_square_p(list(draws.values()), [1 / count] * count) > 1e-3


# -- item: misuse of the Python API is a ValueError ------------------------------------

W3 = np.zeros((3, 3))


@pytest.mark.parametrize(
    "heads,message",
    [
        (None, "sequence of integers"),
        (5, "sequence of integers"),
        ("-100", "sequence of integers"),
        ((h for h in [-1, 0]), "sequence of integers"),
        ([-1, True, 0], r"element 1 is True \(bool\)"),
        ([-1, 0.5], r"element 1 is 0.5 \(float\)"),
        ([-1, 0.0], r"element 1 is 0.0 \(float\)"),
        ([-1, "0"], r"element 1 is '0' \(str\)"),
        ([-1, [0]], r"element 1 is \[0\] \(list\)"),
        (np.array([-1.0, 0.0]), r"element 0 is -1.0 \(float\)"),
        (np.array([-1, 0, 1], dtype=bool), r"element 0 is True \(bool\)"),
        (np.ma.masked_array([-1, 0], mask=[0, 1]), "masked array"),
        (np.array([[-1, 0]]), "sequence of integers"),
    ],
)
def test_bad_heads_are_value_errors(heads, message):
    for call in (projectivize, count_optimal_projectivizations, is_projective):
        with pytest.raises(ValueError, match=message):
            call(heads)


def test_bad_projectivize_options_are_value_errors():
    with pytest.raises(ValueError, match="single_root must be True or False"):
        projectivize([-1, 0], single_root="yes")
    with pytest.raises(ValueError, match="unknown engine"):
        projectivize([-1, 0], engine=5)
    with pytest.raises(ValueError, match="seed must be None, an int or a random.Random"):
        projectivize([-1, 2, 0, 1], "random", seed="abc")


def test_numpy_integer_heads_give_python_ints():
    heads = np.array([-1, 2, 0, 1], dtype=np.int16)
    for tie_break in ("first", "closest", "random"):
        out = projectivize(heads, tie_break, seed=1)
        assert all(type(h) is int for h in out)
    numpy_ints = list(heads.astype(np.int64))
    for tie_break in ("first", "closest", "random"):
        out = projectivize(numpy_ints, tie_break, seed=1)
        assert all(type(h) is int for h in out)
    assert all(type(h) is int for h in projectivize([np.int64(-1), np.int64(0)]))  # projective path
    score, count = count_optimal_projectivizations(numpy_ints)
    assert type(score) is int and type(count) is int
    assert is_projective(np.array([-1, 0, 1], dtype=np.int8))


@pytest.mark.parametrize(
    "args,message",
    [
        (("projective", None, W3), "terminals must be a string or a list"),
        (("projective", (t for t in "sss"), W3), "cannot be re-read"),
        (("projective", ["s", 1, "s"], W3), "terminal names"),
        ((None, "sss", W3), "grammar must be a Grammar"),
        ((5, "sss", W3), "grammar must be a Grammar"),
        (("projective", "sss", W3.astype(complex)), "real numbers"),
        (("projective", "sss", [["0"] * 3] * 3), "real numbers"),
        (("projective", "sss", None), "real numbers"),
        (("projective", "sss", [[0, 0], [0]]), "real numbers"),
        (("projective", "sss", np.ma.masked_array(W3, mask=np.eye(3))), r"w.filled\(-np.inf\)"),
    ],
)
def test_bad_parse_inputs_are_value_errors(args, message):
    with pytest.raises(ValueError, match=message):
        parse(*args)
    with pytest.raises(ValueError, match=message):
        sample_best_tree(*args)


def test_k_only_for_kbest_and_rng_only_an_rng():
    with pytest.raises(ValueError, match="only for the kbest semiring"):
        parse("projective", "sss", W3, "maxplus", k=3)
    with pytest.raises(ValueError, match="positive integer k"):
        parse("projective", "sss", W3, "kbest", k=True)
    for rng in (5, 0, "seed", np.random.default_rng(1)):
        with pytest.raises(ValueError, match="rng must be a random.Random or None"):
            sample_best_tree("projective", "sss", W3, rng)
    with pytest.raises(ValueError, match="word count"):
        count_projective(True)


def test_results_are_python_ints():
    w = np.arange(16, dtype=float).reshape(4, 4)
    for engine in ("auto", "python"):
        assert all(type(h) is int for h in parse("projective", "ssss", w, "viterbi", engine=engine).heads)
    result = parse("projective", "ssss", w, "kbest", k=np.int64(3))
    assert len(result.trees) == 3
    assert all(type(h) is int for _, heads in result.trees for h in heads)
    assert all(type(h) is int for h in sample_best_tree("projective", "ssss", w, random.Random(1)))
    score, count = parse("projective", "ssss", w, "maxcount").value
    assert type(count) is int
    assert type(parse("projective", "ssss", w, "counting").value) is int
    assert type(count_projective(np.int32(3))) is int


# -- junk thrown at the public functions: a result or ValueError, nothing else ----------

def _array(shape, dtype, fill):
    if dtype == "U2":
        return np.full(shape, "x", dtype=dtype)
    with np.errstate(invalid="ignore"):  # NaN or inf cast to an integer dtype
        return np.full(shape, fill).astype(dtype)


def _junk_arrays():
    return st.builds(
        _array,
        st.sampled_from([(), (0,), (3,), (3, 3), (2, 3), (4, 4), (3, 3, 1)]),
        st.sampled_from([np.int64, np.float64, np.complex128, bool, object, "U2"]),
        st.sampled_from([0, -1, 1, 2, np.nan, np.inf, -np.inf]),
    )


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=True),
    st.text(max_size=4), st.sampled_from([complex(1, 1), np.int64(1), np.float64(0.5)]),
)
JUNK = st.recursive(
    st.one_of(SCALARS, _junk_arrays()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.builds(lambda xs: (x for x in xs), st.lists(inner, max_size=4)),  # a generator
        st.builds(lambda a: np.ma.masked_array(a, mask=np.zeros(a.shape, bool)), _junk_arrays()),
    ),
    max_leaves=6,
)
HEADS = st.one_of(JUNK, st.lists(st.integers(-2, 4), max_size=5), st.just([-1, 2, 0, 1]))


@settings(max_examples=300)
@given(HEADS, st.one_of(JUNK, st.sampled_from(["first", "closest", "random"])),
       st.one_of(JUNK, st.booleans()), st.one_of(JUNK, st.just("auto")))
def test_projectivity_functions_give_results_or_value_errors(heads, tie_break, single_root, engine):
    # the reference: brute force over every projective tree, on the heads as
    # the API reads them (not for a generator, which the first call spends)
    given = None if one_shot(heads) else value_error_or_result(check_tree, heads)
    for call, kwargs in (
        (projectivize, dict(tie_break=tie_break, single_root=single_root, engine=engine, seed=1)),
        (count_optimal_projectivizations, dict(single_root=single_root, engine=engine)),
        (is_projective, {}),
    ):
        out = value_error_or_result(call, heads, **kwargs)
        if out is REFUSED:
            continue
        if given is not None:
            assert given is not REFUSED, f"{call.__name__} answered {out!r} for heads that are not a tree"
            if call is not is_projective:  # single_root was taken: a bool
                optima, kept = projective_optima(given, single_root=bool(single_root))
        if call is projectivize:
            assert is_projective(out) and all(type(h) is int for h in out)
            if given is not None:
                assert out in optima.tolist()
                assert sum(a == b for a, b in zip(out[1:], given[1:])) == kept
        elif call is count_optimal_projectivizations and given is not None:
            assert out == (kept, len(optima))
        elif given is not None:
            assert out is brute_is_projective(given)


@settings(max_examples=300)
@given(
    st.one_of(JUNK, st.just("projective")),
    st.one_of(JUNK, st.just("sss"), st.just(["s", "s", "s"])),
    st.one_of(JUNK, st.just(np.zeros((3, 3)))),
    st.one_of(JUNK, st.sampled_from(["maxplus", "viterbi", "kbest", "counting"])),
    st.one_of(st.none(), JUNK),
    st.one_of(JUNK, st.sampled_from(["auto", "python"])),
)
def test_engine_functions_give_results_or_value_errors(grammar, terminals, weights, semiring, k, engine):
    reference = not one_shot(grammar, terminals, weights, semiring, k, engine)
    out = value_error_or_result(parse, grammar, terminals, weights, semiring, k=k, engine=engine)
    if out is not REFUSED and reference:
        # the generic Python engine (the fast one when the call asked for it)
        other = "auto" if engine == "python" else "python"
        slow = value_error_or_result(parse, grammar, terminals, weights, semiring, k=k, engine=other)
        assert slow is not REFUSED, f"engine {other!r} refuses what {engine!r} answers"
        assert _same(out.value, slow.value)
        if out.heads is not None:  # ties may be broken apart: the score is the same
            assert _same(score_of(out.heads, weights), score_of(slow.heads, weights))
    best = value_error_or_result(sample_best_tree, grammar, terminals, weights)
    if best is not REFUSED and reference:
        top = parse(grammar, terminals, weights, "maxplus", engine="python").value
        assert _same(score_of(best, weights), top)
    value_error_or_result(sample_best_tree, grammar, terminals, weights, semiring)  # junk where the rng goes
    count = value_error_or_result(count_projective, k)
    if count is not REFUSED:
        n = int(k)
        assert count == math.comb(3 * n, n) // (2 * n + 1)
        if n <= 6:
            assert count == len(projective_trees(n + 1))


def score_of(heads, weights):
    """The score of a tree under edge weights (brute force's sum)."""
    return tree_score(heads, np.asarray(weights, dtype=float))


def _same(a, b):
    """Equal values, lists of values elementwise; NaN equal to NaN, close floats equal."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if a == b:
        return True
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))


def test_kbest_k_beyond_what_a_list_can_hold_is_named():
    with pytest.raises(ValueError, match=r"kbest needs a positive integer k up to \d+, got 10{20}"):
        parse("projective", "sss", np.zeros((3, 3)), "kbest", k=10 ** 20)


def test_a_batch_with_weights_says_so():
    """It said that terminals must be names, printing every array of the batch."""
    batch = [("ss", np.zeros((2, 2)))] * 2
    with pytest.raises(ValueError, match=r"^terminals is a batch of 2 \(terminals, weights\) pairs and "
                                         r"weights are given too"):
        parse("projective", batch, np.zeros((2, 2)))

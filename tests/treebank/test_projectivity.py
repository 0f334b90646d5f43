"""Optimal projectivization against brute force over all projective trees (n <= 8)."""
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.treebank.conllu import read_conllu
from semiparse.treebank.projectivity import (
    closest_weights,
    contract,
    count_optimal_projectivizations,
    is_projective,
    projectivize,
)

from brute_force import all_projective, chi_square_p, crossing, projective_optima
from support import trees

MAX_N = 8


# -- brute force -----------------------------------------------------------------

def root_count(heads):
    return sum(1 for h in heads[1:] if h == 0)


# -- tests -------------------------------------------------------------------------

@given(trees(max_words=10))
def test_is_projective_is_no_crossing(heads):
    assert is_projective(heads) == (not crossing(heads))


@given(trees())
def test_is_projective_matches_enumeration(heads):
    member = (all_projective(len(heads) - 1) == np.array(heads)).all(axis=1).any()
    assert is_projective(heads) == member


ENGINES = st.sampled_from(["auto", "python"])


@settings(max_examples=300)
@given(trees(), st.booleans(), ENGINES)
def test_counts_equal_brute_force(heads, single_root, engine):
    single_root = single_root and root_count(heads) == 1
    optima, best = projective_optima(heads, single_root)
    counted = count_optimal_projectivizations(heads, single_root=single_root, engine=engine)
    assert counted == (best, len(optima))


@settings(max_examples=300)
@given(trees(), st.sampled_from(["first", "closest", "random"]), st.booleans(), st.integers(0, 99), ENGINES)
def test_projectivize_returns_an_optimal_projective_tree(heads, tie_break, single_root, seed, engine):
    single_root = single_root and root_count(heads) == 1
    engine = "auto" if tie_break == "random" else engine
    optima, best = projective_optima(heads, single_root)
    tree = projectivize(heads, tie_break, seed=seed, single_root=single_root, engine=engine)
    assert tree[0] == -1 and is_projective(tree)
    assert (optima == np.array(tree)).all(axis=1).any()
    if single_root:
        assert root_count(tree) == 1
    if is_projective(heads):
        # a projective tree is its own unique optimal projectivization
        assert tree == heads and len(optima) == 1 and best == len(heads) - 1


@settings(max_examples=300)
@given(trees(max_words=7), st.booleans(), ENGINES)
def test_closest_minimises_the_distance_to_the_gold_heads(heads, single_root, engine):
    single_root = single_root and root_count(heads) == 1
    optima, _ = projective_optima(heads, single_root)
    n = len(heads) - 1

    def distance(tree):
        """Per changed word: steps from its gold head up to its new head, n+1 if not above."""
        total = 0
        for d in range(1, n + 1):
            if tree[d] == heads[d]:
                continue
            a, steps = heads[heads[d]], 1  # heads[0] == -1 ends the walk
            while a not in (-1, tree[d]):
                a, steps = heads[a], steps + 1
            total += steps if a == tree[d] else n + 1
        return total

    tree = projectivize(heads, "closest", single_root=single_root, engine=engine)
    assert distance(tree) == min(distance(t) for t in optima.tolist())
    # the documented encoding: kept * (n(n+1) + 1) - distance, in one max-plus number
    w = closest_weights(heads)
    kept = sum(1 for d in range(1, n + 1) if tree[d] == heads[d])
    assert sum(w[tree[d], d] for d in range(1, n + 1)) == kept * (n * (n + 1) + 1) - distance(tree)


def subtree(heads, v):
    nodes, frontier = {v}, [v]
    while frontier:
        frontier = [d for d in range(1, len(heads)) if heads[d] in frontier]
        nodes.update(frontier)
    return nodes


def projective_subtree(heads, v):
    """Brute force: every subtree inside v's covers a contiguous span."""
    for u in subtree(heads, v):
        below = subtree(heads, u)
        if max(below) - min(below) + 1 != len(below):
            return False
    return True


@settings(max_examples=300)
@given(trees(), st.booleans())
def test_contraction_keeps_the_optimum_and_projective_subtrees(heads, single_root):
    single_root = single_root and root_count(heads) == 1
    if is_projective(heads):
        return
    kept, small = contract(heads)
    n = len(heads) - 1
    gone = set(range(n + 1)) - set(kept)
    # contracted words are exactly those strictly inside a projective gold subtree
    assert gone == {d for d in range(1, n + 1) if heads[d] > 0 and projective_subtree(heads, heads[d])}
    assert all(small[k] == kept.index(heads[kept[k]]) for k in range(1, len(kept)))
    assert projective_optima(heads, single_root)[1] == projective_optima(small, single_root)[1] + len(gone)
    for tie_break in ("first", "closest"):
        tree = projectivize(heads, tie_break, single_root=single_root)
        assert all(tree[d] == heads[d] for d in gone)


@given(trees(single_root=True))
def test_single_root_never_lowers_the_best_score(heads):
    assert projective_optima(heads, True)[1] == projective_optima(heads, False)[1]


@pytest.mark.parametrize("single_root", [False, True])
def test_random_tie_break_is_uniform(single_root):
    heads = [-1, 3, 5, 0, 1, 3, 2]  # non-projective, several optimal trees either way
    optima, _ = projective_optima(heads, single_root)
    assert len(optima) >= 4
    rng = random.Random(12345)
    draws = 150 * len(optima)
    seen = Counter(tuple(projectivize(heads, "random", seed=rng, single_root=single_root)) for _ in range(draws))
    assert set(seen) == {tuple(t) for t in optima.tolist()}
    observed = [seen[tuple(t)] for t in optima.tolist()]
    assert chi_square_p(observed, [1 / len(optima)] * len(optima)) > 1e-3


def test_random_with_seed_is_reproducible():
    heads = [-1, 3, 5, 0, 1, 3, 2]
    runs = [[projectivize(heads, "random", seed=s) for s in range(20)] for _ in range(2)]
    assert runs[0] == runs[1]
    assert len({tuple(t) for t in runs[0]}) > 1


@pytest.mark.parametrize(
    "heads,message",
    [
        ([0, 0], "must start with -1"),
        ([-1, 2, 1], "not a tree: cycle"),
        ([-1, 1], "headed by itself"),
        ([-1, 3], "out of range"),
        ([-1, "x"], "sequence of integer heads: element 1 is 'x'"),
    ],
)
def test_bad_trees_are_value_errors(heads, message):
    for call in (projectivize, count_optimal_projectivizations):
        with pytest.raises(ValueError, match=message):
            call(heads)


def test_bad_options_are_value_errors():
    with pytest.raises(ValueError, match="tie_break must be one of first, closest, random"):
        projectivize([-1, 0], "best")
    with pytest.raises(ValueError, match="exactly one word attached to 0"):
        projectivize([-1, 0, 0], single_root=True)
    with pytest.raises(ValueError, match="samples with the Cython engine"):
        projectivize([-1, 2, 0, 1], "random", engine="python")


def test_numpy_heads_and_top_level_names():
    heads = np.array([-1, 3, 4, 0, 3])
    assert semiparse.projectivize(heads) == projectivize(heads.tolist())
    assert semiparse.count_optimal_projectivizations(heads) == count_optimal_projectivizations(list(heads))
    assert semiparse.is_projective([-1, 0, 1]) and not semiparse.is_projective([-1, 3, 4, 0, 3])


def test_every_shared_ud_tree(ud_files):
    """Every projectivized UD tree is projective, keeps as many edges as the
    count says, and keeps a single root."""
    for path in ud_files:
        for sentence in read_conllu(path):
            heads = sentence.heads
            kept, count = count_optimal_projectivizations(heads, single_root=True)
            tree = projectivize(heads, single_root=True)
            assert is_projective(tree) and root_count(tree) == 1
            assert sum(a == b for a, b in zip(tree[1:], heads[1:])) == kept
            assert count >= 1 and (count == 1 and kept == len(heads) - 1) == is_projective(heads)


def test_is_projective_rejects_non_trees():
    with pytest.raises(ValueError, match="not a tree: cycle"):
        is_projective([-1, 2, 1])
    assert is_projective(np.array([-1, 0, 1])) is True

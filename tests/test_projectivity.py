"""Optimal projectivization against brute force over all projective trees (n <= 8)."""
import functools
import random
from collections import Counter

import numpy as np
import pytest
import sympy
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

MAX_N = 8


# -- brute force -----------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _subtrees(i, j):
    """Every projective subtree covering exactly positions i..j: (root, edges)."""
    out = []
    for h in range(i, j + 1):
        for left_roots, left_edges in _forests(i, h - 1):
            for right_roots, right_edges in _forests(h + 1, j):
                edges = tuple((h, r) for r in left_roots + right_roots) + left_edges + right_edges
                out.append((h, edges))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _forests(i, j):
    """Every split of i..j into consecutive projective subtrees: (roots, edges)."""
    if i > j:
        return (((), ()),)
    out = []
    for k in range(i, j + 1):
        for root, edges in _subtrees(i, k):
            for roots, more in _forests(k + 1, j):
                out.append(((root,) + roots, edges + more))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def all_projective(n):
    """Array (trees x n+1) of every projective tree over n words (column 0 is -1)."""
    rows = []
    for roots, edges in _forests(1, n):
        heads = [-1] * (n + 1)
        for r in roots:
            heads[r] = 0
        for h, d in edges:
            heads[d] = h
        rows.append(heads)
    return np.array(rows, dtype=np.int64)


def brute_optima(heads, single_root=False):
    """The optimal projective trees of ``heads`` (array) and their score."""
    trees = all_projective(len(heads) - 1)
    if single_root:
        trees = trees[(trees[:, 1:] == 0).sum(axis=1) == 1]
    scores = (trees[:, 1:] == np.asarray(heads[1:])).sum(axis=1)
    best = scores.max()
    return trees[scores == best], int(best)


def crossing(heads):
    """Brute force: do two edges cross?"""
    spans = [(min(h, d), max(h, d)) for d, h in enumerate(heads) if d]
    return any(a < c < b < e for a, b in spans for c, e in spans)


@st.composite
def trees(draw, max_n=MAX_N, single_root=None):
    """Random trees: words attached in random order to an already placed node."""
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(1, n + 1)))
    single = draw(st.booleans()) if single_root is None else single_root
    heads = [-1] * (n + 1)
    placed = [0]
    for d in order:
        choices = placed[1:] if single and len(placed) > 1 else placed
        heads[d] = draw(st.sampled_from(choices))
        placed.append(d)
    return heads


def root_count(heads):
    return sum(1 for h in heads[1:] if h == 0)


# -- tests -------------------------------------------------------------------------

def test_brute_force_enumerates_every_projective_tree():
    for n in range(1, MAX_N + 1):
        trees_n = all_projective(n)
        assert len(trees_n) == semiparse.count_projective(n)
        assert len({tuple(t) for t in trees_n.tolist()}) == len(trees_n)
        assert not any(crossing(t) for t in trees_n.tolist()[:: max(1, len(trees_n) // 300)])


@given(trees(max_n=10))
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
    optima, best = brute_optima(heads, single_root)
    counted = count_optimal_projectivizations(heads, single_root=single_root, engine=engine)
    assert counted == (best, len(optima))


@settings(max_examples=300)
@given(trees(), st.sampled_from(["first", "closest", "random"]), st.booleans(), st.integers(0, 99), ENGINES)
def test_projectivize_returns_an_optimal_projective_tree(heads, tie_break, single_root, seed, engine):
    single_root = single_root and root_count(heads) == 1
    engine = "auto" if tie_break == "random" else engine
    optima, best = brute_optima(heads, single_root)
    tree = projectivize(heads, tie_break, seed=seed, single_root=single_root, engine=engine)
    assert tree[0] == -1 and is_projective(tree)
    assert (optima == np.array(tree)).all(axis=1).any()
    if single_root:
        assert root_count(tree) == 1
    if is_projective(heads):
        # a projective tree is its own unique optimal projectivization
        assert tree == heads and len(optima) == 1 and best == len(heads) - 1


@settings(max_examples=300)
@given(trees(max_n=7), st.booleans(), ENGINES)
def test_closest_minimises_the_distance_to_the_gold_heads(heads, single_root, engine):
    single_root = single_root and root_count(heads) == 1
    optima, _ = brute_optima(heads, single_root)
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
    assert brute_optima(heads, single_root)[1] == brute_optima(small, single_root)[1] + len(gone)
    for tie_break in ("first", "closest"):
        tree = projectivize(heads, tie_break, single_root=single_root)
        assert all(tree[d] == heads[d] for d in gone)


@given(trees(single_root=True))
def test_single_root_never_lowers_the_best_score(heads):
    assert brute_optima(heads, True)[1] == brute_optima(heads, False)[1]


def _chi_square_p(observed, expected):
    statistic = sum((o - expected) ** 2 / expected for o in observed)
    k = sympy.Rational(len(observed) - 1, 2)
    return float(sympy.uppergamma(k, sympy.Float(statistic) / 2) / sympy.gamma(k))


@pytest.mark.parametrize("single_root", [False, True])
def test_random_tie_break_is_uniform(single_root):
    heads = [-1, 3, 5, 0, 1, 3, 2]  # non-projective, several optimal trees either way
    optima, _ = brute_optima(heads, single_root)
    assert len(optima) >= 4
    rng = random.Random(12345)
    draws = 150 * len(optima)
    seen = Counter(tuple(projectivize(heads, "random", seed=rng, single_root=single_root)) for _ in range(draws))
    assert set(seen) == {tuple(t) for t in optima.tolist()}
    observed = [seen[tuple(t)] for t in optima.tolist()]
    assert _chi_square_p(observed, draws / len(optima)) > 1e-3


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

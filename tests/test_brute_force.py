"""The brute-force references (tests/brute_force.py) themselves: the tree
enumerations are complete and correct, checked by independent means."""
import itertools

import semiparse

from brute_force import all_projective, all_trees, crossing, is_projective, is_tree, projective_trees


def test_every_tree_is_enumerated_once():
    """Cayley: (n + 1) ** (n - 1) trees over n words rooted at 0."""
    for n in range(1, 6):
        found = list(all_trees(n))
        assert len(found) == len(set(found)) == (n + 1) ** (n - 1)


def test_projective_tree_enumeration_is_complete():
    for n1 in range(1, 7):
        everything = [[-1, *t] for t in itertools.product(range(n1), repeat=n1 - 1)]
        expected = sorted(h for h in everything if is_tree(h) and is_projective(h))
        assert sorted(projective_trees(n1)) == expected


def test_projective_trees_are_counted_by_the_closed_form_and_never_cross():
    for n in range(1, 9):
        trees_n = all_projective(n)
        assert len(trees_n) == semiparse.count_projective(n)
        assert len({tuple(t) for t in trees_n.tolist()}) == len(trees_n)
        assert not any(crossing(t) for t in trees_n.tolist()[:: max(1, len(trees_n) // 300)])


def test_projective_means_no_crossing_edge_for_trees():
    for n in range(1, 6):
        for heads in all_trees(n):
            assert is_projective(heads) == (not crossing(heads))

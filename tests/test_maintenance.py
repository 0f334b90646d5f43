"""What treebank maintainers hit: CoNLL 2018 scores in ``evaluate``, words in
``count``, ``projectivize --only`` (checked against brute force), the plot and
``--sort`` of ``count``, and DEPS entries left behind by a changed HEAD."""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.projectivity import NoProjectiveTree, count_optimal_projectivizations, projectivize
from test_projectivity import all_projective, trees


# -- projectivize(only=...) against brute force ------------------------------------

def brute_restricted(heads, only, single_root):
    """Best score and number of projective trees that keep every head outside ``only``."""
    found = all_projective(len(heads) - 1)
    if single_root:
        found = found[(found[:, 1:] == 0).sum(axis=1) == 1]
    fixed = [d for d in range(1, len(heads)) if d not in only]
    found = found[(found[:, fixed] == np.asarray(heads)[fixed]).all(axis=1)]
    if not len(found):
        return None, 0
    scores = (found[:, 1:] == np.asarray(heads[1:])).sum(axis=1)
    return int(scores.max()), int((scores == scores.max()).sum())


@settings(max_examples=300)
@given(st.data())
def test_only_is_optimal_among_trees_keeping_the_other_heads(data):
    heads = data.draw(trees(max_n=7))
    only = data.draw(st.sets(st.integers(1, len(heads) - 1)))
    single = data.draw(st.booleans()) and heads.count(0) == 1
    tie_break = data.draw(st.sampled_from(["first", "closest", "random"]))
    best, count = brute_restricted(heads, only, single)
    if best is None:
        with pytest.raises(NoProjectiveTree):
            projectivize(heads, tie_break, seed=1, single_root=single, only=only)
        with pytest.raises(NoProjectiveTree):
            count_optimal_projectivizations(heads, single_root=single, only=only)
        return
    tree = projectivize(heads, tie_break, seed=1, single_root=single, only=only)
    assert any((row == tree).all() for row in all_projective(len(heads) - 1))
    assert all(tree[d] == heads[d] for d in range(1, len(heads)) if d not in only)
    assert sum(a == b for a, b in zip(tree[1:], heads[1:])) == best
    assert not single or tree.count(0) == 1
    assert count_optimal_projectivizations(heads, single_root=single, only=only) == (best, count)


def test_only_moves_just_the_named_words():
    heads = [-1, 3, 4, 0, 3]  # 4 -> 2 crosses 0 -> 3 and 3 -> 1: only moving word 2 helps
    assert projectivize(heads, only={2}) == [-1, 3, 3, 0, 3]
    assert projectivize(heads, only=[1, 2], tie_break="random", seed=3)[1] == 3
    with pytest.raises(NoProjectiveTree, match=r"only the heads of words \[1, 4\]"):
        projectivize(heads, only={1, 4})
    assert projectivize([-1, 2, 0], only=()) == [-1, 2, 0]  # projective: nothing to move


@pytest.mark.parametrize("only, message", [
    ("12", "collection of word positions"), ({0}, "not a word position"), ({5}, "not a word position"),
    ({True}, "not a word position"), ({1.0}, "not a word position"),
])
def test_bad_only_is_a_value_error(only, message):
    with pytest.raises(ValueError, match=message):
        projectivize([-1, 3, 4, 0, 3], only=only)

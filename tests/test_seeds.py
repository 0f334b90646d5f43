"""Seeds: every seed >= 0 seeds as Python's ``random.Random`` does (recorded
runs stay the same), and a negative seed no longer repeats the run of its
absolute value (``random.Random(-1)`` is ``random.Random(1)``)."""
import random

from hypothesis import given
from hypothesis import strategies as st

from semiparse._support.seeds import seeded
from semiparse.cli.demo import sample_conllu
from semiparse.treebank.projectivity import count_optimal_projectivizations, projectivize


def draws(rng):
    return [rng.random() for _ in range(5)]


@given(st.integers(0, 2**80))
def test_a_seed_from_zero_on_is_pythons(seed):
    assert draws(seeded(seed)) == draws(random.Random(seed))


@given(st.integers(1, 2**80))
def test_a_negative_seed_is_not_its_absolute_value(seed):
    assert draws(seeded(-seed)) != draws(seeded(seed))
    assert draws(seeded(-seed)) == draws(seeded(-seed))


def test_commands_give_negative_seeds_runs_of_their_own():
    assert sample_conllu(20, 12, -1) != sample_conllu(20, 12, 1)
    assert sample_conllu(20, 12, -1) == sample_conllu(20, 12, -1)
    heads = [-1, 4, 5, 6, 0, 4, 4, 1, 2, 3]
    assert count_optimal_projectivizations(heads)[1] > 2
    picks = lambda sign: [projectivize(heads, tie_break="random", seed=sign * k) for k in range(1, 30)]
    assert picks(-1) != picks(1)

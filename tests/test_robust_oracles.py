"""Robustness of the oracle API and of system files: misuse and malformed input
give a ValueError that says what is wrong, never another exception or a
silently wrong answer."""
import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.oracles import get_system
from semiparse.oracles._configs import accepts
from semiparse.oracles.fast import _lrspine
from semiparse.resources import data_dir
from semiparse.testing import perturbed_configurations, validation_outcome

SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")
HEADS = [-1, 2, 0, 2]


def entry_points(o):
    """Every public oracle call, as functions of (stack, buffer, heads, arcs)."""
    return {
        "scores": o.scores,
        "optimal": o.optimal,
        "scores_exhaustive": o.scores_exhaustive,
        "method_for": lambda s, b, h, a: o.method_for(h),
    }


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("heads, message", [
    (None, "heads must be a sequence of integer heads, got NoneType"),
    (5, "heads must be a sequence of integer heads, got int"),
    ("-1023", "heads must be a sequence of integer heads, got the string"),
    ([-1, 2, 0, True], r"element 3 is True \(bool\)"),
    ([-1, 2, 0, 2.0], r"element 3 is 2.0 \(float\)"),
    ([-1, 0.5, 0, 2], r"element 1 is 0.5 \(float\)"),
    ([-1, 2, 0, "2"], r"element 3 is '2' \(str\)"),
    ([-1, 2, None, 2], r"element 2 is None"),
    (np.array([-1, 1, 0, 1], dtype=bool), r"element 0 is True \(bool\)"),
    (np.array([-1.0, 2.0, 0.0, 2.0]), r"element 0 is -1.0 \(float\)"),
])
def test_bad_heads_are_value_errors_at_every_entry_point(name, heads, message):
    o = semiparse.oracle(name)
    stack, buffer, arcs = get_system(name).initial(3)
    for call in entry_points(o).values():
        with pytest.raises(ValueError, match=message):
            call(stack, buffer, heads, arcs)


@pytest.mark.parametrize("name", SYSTEMS)
def test_heads_equal_to_the_cached_tree_but_not_ints_are_rejected(name):
    # True == 1 and 2.0 == 2: the cache of the last gold tree must not let them in
    o = semiparse.oracle(name)
    stack, buffer, arcs = get_system(name).initial(3)
    o.scores(stack, buffer, [-1, 2, 0, 2], arcs)
    with pytest.raises(ValueError, match="bool"):
        o.scores(stack, buffer, [-1, 2, False, 2], arcs)
    with pytest.raises(ValueError, match="float"):
        o.optimal(stack, buffer, (-1, 2.0, 0, 2), arcs)
    assert o.scores(stack, buffer, np.array([-1, 2, 0, 2]), arcs) == o.scores(
        stack, buffer, [-1, 2, 0, 2], arcs)


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("which, value", [
    (0, True), (0, 1.0), (0, "1"), (0, None), (1, False), (1, 2.5), (1, "2"), (2, True),
    (2, -1.0), (2, "-1"), (2, None)])
def test_bad_positions_and_arcs_are_value_errors(name, which, value):
    o = semiparse.oracle(name)
    config = [[0, 1], [2, 3], [-1, -1, -1, -1]]
    config[which][-1] = value
    what = ("stack", "buffer", "arcs")[which]
    for call in (o.scores, o.optimal, o.scores_exhaustive):
        with pytest.raises(ValueError, match=f"{what} must be a sequence of integer"):
            call(*config[:2], HEADS, config[2])


@pytest.mark.parametrize("name", SYSTEMS)
def test_numpy_integers_are_normalized_to_python_ints(name):
    system = get_system(name)
    o = semiparse.oracle(name)
    stack, buffer, arcs = (np.array(x, dtype=np.int32) for x in ([0, 1], [2, 3], [-1] * 4))
    got = system.validate(stack, buffer, arcs, 3)
    assert all(type(x) is int for part in got if part is not None for x in part)
    after = system.apply(stack, buffer, arcs, "shift")
    assert all(type(x) is int for part in after[:3] for x in part)
    scores = o.scores(stack, buffer, np.array(HEADS), arcs)
    assert scores and all(type(v) is int for v in scores.values())


@pytest.mark.parametrize("name", SYSTEMS)
def test_apply_rejects_positions_that_are_not_integers(name):
    system = get_system(name)
    with pytest.raises(ValueError, match=r"stack must be .* element 1 is True"):
        system.apply([0, True], [2], [-1, -1, -1], "shift")
    with pytest.raises(ValueError, match=r"arcs must be .* element 2 is 0.5"):
        system.apply([0, 1], [2], [-1, -1, 0.5], "shift")


@pytest.mark.parametrize("name", SYSTEMS)
def test_arcs_with_a_cycle_among_reduced_words_are_rejected(name):
    # words 1 and 2 are off the stack and buffer, each the other's head
    o = semiparse.oracle(name)
    for call in ("scores", "optimal", "scores_exhaustive"):
        with pytest.raises(ValueError, match="cycle"):
            getattr(o, call)([0], [3], HEADS, [-1, 2, 1, -1])


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_eager"])
def test_reduced_words_without_a_head_are_rejected(name):
    # every shipped rewrite system gives a head to each word it removes
    o = semiparse.oracle(name)
    with pytest.raises(ValueError, match="position 1 has left the stack and buffer but has no "
                                         "head"):
        o.scores([0], [3], HEADS, [-1, -1, 1, -1])
    assert get_system(name).pops_headed
    assert not accepts((0,), (3,), (-1, -1, 1, -1), 3, False)
    # a reachable configuration: 2 heads 1, 0 heads 2, both reduced
    reachable = [-1, 2, 0, -1]
    assert accepts((0,), (3,), tuple(reachable), 3, False)
    assert o.scores([0], [3], HEADS, reachable) == o.scores_exhaustive([0], [3], HEADS, reachable)


def test_a_system_that_pops_without_an_edge_may_leave_words_headless(tmp_path):
    text = (data_dir("systems") / "arc_eager.toml").read_text()
    text = text.replace('require = ["s0 has head"]\n', "")  # reduce pops headless words
    path = tmp_path / "eager_free_reduce.toml"
    path.write_text(text.replace('name = "arc_eager"', 'name = "eager_free_reduce"'))
    system = get_system(str(path))
    assert not system.pops_headed
    assert system.validate([0], [3], [-1, -1, -1, -1], 3) == ((0,), (3,), (-1, -1, -1, -1))
    with pytest.raises(ValueError, match="cycle"):
        system.validate([0], [3], [-1, 2, 1, -1], 3)


def _has_kind(configuration, kind):
    n, stack, buffer, arcs = configuration
    return any(type(x) is kind for part in (stack, buffer, arcs or ()) for x in part)


@pytest.mark.parametrize("kind", [bool, float, str, type(None)])
def test_perturbed_configurations_include_values_that_are_not_positions(kind):
    find(perturbed_configurations("arc_eager"), lambda c: _has_kind(c, kind),
         settings=settings(max_examples=2000, database=None))


def test_perturbed_configurations_include_arcs_cycles():
    def cycle(c):
        arcs = c[3]
        return arcs is not None and all(type(h) is int for h in arcs) and any(
            0 <= arcs[d] < len(arcs) and arcs[arcs[d]] == d for d in range(len(arcs)))
    find(perturbed_configurations("arc_standard"), cycle,
         settings=settings(max_examples=2000, database=None))


@settings(max_examples=600, deadline=None, database=None)
@given(data=st.data())
def test_c_acceptance_agrees_with_the_python_validator_on_bad_values(data):
    name = data.draw(st.sampled_from(SYSTEMS))
    source = data.draw(st.sampled_from(SYSTEMS[:3]))
    system = get_system(name)
    configuration = data.draw(perturbed_configurations(source))
    expected = validation_outcome(system.validate_slowly, configuration)
    assert validation_outcome(system.validate, configuration) == expected
    n, stack, buffer, arcs = configuration
    if arcs is None:
        return
    fast = (_lrspine.accepts(stack, buffer, arcs, n) if name == "lr_spine" else
            accepts(stack, buffer, arcs, n, system.stack_heads == "below", system.pops_headed))
    assert fast == (not isinstance(expected, str))

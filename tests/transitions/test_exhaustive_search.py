"""The exhaustive search on the compiled machine's C state.

- for every shipped system and strategy, for the declared systems of
  tests/systems and for an arc-eager without a root token, on random gold trees (n <= 6) and configurations reached by
  random legal transitions, the C search's scores equal the Python search's
  (the same keys in the same order, the same values and types), also when
  one search answers several configurations of a gold tree from its memo;
- a system whose transitions can loop gets the same "can loop" message from
  both searches;
- a system written in Python (no machine) keeps the Python search, and the
  oracle's exhaustive scores take the C search where there is a machine;
- a configuration that does not fit the sentence is a ValueError.
"""
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.testing import computations, gold_trees
from semiparse.transitions import Oracle, load_system
from semiparse.transitions.oracles._exhaustive import CSearch
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.oracles.exhaustive import PythonSearch, Search
from semiparse.transitions.systems.interface import TransitionSystem
from semiparse.transitions.systems.loading import system_from_text

from support import ARC_STANDARD, SYSTEMS, UNSHIFT

# Arc-eager without a root token: a final configuration may keep headed and
# headless words on the stack, and the root's final edges go to the headless
# ones only.
EAGER_NO_ROOT = '''name = "eager_no_root"
initial = { root = "none" }
final = { stack = "any", buffer = "empty" }

[[transition]]
name = "shift"
stack = ["*"]
buffer = ["b", "*"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "left_arc"
stack = ["*", "s0"]
buffer = ["b", "*"]
require = ["s0 has no head"]
stack_after = ["*"]
buffer_after = ["b", "*"]
edge = "b -> s0"

[[transition]]
name = "right_arc"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0", "b"]
buffer_after = ["*"]
edge = "s0 -> b"

[[transition]]
name = "reduce"
stack = ["*", "s0"]
require = ["s0 has head"]
stack_after = ["*"]
buffer_after = ["*"]
'''

SHIPPED = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")
SYSTEMS = ([(name, load_system(name)) for name in SHIPPED]
           + [(p.stem, load_system(str(p)))
              for p in sorted(SYSTEMS.glob("*.toml"))]
           + [("eager_no_root", system_from_text(EAGER_NO_ROOT, "eager_no_root.toml"))])


@pytest.mark.parametrize("system, strategy", [
    pytest.param(system, strategy, id=f"{key}-{strategy}")
    for key, system in SYSTEMS for strategy in system.strategies])
@settings(max_examples=80)
@given(data=st.data())
def test_c_search_equals_python_search(system, strategy, data):
    heads = data.draw(gold_trees(1, 6))
    n = len(heads) - 1
    c_search = Search(system, heads, strategy, compiled=True)
    py_search = Search(system, heads, strategy, compiled=False)
    assert isinstance(c_search.engine, CSearch) and isinstance(py_search.engine, PythonSearch)
    for _ in range(data.draw(st.integers(1, 3))):
        comp = data.draw(computations(system, n))
        stack, buffer, arcs = comp.stack, comp.buffer, comp.arcs
        if not system.needs_arcs and not data.draw(st.booleans()):
            arcs = None  # as the oracle passes them (validate drops unused arcs)
        got = c_search.scores(stack, buffer, arcs)
        expected = py_search.scores(stack, buffer, arcs)
        assert list(got.items()) == list(expected.items())
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


def test_a_loop_gets_the_same_message_from_both_searches():
    # the loader refuses such a system; let it through to reach the search
    with mock.patch("semiparse.transitions.systems.declared.find_loop", return_value=None):
        system = system_from_text(ARC_STANDARD + UNSHIFT, "looping.toml")
    messages = []
    for compiled in (True, False):
        search = Search(system, [-1, 0], "none", compiled=compiled)
        with pytest.raises(ValueError) as info:
            search.scores(*system.initial(1))
        messages.append(str(info.value))
    assert messages[0] == messages[1] == ("transition system 'looping' can loop: configuration "
                                          "stack=[0, 1] buffer=[] repeats")


class DelegatingHybrid(TransitionSystem):
    """Arc-hybrid through the Python interface only: no compiled machine."""

    name = "delegating_hybrid"
    transitions = ("shift", "left_arc", "right_arc")
    needs_arcs = False

    def __init__(self):
        self.declared = load_system("arc_hybrid")

    def legal(self, stack, buffer, arcs):
        return self.declared.legal(stack, buffer, arcs)

    def apply(self, stack, buffer, arcs, t):
        return self.declared.apply(stack, buffer, arcs, t)

    def is_final(self, stack, buffer, arcs):
        return self.declared.is_final(stack, buffer, arcs)


def test_a_python_system_keeps_the_python_search():
    system = DelegatingHybrid()
    heads = [-1, 3, 1, 0, 3]
    search = Search(system, heads, "none")
    assert not search.compiled and isinstance(search.engine, PythonSearch)
    config = ((0, 1, 2), (3, 4), (-1, -1, -1, -1, -1))
    declared = Search(system.declared, heads, "none")
    assert declared.compiled
    assert search.scores(*config) == declared.scores(*config) != {}
    with pytest.raises(ValueError, match="neither declared as stack/buffer rewrites"):
        Search(system, heads, "none", compiled=True)


def test_a_declared_system_with_moves_redefined_in_python_gets_no_machine(tmp_path):
    """A Python subclass of a declared system whose legal moves differ from
    its rules: the machine would silently follow the rules, so there is none;
    the search runs the Python moves, and parsing with it is refused."""
    from semiparse.transitions.systems.declared import RewriteSystem
    from semiparse.transitions.systems.loading import load_system

    base = load_system("arc_standard")

    class NoRightArcBeforeTheEnd(RewriteSystem):
        def legal(self, stack, buffer, arcs):
            moves = super().legal(stack, buffer, arcs)
            return [t for t in moves if t != "right_arc" or not buffer]

        def successors(self, stack, buffer, arcs):
            return [s for s in super().successors(stack, buffer, arcs)
                    if s[0] in self.legal(stack, buffer, arcs)]

    system = NoRightArcBeforeTheEnd(base.path, base.text, base._data)
    with pytest.raises(ValueError, match="redefines legal, successors in Python: no compiled"):
        machine_for(system)
    heads = [-1, 2, 0, 2]
    search = Search(system, heads, "none")
    assert not search.compiled
    # from stack [0 1 2] buffer [3]: right_arc is legal for arc-standard, not here
    assert "right_arc" in Search(base, heads, "none").scores((0, 1, 2), (3,), None)
    assert "right_arc" not in search.scores((0, 1, 2), (3,), None)
    with pytest.raises(ValueError, match="no compiled machine"):
        semiparse.system(system)


def test_the_oracle_searches_on_the_c_state():
    oracle = Oracle("arc_standard", "lbr", "exhaustive")
    with mock.patch.object(PythonSearch, "scores", side_effect=AssertionError("Python search")):
        got = oracle.scores_exhaustive([0, 1], [2, 3], [-1, 2, 0, 2])
    assert got == Search(load_system("arc_standard"), [-1, 2, 0, 2], "lbr",
                         compiled=False).scores((0, 1), (2, 3), None)


@pytest.mark.parametrize("stack, buffer, arcs, match", [
    ((0, 1, 2, 3), (), None, "does not fit a sentence of 2 words"),
    ((0, 5), (2,), None, "position 5 out of range 0..2"),
    ((0, 1), (2,), (-1, 1, -1), r"arcs\[1\] = 1 is not a head"),
    ((0, 1), (2,), (-1, -1), "does not fit a sentence of 2 words"),
])
def test_a_configuration_that_does_not_fit_is_a_value_error(stack, buffer, arcs, match):
    search = CSearch(machine_for("arc_standard"), [-1, 2, 0])
    with pytest.raises(ValueError, match=match):
        search.scores(stack, buffer, arcs, None)

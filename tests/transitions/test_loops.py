"""Declared systems whose transitions can loop are refused at load time.

- the shipped systems load, and the proof of termination accepts them with
  no search;
- a shift and an unshift that undo each other, a cycle that needs arcs (a
  headed node moved back and forth) and the classic swap without its order
  condition are refused with FILE:LINE naming the transitions of the cycle
  and a configuration it returns to; an attach that may overwrite a head is
  refused before any search (see test_system_files);
- systems that terminate only thanks to a requirement are accepted;
- on random small declared systems the loader agrees with a brute-force
  search for cycles over n <= 4, and a reported cycle returns to its
  configuration when replayed with ``apply``.
"""
import ast
import json
import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.transitions import load_system, loops
from semiparse.transitions.loading import system_from_text
from semiparse.transitions.system_file import SystemFileError

from support import ARC_STANDARD, SHIFT, UNSHIFT


def _line(text, name):
    """Line (1-based) of transition ``name``'s name."""
    return text[:text.index(f'name = "{name}"')].count("\n") + 1


def _refusal(tmp_path, text):
    """The loader's error for ``text`` (a file in tmp_path)."""
    path = tmp_path / "x.toml"
    path.write_text(text)
    with pytest.raises(SystemFileError) as info:
        load_system(str(path))
    return str(path), str(info.value)


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_eager"])
def test_shipped_systems_load_and_are_proved_to_terminate_without_search(name):
    system = load_system(name)
    assert loops.find_loop(system) is None
    with mock.patch.object(loops, "_shortest_cycle", side_effect=AssertionError("searched")):
        assert system_from_text(system.text, f"{name}.toml").transitions == system.transitions


def test_shift_and_unshift_that_undo_each_other_are_refused(tmp_path, capsys):
    text = ARC_STANDARD + UNSHIFT
    path, error = _refusal(tmp_path, text)
    assert error == (f"{path}:{_line(text, 'shift')}: transitions shift, unshift can loop: "
                     f"from stack [0] buffer [1] arcs [-1, -1] they come back to the same "
                     f"configuration")
    assert main(["check", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semiparse check: error: ")
    assert "transitions shift, unshift can loop" in err[0]


def test_the_cycle_starts_with_the_transition_declared_first(tmp_path):
    text = ARC_STANDARD.replace(SHIFT, "") + UNSHIFT + SHIFT
    path, error = _refusal(tmp_path, text)
    assert error.startswith(f"{path}:{_line(text, 'unshift')}: transitions unshift, shift can "
                            f"loop: from stack [0, 1] buffer [] arcs [-1, -1] ")


def test_a_cycle_that_needs_arcs_is_found(tmp_path):
    # down and up move a headed node between the stack and the buffer (shift
    # only headless ones); only attach gives heads, so the cycle exists only
    # once an edge was built
    text = ARC_STANDARD.replace('buffer = ["b", "*"]\n', 'buffer = ["b", "*"]\n'
                                'require = ["b has no head"]\n') + '''
[[transition]]
name = "attach"
stack = ["*", "s1", "s0"]
require = ["s0 has no head"]
stack_after = ["*", "s1", "s0"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "down"
stack = ["*", "s0"]
require = ["s0 has head"]
stack_after = ["*"]
buffer_after = ["s0", "*"]

[[transition]]
name = "up"
buffer = ["b", "*"]
require = ["b has head"]
stack_after = ["*", "b"]
buffer_after = ["*"]
'''
    path, error = _refusal(tmp_path, text)
    assert error == (f"{path}:{_line(text, 'down')}: transitions down, up can loop: from "
                     f"stack [0, 1] buffer [] arcs [-1, 0] they come back to the same "
                     f"configuration")


def test_an_attach_that_may_overwrite_a_head_is_refused_and_its_requirement_fixes_it(tmp_path):
    attach = '''
[[transition]]
name = "attach"
stack = ["*", "s1", "s0"]REQUIRE
stack_after = ["*", "s1", "s0"]
buffer_after = ["*"]
edge = "s1 -> s0"
'''
    text = ARC_STANDARD + attach.replace("REQUIRE", "")
    path, error = _refusal(tmp_path, text)
    # an edge into a headed node overwrites its head (and makes no progress)
    assert error.startswith(f"{path}:{_line(text, 'attach')}: transition attach can give a "
                            f"word that already has a head a new one: s0 ")
    fixed = ARC_STANDARD + attach.replace("REQUIRE", '\nrequire = ["s0 has no head"]')
    with mock.patch.object(loops, "_shortest_cycle", side_effect=AssertionError("searched")):
        assert "attach" in system_from_text(fixed, "x.toml").transitions  # proved


def test_an_unshift_that_attaches_a_headless_top_is_accepted(tmp_path):
    unshift = '''
[[transition]]
name = "unshift"
stack = ["*", "s1", "s0"]
require = ["s0 != root"REQUIRE]
stack_after = ["*", "s1"]
buffer_after = ["s0", "*"]
edge = "s1 -> s0"
'''
    text = ARC_STANDARD + unshift.replace("REQUIRE", ', "s0 has no head"')
    with mock.patch.object(loops, "_shortest_cycle", side_effect=AssertionError("searched")):
        assert "unshift" in system_from_text(text, "x.toml").transitions  # proved
    # without the requirement the edge may overwrite the head it gave before
    _, error = _refusal(tmp_path, ARC_STANDARD + unshift.replace("REQUIRE", ""))
    assert "transition unshift can give a word that already has a head a new one" in error


def test_swap_without_an_order_condition_is_refused(tmp_path):
    text = ARC_STANDARD + '''
[[transition]]
name = "swap"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s0"]
buffer_after = ["s1", "*"]
'''
    path, error = _refusal(tmp_path, text)
    assert error == (f"{path}:{_line(text, 'shift')}: transitions shift, swap, shift, swap can "
                     f"loop: from stack [0, 1] buffer [2] arcs [-1, -1, -1] they come back to "
                     f"the same configuration")


# -- random small systems against a brute-force search --------------------------------

# (stack, buffer, stack_after, buffer_after, possible edges) of rewrites like
# shift, unshift, arcs that pop or keep their dependent.
_SHAPES = [
    (["s0"], ["b"], ["s0", "b"], [], [None, "s0 -> b"]),
    (["s0"], [], [], ["s0"], [None]),
    (["s1", "s0"], [], [], ["s0", "s1"], [None, "s1 -> s0"]),
    (["s1", "s0"], [], ["s1"], ["s0"], [None, "s1 -> s0"]),
    (["s1", "s0"], [], ["s0"], [], ["s0 -> s1"]),
    (["s1", "s0"], [], ["s1"], [], ["s1 -> s0"]),
    (["s1", "s0"], [], ["s1", "s0"], [], ["s1 -> s0", "s0 -> s1"]),
    (["s0"], ["b"], [], ["b"], ["b -> s0"]),
    (["s0"], ["b"], ["s0"], ["b"], ["s0 -> b", "b -> s0"]),
    (["s0"], [], [], [], [None]),
]


@st.composite
def _transition(draw, index):
    stack, buffer, stack_after, buffer_after, edges = draw(st.sampled_from(_SHAPES))
    require = []
    for x in stack + buffer:
        kind = draw(st.sampled_from([None, "has head", "has no head"]))
        if kind:
            require.append(f"{x} {kind}")
        if x in stack and draw(st.booleans()):
            require.append(f"{x} != root")
    edge = draw(st.sampled_from(edges))

    lst = json.dumps  # a list of strings is the same in TOML
    return (f'\n[[transition]]\nname = "t{index}"\nstack = {lst(["*"] + stack)}\n'
            f'buffer = {lst(buffer + ["*"])}\nrequire = {lst(require)}\n'
            f'stack_after = {lst(["*"] + stack_after)}\n'
            f'buffer_after = {lst(buffer_after + ["*"])}\n'
            + (f'edge = "{edge}"\n' if edge else ""))


@st.composite
def _system_text(draw):
    final = draw(st.sampled_from(["root", "any"]))
    k = draw(st.integers(1, 3))
    return (f'name = "random"\nfinal = {{ stack = "{final}", buffer = "empty" }}\n'
            + "".join(draw(_transition(i)) for i in range(k)))


def _has_cycle(system, n):
    """Whether the configurations reachable from initial(n) contain a cycle:
    what remains after repeatedly deleting configurations with no successor
    left."""
    start = system.initial(n)
    succ, todo = {}, [start]
    while todo:
        c = todo.pop()
        if c not in succ:
            succ[c] = {tuple(s[1:4]) for s in system.successors(*c)}
            todo.extend(succ[c])
    alive = set(succ)
    while True:
        dead = {c for c in alive if not succ[c] & alive}
        if not dead:
            return bool(alive)
        alive -= dead


@settings(max_examples=300)
@given(text=_system_text())
def test_random_systems_agree_with_a_brute_force_search(text):
    try:
        system_from_text(text, "r.toml")
        refused = None
    except SystemFileError as exc:
        if "can loop" not in str(exc):
            return  # a transition that changes nothing, refused on its own
        refused = str(exc)
    with mock.patch("semiparse.transitions.declared.find_loop", return_value=None):
        system = system_from_text(text, "r.toml")
    cycles = [n for n in range(5) if _has_cycle(system, n)]
    if refused is None:
        assert not cycles
        return
    assert cycles
    m = re.fullmatch(r"r\.toml:(\d+): transitions? ([\w, ]+) can loop: from stack (\[.*?\]) "
                     r"buffer (\[.*?\]) arcs (\[.*?\]) (they come|it comes) back to the same "
                     r"configuration", refused)
    names = m.group(2).split(", ")
    assert int(m.group(1)) == _line(text, names[0])
    start = tuple(tuple(ast.literal_eval(m.group(i))) for i in (3, 4, 5))
    config = start
    for t in names:
        config = system.apply(*config, t)[:3]
    assert config == start

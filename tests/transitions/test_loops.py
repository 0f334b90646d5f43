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

import semiparse
from semiparse.cli import main
from semiparse.testing import gold_trees
from semiparse.transitions import load_system
from semiparse.transitions.systems.format import loops
from semiparse.transitions.systems.loading import system_from_text
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import ARC_STANDARD, SHIFT, UNSHIFT, late_loop


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
                     f"configuration" + UNSHIFT_ADVICE.format(name="unshift", node="s0"))
    assert main(["check", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semiparse check: error: ")
    assert "transitions shift, unshift can loop" in err[0]


# The pointer a loop through an unshift gets: the paper's unshift stops by a
# flag the format lacks; the shipped arc_eager_single_root fuses it instead.
UNSHIFT_ADVICE = (
    "; transition {name} moves {node} from the stack back into the buffer, as an unshift does, "
    "and the format has no flag (the unshift of Nivre and Fernández-González 2014 sets one that "
    "forbids shift): fuse the unshift with each move that may follow it into one transition, as "
    "systems/arc_eager_single_root.toml does (unshift_left_arc, unshift_right_arc, "
    "unshift_reduce, each requiring \"buffer empty\"; docs/systems.md)")


def test_a_loop_through_an_unshift_points_to_the_fused_moves(tmp_path):
    """The refusal said only that shift and unshift can loop; it now names
    the fused form of the shipped arc_eager_single_root, which the pointer
    names correctly (its unshift moves exist and require an empty buffer)."""
    _, error = _refusal(tmp_path, ARC_STANDARD + UNSHIFT)
    assert error.endswith(UNSHIFT_ADVICE.format(name="unshift", node="s0"))
    fused = load_system("arc_eager_single_root")
    for name in ("unshift_left_arc", "unshift_right_arc", "unshift_reduce"):
        assert fused._rule_of[name].buffer_empty
    # a loop through no move into the buffer gets no pointer
    assert loops.loop_advice(load_system("arc_standard"), ["shift", "left_arc"]) == ""


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
                     f"configuration" + UNSHIFT_ADVICE.format(name="down", node="s0"))


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
                     f"the same configuration; transition swap moves s1 back into the buffer "
                     f"out of the sentence's order, as swap does: a swap system ends only by a "
                     f"condition on that order (Nivre 2009: s1 before s0 in the sentence), which "
                     f"require states as \"s1 < s0\" (systems/arc_standard_swap.toml)")
    # with it, the loader proves that the system ends, without searching for a cycle
    fixed = text.replace('require = ["s1 != root"]', 'require = ["s1 != root", "s1 < s0"]')
    with mock.patch.object(loops, "_shortest_cycle", side_effect=AssertionError("searched")):
        assert "swap" in system_from_text(fixed, "x.toml").transitions


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
    with mock.patch("semiparse.transitions.systems.declared.find_loop", return_value=None):
        system = system_from_text(text, "r.toml")
    cycles = [n for n in range(5) if _has_cycle(system, n)]
    if refused is None:
        assert not cycles
        return
    assert cycles
    m = re.fullmatch(r"r\.toml:(\d+): transitions? ([\w, ]+) can loop: from stack (\[.*?\]) "
                     r"buffer (\[.*?\]) arcs (\[.*?\]) (they come|it comes) back to the same "
                     r"configuration(; transition \w+ moves .*)?", refused)
    names = m.group(2).split(", ")
    assert int(m.group(1)) == _line(text, names[0])
    start = tuple(tuple(ast.literal_eval(m.group(i))) for i in (3, 4, 5))
    config = start
    for t in names:
        config = system.apply(*config, t)[:3]
    assert config == start


def _chains(path, count=4, n=8):
    """A CoNLL-U file of ``count`` sentences of ``n`` words, each headed by
    the one before (arc-standard holds them all on its stack)."""
    rows = [f"{d}\tw{d}\tw{d}\tX\t_\t_\t{d - 1}\t{'root' if d == 1 else 'dep'}\t_\t_"
            for d in range(1, n + 1)]
    path.write_text("\n".join(rows) + "\n\n" + ("\n".join(rows) + "\n\n") * (count - 1))
    return path


@pytest.mark.parametrize("oracle", ["nondet", "dynamic"])
def test_training_on_a_loop_the_loader_misses_stops_with_an_error(tmp_path, capsys, oracle):
    """Such a system used to train forever: the oracle finds shift and
    unshift both optimal, and the trainer went back and forth."""
    system, treebank = late_loop(tmp_path), _chains(tmp_path / "t.conllu")
    assert main(["train", str(treebank), "--system", str(system), "--oracle", oracle, "--epochs", "1",
                 "-o", str(tmp_path / "m.npz"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{4 * 10 ** 2} transitions on a sentence of 8 words" in err and "can loop" in err
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("beam", [1, 3])
def test_parsing_stops_a_sentence_whose_moves_loop(tmp_path, monkeypatch, beam):
    """A parse stops after max_steps moves (here 2, so that every parse of
    the shipped arc-standard runs into it), as at a dead end: it is parsed
    again with the viable moves, under the same bound, and the words left
    without a head are attached to the root."""
    from semiparse.perceptron import Model, read_trees
    from semiparse.perceptron import _core

    treebank = _chains(tmp_path / "t.conllu", count=3, n=5)
    model = Model("arc_standard", ["root", "dep"], beam=beam)
    monkeypatch.setattr(_core, "max_steps", lambda n: 2)
    for tree in read_trees(treebank):
        heads, labels, _ = model.parse(tree, root="any")
        assert heads == [-1] + [0] * 5 and labels[1:] == ["root"] * 5
    assert model.dead_ends == 3


@pytest.fixture(scope="module")
def unshifting(tmp_path_factory):
    """A system whose unshift moves a stack node back into the buffer."""
    return load_system(str(late_loop(tmp_path_factory.mktemp("late"))))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_what_an_unshift_reaches_validates_and_the_oracle_scores(unshifting, data):
    """A transition that moves a stack node back into the buffer leaves the
    buffer without the nodes reduced meanwhile: such reachable
    configurations were refused ("buffer [7]: it must be the
    consecutive positions 7..8"), so training on the system died."""
    system = unshifting
    assert not system.buffer_suffix
    n = data.draw(st.integers(1, 7))
    heads = data.draw(gold_trees(n, n))
    stack, buffer, arcs = system.initial(n)
    for _ in range(data.draw(st.integers(0, 3 * n))):
        legal = system.legal(stack, buffer, arcs)
        if not legal:
            break
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, data.draw(st.sampled_from(legal)))
        assert system.validate(stack, buffer, arcs, n)[:2] == (stack, buffer)
    if system.is_final(stack, buffer, arcs) or n > 5:
        return
    try:
        expected = semiparse.oracle(system, method="exhaustive").scores(stack, buffer, heads, arcs)
    except ValueError as exc:  # the late loop, met by the search
        assert "can loop" in str(exc)
        return
    if system.grammar is not None:
        assert semiparse.oracle(system, method="grammar").scores(stack, buffer, heads, arcs) == expected

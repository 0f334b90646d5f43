"""Transition systems declared as data: semantics, reachable trees, loading errors,
and systems written in Python."""
import os
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import no_crossing
from semiparse.resources import data_dir
from semiparse.testing import perturbed_configurations, validation_outcome
from semiparse.testing.checking import check
from semiparse.transitions import TransitionSystem, load_system, register_system
from semiparse.transitions.runtime._validation import accepts

from brute_force import all_trees

SHIPPED = ("arc_standard", "arc_hybrid", "arc_eager")


def final_arcs(system, n):
    """The arcs of every final configuration reachable from the initial one."""
    out, seen = set(), set()

    def walk(stack, buffer, arcs):
        if (stack, buffer, arcs) in seen:
            return
        seen.add((stack, buffer, arcs))
        if system.is_final(stack, buffer, arcs):
            out.add(arcs)
        for t in system.legal(stack, buffer, arcs):
            walk(*system.apply(stack, buffer, arcs, t)[:3])

    walk(*system.initial(n))
    return out


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_systems_load_with_their_transitions(name):
    system = load_system(name)
    expected = {"arc_eager": ("shift", "left_arc", "right_arc", "reduce")}.get(
        name, ("shift", "left_arc", "right_arc"))
    assert system.transitions == expected
    assert system.initial(3) == ((0,), (1, 2, 3), (-1, -1, -1, -1))
    assert "none" in system.strategies
    assert system.grammar is not None


def test_arc_standard_transitions():
    s = load_system("arc_standard")
    arcs = (-1,) * 5
    assert s.apply((0, 1, 2), (3, 4), arcs, "shift")[:2] == ((0, 1, 2, 3), (4,))
    # left_arc: the top becomes head of the second; right_arc: the reverse.
    assert s.apply((0, 1, 2), (3, 4), arcs, "left_arc") == ((0, 2), (3, 4), (-1, 2, -1, -1, -1),
                                                             (2, 1))
    assert s.apply((0, 1, 2), (3, 4), arcs, "right_arc") == ((0, 1), (3, 4), (-1, -1, 1, -1, -1),
                                                              (1, 2))
    assert s.legal((0, 1), (2,), None) == ["shift", "right_arc"]  # the root is never a child
    assert s.legal((0,), (), None) == [] and s.is_final((0,), (), None)
    assert not s.is_final((0, 1), (), None)


def test_arc_hybrid_transitions():
    s = load_system("arc_hybrid")
    arcs = (-1,) * 5
    assert s.apply((0, 1, 2), (3, 4), arcs, "left_arc")[:2] == ((0, 1), (3, 4))
    assert s.apply((0, 1, 2), (3, 4), arcs, "left_arc")[3] == (3, 2)
    assert s.apply((0, 1, 2), (3, 4), arcs, "right_arc")[3] == (1, 2)
    assert s.legal((0,), (1,), None) == ["shift"]
    assert s.legal((0, 1), (), None) == ["right_arc"]


def test_arc_eager_transitions_and_final_configurations():
    s = load_system("arc_eager")
    arcs = (-1,) * 4
    stack, buffer, arcs2, edge = s.apply((0, 1), (2, 3), arcs, "right_arc")
    assert (stack, buffer, edge, arcs2[2]) == ((0, 1, 2), (3,), (1, 2), 1)
    assert s.legal(stack, buffer, arcs2) == ["shift", "right_arc", "reduce"]
    assert s.legal((0, 1), (2, 3), arcs) == ["shift", "left_arc", "right_arc"]
    assert s.apply((0, 1), (2, 3), arcs, "left_arc")[:2] == ((0,), (2, 3))
    assert "reduce" not in s.legal((0, 1), (2,), arcs)  # 1 has no head
    # Parsing stops when the buffer is empty, headless tokens stay headless.
    assert s.is_final((0, 1, 2), (), (-1, -1, 1, -1)) and s.legal((0, 1, 2), (), arcs) == []
    with pytest.raises(ValueError, match="not legal"):
        s.apply((0,), (1,), (-1, -1), "reduce")
    with pytest.raises(ValueError, match="needs arcs"):
        s.apply((0,), (1,), None, "shift")
    with pytest.raises(ValueError, match="unknown transition"):
        s.apply((0,), (1,), (-1, -1), "swap")


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid"])
@pytest.mark.parametrize("n", range(1, 6))
def test_reachable_trees_are_exactly_the_projective_trees(name, n):
    reached = final_arcs(load_system(name), n)
    assert reached == {h for h in all_trees(n) if no_crossing(h)}


@pytest.mark.parametrize("n", range(1, 6))
def test_arc_eager_reaches_every_projective_tree_and_only_projective_forests(n):
    reached = final_arcs(load_system("arc_eager"), n)
    projective = {h for h in all_trees(n) if no_crossing(h)}
    assert projective <= reached
    for arcs in reached:  # headless tokens attached to the root give a projective tree
        assert no_crossing(tuple(a if a >= 0 or d == 0 else 0 for d, a in enumerate(arcs)))


def test_every_stack_head_in_arc_eager_is_the_node_below():
    system = load_system("arc_eager")
    seen = []

    def walk(stack, buffer, arcs):
        seen.append(stack)
        for i, x in enumerate(stack[1:], 1):
            assert arcs[x] in (-1, stack[i - 1])
        for t in system.legal(stack, buffer, arcs):
            walk(*system.apply(stack, buffer, arcs, t)[:3])

    walk(*system.initial(5))
    assert len(seen) > 100


@pytest.mark.parametrize("stack, buffer, arcs, message", [
    ([1, 2], [3], None, "root 0 at the bottom"),
    ([], [1, 2, 3], None, "root 0 at the bottom"),
    ([0, 2, 2], [3], None, "duplicate position"),
    ([0, 2, 1], [3], None, "out of order"),
    ([0, 1, 5], [], None, "out of range"),
    ([0, 1], [2], None, "consecutive positions 2..3"),
    ([0, 1], [2, 3, 4], None, "out of range"),
    ([0, 2], [1, 2, 3], None, "start after the stack top"),
    ([0, 1], [2, 3], [-1, -1, 1, -1], "buffer nodes have no head"),
    ([0, 1], [2, 3], [-1, 0, -1, -1], "no stack node has a head"),
    ([0, 1], [2, 3], [-1, -1, -1], "length 3: expected n \\+ 1 = 4"),
    ([0, 1], [2, 3], [0, -1, -1, -1], "arcs\\[0\\] = 0"),
    ("x", [2, 3], None, "integer positions"),
])
def test_bad_configurations_are_value_errors(stack, buffer, arcs, message):
    o = semiparse.oracle("arc_standard")
    with pytest.raises(ValueError, match=message):
        o.scores(stack, buffer, [-1, 0, 1, 2], arcs)


@settings(max_examples=500, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_eager"])
def test_c_acceptance_agrees_with_the_python_validator(name, data):
    system = load_system(name)
    # configurations of any of the three systems, perturbed
    source = data.draw(st.sampled_from(["arc_standard", "arc_hybrid", "arc_eager"]))
    configuration = data.draw(perturbed_configurations(source))
    expected = validation_outcome(system.validate_slowly, configuration)
    assert validation_outcome(system.validate, configuration) == expected
    n, stack, buffer, arcs = configuration
    if arcs is not None or not system.needs_arcs:  # else the Python side asks for arcs
        # neither too strict (the fast path would never be taken) nor too lax
        assert accepts(stack, buffer, arcs, n, system.stack_heads == "below") == (
            not isinstance(expected, str))


def test_validation_normalizes_numpy_positions():
    system = load_system("arc_eager")
    got = system.validate(np.array([0, 1]), np.array([2, 3]), np.array([-1, 0, -1, -1]), 3)
    assert got == ((0, 1), (2, 3), (-1, 0, -1, -1))
    assert all(type(x) is int for part in got for x in part)


def test_arc_eager_configurations_need_consistent_arcs():
    o = semiparse.oracle("arc_eager")
    heads = [-1, 0, 1, 2]
    with pytest.raises(ValueError, match="needs arcs"):
        o.scores([0, 1], [2, 3], heads)
    with pytest.raises(ValueError, match="node just below it"):
        o.scores([0, 1, 2], [3], heads, [-1, -1, 0, -1])
    assert o.scores([0, 1, 2], [3], heads, [-1, 0, 1, -1]) == {"shift": 0, "right_arc": 1, "reduce": 0}


def write_system(tmp_path, body, name="toy"):
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(body))
    return path


HYBRID = (data_dir("systems") / "arc_hybrid.toml").read_text()


@pytest.mark.parametrize("edit, message", [
    (('name = "arc_hybrid"', 'name = "arc_hybrid"\nname = "x"'), ":12:11: Cannot overwrite a value"),
    (('edge = "b -> s0"', 'edge = "c -> s0"'), ":29: transition left_arc: edge names 'c'"),
    (('require = ["s0 != root"]', 'require = ["s0 is big"]'), ":26: transition left_arc: bad require"),
    (('{ node = "stack", terminal = "p" }', '{ node = "stack", terminal = "q" }'),
     ":46: terminal 'q' is not in grammar arc_hybrid"),
    (('{ node = "stack", terminal = "p" }', '{ node = "heap", terminal = "p" }'),
     ":46: completion terminal rule node 'heap'"),
    (('{ node = "stack", terminal = "p" }', '{ node = "stack" }'),
     ":46: completion terminal rule 1 has no 'terminal'"),
    (('{ node = "stack", terminal = "p" }', '{ terminal = "p" }'),
     ":46: completion terminal rule 1 has no 'node'"),
    (('stack_after = ["*", "s1"]', 'stack_after = ["s1", "*"]'), ":35: transition right_arc: stack_after"),
    (('[strategy.none]', '[strategy.nothing]'), ":53: \\[strategy.none\\] must be declared"),
    (('final = { stack = "root", buffer = "empty" }', 'final = { stack = "top" }'), ":13: final must be"),
    (('heads.stack = ["below", "buffer"]', 'heads.stack = ["above"]'),
     ":64: heads.stack: head kind 'above'"),
])
def test_bad_system_files_name_file_line_and_reason(tmp_path, edit, message):
    old, new = edit
    assert old in HYBRID
    path = write_system(tmp_path, HYBRID.replace(old, new, 1))
    with pytest.raises(ValueError, match=f"toy.toml{message}"):
        load_system(str(path))


@pytest.mark.parametrize("rules, message, instead", [
    ('    { node = "buffer", terminal = "s" },\n', "a word in the buffer, which a sentence of 1 word "
                                                 "reaches \\(stack \\[0\\] buffer \\[1\\]", None),
    ('    { node = "stack", terminal = "p" },\n', "the root on the stack below the top, which a "
                                                "sentence of 1 word reaches \\(stack \\[0, 1\\]", None),
    ('    { node = "stack", terminal = "p" },\n    { node = "buffer", terminal = "s" },\n',
     "a word in the buffer", None),
    ('    { node = "stack", terminal = "p" },\n', "the root on the stack below the top, without a "
                                                "head", '{ node = "stack", headed = true, terminal = "p" }'),
])
def test_a_node_no_terminal_rule_matches_is_refused_at_load(tmp_path, rules, message, instead):
    # before, only `check` or the first oracle call on such a configuration found it
    instead = f"    {instead},\n" if instead else ""
    text = HYBRID.replace(rules, instead, 1).replace(
        "terminals = [\n", 'terminals = [\n    { node = "top", terminal = "s" },\n', 1)
    path = write_system(tmp_path, text)
    with pytest.raises(ValueError, match=f"toy.toml:45: no completion terminal rule matches {message}"):
        load_system(str(path))


def test_kinds_of_node_no_configuration_holds_need_no_terminal_rule(tmp_path):
    # arc-hybrid's stack nodes never have a head: a rule for headless ones suffices
    text = HYBRID.replace('{ node = "stack", terminal = "p" }',
                          '{ node = "stack", headed = false, terminal = "p" }', 1)
    system = load_system(str(write_system(tmp_path, text)))
    assert not system.completion_spec.covers_all_nodes()
    heads = [-1, 2, 0, 2]
    ours, shipped = semiparse.oracle(system), semiparse.oracle("arc_hybrid")
    for args in [([0], [1, 2, 3]), ([0, 1], [2, 3]), ([0, 2], [3], [-1, 2, -1, -1])]:
        assert ours.scores(*args[:2], heads, *args[2:]) == shipped.scores(*args[:2], heads, *args[2:])


@pytest.mark.parametrize("before, after, rule", [
    ("", '{ node = "top", terminal = "s" }', ":47: completion terminal rule 2 \\(top\\)"),
    # arc-hybrid's stack nodes never have a head
    ('{ node = "stack", headed = true, terminal = "s" }', "",
     ":46: completion terminal rule 1 \\(stack, headed = true\\)"),
])
def test_a_terminal_rule_that_matches_no_node_is_warned_of(tmp_path, before, after, rule):
    stack = '    { node = "stack", terminal = "p" },\n'
    line = (lambda rule: f"    {rule},\n" if rule else "")
    text = HYBRID.replace(stack, line(before) + stack + line(after), 1)
    with pytest.warns(UserWarning, match=f"toy.toml{rule} matches "
                                         f"no node that the configurations"):
        system = load_system(str(write_system(tmp_path, text)))
    unheaded = (lambda s: {k: t for k, t in s.completion_spec.terminal_table.items() if not k[3]})
    assert unheaded(system) == unheaded(load_system("arc_hybrid"))   # it loads, as it did


def test_completion_grammar_errors(tmp_path):
    path = write_system(tmp_path, HYBRID.replace('"arc_hybrid.grammar"', '"nowhere.grammar"'))
    with pytest.raises(ValueError, match="toy.toml:42: completion grammar 'nowhere.grammar' not"):
        load_system(str(path))
    (tmp_path / "here.grammar").mkdir()
    os.mkfifo(tmp_path / "pipe.grammar")
    for name in ("here.grammar", "pipe.grammar"):
        path = write_system(tmp_path, HYBRID.replace('"arc_hybrid.grammar"', f'"{name}"'))
        with pytest.raises(ValueError, match=f"toy.toml:42: completion grammar '{name}' next to "
                                             f"the system file is not a regular file"):
            load_system(str(path))
    (tmp_path / "broken.grammar").write_text("start P\n(N, R0) -> p\nP -> (N R0)\n")
    path = write_system(tmp_path, HYBRID.replace('"arc_hybrid.grammar"', '"broken.grammar"'))
    with pytest.raises(semiparse.GrammarError, match="broken.grammar:3:"):
        load_system(str(path))


def test_unknown_system_and_strategy():
    with pytest.raises(ValueError, match="unknown transition system 'arc_swift'.*arc_eager"):
        load_system("arc_swift")
    with pytest.raises(ValueError, match="unknown strategy 'lbr' for transition system 'arc_hybrid'"):
        semiparse.oracle("arc_hybrid", "lbr")
    with pytest.raises(ValueError, match="no transition system file"):
        load_system("nowhere/x.toml")


def test_a_directory_is_not_a_system_file(tmp_path):
    folder = tmp_path / "x.toml"
    folder.mkdir()
    with pytest.raises(ValueError, match=f"^{folder}: is a directory, not a transition system file$"):
        load_system(str(folder))


def test_a_new_system_needs_only_files(tmp_path):
    """Arc-hybrid with the transitions renamed and its grammar next to it: no Python."""
    grammar = (data_dir("grammars") / "arc_hybrid.grammar").read_text()
    (tmp_path / "mine.grammar").write_text(grammar)
    text = (HYBRID.replace('name = "arc_hybrid"', 'name = "renamed_hybrid"')
            .replace('"shift"', '"push"').replace('"arc_hybrid.grammar"', '"mine.grammar"'))
    path = write_system(tmp_path, text, "renamed_hybrid")
    system = load_system(str(path))
    assert system.transitions == ("push", "left_arc", "right_arc")
    [result] = check(system, examples=150, max_n=6)
    assert result.ok and result.calls >= 150


class PythonHybrid(TransitionSystem):
    """Arc-hybrid written in Python: exercises the base-class interface."""

    name = "python_hybrid"
    transitions = ("shift", "left_arc", "right_arc")
    needs_arcs = False

    def legal(self, stack, buffer, arcs):
        out = ["shift"] if buffer else []
        if len(stack) > 1 and buffer:
            out.append("left_arc")
        if len(stack) > 1:
            out.append("right_arc")
        return out

    def apply(self, stack, buffer, arcs, t):
        if t == "shift":
            return stack + buffer[:1], buffer[1:], arcs, None
        if t == "left_arc":
            return stack[:-1], buffer, arcs, (buffer[0], stack[-1])
        return stack[:-1], buffer, arcs, (stack[-2], stack[-1])

    def is_final(self, stack, buffer, arcs):
        return not buffer and len(stack) == 1

    def validate(self, stack, buffer, arcs, n):
        return load_system("arc_hybrid").validate(stack, buffer, None, n)


def test_python_system_gets_exhaustive_search_and_check():
    system = register_system(PythonHybrid())
    assert load_system("python_hybrid") is system
    declared = semiparse.oracle("arc_hybrid", method="grammar")
    semiparse.transitions.register_method(
        "python_hybrid", "via_declared",
        lambda s, b, heads, arcs, strategy: declared.scores(s, b, heads),
        strategies=("none",), projective_only=False, rank=5)
    o = semiparse.oracle("python_hybrid")
    assert o.method_for([-1, 0]) == "via_declared"
    heads = [-1, 3, 1, 0, 3]
    assert o.scores([0, 1, 2], [3, 4], heads) == o.scores_exhaustive([0, 1, 2], [3, 4], heads)
    [result] = check("python_hybrid", examples=100, max_n=6, method="via_declared")
    assert result.ok
    with pytest.raises(ValueError, match="has no completion grammar"):
        semiparse.oracle("python_hybrid", method="grammar")

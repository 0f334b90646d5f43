"""Declaration language: the requirement forms ``X == root``, ``buffer empty``
and ``stack size >= K``, and the requirements no configuration can meet."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.transitions import load_system
from semiparse.transitions.systems.format.system_file import SystemFileError

# Arc-standard whose arcs from the root wait for an empty buffer, with a
# reduce of headed nodes deep in the stack (it needs three stack elements).
LATE_ROOT = '''
name = "late_root"
final = { stack = "root", buffer = "empty" }

[[transition]]
name = "shift"
buffer = ["b", "*"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "left_arc"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s1"

[[transition]]
name = "right_arc"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "root_arc"
stack = ["*", "s1", "s0"]
require = ["s1 == root", "buffer empty", "stack size >= 2"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "skip"
stack = ["*", "s0"]
require = ["stack size >= 3", "s0 has no head"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s0"

[strategy.none]
'''


def _system_file(tmp_path, text, name="x.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _without_skip():
    """LATE_ROOT without the (invalid) self-edge transition."""
    return LATE_ROOT[:LATE_ROOT.index('[[transition]]\nname = "skip"')] + "[strategy.none]\n"


@pytest.fixture(scope="module")
def late_root(tmp_path_factory):
    path = tmp_path_factory.mktemp("v2") / "late_root.toml"
    path.write_text(_without_skip().replace(
        '[strategy.none]', '''[[transition]]
name = "deep_reduce"
stack = ["*", "s2", "s1", "s0"]
require = ["stack size >= 4", "s2 has no head"]
stack_after = ["*", "s1", "s0"]
buffer_after = ["*"]
edge = "s1 -> s2"

[strategy.none]''', 1))
    return str(path)


@settings(max_examples=60)
@given(n=st.integers(0, 7), choices=st.lists(st.integers(0, 1000), max_size=40))
def test_new_requirements_run_alike_in_python_and_in_the_machine(late_root, n, choices):
    py = load_system(late_root)
    config = semiparse.system(late_root).initial(n)
    stack, buffer, arcs = py.initial(n)
    for choice in choices:
        legal = py.legal(stack, buffer, arcs)
        assert sorted(config.legal()) == sorted(legal)
        assert (config.stack, config.buffer, config.arcs) == (stack, buffer, arcs)
        if "root_arc" in legal:
            assert not buffer and stack[-2] == 0
        if "deep_reduce" in legal:
            assert len(stack) >= 4
        if not legal:
            break
        name = legal[choice % len(legal)]
        stack, buffer, arcs, _ = py.apply(stack, buffer, arcs, name)
        config = config.apply(name)


def test_root_arcs_wait_for_the_empty_buffer(late_root):
    py = load_system(late_root)
    stack, buffer, arcs = py.initial(2)
    stack, buffer, arcs, _ = py.apply(stack, buffer, arcs, "shift")
    assert py.legal(stack, buffer, arcs) == ["shift"]
    stack, buffer, arcs, _ = py.apply(stack, buffer, arcs, "shift")
    assert sorted(py.legal(stack, buffer, arcs)) == ["left_arc", "right_arc"]
    stack, buffer, arcs, _ = py.apply(stack, buffer, arcs, "left_arc")
    assert py.legal(stack, buffer, arcs) == ["root_arc"]
    # the oracle (exhaustive search over the declared moves) sees the same
    oracle = semiparse.oracle(late_root, method="exhaustive")
    assert oracle.scores((0,), (1, 2), [-1, 2, 0], (-1, -1, -1)) == {"shift": 2}


@pytest.mark.parametrize("require, reason", [
    ('["s0 != root", "s0 == root"]', "s0 != root and == root"),
    ('["s1 has head", "s1 has no head"]', "s1 has head and has no head"),
    ('["s0 == root", "s0 has head"]', "the root never gets a head"),
    ('["s0 == root"]', "s0 has stack elements below it"),
    ('["s1 == root", "stack size >= 3"]', "s1 has stack elements below it"),
    ('["buffer empty", "s1 != root"]', "the buffer pattern names b"),
    ('["b == root"]', "never in the buffer"),
])
def test_contradictory_requirements_name_the_line(tmp_path, require, reason):
    text = f'''name = "bad"
final = {{ stack = "root", buffer = "empty" }}

[[transition]]
name = "shift"
buffer = ["b", "*"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "odd"
stack = ["*", "s1", "s0"]
buffer = ["b", "*"]
require = {require}
stack_after = ["*", "s0"]
buffer_after = ["b", "*"]
edge = "s0 -> s1"

[strategy.none]
'''
    path = _system_file(tmp_path, text)
    with pytest.raises(SystemFileError, match=rf"^{path}:14: transition odd: contradictory "
                                              rf"requirements: .*{reason}"):
        load_system(path)


def test_a_bad_requirement_lists_every_form(tmp_path):
    path = _system_file(tmp_path, _without_skip().replace('"s1 != root"]', '"s1 is big"]', 1))
    with pytest.raises(SystemFileError, match=r":\d+: transition left_arc: bad require 's1 is "
                                              r"big': expected .*'X == root'.*'buffer empty'.*"
                                              r"'stack size >= K'"):
        load_system(path)


@pytest.mark.parametrize("old, new, message", [
    ('"s1 != root"]', '"s1 != root", "stack size >= \u0663"]', "bad require 'stack size >= \u0663'"),
    ('"s1", "s0"]', '"root", "s0"]', "pattern name 'root' is reserved"),
])
def test_requirements_read_ascii_sizes_and_no_pattern_named_root(tmp_path, old, new, message):
    """An Arabic-Indic digit was read as a size, and a pattern name 'root'
    made "root != root" a requirement on that node."""
    path = _system_file(tmp_path, _without_skip().replace(old, new, 1))
    with pytest.raises(SystemFileError, match=rf":\d+: transition left_arc: {message}"):
        load_system(path)


def test_a_transition_that_changes_nothing_is_refused(tmp_path):
    text = _without_skip().replace('[strategy.none]', '''[[transition]]
name = "wait"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0"]
buffer_after = ["b", "*"]

[strategy.none]''', 1)
    path = _system_file(tmp_path, text)
    line = text[:text.index('stack_after = ["*", "s0"]\nbuffer_after = ["b"')].count("\n") + 1
    with pytest.raises(SystemFileError, match=rf"^{path}:{line}: transition wait: it changes "
                                              rf"nothing .* can be applied forever"):
        load_system(path)


def test_a_self_edge_is_refused(tmp_path):
    path = _system_file(tmp_path, LATE_ROOT)
    with pytest.raises(SystemFileError, match=r"transition skip: bad edge 's0 -> s0'"):
        load_system(path)


SWAP = '''
name = "swap_standard"
final = { stack = "root", buffer = "empty" }

[[transition]]
name = "shift"
buffer = ["b", "*"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "left_arc"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s1"

[[transition]]
name = "right_arc"
stack = ["*", "s1", "s0"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "swap"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s0"]
buffer_after = ["s1", "*"]
'''

ATTARDI = SWAP.replace('''name = "swap"
stack = ["*", "s1", "s0"]
require = ["s1 != root"]
stack_after = ["*", "s0"]
buffer_after = ["s1", "*"]''', '''name = "right_arc_2"
stack = ["*", "s2", "s1", "s0"]
stack_after = ["*", "s2", "s1"]
buffer_after = ["*"]
edge = "s2 -> s0"''').replace("swap_standard", "attardi")


@pytest.mark.parametrize("text, reason", [
    (SWAP, "transition swap changes the order of s0, s1, as swap does"),
    (ATTARDI, "transition right_arc_2 adds the edge s2 -> s0 over s1, which stays"),
])
def test_a_system_no_split_grammar_can_describe_says_so(tmp_path, capsys, text, reason):
    from semiparse.cli import main

    path = _system_file(tmp_path, text + "\n[strategy.none]\n")
    if text is SWAP:
        # this swap has no order condition, so shift and swap can undo each
        # other forever: the file is refused where it is loaded
        with pytest.raises(SystemFileError, match="transitions shift, swap, shift, swap can loop"):
            load_system(path)
        assert main(["check", path]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "can loop" in err[0]
    else:
        system = load_system(path)
        assert reason in system.not_split and "non-projective" in system.not_split
        with pytest.raises(ValueError, match=f"cannot have one: {reason}"):
            semiparse.oracle(path, method="grammar")
        assert main(["check", path]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no split grammar can describe it" in err[0] and reason in err[0]
        # the exhaustive search still gives an oracle
        exhaustive = semiparse.oracle(path, method="exhaustive")
        assert exhaustive.scores((0,), (1, 2, 3), [-1, 0, 0, 1]) == {"shift": 3}  # crossing
    # and a completion grammar declared for it is refused where it is declared
    completion = '''
[completion]
grammar = "arc_standard.grammar"
terminals = [{ node = "stack", terminal = "p" }, { node = "buffer", terminal = "s" }]
'''
    path = _system_file(tmp_path, text + completion + "\n[strategy.none]\n", "with.toml")
    line = (text + completion).index("[completion]")
    line = (text + completion)[:line].count("\n") + 1
    with pytest.raises(SystemFileError, match=rf"^{path}:{line}: a completion grammar cannot "
                                              rf"describe this system: {reason}.*declare "
                                              rf"kind = \"search\""):
        load_system(path)

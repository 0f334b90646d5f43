"""Robustness of the oracle API and of system files: misuse and malformed input
give a ValueError that says what is wrong, never another exception or a
silently wrong answer."""
import re

import numpy as np
import pytest
from hypothesis import event, find, given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.resources import data_dir
from semiparse.testing import perturbed_configurations, validation_outcome
from semiparse.testing.checking import check
from semiparse.transitions import load_system
from semiparse.transitions.runtime._validation import accepts
from semiparse.transitions.runtime import _lr_spine_moves as spine_moves
from semiparse.transitions.oracles.oracle import NEG_INF
from semiparse.transitions.oracles.methods import system_methods
from semiparse.transitions.systems.format.system_file import SystemFileError, key_line

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
    stack, buffer, arcs = load_system(name).initial(3)
    for call in entry_points(o).values():
        with pytest.raises(ValueError, match=message):
            call(stack, buffer, heads, arcs)


@pytest.mark.parametrize("name", SYSTEMS)
def test_heads_equal_to_the_cached_tree_but_not_ints_are_rejected(name):
    # True == 1 and 2.0 == 2: the cache of the last gold tree must not let them in
    o = semiparse.oracle(name)
    stack, buffer, arcs = load_system(name).initial(3)
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
    system = load_system(name)
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
    system = load_system(name)
    with pytest.raises(ValueError, match=r"stack must be .* element 1 is True"):
        system.apply([0, True], [2], [-1, -1, -1], "shift")
    with pytest.raises(ValueError, match=r"arcs must be .* element 2 is 0.5"):
        system.apply([0, 1], [2], [-1, -1, 0.5], "shift")


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_eager"])
def test_apply_and_initial_reject_what_is_no_configuration(name):
    """apply checked only types: it built an edge to a word beyond the
    sentence (arcs grew) and a self-loop from a stack holding a word twice;
    initial(-1) gave a sentence of no words, initial(True) one of one."""
    system = load_system(name)
    with pytest.raises(ValueError, match="out of range"):
        system.apply((0, 5), (1,), (-1, -1), system.transitions[-1])
    with pytest.raises(ValueError, match="duplicate position"):
        system.apply((0, 1, 1), (), (-1, -1), system.transitions[-1])
    for n in (-1, True, 2.0, "3"):
        with pytest.raises(ValueError, match="number of words n must be an integer"):
            system.initial(n)
    assert system.initial(np.int64(2))[1] == (1, 2)


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
    assert load_system(name).pops_headed
    assert not accepts((0,), (3,), (-1, -1, 1, -1), 3, False)
    # a reachable configuration: 2 heads 1, 0 heads 2, both reduced
    reachable = [-1, 2, 0, -1]
    assert accepts((0,), (3,), tuple(reachable), 3, False)
    assert o.scores([0], [3], HEADS, reachable) == o.scores_exhaustive([0], [3], HEADS, reachable)


def test_a_system_that_pops_without_an_edge_may_leave_words_headless(tmp_path):
    text = (data_dir("systems") / "arc_eager.toml").read_text()
    # reduce pops headless words (but never the root)
    text = text.replace('require = ["s0 has head"]', 'require = ["s0 != root"]')
    path = tmp_path / "eager_free_reduce.toml"
    path.write_text(text.replace('name = "arc_eager"', 'name = "eager_free_reduce"'))
    system = load_system(str(path))
    assert not system.pops_headed
    assert system.validate([0], [3], [-1, -1, -1, -1], 3) == ((0,), (3,), (-1, -1, -1, -1))
    with pytest.raises(ValueError, match="cycle"):
        system.validate([0], [3], [-1, 2, 1, -1], 3)


def test_a_transition_that_may_remove_the_root_is_refused(tmp_path):
    """A node a transition drops without making it a dependent must be
    required not to be the root (or to have a head): else the root can leave
    the configuration, and no final configuration is reachable."""
    text = (data_dir("systems") / "arc_hybrid.toml").read_text()
    path = tmp_path / "lost.toml"
    path.write_text(text.replace('stack_after = ["*", "s0", "b"]', 'stack_after = ["*", "b"]', 1))
    with pytest.raises(ValueError, match=r"lost.toml:\d+: transition shift: it removes s0, "
                                         r"which may be the root"):
        load_system(str(path))


def test_a_stack_size_beyond_any_stack_is_refused(tmp_path):
    text = (data_dir("systems") / "arc_hybrid.toml").read_text()
    path = tmp_path / "huge.toml"
    path.write_text(text.replace('require = ["s0 != root"]',
                                 'require = ["s0 != root", "stack size >= 99999999999999999999"]', 1))
    with pytest.raises(ValueError, match=r"huge.toml:\d+: transition \w+: bad require .*at most "
                                         r"16777217 nodes"):
        load_system(str(path))


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
    system = load_system(name)
    configuration = data.draw(perturbed_configurations(source))
    expected = validation_outcome(system.validate_slowly, configuration)
    assert validation_outcome(system.validate, configuration) == expected
    n, stack, buffer, arcs = configuration
    if arcs is None:
        return
    fast = (spine_moves.accepts(stack, buffer, arcs, n) if name == "lr_spine" else
            accepts(stack, buffer, arcs, n, system.stack_heads == "below", system.pops_headed))
    assert fast == (not isinstance(expected, str))


# -- system files ----------------------------------------------------------------

SHIPPED = ("arc_standard", "arc_hybrid", "arc_eager")
HYBRID = (data_dir("systems") / "arc_hybrid.toml").read_text()


def load_error(path):
    """The message of the SystemFileError loading ``path`` raises."""
    with pytest.raises(SystemFileError) as info:
        load_system(str(path))
    assert isinstance(info.value, ValueError)
    return str(info.value)


@pytest.mark.parametrize("old, new, line, message", [
    ('require = ["s0 != root"]', 'requires = ["s0 != root"]', 26,
     "unknown key 'requires' in transition.1: expected one of name, stack, buffer, require, "
     "stack_after, buffer_after, edge"),
    ('final = { stack = "root", buffer = "empty" }', 'start = "root"\nfinal = { stack = '
     '"root", buffer = "empty" }', 13, "unknown key 'start' in the file: expected one of "
     "name, description, initial, final, static_order, transition, invariants, completion, "
     "strategy"),
    ('final = { stack = "root", buffer = "empty" }', 'initial = "root"\nfinal = { stack = '
     '"root", buffer = "empty" }', 13, "initial must be a table"),
    ('final = { stack = "root", buffer = "empty" }', 'initial = { root = "top" }\nfinal = { '
     'stack = "root", buffer = "empty" }', 13, "initial.root 'top': expected one of "
     "stack_bottom, buffer_end, none"),
    ('final = { stack = "root", buffer = "empty" }',
     'final = { stack = "root", buffer = "empty", start = "root" }', 13,
     "unknown key 'start' in final: expected one of stack, buffer"),
    ('description = "every computation"', 'description = "every computation"\n'
     'left_before_rigth = ["top"]', 55, "unknown key 'left_before_rigth' in strategy.none"),
    ('{ node = "buffer", terminal = "s" }', '{ node = "buffer", terminal = "s", head = true }',
     47, "unknown key 'head' in completion.terminals.1: expected one of node, terminal, "
     "headed"),
    ('heads.stack = ["below", "buffer"]', 'heads.stack = ["below", "buffer"]\nmasks = []', 65,
     "unknown key 'masks' in completion.projective"),
    ('edge = "b -> s0"', "edge = 3", 29, "transition.1.edge must be a string, got 3"),
    ('require = ["s0 != root"]', 'require = "s0 != root"', 26,
     "transition.1.require must be a list of strings"),
    ('{ node = "buffer", terminal = "s" }', '{ node = "buffer", terminal = "s", headed = 1 }',
     47, "completion.terminals.1.headed must be true or false, got 1"),
    ('{ node = "buffer", terminal = "s" }', '{ node = "bufer", terminal = "s" }', 47,
     "completion terminal rule node 'bufer': expected one of root, top, below_top, stack, "
     "buffer"),
    ('final = { stack = "root", buffer = "empty" }', 'final = { stack = "roots", '
     'buffer = "empty" }', 13, 'final must be { stack = "root" | "one" | "any", buffer = "empty" }'),
    ('[strategy.none]', '[strategy.none]\nforbid.reduce = ["s0 left"]', 54,
     "strategy none: forbid names unknown transition 'reduce': expected one of shift, "
     "left_arc, right_arc"),
    ('heads.stack = ["below", "buffer"]', 'heads.stack = ["beneath"]', 64,
     "heads.stack: head kind 'beneath': expected some of virtual, below, stack, buffer"),
    ('name = "arc_hybrid"', 'name = "arc-hybrid"', 11, "name 'arc-hybrid' is not an identifier"),
])
def test_system_files_are_strict_and_name_the_line(tmp_path, old, new, line, message):
    assert old in HYBRID
    path = tmp_path / "toy.toml"
    path.write_text(HYBRID.replace(old, new, 1))
    assert load_error(path).startswith(f"{path}:{line}: {message}")


def test_a_latin1_system_file_names_the_line_of_the_bad_byte(tmp_path):
    path = tmp_path / "toy.toml"
    text = HYBRID.replace('description = "arc-hybrid:', 'description = "arc-hybrid (Gómez):')
    path.write_bytes(text.encode("latin-1"))
    assert load_error(path) == (f"{path}:12: not valid UTF-8 (byte 0xf3): system files are "
                                f"UTF-8 text")


def test_crlf_system_files_load(tmp_path):
    path = tmp_path / "crlf.toml"
    path.write_bytes(HYBRID.replace("\n", "\r\n").encode())
    assert load_system(str(path)).transitions == load_system("arc_hybrid").transitions


def test_key_line_finds_tables_keys_and_inline_array_elements():
    text = HYBRID
    lines = text.splitlines()
    assert lines[key_line(text, ["transition", 2, "edge"]) - 1] == 'edge = "s1 -> s0"'
    assert lines[key_line(text, ["transition", 2]) - 1] == "[[transition]]"
    assert lines[key_line(text, ["completion", "terminals", 1, "node"]) - 1].strip() == (
        '{ node = "buffer", terminal = "s" },')
    assert lines[key_line(text, ["strategy", "none", "description"]) - 1].startswith(
        "description = ")
    assert key_line(text, ["nowhere"]) == 1


def test_a_user_file_named_like_a_shipped_system_gets_no_fast_method(tmp_path):
    # right_arc requires s1 != root: no longer arc-hybrid, whatever the name says
    old = 'name = "right_arc"\nstack = ["*", "s1", "s0"]\nbuffer = ["*"]\n'
    assert old in HYBRID
    path = tmp_path / "arc_hybrid.toml"
    path.write_text(HYBRID.replace(old, old + 'require = ["s1 != root"]\n'))
    o = semiparse.oracle(str(path))
    assert o.system.name == "arc_hybrid"
    assert o.method_for([-1, 0, 1]) != "cost"
    assert "cost" not in {m.name for m in system_methods(o.system)}
    with pytest.raises(ValueError, match="unknown oracle method 'cost'"):
        semiparse.oracle(str(path), method="cost")
    # only the legal transitions are scored; the exhaustive search of this
    # system finds no final configuration (nothing can attach to the root)
    assert set(o.scores([0, 1], [2], [-1, 0, 1])) == {"shift", "left_arc"}
    assert o.scores_exhaustive([0, 1], [2], [-1, 0, 1]) == {"shift": NEG_INF, "left_arc": NEG_INF}
    # its completion grammar is still arc-hybrid's, which check reports
    assert not all(r.ok for r in check(str(path), examples=30, max_n=3))
    # the shipped system keeps its methods
    assert semiparse.oracle("arc_hybrid").method_for([-1, 0, 1]) == "cost"


@pytest.mark.parametrize("name", SHIPPED)
def test_a_user_file_identical_to_a_shipped_one_gets_its_methods(tmp_path, name):
    path = tmp_path / f"{name}.toml"
    text = (data_dir("systems") / f"{name}.toml").read_text()
    path.write_text("# a copy\n" + text)
    shipped = [m.name for m in system_methods(load_system(name))]
    assert [m.name for m in system_methods(load_system(str(path)))] == shipped
    # any difference in the definition, even in a description, loses them
    path.write_text(text.replace('description = "', 'description = "changed: ', 1))
    assert [m.name for m in system_methods(load_system(str(path)))] in (
        [], ["projective_masked"])


MUTATIONS = ("drop", "duplicate", "swap", "rename", "value", "latin1", "crlf", "bytes")
KEYS = ("name", "names", "require", "requires", "stack", "buffer", "edge", "final", "initial",
        "node", "terminal", "headed", "grammar", "prefix", "heads.stack", "forbid.shift",
        "no_left_children", "description", "stack_heads", "transition", "strategy")
VALUES = ('1', '"x"', '[]', '{}', 'true', '["*"]', '["*", "s0"]', '"s0 -> s0"', '"root"',
          '["s0 != root", "b has head"]', '{ stack = "any" }', '[1, 2]', '"arc_eager.grammar"',
          '"../x"', '"\\u0000"', '[{ node = "top" }]', '"none"', '2024-01-01', '"',
          '{ node = "stack", terminal = "q" }')


@st.composite
def mutated_system_files(draw):
    name = draw(st.sampled_from(SHIPPED))
    lines = (data_dir("systems") / f"{name}.toml").read_text().split("\n")
    newline, encoding = "\n", "utf-8"
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(MUTATIONS))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if kind == "drop" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(j, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind in ("rename", "value"):
            keyed = [k for k, line in enumerate(lines) if "=" in line]
            k = draw(st.sampled_from(keyed))
            key, _, value = lines[k].partition("=")
            if kind == "rename":
                lines[k] = f"{draw(st.sampled_from(KEYS))} ={value}"
            else:
                lines[k] = f"{key}= {draw(st.sampled_from(VALUES))}"
        elif kind == "latin1":
            lines[i] += " # Gómez"
            encoding = "latin-1"
        elif kind == "crlf":
            newline = "\r\n"
        else:
            lines[i] += draw(st.sampled_from(["\x00", "\r", "\t", "\ufeff", "é", "\\", "[", "]"]))
    data = newline.join(lines).encode(encoding, errors="replace")
    if draw(st.booleans()):
        data = data.replace(b"\xc3\xa9", b"\xe9")  # a UTF-8 e-acute become Latin-1
    return draw(st.sampled_from([name, "fuzz"])), data


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("systems")


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, database=None)  # 2000 took 12-25 s of the test run
@given(case=mutated_system_files())
def test_mutated_system_files_load_or_say_file_and_line(fuzz_dir, case):
    name, data = case
    path = fuzz_dir / f"{name}.toml"
    path.write_bytes(data)
    try:
        system = load_system(str(path))
    except SystemFileError as exc:
        event("rejected")
        assert re.match(rf"{re.escape(str(path))}:\d+(:\d+)?: \S", str(exc)), str(exc)
    else:
        event("loaded")
        assert system.transitions and "none" in system.strategies


def test_check_with_a_bad_system_file_prints_one_line_and_exits_2(tmp_path, capsys):
    path = tmp_path / "toy.toml"
    path.write_text(HYBRID.replace("require =", "requires =", 1))
    assert main(["check", str(path), "--examples", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"semiparse check: error: {path}:26: unknown key 'requires'")
    path.write_bytes(HYBRID.replace("hybrid", "hybrïd").encode("latin-1"))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid UTF-8" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["arc_standard", "arc_eager", "arc_hybrid_root_end"])
def test_scores_exhaustive_takes_a_configuration_as_scores_does(name):
    """scores_exhaustive(config, heads) raised a bare TypeError (missing
    argument) where scores(config, heads) takes a Configuration."""
    system = semiparse.system(name)
    o = system.oracle(method="grammar")
    heads = (-1, 2, 0, 2, 3)
    config = system.initial(4)
    for _ in range(3):
        got = o.scores_exhaustive(config, heads)
        assert got == o.scores(config, heads)
        assert got == o.scores_exhaustive(list(config.stack), list(config.buffer), list(heads),
                                          list(config.arcs))
        config = config.apply(sorted(o.optimal(config, heads))[0])
    with pytest.raises(TypeError, match="pass only the gold heads"):
        o.scores_exhaustive(config, heads, config.arcs)
    with pytest.raises(ValueError, match=r"scores_exhaustive\(config, heads\): config must be a "
                                         r"Configuration"):
        o.scores_exhaustive("stack", heads)
    other = semiparse.system("arc_hybrid").initial(4)
    with pytest.raises(ValueError, match="belongs to transition system 'arc_hybrid'"):
        o.scores_exhaustive(other, heads)

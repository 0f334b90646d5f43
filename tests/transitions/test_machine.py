"""The compiled rewrite machine and the derived static oracle.

- on random configurations (random legal transition sequences over random
  sentences, n <= 10) the C machine's legal set, successor configurations
  (stack, buffer, arcs, labels), edges and finality equal the Python system's,
  for every shipped system and for systems declared in temporary files;
- the canonical computation (first optimal transition in ``static_order``)
  rebuilds every projective gold tree of a shared UD dev file for every
  shipped system, and there equals the hand-written static oracle of earlier
  versions (kept below as a reference);
- ``static_order`` is honoured and checked; the trainer's replayed static
  path answers off-path configurations too.
"""
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.perceptron import _core, read_trees
from semiparse.perceptron.trainer import StaticOracle, gold_heads, oracle_moves
from semiparse.transitions.runtime._machine import Machine, machine_for
from semiparse.transitions.systems.lr_spine import spines
from semiparse.transitions.systems.loading import load_system
from semiparse.treebank.projectivity import is_projective

SHIPPED = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")

# Arc-standard with extra requirements (an edge's dependent has no head yet:
# unshift and reach bring headed nodes onto the stack, and the loader refuses
# a transition that could give a word a second head; nor has its head where
# that could be a descendant of the dependent, as the loader refuses a
# transition that could close a cycle of arcs), a transition that puts two
# nodes back at the buffer front (so the buffer stops being a suffix of the
# sentence; it gives the top, which must have no head, the head s1, else
# shift and unshift could undo each other forever, which the loader refuses)
# and one that names two buffer nodes and attaches the second.
DECLARED = '''
name = "odd_standard"
final = { stack = "root", buffer = "empty" }
static_order = ["right_arc", "left_arc", "unshift", "reach", "shift"]

[[transition]]
name = "shift"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0", "b"]
buffer_after = ["*"]

[[transition]]
name = "left_arc"
stack = ["*", "s1", "s0"]
buffer = ["*"]
require = ["s1 != root", "s1 has no head", "s0 has no head"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s1"

[[transition]]
name = "right_arc"
stack = ["*", "s1", "s0"]
buffer = ["*"]
require = ["s1 has no head", "s0 has no head"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "unshift"
stack = ["*", "s1", "s0"]
buffer = ["b", "*"]
require = ["s0 != root", "s1 != root", "s1 has no head", "s0 has no head"]
stack_after = ["*"]
buffer_after = ["s0", "s1", "b", "*"]
edge = "s1 -> s0"

[[transition]]
name = "reach"
stack = ["*", "s0"]
buffer = ["b0", "b1", "*"]
require = ["s0 has head", "b0 has no head", "b1 has no head"]
stack_after = ["*", "s0", "b0"]
buffer_after = ["b1", "*"]
edge = "b0 -> b1"
'''

# Final with any stack, and a transition that only adds an edge.
DECLARED_ANY = '''
name = "eager_attach"
final = { stack = "any", buffer = "empty" }

[[transition]]
name = "shift"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0", "b"]
buffer_after = ["*"]

[[transition]]
name = "attach"
stack = ["*", "s1", "s0"]
buffer = ["*"]
require = ["s0 has no head"]
stack_after = ["*", "s1", "s0"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "pop"
stack = ["*", "s0"]
buffer = ["*"]
require = ["s0 has head"]
stack_after = ["*"]
buffer_after = ["*"]
'''


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("systems")
    out = []
    for text in (DECLARED, DECLARED_ANY):
        path = folder / f"{text.split(chr(34))[1]}.toml"
        path.write_text(text)
        out.append(str(path))
    return out


def _sentence(n, heads=None, labels=None):
    heads = [-1] * (n + 1) if heads is None else list(heads)
    labels = [-1] * (n + 1) if labels is None else list(labels)
    return _core.Sentence([0] * (n + 1), [0] * (n + 1), heads, labels)


def _follow(system, n, choices):
    """Walk random legal transitions in C and in Python side by side, comparing
    every successor of every configuration on the way."""
    py = load_system(system) if system.endswith(".toml") else load_system(system)
    machine = Machine(py)
    state = _core.State(_sentence(n), machine)
    stack, buffer, arcs = py.initial(n)
    labels = [-1] * (n + 1)
    for choice in choices:
        final = py.is_final(stack, buffer, arcs)
        assert state.is_final() == final
        assert (state.stack, state.buffer, state.arcs) == (stack, buffer, arcs)
        assert state.labels == tuple(labels)
        legal = py.legal(stack, buffer, arcs)
        assert sorted(machine.name(t) for t in state.legal_codes()) == sorted(legal)
        if final:
            assert not legal
            return
        if not legal:
            return  # a declared system may get stuck; both agree it is
        for name in legal:
            after = state.copy()
            code = machine.code(name)
            edge = py.apply(stack, buffer, arcs, name)[3]
            assert state.arc(code) == edge
            after.do(code, 5)
            s, b, a, _ = py.apply(stack, buffer, arcs, name)
            assert (after.stack, after.buffer, after.arcs) == (s, b, a)
        name = legal[choice % len(legal)]
        label = choice % 70  # label sets wrap at 64
        stack, buffer, arcs, edge = py.apply(stack, buffer, arcs, name)
        if edge is not None:
            labels[edge[1]] = label
        state.do(machine.code(name), label)


@settings(max_examples=80)
@given(system=st.sampled_from(SHIPPED), n=st.integers(0, 10),
       choices=st.lists(st.integers(0, 1000), min_size=1, max_size=45))
def test_machine_equals_python_system_on_shipped_systems(system, n, choices):
    _follow(system, n, choices)


@settings(max_examples=80)
@given(which=st.integers(0, 1), n=st.integers(0, 10),
       choices=st.lists(st.integers(0, 1000), min_size=1, max_size=45))
def test_machine_equals_python_system_on_declared_systems(declared, which, n, choices):
    _follow(declared[which], n, choices)


def test_machine_codes_and_names():
    eager = machine_for("arc_eager")
    assert [eager.code(t) for t in eager.transitions] == [0, 1, 2, 3]
    assert eager.name(3) == "reduce"
    spine = machine_for("lr_spine")
    assert spine.name(spine.code("right_arc_3")) == "right_arc_3"
    assert spine.code("left_arc_1") == 1 and spine.code("shift") == 0
    with pytest.raises(ValueError, match="unknown transition 'swap' for arc_eager"):
        eager.code("swap")
    with pytest.raises(ValueError, match="no transition of lr_spine has code 3"):
        spine.name(3)


def test_machine_rejects_a_system_that_is_no_rewrite():
    from semiparse.transitions.systems.interface import TransitionSystem

    class Other(TransitionSystem):
        name = "other"

    with pytest.raises(ValueError, match="'other' is neither declared as stack/buffer rewrites"):
        Machine(Other())


# -- the derived static oracle --------------------------------------------------

def old_static(system, stack, buffer, arcs, gold):
    """The usual hand-written static oracles, in Python: left arcs as soon as
    possible, right arcs once the dependent has all its gold dependents
    (arc-eager: as soon as possible, reduce when nothing is left to attach)."""
    s0 = stack[-1]
    s1 = stack[-2] if len(stack) >= 2 else -1
    b0 = buffer[0] if buffer else -1

    def complete(h):
        return all(arcs[d] == h for d in range(1, len(gold)) if gold[d] == h)

    if system == "lr_spine":
        if s1 > 0:
            for k, x in enumerate(spines(s0, arcs)[0], 1):
                if gold[s1] == x:
                    return f"left_arc_{k}"
        if s1 >= 0 and complete(s0):
            for k, x in enumerate(spines(s1, arcs)[1], 1):
                if gold[s0] == x:
                    return f"right_arc_{k}"
    elif system == "arc_standard":
        if s1 > 0 and gold[s1] == s0:
            return "left_arc"
        if s1 >= 0 and gold[s0] == s1 and complete(s0):
            return "right_arc"
    elif system == "arc_hybrid":
        if s1 >= 0 and b0 >= 0 and gold[s0] == b0:
            return "left_arc"
        if s1 >= 0 and gold[s0] == s1 and complete(s0):
            return "right_arc"
    else:
        if s1 >= 0 and b0 >= 0 and gold[s0] == b0 and arcs[s0] == -1:
            return "left_arc"
        if b0 >= 0 and gold[b0] == s0:
            return "right_arc"
        if s1 >= 0 and b0 >= 0 and arcs[s0] != -1 and not any(
                gold[k] == s0 or gold[s0] == k for k in range(b0, len(gold))):
            return "reduce"
    return "shift" if b0 >= 0 else None


@pytest.fixture(scope="module")
def dev_trees(shared_data):
    path = shared_data / "ud" / "UD_Danish-DDT" / "da_ddt-ud-dev.conllu"
    trees = [t for t in read_trees(path) if is_projective(t.heads)]
    assert len(trees) > 400
    return trees


@pytest.mark.parametrize("system", SHIPPED)
def test_static_oracle_rebuilds_every_projective_tree_as_the_hand_written_one(dev_trees, system):
    oracle = StaticOracle(system)
    machine = machine_for(system)
    py = load_system(system)
    for tree in dev_trees:
        labels = sorted(set(tree.labels[1:]))
        index = [-1] + [labels.index(l) for l in tree.labels[1:]]
        sent = _sentence(len(tree), tree.heads, index)
        state = _core.State(sent, machine)
        stack, buffer, arcs = py.initial(len(tree))
        while not state.is_final():
            (move,) = oracle.optimal(state, sent)  # recorded once, then replayed
            assert machine.name(move) == old_static(system, stack, buffer, arcs, tree.heads), \
                tree.where
            arc = state.arc(move)
            state.do(move, index[arc[1]] if arc else -1)
            stack, buffer, arcs, _ = py.apply(stack, buffer, arcs, machine.name(move))
        assert list(state.arcs) == list(tree.heads), tree.where
        assert list(state.labels[1:]) == index[1:], tree.where
        assert oracle.optimal(state, sent) == set()


def test_static_order_is_honoured(tmp_path, dev_trees):
    text = Path(load_system("arc_eager").path).read_text()
    late = tmp_path / "late_eager.toml"
    late.write_text(text.replace('name = "arc_eager"', 'name = "late_eager"').replace(
        'static_order = ["left_arc", "right_arc", "reduce", "shift"]',
        'static_order = ["shift", "reduce", "right_arc", "left_arc"]'))
    early, lazy = StaticOracle("arc_eager"), StaticOracle(str(late))
    differ = 0
    for tree in dev_trees[:40]:
        sent = _sentence(len(tree), tree.heads)
        paths = [o._path(machine_for(o.dynamic.system), sent)[1].tolist() for o in (early, lazy)]
        differ += paths[0] != paths[1]
        state = _core.State(sent, machine_for(str(late)))
        for move in paths[1]:
            state.do(move)
        assert list(state.arcs) == list(tree.heads)
    assert differ > 20


@pytest.mark.parametrize("order,message", [
    ('["shift", "left_arc"]', "static_order must list each transition once"),
    ('["shift", "left_arc", "right_arc", "right_arc"]', "static_order must list each"),
    ('["shift", "left_arc", "rihgt_arc"]', "static_order must list each transition once: "
                                          r"\['shift', 'left_arc', 'right_arc'\]; 'rihgt_arc' "
                                          "is not one of them"),
    ('"shift"', "static_order must be a list of strings"),  # the file schema answers first
])
def test_bad_static_order(tmp_path, order, message):
    text = Path(load_system("arc_standard").path).read_text()
    path = tmp_path / "bad.toml"
    path.write_text(text.replace('static_order = ["left_arc", "right_arc", "shift"]',
                                 f"static_order = {order}"))
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "static_order" in l)
    with pytest.raises(ValueError, match=f"{path}:{line}: {message}"):
        load_system(str(path))


def test_static_oracle_answers_off_its_recorded_path(dev_trees):
    oracle = StaticOracle("arc_standard")
    machine = machine_for("arc_standard")
    rng = random.Random(0)
    mismatches = 0
    for tree in dev_trees[:20]:
        sent = _sentence(len(tree), tree.heads)
        state = _core.State(sent, machine)
        oracle.optimal(state, sent)
        path = oracle._paths[sent][1]
        while not state.is_final():  # a random walk leaves the canonical path
            expected = oracle.move(state, sent)
            assert oracle.optimal(state, sent) == {expected}
            dynamic = oracle_moves(oracle.dynamic, state, gold_heads(sent))[0]  # the dynamic oracle's
            assert expected in {machine.code(name) for name in dynamic}
            mismatches += state.steps < len(path) and path[state.steps] != expected
            state.do(expected if rng.random() < 0.7 else rng.choice(state.legal_codes()))
    assert mismatches > 10


def test_bench_floor_replays_like_the_machine(dev_trees, capsys):
    from semiparse.bench import _floor
    from semiparse.bench.train import machine_vs_floor
    from semiparse.perceptron import Model

    trees = dev_trees[:30]
    model = Model("arc_standard", sorted({l for t in trees for l in t.labels[1:]}))
    sents = [model.sentence(t) for t in trees]
    oracle = StaticOracle("arc_standard")
    paths = [oracle._path(model.machine, s)[1] for s in sents]
    for features in (True, False):
        checks = {_floor.run_paths(model.machine, sents, paths, model.templates, model.cls_move,
                                   floor, features) for floor in (False, True)}
        assert len(checks) == 1
    assert _floor.run_paths(model.machine, sents[1:], paths[1:], model.templates,
                            model.cls_move, True) not in checks
    with pytest.raises(ValueError, match="the floor is arc-standard's"):
        _floor.run_paths(machine_for("arc_eager"), sents, paths, model.templates, model.cls_move,
                         True)
    machine_vs_floor(trees, repeats=1)
    out = capsys.readouterr().out
    assert "features + legal mask + step" in out and "x  " in out


def test_errors_in_a_transition_name_its_line_not_static_order(tmp_path):
    text = Path(load_system("arc_eager").path).read_text()
    path = tmp_path / "eager.toml"
    path.write_text(text.replace('require = ["s0 has head"]', 'require = ["s0 is big"]'))
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "s0 is big" in l)
    with pytest.raises(ValueError, match=f"{path}:{line}: transition reduce: bad require"):
        load_system(str(path))

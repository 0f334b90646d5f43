"""Systems the tests declare themselves, each a TOML file and a completion
grammar in tests/systems/, with no Python: arc-standard with the root at the
end of the buffer, arc-standard without a root token (Ballesteros and Nivre
2013), strict arc-eager (every word gets a head) and arc-swift with k <= 2
(Qi and Manning 2017).  For each: the grammar oracle equals the exhaustive
search; the derived static oracle rebuilds every projective gold tree of a
shared UD file that the system can build; a model trains and parses a small
UD file from the recorded definition alone; ``scores_batch`` equals single
calls; the C machine and the configuration API follow the Python rules on
random walks.  Also the root placements' own rules: initial configurations,
validation (the C fast path against the Python one) and load errors.
"""
import math
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.testing import gold_trees
from semiparse.testing.checking import check
from semiparse.perceptron import Model, _core, read_trees
from semiparse.perceptron.trainer import StaticOracle
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.loading import load_system
from semiparse.transitions.systems.format.system_file import SystemFileError
from semiparse.treebank.projectivity import is_projective

from support import SYSTEMS, short_hint_trial, walk  # noqa: F401 (a fixture)

DECLARED = {name: str(SYSTEMS / f"{name}.toml")
            for name in ("arc_standard_root_end", "arc_standard_no_root", "strict_eager",
                         "arc_swift2")}
# How many of the 150 projective gold trees below each system cannot build:
# arc-swift with k <= 2 pops at most one headed node per arc, so a right child
# that took right children of its own can have no later sibling.
UNREACHABLE = {"arc_swift2": 104}


def _finished(heads):
    """Heads of a final configuration as a parser outputs them: the words
    left headless hang from the root."""
    return [-1] + [0 if h < 0 else h for h in heads[1:]]


@pytest.mark.parametrize("name", DECLARED)
def test_the_grammar_oracle_equals_the_exhaustive_search(name, short_hint_trial):
    (result,) = check(DECLARED[name], examples=120, max_n=6, seed=3)
    assert result.ok, result.mismatch and result.mismatch.describe("grammar")
    assert result.calls == 120


def test_initial_configurations_place_the_root():
    root_end, no_root = (load_system(DECLARED[k]) for k in ("arc_standard_root_end",
                                                             "arc_standard_no_root"))
    assert root_end.initial(3) == ((), (1, 2, 3, 0), (-1,) * 4)
    assert no_root.initial(3) == ((), (1, 2, 3), (-1,) * 4)
    assert load_system("arc_standard").initial(3) == ((0,), (1, 2, 3), (-1,) * 4)
    for spec, system in ((DECLARED["arc_standard_root_end"], root_end),
                         (DECLARED["arc_standard_no_root"], no_root)):
        config = semiparse.system(spec).initial(3)
        assert (config.stack, config.buffer) == system.initial(3)[:2]
    # the root at the end is shifted last; then it takes the words left on the stack
    config = semiparse.system(DECLARED["arc_standard_root_end"]).initial(2)
    for name in ("shift", "shift", "left_arc", "shift"):
        config = config.apply(name)
    assert (config.stack, config.buffer) == ((2, 0), ())
    assert config.legal() == ["left_arc"]  # right_arc would give the root a head
    config = config.apply("left_arc")
    assert config.is_final() and config.arcs == (-1, 2, 0)
    # without a root token, the one word left on the stack is final
    config = semiparse.system(DECLARED["arc_standard_no_root"]).initial(2)
    config = config.apply("shift").apply("shift")
    assert not config.is_final() and sorted(config.legal()) == ["left_arc", "right_arc"]
    assert config.apply("right_arc").is_final()
    assert semiparse.system(DECLARED["arc_standard_no_root"]).initial(0).is_final()


@pytest.fixture(scope="module")
def dev_trees(shared_data):
    path = shared_data / "ud" / "UD_Danish-DDT" / "da_ddt-ud-dev.conllu"
    trees = [t for t in read_trees(path) if is_projective(t.heads)][:150]
    assert len(trees) == 150
    return trees


@pytest.mark.parametrize("name", DECLARED)
def test_the_static_oracle_rebuilds_projective_gold_trees(dev_trees, name):
    """Every gold tree the system can build (its initial configuration scores
    n) is rebuilt; from the others the static oracle still builds as many
    gold edges as any computation."""
    oracle = StaticOracle(DECLARED[name])
    machine = machine_for(DECLARED[name])
    unreachable = 0
    for tree in dev_trees:
        n = len(tree)
        sent = _core.Sentence([0] * (n + 1), [0] * (n + 1), list(tree.heads), [-1] * (n + 1))
        state = _core.State(sent, machine)
        while not state.is_final():
            (move,) = oracle.optimal(state, sent)
            state.do(move, -1)
        if _finished(state.arcs) != list(tree.heads):
            sigma = semiparse.oracle(DECLARED[name]).scores(
                semiparse.system(DECLARED[name]).initial(n), tree.heads)
            built = sum(state.arcs[d] == tree.heads[d] for d in range(1, n + 1))
            assert built == max(sigma.values()) < n, tree.where
            unreachable += 1
    assert unreachable == UNREACHABLE.get(name, 0)


def _walk(spec, n, choices):
    """The configurations of a random walk that follows the declared rules
    (``test_configuration_api._walk``), each accepted by the C validation and
    the Python one alike; none is a dead end (final exactly when no
    transition applies)."""
    py = load_system(spec)
    visited = walk(spec, n, choices)
    for config in visited:
        stack, buffer, arcs = config.stack, config.buffer, config.arcs
        assert py.accepts(stack, buffer, arcs, n)  # the C check takes every reachable one
        assert py.validate_slowly(stack, buffer, arcs, n) == (
            stack, buffer, arcs if py.needs_arcs else None)
        assert config.is_final() == (not config.legal())
    return visited


@settings(max_examples=60)
@given(name=st.sampled_from(sorted(DECLARED)), n=st.integers(0, 8),
       choices=st.lists(st.integers(0, 1000), max_size=40))
def test_configurations_follow_the_declared_rules(name, n, choices):
    _walk(DECLARED[name], n, choices)


@settings(max_examples=25)
@given(data=st.data(), name=st.sampled_from(sorted(DECLARED)))
def test_scores_batch_equals_single_calls(data, name):
    oracle = semiparse.oracle(DECLARED[name])
    configs, golds = [], []
    for _ in range(data.draw(st.integers(1, 3))):
        heads = data.draw(gold_trees(1, 6))
        n = len(heads) - 1
        visited = _walk(DECLARED[name], n, data.draw(st.lists(st.integers(0, 1000),
                                                              max_size=3 * n + 2)))
        configs += visited
        golds += [heads] * len(visited)
    batch = oracle.scores_batch(configs, golds)
    assert batch.shape == (len(configs), len(oracle.transitions))
    # the grammar path's rows on threads
    assert np.array_equal(oracle.scores_batch(configs, golds, n_jobs=2), batch)
    for row, config, heads in zip(batch, configs, golds):
        sigma = oracle.scores(config, heads)
        assert list(row) == [sigma.get(t, -math.inf) for t in oracle.transitions]
        assert set(sigma) == set(config.legal())


@pytest.fixture(scope="module")
def small(shared_data, tmp_path_factory):
    dev = shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"
    path = tmp_path_factory.mktemp("data") / "small.conllu"
    path.write_text("\n\n".join(dev.read_text(encoding="utf-8").split("\n\n")[:60]) + "\n\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("name", DECLARED)
@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_train_and_parse_from_the_recorded_definition(small, tmp_path, capsys, name, oracle):
    for suffix in (".toml", ".grammar"):  # a copy, removed once the model is saved
        shutil.copy(SYSTEMS / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    path = tmp_path / f"{name}.toml"
    model = tmp_path / "m.npz"
    assert main(["train", str(small), "--system", str(path), "--oracle", oracle,
                 "--epochs", "2", "--quiet", "-o", str(model)]) == 0
    path.unlink()
    (tmp_path / f"{name}.grammar").unlink()
    out = tmp_path / "out.conllu"
    assert main(["parse", str(model), str(small), "-o", str(out), "--quiet"]) == 0
    gold, parsed = read_trees(small), read_trees(out)
    right = sum(g.heads[d] == p.heads[d] for g, p in zip(gold, parsed) for d in range(1, len(g) + 1))
    assert right / sum(len(g) for g in gold) > 0.6  # its own training data
    loaded = Model.load(model)
    assert loaded.system == name and loaded.transition_system.grammar is not None
    # the rebuilt system still has its oracle: its grammar was recorded too
    tree = gold[0]
    config = semiparse.system(loaded.transition_system).initial(len(tree))
    sigma = semiparse.oracle(loaded.transition_system).scores(config, tree.heads)
    assert sigma == semiparse.oracle(DECLARED[name]).scores(config.stack, config.buffer,
                                                            tree.heads, config.arcs)


@settings(max_examples=200)
@given(n=st.integers(0, 5), root=st.sampled_from(["stack_bottom", "buffer_end", "none"]),
       data=st.data())
def test_the_c_acceptance_check_agrees_with_the_python_validation(n, root, data):
    """Random (often invalid) configurations: accepted by the fast C path only
    if the Python validation returns them unchanged, and every configuration
    the Python one accepts is accepted by the C one."""
    spec = {"stack_bottom": "arc_eager", "buffer_end": DECLARED["arc_standard_root_end"],
            "none": DECLARED["arc_standard_no_root"]}[root]
    system = load_system(spec)
    positions = st.integers(-1, n + 1)
    stack = tuple(data.draw(st.lists(positions, max_size=n + 2)))
    buffer = tuple(data.draw(st.lists(positions, max_size=n + 2)))
    arcs = tuple(data.draw(st.lists(positions, min_size=n + 1, max_size=n + 1)))
    try:
        expected = system.validate_slowly(stack, buffer, arcs, n)
    except ValueError:
        expected = None
    accepted = system.accepts(stack, buffer, arcs, n)
    if accepted:
        assert expected == (stack, buffer, arcs if system.needs_arcs else None)
    elif expected is not None and system.needs_arcs:
        pytest.fail(f"C check refused a valid configuration {stack} {buffer} {arcs}")


@pytest.mark.parametrize("stack, buffer, message", [
    ((0,), (1, 2), "must start after the stack top 0"),
    ((), (1, 0, 2), "consecutive positions"),
    ((2, 1), (0,), "out of order"),
    ((1,), (2,), "consecutive positions 2..2, then the root 0"),
])
def test_configurations_with_the_root_misplaced_are_refused(stack, buffer, message):
    system = load_system(DECLARED["arc_standard_root_end"])
    with pytest.raises(ValueError, match=message):
        system.validate(stack, buffer, None, 2)
    with pytest.raises(ValueError, match="the root 0 is not a node"):
        load_system(DECLARED["arc_standard_no_root"]).validate((0, 1), (2,), None, 2)


def _variant(tmp_path, name, old, new):
    text = (SYSTEMS / f"{name}.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    shutil.copy(SYSTEMS / f"{name}.grammar", tmp_path / f"{name}.grammar")
    return path


@pytest.mark.parametrize("name, old, new, line, message", [
    ("arc_standard_no_root", 'final = { stack = "one"', 'final = { stack = "root"', 7,
     'final stack = "root", but initial.root = "none"'),
    ("arc_standard_no_root", '    { node = "root", terminal = "r" },\n', "", 35,
     'completion.terminals must give the root a terminal'),
    ("arc_standard_no_root", 'edge = "s0 -> s1"', 'require = ["s1 == root"]\nedge = "s0 -> s1"',
     23, 'contradictory requirements: s1 == root, but initial.root = "none"'),
    ("arc_standard_root_end", 'edge = "s1 -> s0"', 'require = ["s0 == root"]\nedge = "s1 -> s0"',
     32, "makes the root a dependent"),
    ("arc_standard_root_end", 'initial = { root = "buffer_end" }', 'initial = { root = "end" }',
     6, "initial.root 'end': expected one of stack_bottom, buffer_end, none"),
    ("arc_standard_root_end", '\n[strategy.none]', '\n[completion.projective]\n'
     'no_left_children = ["stack"]\n\n[strategy.none]', 43,
     "[completion.projective] describes configurations with the root at the stack bottom"),
])
def test_bad_root_declarations_name_the_line(tmp_path, name, old, new, line, message):
    path = _variant(tmp_path, name, old, new)
    with pytest.raises(SystemFileError) as info:
        load_system(str(path))
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert message in str(info.value)


def test_an_edge_never_makes_the_root_a_dependent():
    """The machine and the rules refuse an edge into the root without being
    told: arc-standard with the root at the end may not right_arc it."""
    system = load_system(DECLARED["arc_standard_root_end"])
    assert system.legal((1, 0), (), (-1, -1)) == ["left_arc"]
    config = semiparse.system(system).initial(1).apply("shift").apply("shift")
    assert config.legal() == ["left_arc"]
    assert config.apply("left_arc").arcs == (-1, 0)


@pytest.mark.parametrize("name", ["arc_eager_single_root", "arc_standard", "arc_swift2"])
def test_is_final_reads_lists_as_tuples(name):
    """A final stack of the root alone was compared with the tuple (0,), so
    a list [0] was never final."""
    system = load_system(name)
    stack, buffer, arcs = system.initial(2)
    while not system.is_final(stack, buffer, arcs):
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, system.legal(stack, buffer, arcs)[-1])
    assert system.is_final(list(stack), list(buffer), list(arcs))
    assert not system.is_final([0], [1], [-1, -1, -1])

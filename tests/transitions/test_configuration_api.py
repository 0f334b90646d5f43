"""The configuration API for users' own training loops: ``semiparse.system``,
``Configuration`` and ``Oracle.scores_batch``."""
import copy
import importlib
import math
import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.testing import gold_trees
from semiparse.transitions import load_system

from support import SYSTEMS as SYSTEMS_DIR, walk

SHIPPED = ["arc_standard", "arc_hybrid", "arc_eager", "lr_spine"]

# A system of the tests' own, loaded from a file they write: arc-standard
# declared under another name (a user's file, not a shipped definition).
LATE_ROOT = '''
name = "late_root"
final = { stack = "root", buffer = "empty" }

[[transition]]
name = "shift"
stack = ["*"]
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

[strategy.none]
'''


@pytest.fixture(scope="module")
def late_root(tmp_path_factory):
    path = tmp_path_factory.mktemp("systems") / "late_root.toml"
    path.write_text(LATE_ROOT)
    return str(path)


@settings(max_examples=60)
@given(spec=st.sampled_from(SHIPPED), n=st.integers(0, 9),
       choices=st.lists(st.integers(0, 1000), max_size=40))
def test_configurations_follow_the_system(spec, n, choices):
    walk(spec, n, choices)


@settings(max_examples=20)
@given(n=st.integers(0, 7), choices=st.lists(st.integers(0, 1000), max_size=30))
def test_configurations_of_a_declared_system(late_root, n, choices):
    walk(late_root, n, choices)


def _batch_equals_single(oracle, configs, golds):
    batch = oracle.scores_batch(configs, golds)
    assert batch.shape == (len(configs), len(oracle.transitions))
    assert batch.dtype == np.float64
    for row, config, heads in zip(batch, configs, golds):
        sigma = oracle.scores(config, heads)
        assert sigma == oracle.scores(config.stack, config.buffer, heads, config.arcs)
        expected = [sigma.get(t, -math.inf) for t in oracle.transitions]
        assert list(row) == expected
        assert set(sigma) == set(config.legal())


@settings(max_examples=40)
@given(data=st.data(), spec=st.sampled_from(["arc_standard", "arc_hybrid", "arc_eager"]),
       method=st.sampled_from(["auto", "grammar"]))
def test_scores_batch_equals_single_calls(data, spec, method):
    """Several sentences (projective and not, so C kernels and the Python path
    mix in one batch), configurations off the oracle's path included."""
    oracle = semiparse.oracle(spec, method=method)
    configs, golds = [], []
    for _ in range(data.draw(st.integers(1, 3))):
        heads = data.draw(gold_trees(1, 7))
        n = len(heads) - 1
        choices = data.draw(st.lists(st.integers(0, 1000), max_size=3 * n + 2))
        visited = walk(spec, n, choices)
        configs += visited
        golds += [heads] * len(visited)
    order = data.draw(st.permutations(range(len(configs))))
    _batch_equals_single(oracle, [configs[i] for i in order], [golds[i] for i in order])


@settings(max_examples=20)
@given(heads=gold_trees(1, 7, projective=True), strategy=st.sampled_from(["lbr", "strict_lbr", "rbl"]),
       choices=st.lists(st.integers(0, 1000), max_size=20))
def test_scores_batch_under_strategies(heads, strategy, choices):
    """right_stack (lbr, strict_lbr) runs in C, rbl through the grammar path."""
    oracle = semiparse.oracle("arc_standard", strategy)
    configs = walk("arc_standard", len(heads) - 1, choices)
    _batch_equals_single(oracle, configs, [heads] * len(configs))


@settings(max_examples=40)
@given(heads=gold_trees(1, 10, projective=True), data=st.data())
def test_arc_standard_batches_reuse_the_values_of_successors(heads, data):
    """Several computations over one gold tree, some configurations repeated:
    the batch kernel remembers each configuration's value, which is then its
    predecessor's future, and must still give what single calls give."""
    from semiparse.transitions.fast._arcstd import ArcStandardBatchGold, ArcStandardGold, linear_scores

    oracle = semiparse.oracle("arc_standard", method="linear")
    n = len(heads) - 1
    configs = []
    for _ in range(data.draw(st.integers(1, 4))):
        choices = data.draw(st.lists(st.integers(0, 1000), min_size=2 * n, max_size=2 * n + 2))
        configs += walk("arc_standard", n, choices)
    configs += configs[:data.draw(st.integers(0, len(configs)))]
    for order in (configs, configs[::-1]):
        _batch_equals_single(oracle, order, [heads] * len(order))
    # the kernel alone: from the last configuration to the first, as a batch runs
    memo, plain = ArcStandardBatchGold(heads), ArcStandardGold(heads)
    for config in configs[::-1]:
        args = (tuple(config.stack), tuple(config.buffer), 0)
        assert linear_scores(memo, *args) == linear_scores(plain, *args)
    scored = {(c.stack, c.buffer) for c in configs if not c.is_final()}
    assert memo.remembered == len(scored)
    memo.__init__(heads)   # made again (for any tree): nothing of before is kept
    assert memo.remembered == 0


def test_scores_batch_on_treebank_configurations(ud_files):
    from semiparse import projectivize
    from semiparse.bench._inputs import walk
    from semiparse.treebank.conllu import read_conllu

    trees = [tuple(projectivize(s.heads)) for s in read_conllu(ud_files[0]) if s.heads][:15]
    trees += [tuple(s.heads) for s in read_conllu(ud_files[0]) if s.heads][15:20]
    for spec in ("arc_standard", "arc_hybrid", "arc_eager"):
        system = semiparse.system(spec)
        configs, golds = walk(system, trees, random.Random(1), explore=0.1)
        assert len(configs) > 100
        oracle = system.oracle()
        _batch_equals_single(oracle, configs, golds)
        single_thread = oracle.scores_batch(configs, golds)
        for n_jobs in (2, 3):
            assert np.array_equal(oracle.scores_batch(configs, golds, n_jobs=n_jobs),
                                  single_thread)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n_jobs"):
            oracle.scores_batch(configs, golds, n_jobs=bad)


def test_the_same_file_loaded_twice_is_one_system(late_root):
    config = semiparse.system(late_root).initial(3)
    oracle = semiparse.oracle(load_system(late_root), method="exhaustive")
    assert oracle.scores(config, [-1, 0, 1, 2]) == {"shift": 3}


def test_a_configuration_of_another_system_is_refused(late_root):
    heads = [-1, 2, 0, 2]
    oracle = semiparse.oracle("arc_hybrid")
    for other in ("arc_standard", late_root):
        config = semiparse.system(other).initial(3)
        with pytest.raises(ValueError, match="belongs to transition system"):
            oracle.scores(config, heads)
        with pytest.raises(ValueError, match=r"configs\[1\] belongs to transition system"):
            oracle.scores_batch([semiparse.system("arc_hybrid").initial(3), config],
                                [heads, heads])


def test_batch_input_errors_name_the_item():
    system = semiparse.system("arc_eager")
    oracle = system.oracle()
    configs = [system.initial(3), system.initial(2)]
    with pytest.raises(ValueError, match="2 configurations but 1 gold trees"):
        oracle.scores_batch(configs, [[-1, 0, 1, 2]])
    with pytest.raises(ValueError, match=r"configs\[1\] has 2 words but golds\[1\] has 3"):
        oracle.scores_batch(configs, [[-1, 0, 1, 2]] * 2)
    with pytest.raises(ValueError, match=r"golds\[1\]: .*cycle"):
        oracle.scores_batch(configs, [[-1, 0, 1, 2], [-1, 2, 1]])
    with pytest.raises(ValueError, match=r"configs\[0\] is a tuple"):
        oracle.scores_batch([system.initial(3).stack], [[-1, 0, 1, 2]])
    assert oracle.scores_batch([], []).shape == (0, 4)


def test_transition_families_have_no_batch():
    system = semiparse.system("lr_spine")
    with pytest.raises(ValueError, match="families"):
        system.oracle().scores_batch([system.initial(2)], [[-1, 0, 1]])


def test_configuration_errors():
    system = semiparse.system("arc_standard")
    config = system.initial(2)
    with pytest.raises(ValueError, match="'left_arc' does not apply"):
        config.apply("left_arc")
    with pytest.raises(ValueError, match="unknown transition 'reduce'"):
        config.apply("reduce")
    for bad in (-1, "3", 2.0, True):
        with pytest.raises(ValueError, match="n"):
            system.initial(bad)
    with pytest.raises(ValueError, match="unknown transition system"):
        semiparse.system("no_such_system")
    with pytest.raises(TypeError, match="only the gold heads"):
        system.oracle().scores(config, [-1, 0, 1], (-1, -1, -1))


def test_a_system_handle_works_wherever_a_system_does():
    system = semiparse.system("arc_hybrid")
    assert semiparse.oracle(system).system is system.definition
    assert semiparse.system(system).definition is system.definition
    assert system.transitions == ("shift", "left_arc", "right_arc")
    assert semiparse.system("arc_standard").initial(0).is_final()


def test_a_gold_tuple_is_checked_once_across_calls(monkeypatch):
    """A training loop passes each sentence's tuple at every step: its tree is
    checked once per oracle, projective or not (the C kernels' rows and the
    rows scored one by one); a list, which may change, is checked each time,
    and a changed list gets the scores of its new tree."""
    oracle_module = importlib.import_module("semiparse.transitions.oracles.oracle")
    made = []
    real = oracle_module.Gold
    monkeypatch.setattr(oracle_module, "Gold",
                        lambda heads, partial=False: made.append(tuple(heads)) or real(heads, partial))
    system = semiparse.system("arc_hybrid")
    oracle = system.oracle()
    configs = [system.initial(4)]
    configs.append(configs[0].apply("shift"))
    for heads in ((-1, 2, 0, 2, 3), (-1, 3, 4, 0, 3)):  # projective, then not
        made.clear()
        rows = [oracle.scores_batch(configs, [heads] * 2) for _ in range(3)]
        assert made == [heads] and all(np.array_equal(r, rows[0]) for r in rows)
    tree = [-1, 2, 0, 2, 3]
    made.clear()
    first = oracle.scores_batch(configs, [tree] * 2)
    tree[1:] = [3, 4, 0, 3]
    second = oracle.scores_batch(configs, [tree] * 2)
    assert len(made) == 2
    assert np.array_equal(second, system.oracle().scores_batch(configs, [tuple(tree)] * 2))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("name", ["left_arc_2147483649", "left_arc_99999999999999999999999",
                                  "left_arc_01", "left_arc_\uff11", "right_arc_0"])
def test_lr_spine_names_one_move_each_in_ascii_and_in_range(name):
    """A K past a C int raised OverflowError; '01' and a fullwidth '1' were
    taken as left_arc_1."""
    config = semiparse.system("lr_spine").initial(4).apply("shift").apply("shift")
    with pytest.raises(ValueError, match=r"unknown transition .* \(K = 1, 2, \.\.\. in ASCII digits\)"):
        config.apply(name)
    assert config.apply("left_arc_1").stack == (0, 2)


@pytest.mark.parametrize("spec", ["arc_hybrid", str(SYSTEMS_DIR / "arc_standard_root_end.toml")])
def test_systems_and_oracles_pickle_and_copy_as_their_definitions(spec):
    """They failed on the functions the rules compile to (PicklingError:
    attribute lookup test on __main__), deepcopy on the machine; now each is
    rebuilt from its definition: an oracle answers as the original.
    Configurations copy, and say why they do not pickle."""
    system, heads = semiparse.system(spec), (-1, 2, 0, 2)
    oracle = system.oracle()
    config = system.initial(3).apply(system.initial(3).legal()[0])
    for again in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        other = again(system)
        assert other.definition.transitions == system.definition.transitions
        assert again(oracle).scores(config, heads) == oracle.scores(config, heads)
        twin = again(system.definition)  # a new system: changing it leaves the original
        assert twin is not system.definition and twin.name == system.definition.name
    for again in (copy.copy, copy.deepcopy):
        twin = again(config)
        assert twin is not config and (twin.stack, twin.buffer, twin.arcs) == (
            config.stack, config.buffer, config.arcs)
    with pytest.raises(TypeError, match="a Configuration does not pickle: pickle its system"):
        pickle.dumps(config)


@pytest.mark.parametrize("change", ["edited", "removed"])
def test_copies_keep_the_grammar_their_system_was_loaded_with(tmp_path, change):
    """The grammar's text was read at the first pickle: after the file was
    edited, copies and pickles of a system loaded before scored with the new
    grammar (silently other sigma), and after it was removed pickling raised
    FileNotFoundError."""
    from semiparse.resources import data_dir

    (tmp_path / "mine.toml").write_text((data_dir("systems") / "arc_hybrid.toml").read_text()
                                        .replace('name = "arc_hybrid"', 'name = "mine"'))
    grammar = tmp_path / "arc_hybrid.grammar"
    text = (data_dir("grammars") / "arc_hybrid.grammar").read_text()
    grammar.write_text(text)
    system, heads = semiparse.system(str(tmp_path / "mine.toml")), (-1, 0, 1)
    oracle = system.oracle()
    config = system.initial(2).apply("shift")
    expected = oracle.scores(config, heads)
    if change == "edited":
        rule = "(_, R1) -> (_, R0) P | (_, R0) S | (_, R1) S"
        assert rule in text
        grammar.write_text(text.replace(rule, "(_, R1) -> (_, R0) S | (_, R1) S"))
    else:
        grammar.unlink()
    for again in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        assert again(oracle).scores(config, heads) == expected
        assert again(system).oracle().scores(config, heads) == expected

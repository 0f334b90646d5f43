"""Partial gold trees (unknown heads, -1 / ``_``): oracles against the
exhaustive search, methods against the grammar path, projectivization
against brute force, the CoNLL-U reader and the commands with --partial."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import is_tree, no_crossing
from semiparse.testing.strategies import computations, gold_trees, oracle_examples
from semiparse.transitions import load_system
from semiparse.transitions.oracles.methods import system_methods
from semiparse.treebank.partial import check_partial_tree

from brute_force import projective_trees

# Every shipped system with a completion grammar (the grammar path is the
# partial trees' method); lr_spine has none, and refuses partial trees.
SYSTEMS = sorted(p.stem for p in semiparse.resources.data_dir("systems").glob("*.toml"))


@pytest.mark.parametrize("name", SYSTEMS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_oracle_agrees_with_the_exhaustive_search_on_partial_trees(name, data):
    system = load_system(name)
    strategy = data.draw(st.sampled_from(list(system.strategies)))
    oracle = semiparse.oracle(system, strategy)
    ex = data.draw(oracle_examples(system, 7, [strategy], {strategy: oracle}, partial=True))
    c = ex.computation
    expected = oracle.scores_exhaustive(c.stack, c.buffer, ex.heads, c.arcs, partial=True)
    assert oracle.scores(c.stack, c.buffer, ex.heads, c.arcs, partial=True) == expected


def hidden(n, data):
    heads = data.draw(gold_trees(n, n))
    for d in data.draw(st.sets(st.integers(1, n), min_size=1)):
        heads[d] = -1
    return heads


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_eager"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_method_that_accepts_partial_trees_equals_the_grammar_path(name, data):
    system = load_system(name)
    heads = hidden(data.draw(st.integers(1, 9)), data)
    grammar = semiparse.oracle(name, method="grammar")
    c = data.draw(computations(system, len(heads) - 1, heads, grammar, partial=True))
    expected = grammar.scores(c.stack, c.buffer, heads, c.arcs, partial=True)
    auto = semiparse.oracle(name)
    assert auto.method_for(heads, partial=True) in ("grammar", "projective_masked")
    assert auto.scores(c.stack, c.buffer, heads, c.arcs, partial=True) == expected
    for m in system_methods(system):
        o = semiparse.oracle(name, method=m.name)
        if o.accepts_partial():
            assert o.scores(c.stack, c.buffer, heads, c.arcs, partial=True) == expected
        else:
            with pytest.raises(ValueError, match="needs a complete gold tree"):
                o.scores(c.stack, c.buffer, heads, c.arcs, partial=True)
    config = semiparse.system(name).initial(len(heads) - 1)
    for t in c.transitions:
        config = config.apply(t)
    row = auto.scores_batch([config], [heads], partial=True)[0]
    assert {t: row[i] for i, t in enumerate(auto.transitions) if row[i] > -np.inf} == \
        {t: v for t, v in expected.items() if v > -np.inf}


def test_unknown_heads_count_for_no_tree():
    # words 1 and 3 unknown: the known edges are 0 -> 2 and 2 -> 4; an edge
    # into 1 or 3 gains nothing, and right_arc (1 -> 2) loses both
    heads = [-1, -1, 0, -1, 2]
    o = semiparse.oracle("arc_standard", method="grammar")
    assert o.scores([0], [1, 2, 3, 4], heads, partial=True) == {"shift": 2}
    assert semiparse.oracle("arc_standard").scores([0, 1, 2], [3, 4], heads, partial=True) == \
        {"shift": 2, "left_arc": 2, "right_arc": 0}


@pytest.mark.parametrize("call", [
    lambda o, h: o.scores([0], [1, 2, 3], h),
    lambda o, h: o.optimal([0], [1, 2, 3], h),
    lambda o, h: o.scores_exhaustive([0], [1, 2, 3], h),
    lambda o, h: o.method_for(h),
])
def test_without_partial_an_unknown_head_is_refused_as_before(call):
    o = semiparse.oracle("arc_standard")
    with pytest.raises(ValueError, match=r"^heads is not a tree: HEAD -1 of word 2 is out of range 0\.\.3$"):
        call(o, [-1, 0, -1, 2])
    # a partial tree seen before with partial=True is not reused without it
    o.scores([0], [1, 2, 3], [-1, 0, -1, 2], partial=True)
    with pytest.raises(ValueError, match="HEAD -1 of word 2"):
        call(o, [-1, 0, -1, 2])


def test_scores_batch_refuses_unknown_heads_without_partial():
    o = semiparse.oracle("arc_hybrid")
    config = semiparse.system("arc_hybrid").initial(3)
    with pytest.raises(ValueError, match=r"golds\[0\]: heads is not a tree: HEAD -1"):
        o.scores_batch([config], [[-1, 0, -1, 2]])


@pytest.mark.parametrize("call", [
    lambda o, h, p: o.scores([0], [1, 2, 3], h, partial=p),
    lambda o, h, p: o.optimal([0], [1, 2, 3], h, partial=p),
    lambda o, h, p: o.scores_exhaustive([0], [1, 2, 3], h, partial=p),
    lambda o, h, p: o.method_for(h, partial=p),
    lambda o, h, p: o.scores_batch([semiparse.system("arc_standard").initial(3)], [h], partial=p),
])
@pytest.mark.parametrize("flag", ["no", 1, None])
def test_partial_must_be_a_bool(call, flag):
    """A string such as "no" would read as true: the flag is refused, also
    for a tree the oracle has seen before."""
    o = semiparse.oracle("arc_standard")
    heads = (-1, 0, -1, 2)
    o.scores([0], [1, 2, 3], heads, partial=True)
    with pytest.raises(ValueError, match=f"^partial must be True or False, got {flag!r}$"):
        call(o, heads, flag)


def test_a_configuration_and_a_gold_tree_of_other_lengths_are_named_as_such():
    o = semiparse.oracle("arc_standard")
    with pytest.raises(ValueError, match=r"^the configuration has 3 words but the gold heads have 2 "):
        o.scores(semiparse.system("arc_standard").initial(3), [-1, 2, 0])


@pytest.mark.parametrize("heads, message", [
    ([-1, 2, 1], "cycle 1 -> 2 -> 1"),
    ([-1, 1, -1], "word 1 is headed by itself"),
    ([-1, 5, -1], "HEAD 5 of word 1 is out of range 0..2"),
    ([-1, -2, 0], "HEAD -2 of word 1 is out of range 0..2"),
    ([0, -1], "heads must start with -1"),
])
def test_partial_trees_are_checked(heads, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        check_partial_tree(heads)
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        semiparse.oracle("arc_standard").scores([0], list(range(1, len(heads))), heads,
                                                partial=True)


def test_lr_spine_has_no_method_for_partial_trees():
    o = semiparse.oracle("lr_spine")
    with pytest.raises(ValueError, match="this partial gold tree"):
        o.scores([0], [1, 2], [-1, 0, -1], [-1, -1, -1], partial=True)
    assert o.scores_exhaustive([0], [1, 2], [-1, 0, -1], [-1, -1, -1], partial=True)


def test_check_draws_partial_trees():
    from semiparse.testing.checking import check

    results = check("arc_hybrid", examples=50, max_n=5)
    assert all(r.ok for r in results) and not any("complete" in n for r in results for n in r.notes)
    notes = check("arc_standard", strategies=["none"], examples=20, max_n=5,
                  method="cubic_critical")[0].notes
    assert notes == ["complete gold trees only (the method refuses partial ones)"]


def known_kept(tree, heads):
    return sum(tree[d] == heads[d] for d in range(1, len(heads)))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_projectivization_of_partial_trees_keeps_the_most_known_edges(data):
    n = data.draw(st.integers(1, 5))
    heads = hidden(n, data)
    trees = [tuple(t) for t in projective_trees(n + 1)]
    best = max(known_kept(t, heads) for t in trees)
    optimal = {t for t in trees if known_kept(t, heads) == best}
    assert semiparse.count_optimal_projectivizations(heads, partial=True) == (best, len(optimal))
    for tie_break in ("first", "closest", "random"):
        tree = semiparse.projectivize(heads, tie_break, seed=1, partial=True)
        assert tuple(tree) in optimal
    assert no_crossing(semiparse.projectivize(heads, single_root=heads.count(0) <= 1,
                                              partial=True))


def test_projectivization_refuses_unknown_heads_without_partial():
    for call in (semiparse.projectivize, semiparse.count_optimal_projectivizations):
        with pytest.raises(ValueError, match=r"^heads is not a tree: HEAD -1 of word 1 is out of range 0\.\.2$"):
            call([-1, -1, 0])


PARTIAL = """# sent_id = a
1\tA\ta\tX\t_\t_\t3\tdep\t_\t_
2\tB\tb\tX\t_\t_\t_\t_\t_\t_
3\tC\tc\tX\t_\t_\t0\troot\t_\t_
4\tD\td\tX\t_\t_\t2\tdep\t_\t_
5\tE\te\tX\t_\t_\t1\tdep\t_\t_

"""


def test_conllu_reader_takes_underscore_heads_only_with_partial(tmp_path):
    from semiparse.treebank.conllu import read_conllu

    path = tmp_path / "p.conllu"
    path.write_text(PARTIAL)
    (sentence,) = read_conllu(str(path), partial=True)
    assert sentence.heads == [-1, 3, -1, 0, 2, 1] and not sentence.errors
    (sentence,) = read_conllu(str(path))
    assert [str(e) for e in sentence.errors] == [
        f"{path}:3: HEAD of word 2 is '_' (no basic tree; an unknown head needs partial trees: "
        f"--partial, partial=True)"]
    path.write_text(PARTIAL.replace("\t2\tdep", "\t-1\tdep"))
    (sentence,) = read_conllu(str(path), partial=True)
    assert [str(e) for e in sentence.errors] == [f"{path}:5: HEAD -1 of word 4 is out of range 0..5"]
    path.write_text(PARTIAL.replace("\t3\tdep", "\t5\tdep"))
    (sentence,) = read_conllu(str(path), partial=True)
    assert [str(e) for e in sentence.errors] == [
        f"{path}:2: cycle 1 -> 5 -> 1 (each arrow goes from a word to its head)"]


@pytest.mark.parametrize("command", [["projectivize"], ["count"]])
def test_commands_refuse_underscore_heads_without_partial(tmp_path, capsys, command):
    from semiparse.cli import main

    path = tmp_path / "p.conllu"
    path.write_text(PARTIAL)
    assert main(command + [str(path)]) == 2
    assert (f"{path}:3: HEAD of word 2 is '_' (no basic tree; an unknown head needs partial trees: "
            f"--partial, partial=True)") in capsys.readouterr().err


def test_projectivize_partial_keeps_underscore_for_unknown_heads(tmp_path):
    from semiparse.cli import main

    path, out = tmp_path / "p.conllu", tmp_path / "out.conllu"
    path.write_text(PARTIAL)
    assert main(["projectivize", "--partial", str(path), "-o", str(out)]) == 0
    lines = [l.split("\t") for l in out.read_text().splitlines() if l and not l.startswith("#")]
    heads = [-1] + [-1 if cols[6] == "_" else int(cols[6]) for cols in lines]
    assert heads[2] == -1 and lines[1] == PARTIAL.splitlines()[2].split("\t")
    # of the known edges 3 -> 1, 0 -> 3, 2 -> 4, 1 -> 5, at most two can stay
    assert sum(heads[d] == [-1, 3, -1, 0, 2, 1][d] for d in (1, 3, 4, 5)) == 2
    assert semiparse.count_optimal_projectivizations([-1, 3, -1, 0, 2, 1], partial=True)[0] == 2
    assert main(["projectivize", "--partial", "--encode", "head", str(path)]) == 2


def test_count_partial_counts_known_edges(tmp_path, capsys):
    from semiparse.cli import main

    path = tmp_path / "p.conllu"
    path.write_text(PARTIAL)
    assert main(["count", "--partial", "--json", str(path)]) == 0
    import json

    stats = json.loads(capsys.readouterr().out)
    total = stats["files"][0] if "files" in stats else stats
    assert total["words"] == 5 and total["edges_lost"] == 2 and total["non_projective"] == 1


def test_read_trees_takes_partial_trees_only_with_partial(tmp_path):
    from semiparse.perceptron import read_trees

    path = tmp_path / "p.conllu"
    path.write_text(PARTIAL)
    (tree,) = read_trees(str(path), partial=True)
    assert tree.heads == [-1, 3, -1, 0, 2, 1]
    with pytest.raises(ValueError,
                       match=r"p\.conllu:3: HEAD of word 2 is '_' \(no basic tree; .*--partial"):
        read_trees(str(path))


# -- training on partial trees -------------------------------------------------------------

def _partial_trees(count, seed, hide=0.5):
    """Trees of the shared-data kind: random projective trees with a share of
    the heads hidden (-1) and their labels, as `_` in CoNLL-U."""
    import random

    from semiparse.perceptron import Tree

    rng, out = random.Random(seed), []
    for k in range(count):
        n = rng.randint(2, 7)
        heads = [-1] + [0] + [rng.randint(1, d - 1) for d in range(2, n + 1)]
        hidden = [d for d in range(1, n + 1) if rng.random() < hide]
        for d in hidden:
            heads[d] = -1
        labels = [None] + ["_" if d in hidden else "dep" for d in range(1, n + 1)]
        out.append(Tree([None] + [f"w{k}{d}" for d in range(1, n + 1)], [None] + ["X"] * n,
                        heads, labels))
    return out


@pytest.mark.parametrize("oracle", ["dynamic", "nondet"])
def test_the_trainer_follows_the_oracle_of_the_known_edges(oracle, monkeypatch):
    """Every training step asks the oracle with partial=True, and the moves
    it calls optimal are those of the known edges' sigma."""
    from semiparse.perceptron import Trainer
    from semiparse.perceptron import trainer as trainer_module

    calls = []
    oracle_moves = trainer_module.oracle_moves

    def spy(dynamic, state, heads, partial=False):
        names, viable = oracle_moves(dynamic, state, heads, partial)
        sigma = semiparse.oracle("arc_hybrid").scores(state.stack, state.buffer, heads,
                                                      partial=True)
        top = max(sigma.values())
        calls.append(names == {t for t, v in sigma.items() if v == top})
        return names, viable

    monkeypatch.setattr(trainer_module, "oracle_moves", spy)
    trees = _partial_trees(12, seed=1)
    assert any(-1 in t.heads[1:] for t in trees)
    model = Trainer(system="arc_hybrid", oracle=oracle, epochs=2, progress=False).run(
        trees, partial=True)
    assert calls and all(calls)
    for tree in trees:
        heads, _, _ = model.parse(tree)
        assert is_tree(heads)


def test_partial_training_refuses_the_static_oracle_and_unknown_heads_without_partial():
    from semiparse.perceptron import Trainer

    trees = _partial_trees(5, seed=2, hide=1.0)
    with pytest.raises(ValueError, match="the static oracle needs complete trees"):
        Trainer(system="arc_hybrid", oracle="static", epochs=1, progress=False).run(trees, partial=True)
    with pytest.raises(ValueError):
        Trainer(system="arc_hybrid", epochs=1, progress=False).run(trees)


def test_train_partial_on_the_command_line(tmp_path, capsys):
    from semiparse.cli import main

    path, model = tmp_path / "p.conllu", tmp_path / "m.npz"
    path.write_text(PARTIAL * 3)
    assert main(["train", str(path), "--system", "arc_eager", "--epochs", "1", "--quiet",
                 "-o", str(model)]) == 2
    assert f"{path}:3: HEAD of word 2 is '_'" in capsys.readouterr().err
    assert main(["train", str(path), "--partial", "--system", "arc_eager", "--epochs", "1",
                 "--quiet", "-o", str(model)]) == 0
    assert "3 partial (kept)" in capsys.readouterr().err and model.exists()
    assert main(["train", str(path), "--partial", "--oracle", "static", "--epochs", "1",
                 "--quiet", "-o", str(tmp_path / "s.npz")]) == 2
    assert "the static oracle needs complete trees" in capsys.readouterr().err
    assert main(["train", str(path), "--partial", "--model", "bilstm", "-o",
                 str(tmp_path / "n.pt")]) == 2
    assert "--partial is an option of the perceptron models" in capsys.readouterr().err


def test_gold_trees_takes_only_documented_flags():
    """projective="yes" was read as None (a mix) and partial="no" as true."""
    with pytest.raises(ValueError, match="projective must be True, False or None, got 'yes'"):
        gold_trees(projective="yes")
    with pytest.raises(ValueError, match="projective must be True, False or None, got 1"):
        gold_trees(projective=1)
    with pytest.raises(ValueError, match="partial must be True or False, got 'no'"):
        gold_trees(partial="no")

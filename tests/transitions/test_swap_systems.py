"""The swap systems (``arc_standard_swap``, ``arc_hybrid_swap``): the
sentence-order requirement, the proof that they end, the completion of
kind ``search`` and its bounded search, exact against the exhaustive one on
non-projective and partial gold trees."""
import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import tree_problems
from semiparse.cli import main
from semiparse.perceptron import read_trees
from semiparse.transitions import load_system
from semiparse.transitions.oracles._exhaustive import CSearch
from semiparse.transitions.oracles._search import BoundedSearch, projective_order
from semiparse.transitions.oracles.swap_static import SwapStatic
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.format.loops import find_loop
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import REPO, trees

SWAP_SYSTEMS = ("arc_standard_swap", "arc_hybrid_swap")
# the bounded search serves any declared system under strategy none
SEARCHED = SWAP_SYSTEMS + ("arc_standard", "arc_eager", "arc_hybrid_root_end",
                           "arc_standard_no_root", "arc_swift2")


@st.composite
def gold_and_walk(draw, max_words=7):
    """A gold tree (projective or not, some heads unknown at times) and the
    moves of a random walk."""
    heads = draw(trees(max_words=max_words))
    if draw(st.booleans()):
        hidden = draw(st.sets(st.integers(1, len(heads) - 1)))
        heads = [-1 if d in hidden else h for d, h in enumerate(heads)]
    return heads, draw(st.lists(st.integers(0, 50), max_size=40))


@pytest.mark.parametrize("name", SEARCHED)
@settings(max_examples=60, deadline=None)
@given(case=gold_and_walk())
def test_the_bounded_search_equals_the_exhaustive_search(name, case):
    heads, choices = case
    system, machine = semiparse.system(name), machine_for(name)
    bounded, exhaustive = BoundedSearch(machine, heads), CSearch(machine, heads)
    arcs_needed = load_system(name).needs_arcs
    config = system.initial(len(heads) - 1)
    for choice in choices:
        if config.is_final():
            break
        arcs = config.arcs if arcs_needed else None
        expected = exhaustive.scores(config.stack, config.buffer, arcs, None)
        assert bounded.scores(config.stack, config.buffer, arcs) == expected
        # the bound is admissible
        best = max(expected.values())
        if best > float("-inf"):
            assert bounded.bound(config.stack, config.buffer, arcs) >= best - 1
        legal = config.legal()
        config = config.apply(legal[choice % len(legal)])


@pytest.mark.parametrize("name", SWAP_SYSTEMS)
@settings(max_examples=80, deadline=None)
@given(heads=trees(max_words=9))
def test_every_tree_is_reached_from_the_initial_configuration(name, heads):
    """Swap systems build every tree (Nivre 2009): the oracle's value of the
    initial configuration is n, and its first descent reaches it."""
    system = semiparse.system(name)
    config = system.initial(len(heads) - 1)
    oracle = system.oracle()
    while not config.is_final():
        scores = oracle.scores(config, heads)
        best = max(scores.values())
        assert best == sum(1 for d in range(1, len(heads)) if config.arcs[d] < 0)
        config = config.apply(next(t for t in config.legal() if scores[t] == best))
    assert list(config.arcs) == list(heads)


@settings(max_examples=100, deadline=None)
@given(heads=trees(max_words=10))
def test_the_projective_order_makes_the_tree_projective(heads):
    order = projective_order(heads)
    assert sorted(order) == list(range(len(heads)))
    place = {x: i for i, x in enumerate(order)}
    renamed = [-1] * len(heads)
    for d in range(1, len(heads)):
        renamed[place[d]] = place[heads[d]]
    assert semiparse.is_projective(renamed)


def test_swap_applies_only_to_nodes_in_sentence_order():
    system = semiparse.system("arc_standard_swap")
    config = system.initial(3).apply("shift").apply("shift")  # stack [0, 1, 2]
    assert "swap" in config.legal()
    swapped = config.apply("swap")
    assert (swapped.stack, swapped.buffer) == ((0, 2), (1, 3))
    again = swapped.apply("shift")  # stack [0, 2, 1]: 2 comes after 1
    assert "swap" not in again.legal()
    assert "swap" not in system.initial(2).apply("shift").legal()  # s1 is the root
    hybrid = semiparse.system("arc_hybrid_swap").initial(3).apply("shift")
    moved = hybrid.apply("swap")  # stack [0, 1], buffer [2, 3] -> stack [0], buffer [2, 1, 3]
    assert (moved.stack, moved.buffer) == ((0,), (2, 1, 3))
    assert "swap" not in moved.apply("shift").legal()  # stack [0, 2], buffer [1, 3]: 2 > 1
    assert repr(moved) == "<Configuration arc_hybrid_swap stack=[0] buffer=[2, 1, 3]>"


@pytest.mark.parametrize("name", SWAP_SYSTEMS)
def test_the_swap_systems_are_proven_to_end(name):
    assert find_loop(load_system(name)) is None
    assert load_system(name).completion_kind == "search"
    assert semiparse.oracle(name).method_for([-1, 0]) == "search"


def _swap_text(require):
    text = (REPO / "systems" / "arc_standard_swap.toml").read_text(encoding="utf-8")
    old = 'require = ["s1 != root", "s1 < s0"]'
    assert old in text
    return text.replace(old, f"require = {require}")


def test_a_swap_without_the_order_requirement_is_refused(tmp_path):
    path = tmp_path / "loops.toml"
    path.write_text(_swap_text('["s1 != root"]'), encoding="utf-8")
    with pytest.raises(SystemFileError, match=r'loops\.toml:\d+: .*can loop.*"s1 < s0"'):
        load_system(path)


@pytest.mark.parametrize("require, message", [
    ('["s1 < s1"]', "never comes before itself"),
    ('["s1 < zz"]', "names 'zz', which is not in the stack or buffer pattern"),
    ('["s1 < s0", "s0 < s1"]', "contradictory requirements: s1 < s0 and s0 < s1"),
    ('["s1 <= s0"]', "'X < Y'"),
])
def test_malformed_order_requirements_name_file_and_line(tmp_path, require, message):
    path = tmp_path / "bad.toml"
    path.write_text(_swap_text(require), encoding="utf-8")
    with pytest.raises(SystemFileError) as info:
        load_system(path)
    assert str(info.value).startswith(f"{path}:")
    assert message in str(info.value)


def test_the_reversed_order_requirement_is_the_same_system(tmp_path):
    path = tmp_path / "reversed.toml"
    path.write_text(_swap_text('["s1 != root", "s0 > s1"]'), encoding="utf-8")
    mine, shipped = semiparse.system(str(path)), semiparse.system("arc_standard_swap")
    for choices in itertools.product(range(4), repeat=7):
        a, b = mine.initial(4), shipped.initial(4)
        for c in choices:
            assert a.legal() == b.legal()
            if a.is_final():
                break
            a, b = a.apply(a.legal()[c % len(a.legal())]), b.apply(b.legal()[c % len(b.legal())])
            assert (a.stack, a.buffer) == (b.stack, b.buffer)


@pytest.mark.parametrize("completion, message", [
    ('kind = "branching"', "completion.kind 'branching': expected one of grammar, spanning, "
                           "search"),
    ('kind = "spanning"', 'a completion of kind "spanning" declares its reachable arcs'),
    ('kind = "search"\ngrammar = "arc_standard.grammar"', 'kind \\"search\\" has no grammar'
     .replace("\\", "")),
    ('grammar = "arc_standard.grammar"\nterminals = [{ node = "stack", terminal = "s" }]',
     'declare kind = "search"'),
])
def test_completion_kinds_are_checked(tmp_path, completion, message):
    text = _swap_text('["s1 != root", "s1 < s0"]').replace('kind = "search"', completion)
    path = tmp_path / "kinds.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemFileError) as info:
        load_system(path)
    assert str(info.value).startswith(f"{path}:") and message in str(info.value)


def test_the_search_oracle_in_batches_partial_trees_and_strategies():
    system = semiparse.system("arc_hybrid_swap")
    oracle = system.oracle()
    gold = (-1, 3, 0, 2, 2, 3)   # 3 -> 1 and 3 -> 5 cross 2 -> 4
    configs = [system.initial(5)]
    while not configs[-1].is_final():
        scores = oracle.scores(configs[-1], gold)
        best = max(scores.values())
        configs.append(configs[-1].apply(min(t for t in scores if scores[t] == best)))
    assert list(configs[-1].arcs) == list(gold)
    rows = oracle.scores_batch(configs[:-1], [gold] * (len(configs) - 1))
    for config, row in zip(configs, rows):
        expected = oracle.scores_exhaustive(config, gold)
        assert {t: row[i] for i, t in enumerate(oracle.transitions)
                if row[i] > float("-inf")} == expected
    partial = [-1, 3, -1, 2, 2, -1]
    assert oracle.scores(configs[0], partial, partial=True) == oracle.scores_exhaustive(
        configs[0], partial, partial=True)
    with pytest.raises(ValueError, match="serves strategy 'none' only"):
        semiparse.oracle("arc_standard", strategy="lbr", method="search")


@pytest.fixture(scope="module")
def nonprojective(shared_data, tmp_path_factory):
    """Twelve Gothic sentences, some of them non-projective."""
    src = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    blocks = src.read_text(encoding="utf-8").split("\n\n")
    chosen = [b for b in blocks if b.strip() and len(b.splitlines()) < 16][:12]
    path = tmp_path_factory.mktemp("data") / "few.conllu"
    path.write_text("\n\n".join(chosen) + "\n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", SWAP_SYSTEMS)
def test_trains_on_trees_as_they_are_and_parses_into_trees(nonprojective, tmp_path, name):
    gold = read_trees(nonprojective)
    assert any(not semiparse.is_projective(list(t.heads)) for t in gold)
    model, out = tmp_path / "m.npz", tmp_path / "out.conllu"
    assert main(["train", str(nonprojective), "--system", name, "--oracle", "dynamic",
                 "--nonproj", "oracle", "--epochs", "2", "--quiet", "-o", str(model)]) == 0
    assert main(["parse", str(model), str(nonprojective), "-o", str(out), "--quiet"]) == 0
    parsed = read_trees(out)
    assert [len(t) for t in parsed] == [len(t) for t in gold]
    for tree in parsed:
        assert [p for p in tree_problems(tree.heads) if not p[2]] == []


@pytest.mark.parametrize("name", SWAP_SYSTEMS)
@settings(max_examples=80, deadline=None)
@given(heads=trees(max_words=9))
def test_the_static_swap_oracle_builds_the_gold_tree_by_optimal_moves(name, heads):
    static = SwapStatic(name, heads)
    system = semiparse.system(name)
    oracle = system.oracle()
    config = system.initial(len(heads) - 1)
    while not config.is_final():
        move = static.move(config.stack, config.buffer, config.arcs)
        scores = oracle.scores(config, heads)
        assert scores[move] == max(scores.values())
        config = config.apply(move)
    assert list(config.arcs) == list(heads)
    assert static.move(config.stack, config.buffer, config.arcs) is None


def test_the_lazy_oracle_swaps_later_than_the_eager_one():
    """Nivre, Kuhlmann and Hall 2009: the lazy oracle builds the maximal
    projective components first, so it swaps no more, here fewer, times."""
    heads = [-1, 2, 0, 5, 2, 2, 4]   # 2 -> 4 -> 6 crosses 2 -> 5 -> 3
    system = semiparse.system("arc_standard_swap")
    static = SwapStatic("arc_standard_swap", heads)
    config, lazy = system.initial(6), []
    while not config.is_final():
        lazy.append(static.move(config.stack, config.buffer, config.arcs))
        config = config.apply(lazy[-1])
    # the canonical computation of the exact oracle in the file's static
    # order (arcs, swap, shift) swaps as soon as it may
    oracle, config, eager = system.oracle(), system.initial(6), []
    while not config.is_final():
        scores = oracle.scores(config, heads)
        best = max(scores.values())
        eager.append(next(t for t in ("left_arc", "right_arc", "swap", "shift")
                          if scores.get(t) == best))
        config = config.apply(eager[-1])
    assert 0 < lazy.count("swap") <= eager.count("swap")


def test_a_search_past_its_budget_answers_nothing_and_stays_exact():
    from semiparse.errors import OverBudget

    heads = [-1, 3, 0, 2, 2, 3, 4, 1, 6]
    system = semiparse.system("arc_standard_swap")
    bounded = system.oracle(max_states=1)
    exact = system.oracle()
    config = system.initial(8)
    for move in ("shift", "shift", "shift", "shift", "swap", "shift"):
        config = config.apply(move)
    answered = over = 0
    for _ in range(20):   # each call learns more; the answers it gives are exact
        try:
            got = bounded.scores(config, heads)
        except OverBudget as exc:
            assert exc.max_states == 1 and "bounded search stopped past 1 states" in str(exc)
            over += 1
            continue
        answered += 1
        assert got == exact.scores(config, heads)
    assert over > 0
    rows = system.oracle(max_states=1).scores_batch([config], [heads])
    assert rows.shape == (1, 4) and (np.isnan(rows).all() or not np.isnan(rows).any())
    with pytest.raises(ValueError, match="max_states must be a positive int"):
        system.oracle(max_states=0)


def test_training_counts_the_sentences_left_past_the_budget(nonprojective, tmp_path,
                                                            monkeypatch, capsys):
    from semiparse.perceptron import trainer

    monkeypatch.setattr(trainer, "SEARCH_BUDGET", 3)
    model = tmp_path / "m.npz"
    assert main(["train", str(nonprojective), "--system", "arc_standard_swap", "--oracle",
                 "dynamic", "--nonproj", "oracle", "--epochs", "1", "-o", str(model)]) == 0
    err = capsys.readouterr()
    text = err.out + err.err
    assert re.search(r"over_budget=\d+", text)
    assert "ran past 3 configurations" in text


def test_bench_oracle_times_a_swap_system_beside_arc_standard(capsys):
    assert main(["bench", "oracle", "--system", "arc_standard_swap", "--sentences", "3",
                 "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 non-projective sentences" in out
    assert re.search(r"^arc_standard\s+\d+ ", out, flags=re.M)
    assert re.search(r"^arc_standard_swap\s+\d+ .*x$", out, flags=re.M)


def test_the_bilstm_trains_on_a_swap_system_and_counts_what_it_leaves(
        nonprojective, tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    from semiparse.neural import lockstep

    monkeypatch.setattr(lockstep, "SEARCH_BUDGET", 3)
    model, out = tmp_path / "m.pt", tmp_path / "out.conllu"
    assert main(["train", str(nonprojective), "--model", "bilstm", "--system", "arc_hybrid_swap",
                 "--nonproj", "oracle", "--epochs", "1", "--word-dim", "8", "--lstm-dim", "8",
                 "--hidden-dim", "8", "--threads", "1", "-o", str(model)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"over_budget=\d+", err) and "ran past 3 configurations" in err
    assert main(["parse", str(model), str(nonprojective), "-o", str(out), "--quiet"]) == 0
    for tree in read_trees(out):
        assert [p for p in tree_problems(tree.heads) if not p[2]] == []
        assert list(tree.heads[1:]).count(0) == 1

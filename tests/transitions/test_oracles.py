"""Grammar-defined oracles against exhaustive search, on a real treebank, and
their API."""
import random

import numpy as np
import pytest

import semiparse
from semiparse.heads import no_crossing
from semiparse.resources import data_dir
from semiparse.testing.checking import check
from semiparse.transitions import load_system, methods, register_method
from semiparse.transitions.systems.registry import GRAMMAR_REDUCED_RANK
from semiparse.treebank.conllu import read_conllu

COMBOS = [(name, strategy) for name in ("arc_standard", "arc_hybrid", "arc_eager")
          for strategy in load_system(name).strategies]


@pytest.mark.parametrize("name, strategy", COMBOS)
def test_grammar_oracle_agrees_with_exhaustive_search(name, strategy):
    [result] = check(name, [strategy], examples=2000, max_n=8, seed=4)
    assert result.mismatch is None, result.mismatch.describe("grammar")
    assert result.calls >= 2000


@pytest.mark.parametrize("name", ["arc_hybrid", "arc_eager"])
def test_projective_form_agrees_with_exhaustive_search(name):
    [result] = check(name, examples=1000, max_n=8, seed=5, method="projective_masked")
    assert result.mismatch is None, result.mismatch.describe("projective_masked")


def test_a_missing_edge_restriction_is_caught(tmp_path):
    text = (data_dir("systems") / "arc_eager.toml").read_text()
    assert 'heads.headless = ["buffer", "virtual"]\n' in text
    path = tmp_path / "loose_eager.toml"
    path.write_text(text.replace('name = "arc_eager"', 'name = "loose_eager"')
                    .replace('heads.headless = ["buffer", "virtual"]\n', ""))
    [result] = check(str(path), examples=300, max_n=6, method="projective_masked")
    assert not result.ok


def wrong_grammar(tmp_path, name, old, new):
    text = (data_dir("grammars") / f"{name}.grammar").read_text()
    assert old in text
    path = tmp_path / f"{name}_wrong.grammar"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("name, old, new", [
    # too permissive: a stack node may take a later stack node as right child
    ("arc_hybrid", "(_, R1) -> (_, R0) P | (_, R0) S | (_, R1) S",
     "(_, R1) -> (_, R0) P | (_, R0) S | (_, R1) S | (_, R1) P"),
    # too strict: a stack node below the top can no longer reach the top
    ("arc_standard", "S -> (S, S) | (P, S)", "S -> (S, S)"),
    # too permissive: a headless stack node could become the child of a stack node
    ("arc_eager", "(_, K) -> (_, K) H | (_, K) S", "(_, K) -> (_, K) H | (_, K) S | (_, K) U"),
])
def test_check_catches_a_wrong_rule_with_a_small_counterexample(tmp_path, name, old, new):
    results = check(name, examples=300, max_n=8, grammar=wrong_grammar(tmp_path, name, old, new))
    failures = [r for r in results if not r.ok]
    assert failures
    m = failures[0].mismatch
    assert m.got != m.expected and len(m.heads) <= 6
    # the counterexample is genuine: recompute both sides (it may be a partial tree)
    o = semiparse.oracle(name, m.strategy, "exhaustive")
    partial = -1 in m.heads[1:]
    assert o.scores_exhaustive(m.stack, m.buffer, m.heads, m.arcs, partial) == m.expected


def ud_trees(path):
    return [s.heads for s in read_conllu(path) if s.heads is not None]


def best_projective(heads):
    n = len(heads) - 1
    w = np.zeros((n + 1, n + 1))
    w[heads[1:], np.arange(1, n + 1)] = 1.0
    return semiparse.parse("projective", "s" * (n + 1), w, "maxplus").value


@pytest.fixture(scope="module")
def gothic(shared_data):
    """The Gothic PROIEL dev set: 985 short sentences, a quarter non-projective."""
    trees = ud_trees(shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu")
    assert sum(not no_crossing(h) for h in trees) > 100
    return [(h, best_projective(h)) for h in trees]


@pytest.mark.parametrize("name, strategy", COMBOS)
def test_following_optimal_steps_reaches_the_best_projective_score(gothic, name, strategy):
    system = load_system(name)
    o = semiparse.oracle(name, strategy, method="grammar")
    rng = random.Random(1)
    for heads, best in gothic:
        stack, buffer, arcs = system.initial(len(heads) - 1)
        score, first = 0, None
        while not system.is_final(stack, buffer, arcs):
            scores = o.scores(stack, buffer, heads, arcs)
            top = max(scores.values())
            first = top if first is None else first
            t = rng.choice(sorted(t for t, v in scores.items() if v == top))
            stack, buffer, arcs, edge = system.apply(stack, buffer, arcs, t)
            score += edge is not None and heads[edge[1]] == edge[0]
        assert score == best == first, (heads, score, best, first)


def test_scores_semantics_on_a_small_example():
    heads = [-1, 2, 0, 2, 3]
    o = semiparse.oracle("arc_standard", method="grammar")
    # left_arc adds the gold edge 2 -> 1, then 0 -> 2, 2 -> 3, 3 -> 4 remain
    assert o.scores([0, 1, 2], [3, 4], heads) == {"shift": 4, "left_arc": 4, "right_arc": 1}
    assert o.optimal([0, 1, 2], [3, 4], heads) == {"shift", "left_arc"}
    assert o.scores([0], [], heads) == {} and o.optimal([0], [], heads) == set()
    # edges built before the configuration are not counted
    assert o.scores([0, 2], [3, 4], heads) == {"shift": 3, "right_arc": 2}
    # numpy input is accepted
    assert o.scores(np.array([0, 1, 2]), np.array([3, 4]), np.array(heads))["shift"] == 4


def test_strategies_change_the_scores():
    heads = [-1, 2, 0]  # 2 -> 1 needs a left child of 2 after it was shifted
    stack, buffer = [0, 1], [2]
    none = semiparse.oracle("arc_standard", "none", "grammar").scores(stack, buffer, heads)
    assert none == {"shift": 2, "right_arc": 1}
    # after right_arc 0 -> 1 nothing changes; after a shift, 1 is the old top:
    lbr = semiparse.oracle("arc_standard", "lbr", "grammar").scores([0, 1, 2], [], heads)
    rbl = semiparse.oracle("arc_standard", "rbl", "grammar").scores([0, 1, 2], [], heads)
    assert lbr == rbl == {"left_arc": 2, "right_arc": 0}
    # rbl: once the top took a left child it takes no right child
    heads = [-1, 0, 1, 1]
    o = semiparse.oracle("arc_standard", "rbl", "grammar")
    assert o.scores([0, 2, 3], [], heads) == o.scores_exhaustive([0, 2, 3], [], heads)


def test_auto_method_selection_and_errors():
    calls = []

    def fake(stack, buffer, heads, arcs, strategy):
        calls.append(strategy)
        return semiparse.oracle("arc_hybrid", method="grammar").scores(stack, buffer, heads)

    register_method("arc_hybrid", "test_fake", fake, strategies=("none",), projective_only=True,
                    rank=-1)
    o = semiparse.oracle("arc_hybrid")
    assert o.method_for([-1, 2, 0]) == "test_fake"
    # non-projective: test_fake does not apply; the best other exact method is
    # chosen, the grammar path in C on reduced strings if none ranks above it
    exact = [m for m in methods("arc_hybrid")
             if not m.projective_only and m.rank < GRAMMAR_REDUCED_RANK]
    assert o.method_for([-1, 3, 0, 0, 2]) == (exact[0].name if exact else "grammar")
    assert o.scores([0, 1], [2], [-1, 2, 0]) == {"shift": 0, "left_arc": 2, "right_arc": 1}
    assert calls == ["none"]
    forced = semiparse.oracle("arc_hybrid", method="test_fake")
    with pytest.raises(ValueError, match="exact only for projective gold trees"):
        forced.scores([0, 1], [2, 3, 4], [-1, 3, 0, 0, 2])
    register_method("arc_hybrid", "test_fake", fake, strategies=("none",), projective_only=True,
                    rank=1000)
    assert semiparse.oracle("arc_hybrid").method_for([-1, 2, 0]) != "test_fake"
    with pytest.raises(ValueError, match="unknown oracle method 'quantum'"):
        semiparse.oracle("arc_standard", method="quantum")
    with pytest.raises(ValueError, match="reserved"):
        register_method("arc_hybrid", "grammar", fake, ("none",), False, 1)
    with pytest.raises(ValueError, match="non-empty tuple"):
        register_method("arc_hybrid", "x", fake, (), False, 1)


@pytest.mark.parametrize("heads, message", [
    ([0, 0, 1], "must start with -1"),
    ([-1, 2, 1], "not a tree: cycle 1 -> 2 -> 1"),
    ([-1, 0, 5], "not a tree: HEAD 5 of word 2 is out of range 0..2"),
    ([-1, 1], "not a tree: word 1 is headed by itself"),
    ([-1, "x"], "integer heads"),
])
def test_bad_gold_trees_are_value_errors(heads, message):
    with pytest.raises(ValueError, match=message):
        semiparse.oracle("arc_standard", method="grammar").scores([0], [1, 2][:len(heads) - 1], heads)


def test_configuration_must_fit_the_gold_tree():
    o = semiparse.oracle("arc_standard", method="grammar")
    with pytest.raises(ValueError, match="out of range 0..2"):
        o.scores([0, 1], [2, 3], [-1, 0, 1])


def test_gold_tree_is_validated_once():
    o = semiparse.oracle("arc_standard", method="grammar")
    heads = (-1, 0, 1, 2)
    o.scores([0], [1, 2, 3], heads)
    gold = o._gold
    o.scores([0, 1], [2, 3], list(heads))
    assert o._gold is gold
    o.scores([0, 1], [2, 3], [-1, 0, 0, 0])
    assert o._gold is not gold


def test_auto_uses_the_grammar_path_below_the_masked_methods_min_size(monkeypatch, tmp_path):
    """`auto` picks by measured speed: on non-projective gold trees the
    projective_masked method of an arc-hybrid file that does not declare
    critical_buffer serves configurations from MASKED_MIN_SIZE on, the
    grammar path (faster there) the smaller ones; both give the same scores."""
    import importlib

    from semiparse.transitions.oracles.grammar_method import MASKED_MIN_SIZE

    oracle_module = importlib.import_module("semiparse.transitions.oracles.oracle")

    calls = []   # the grammar path in C (strategy none) goes through kernel_scores
    real = oracle_module.kernel_scores
    monkeypatch.setattr(oracle_module, "kernel_scores", lambda *a: calls.append(a) or real(*a))
    text = (data_dir("systems") / "arc_hybrid.toml").read_text()
    assert "critical_buffer = true\n" in text
    path = tmp_path / "arc_hybrid.toml"
    path.write_text(text.replace("critical_buffer = true\n", ""))
    system = semiparse.transitions.load_system(str(path))
    for n, uses_grammar in ((MASKED_MIN_SIZE - 1, True), (MASKED_MIN_SIZE + 5, False)):
        heads = [-1, 0, 4, 1] + [d - 1 for d in range(4, n + 1)]  # the edge 4 -> 2 crosses 1 -> 3
        assert not semiparse.is_projective(heads)
        auto = semiparse.oracle(system)
        assert auto.method_for(heads) == "projective_masked"
        stack, buffer, arcs = system.initial(n)
        calls.clear()
        got = auto.scores(stack, buffer, heads, arcs)
        assert bool(calls) == uses_grammar
        assert got == semiparse.oracle(system, method="grammar").scores(stack, buffer, heads, arcs)


def test_auto_prefers_the_reduced_grammar_path_under_strategy_none():
    """With critical_buffer declared, the grammar path runs in C on reduced
    strings and ranks above the slower methods for non-projective trees; the
    linear-time methods still serve projective ones, and the other
    strategies keep their methods."""
    nonprojective = [-1, 0, 4, 1, 3, 4]
    projective = [-1, 2, 0, 2, 3, 4]
    assert semiparse.oracle("arc_standard").method_for(nonprojective) == "grammar"
    assert semiparse.oracle("arc_standard").method_for(projective) == "linear"
    assert semiparse.oracle("arc_standard", "lbr").method_for(nonprojective) == "cubic_critical"
    assert semiparse.oracle("arc_hybrid").method_for(nonprojective) == "grammar"
    assert semiparse.oracle("arc_hybrid").method_for(projective) == "cost"

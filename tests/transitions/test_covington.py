"""Covington's non-projective system (``covington``, Nivre 2008): words set
aside and brought back (``"..."``), the cycle test (``"no cycle"``), the
completion of kind ``spanning`` (its O(n) kernel against a maximum
branching and against the exhaustive search), and a wrong declaration of
reachable arcs caught by the check."""
import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.heads import tree_problems
from semiparse.heads.branching import max_branching
from semiparse.perceptron import read_trees
from semiparse.testing.checking import check
from semiparse.transitions import load_system
from semiparse.transitions.oracles._exhaustive import CSearch
from semiparse.transitions.oracles._spanning import SpanningValue
from semiparse.transitions.oracles.spanning import branching_scores
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.format.loops import _terminates, find_loop
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import REPO, trees

TEXT = (REPO / "systems" / "covington.toml").read_text(encoding="utf-8")
REACHABLE = 'reachable = ["stack - buffer", "buffer - buffer", "set_aside - rest"]'


@st.composite
def gold_and_walk(draw, max_words=6):
    """A gold tree (projective or not, some heads unknown at times) and the
    moves of a random walk."""
    heads = draw(trees(max_words=max_words))
    if draw(st.booleans()):
        hidden = draw(st.sets(st.integers(1, len(heads) - 1)))
        heads = [-1 if d in hidden else h for d, h in enumerate(heads)]
    return heads, draw(st.lists(st.integers(0, 50), max_size=60))


def _walk(heads, choices):
    """The configurations of a random walk of Covington's system."""
    config = semiparse.system("covington").initial(len(heads) - 1)
    out = [config]
    for choice in choices:
        if config.is_final():
            break
        legal = config.legal()
        config = config.apply(legal[choice % len(legal)])
        out.append(config)
    return out


def test_the_lists_of_nivre_2008():
    system = semiparse.system("covington")
    c = system.initial(4)
    assert c.lists == {"stack": (0,), "set_aside": (), "buffer": (1, 2, 3, 4)}
    c = c.apply("shift").apply("shift")
    assert (c.stack, c.set_aside, c.buffer) == ((0, 1, 2), (), (3, 4))
    c = c.apply("left_arc")                    # 3 -> 2 sets 2 aside
    c = c.apply("no_arc")                      # and 1
    assert (c.stack, c.set_aside, c.buffer) == ((0,), (1, 2), (3, 4))
    assert repr(c) == "<Configuration covington stack=[0] set_aside=[1, 2] buffer=[3, 4]>"
    c = c.apply("right_arc")                   # 0 -> 3 sets the root aside too
    assert (c.stack, c.set_aside) == ((), (0, 1, 2))
    assert c.legal() == ["shift"]
    c = c.apply("shift")                       # (λ1 · λ2 | j, [], β)
    assert (c.stack, c.set_aside, c.buffer) == ((0, 1, 2, 3), (), (4,))
    assert c.arcs == (-1, -1, 3, 0, -1)
    assert semiparse.system("arc_standard").initial(2).lists == {"stack": (0,),
                                                                 "buffer": (1, 2)}


def test_no_cycle_is_tested_on_the_arcs():
    c = semiparse.system("covington").initial(3)
    c = c.apply("shift").apply("right_arc")    # 1 -> 2
    c = c.apply("no_arc").apply("shift")       # λ1 = [0, 1, 2], j = 3
    c = c.apply("right_arc")                   # 2 -> 3
    assert (c.stack, c.buffer) == ((0, 1), (3,))
    # 3 -> 1 would close 1 -> 2 -> 3 -> 1, and 3 has a head already
    assert c.legal() == ["no_arc", "shift"]
    c = c.apply("no_arc")                      # λ1 = [0]: 0 is no descendant of 3
    assert c.legal() == ["no_arc", "shift"]    # the root never gets a head


def test_a_cycle_is_never_built():
    """Every computation of up to 4 words builds a forest, and every arc the
    cycle test refuses would close one."""
    system = semiparse.system("covington")
    for n in range(5):
        todo = [system.initial(n)]
        while todo:
            c = todo.pop()
            assert semiparse.heads.find_cycle(c.arcs) is None
            for t in c.legal():
                todo.append(c.apply(t))


def test_covington_is_proven_to_end():
    system = load_system("covington")
    assert _terminates(system._rules) and find_loop(system) is None
    assert system.completion_kind == "spanning" and system.sets_aside


@settings(max_examples=50, deadline=None)
@given(case=gold_and_walk())
def test_the_spanning_oracle_equals_the_exhaustive_search(case):
    heads, choices = case
    machine = machine_for("covington")
    spanning, exhaustive = SpanningValue(machine, heads), CSearch(machine, heads)
    for config in _walk(heads, choices):
        if config.is_final():
            break
        expected = exhaustive.scores(config.stack, config.buffer, config.arcs, None)
        assert spanning.scores(config.stack, config.buffer, config.arcs) == expected


@settings(max_examples=50, deadline=None)
@given(case=gold_and_walk(max_words=7))
def test_the_closed_form_equals_the_maximum_branching(case):
    heads, choices = case
    system = load_system("covington")
    spanning = SpanningValue(machine_for("covington"), heads)
    for config in _walk(heads, choices)[:-1]:
        assert spanning.scores(config.stack, config.buffer, config.arcs) == branching_scores(
            system, config.stack, config.buffer, config.arcs, heads)


@settings(max_examples=80, deadline=None)
@given(heads=trees(max_words=10))
def test_every_tree_is_reached_by_following_the_oracle(heads):
    system = semiparse.system("covington")
    oracle = system.oracle()
    assert oracle.method_for(heads) == "spanning"
    config = system.initial(len(heads) - 1)
    while not config.is_final():
        scores = oracle.scores(config, heads)
        best = max(scores.values())
        assert best == sum(1 for d in range(1, len(heads)) if config.arcs[d] < 0)
        config = config.apply(next(t for t in config.legal() if scores[t] == best))
    assert list(config.arcs) == list(heads)


def _brute_force_branching(w):
    """The best total weight of a branching, over every head assignment."""
    n = len(w)
    best = 0.0
    for heads in itertools.product(range(-1, n), repeat=n):
        if any(h == d or (h >= 0 and w[h][d] == -np.inf) for d, h in enumerate(heads)):
            continue
        if semiparse.heads.find_cycle(list(heads)) is None:
            best = max(best, sum(w[h][d] for d, h in enumerate(heads) if h >= 0))
    return best


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_maximum_branching_equals_brute_force(data):
    n = data.draw(st.integers(1, 5))
    cell = st.one_of(st.just(-np.inf), st.integers(-3, 6).map(float))
    w = np.array([[data.draw(cell) for _ in range(n)] for _ in range(n)])
    total, heads = max_branching(w)
    assert total == pytest.approx(_brute_force_branching(w))
    assert semiparse.heads.find_cycle(heads) is None
    assert total == pytest.approx(sum(w[h, d] for d, h in enumerate(heads) if h >= 0))


def test_the_oracle_in_batches_and_on_partial_trees():
    system = semiparse.system("covington")
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
    assert oracle.accepts_partial()
    for config in configs[:6]:
        assert oracle.scores(config, partial, partial=True) == oracle.scores_exhaustive(
            config, partial, partial=True)
    assert semiparse.oracle("covington", method="search").scores(configs[3], gold) == \
        oracle.scores(configs[3], gold)
    with pytest.raises(ValueError, match="serves strategy 'none' only"):
        semiparse.oracle("arc_standard", strategy="lbr", method="spanning")
    with pytest.raises(ValueError, match="needs a completion of kind"):
        semiparse.oracle("arc_standard", method="spanning")


@pytest.mark.parametrize("reachable", [
    '["stack - buffer", "buffer - buffer", "set_aside - buffer"]',   # the front twice
    '["stack - buffer", "buffer - buffer"]',                          # λ2 forgotten
    '["stack -> buffer", "buffer - buffer", "set_aside - rest"]',     # one way only
])
def test_a_wrong_declaration_of_reachable_arcs_is_caught(tmp_path, reachable):
    path = tmp_path / "wrong.toml"
    path.write_text(TEXT.replace(REACHABLE, f"reachable = {reachable}"), encoding="utf-8")
    (result,) = check(load_system(path), ["none"], 300, 5, 0, "spanning")
    assert not result.ok and result.mismatch is not None


def test_the_shipped_declaration_passes_the_check():
    (result,) = check(load_system("covington"), ["none"], 200, 6, 0, "spanning")
    assert result.ok, result.mismatch.describe("spanning")


@pytest.mark.parametrize("old, new, message", [
    (REACHABLE, 'reachable = ["stack - stack_top"]', "unknown class 'stack_top'"),
    (REACHABLE, 'reachable = ["stack = buffer"]', "'A -> B'"),
    (REACHABLE, 'reachable = []', "declares its reachable arcs"),
    (REACHABLE, REACHABLE + '\ngrammar = "x.grammar"', 'kind "spanning" has no grammar'),
    ('kind = "spanning"', 'kind = "search"', "only a completion of kind \"spanning\""),
    ('stack_after = ["*", "...", "j"]', 'stack_after = ["*", "j", "..."]', '["*", "...", FRONT'),
    ('require = ["j has no head", "no cycle"]', 'require = ["j has no head"]',
     'require "no cycle"'),
    ('edge = "i -> j"\n\n[[transition]]\n# (λ1|i, λ2, β, A) -> (λ1, i|λ2, β, A)\n'
     'name = "no_arc"\nstack = ["*", "i"]\nbuffer = ["j", "*"]\n',
     'edge = "i -> j"\n\n[[transition]]\nname = "no_arc"\nstack = ["*", "i"]\n'
     'buffer = ["j", "*"]\nrequire = ["no cycle"]\n', "adds none"),
])
def test_malformed_declarations_name_file_and_line(tmp_path, old, new, message):
    assert old in TEXT
    path = tmp_path / "bad.toml"
    path.write_text(TEXT.replace(old, new), encoding="utf-8")
    with pytest.raises(SystemFileError) as info:
        load_system(path)
    assert str(info.value).startswith(f"{path}:")
    assert message in str(info.value)


@pytest.fixture(scope="module")
def nonprojective(shared_data, tmp_path_factory):
    """Hungarian sentences of up to 14 words, some of them non-projective."""
    src = shared_data / "ud" / "UD_Hungarian-Szeged" / "hu_szeged-ud-dev.conllu"
    blocks = [b for b in src.read_text(encoding="utf-8").split("\n\n")
              if b.strip() and len([x for x in b.splitlines() if x[:1].isdigit()]) <= 14]
    path = tmp_path_factory.mktemp("data") / "few.conllu"
    path.write_text("\n\n".join(blocks[:15]) + "\n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_trains_on_trees_as_they_are_and_parses_into_trees(nonprojective, tmp_path, oracle):
    gold = read_trees(nonprojective)
    assert any(not semiparse.is_projective(list(t.heads)) for t in gold)
    model, out = tmp_path / "m.npz", tmp_path / "out.conllu"
    assert main(["train", str(nonprojective), "--system", "covington", "--oracle", oracle,
                 "--nonproj", "oracle", "--epochs", "2", "--quiet", "-o", str(model)]) == 0
    assert main(["parse", str(model), str(nonprojective), "-o", str(out), "--quiet"]) == 0
    parsed = read_trees(out)
    assert [len(t) for t in parsed] == [len(t) for t in gold]
    for tree in parsed:
        assert [p for p in tree_problems(tree.heads) if not p[2]] == []


def test_feature_positions_read_the_words_set_aside():
    from semiparse.neural.features import FeatureReader, default_positions, parse_positions

    assert default_positions(load_system("covington")) == ("s2", "s1", "s0", "a0", "b0")
    assert default_positions(load_system("arc_hybrid")) == ("s2", "s1", "s0", "b0")
    c = semiparse.system("covington").initial(5).apply("shift").apply("shift").apply("shift")
    c = c.apply("left_arc").apply("no_arc")    # 4 -> 3; λ1 = [0, 1], λ2 = [2, 3], j = 4
    reader = FeatureReader(["s0", "a0", "a1", "a2", "b0", "a1.lc"])
    assert reader.positions_of(c) == [1, 2, 3, -1, 4, -1]
    assert FeatureReader(["b0.lc"]).positions_of(c) == [3]
    with pytest.raises(ValueError, match="aK"):
        parse_positions("c0")


@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_the_bilstm_trains_on_covington(nonprojective, tmp_path, capsys, oracle):
    pytest.importorskip("torch")
    from semiparse.neural import load

    model, out = tmp_path / "m.pt", tmp_path / "out.conllu"
    assert main(["train", str(nonprojective), "--model", "bilstm", "--system", "covington",
                 "--oracle", oracle, "--nonproj", "oracle", "--epochs", "1", "--word-dim", "8", "--lstm-dim", "8",
                 "--hidden-dim", "8", "--threads", "1", "-o", str(model)]) == 0
    assert "non-projective (kept)" in capsys.readouterr().err
    assert load(model).positions == ("s2", "s1", "s0", "a0", "b0")
    assert main(["parse", str(model), str(nonprojective), "-o", str(out), "--quiet"]) == 0
    for tree in read_trees(out):
        assert [p for p in tree_problems(tree.heads) if not p[2]] == []
        assert list(tree.heads[1:]).count(0) == 1


def test_bench_oracle_times_covington_beside_arc_standard(capsys):
    assert main(["bench", "oracle", "--system", "covington", "--sentences", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 non-projective sentences" in out
    assert re.search(r"^covington\s+\d+ .*x$", out, flags=re.M)

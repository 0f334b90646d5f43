"""``semiparse check`` and the hypothesis strategies of ``semiparse.testing``."""
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.heads import check_tree, no_crossing
from semiparse.resources import data_dir
from semiparse.testing import computations, gold_trees, oracle_examples
from semiparse.testing.strategies import MAX_WORDS
from semiparse.transitions import load_system


def test_check_passes_and_exits_0(capsys):
    assert main(["check", "arc_standard", "--examples", "60", "--max-n", "6",
                 "--strategy", "lbr", "--strategy", "rbl"]) == 0
    out = capsys.readouterr().out
    assert "ok    arc_standard strategy=lbr" in out and "strategy=rbl" in out
    assert "2/2 strategies passed" in out


def test_check_prints_the_shrunk_counterexample_and_exits_1(tmp_path, capsys):
    text = (data_dir("grammars") / "arc_hybrid.grammar").read_text()
    bad = tmp_path / "bad.grammar"
    bad.write_text(text.replace("(_, R1) -> (_, R0) P", "(_, R1) -> (_, R1) P | (_, R0) P"))
    assert main(["check", "arc_hybrid", "--grammar", str(bad), "--examples", "300"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  arc_hybrid strategy=none" in out
    for field in ("gold heads:", "configuration:", "reached by:", "grammar sigma:",
                  "exhaustive:", "differ at:", "grammar tree:", "exhaustive tree:"):
        assert field in out


@pytest.mark.parametrize("headless, status", [('["buffer", "virtual"]', 0), ("[]", 1)])
def test_check_of_a_file_checks_the_method_of_its_projective_form(tmp_path, capsys, headless,
                                                                   status):
    """A file's [completion.projective] makes its own projective_masked
    method, which auto uses on long configurations: a plain check checks it
    beside the grammar, and a wrong projective form fails."""
    text = (data_dir("systems") / "arc_eager.toml").read_text()
    text = text.replace('heads.headless = ["buffer", "virtual"]', f"heads.headless = {headless}")
    (tmp_path / "mine.toml").write_text(text.replace('name = "arc_eager"', 'name = "mine"'))
    (tmp_path / "arc_eager.grammar").write_text(
        (data_dir("grammars") / "arc_eager.grammar").read_text())
    assert main(["check", str(tmp_path / "mine.toml"), "--examples", "200"]) == status
    out = capsys.readouterr().out
    assert "ok    mine strategy=none method=grammar" in out
    assert ("ok    " if status == 0 else "FAIL  ") + "mine strategy=none method=projective_masked" in out


def test_an_empty_system_name_is_named_as_given(capsys):
    assert main(["check", ""]) == 2
    assert "unknown transition system '':" in capsys.readouterr().err


def test_check_bad_input_exits_2(tmp_path, capsys):
    assert main(["check", "arc_swift"]) == 2
    assert "unknown transition system 'arc_swift'" in capsys.readouterr().err
    assert main(["check", "arc_hybrid", "--method", "quantum", "--examples", "5"]) == 2
    assert "unknown oracle method 'quantum'" in capsys.readouterr().err
    broken = tmp_path / "broken.grammar"
    broken.write_text("start P\n(N, R0) -> p\nP -> (N R0)\n")
    assert main(["check", "arc_hybrid", "--grammar", str(broken)]) == 2
    assert f"{broken}:3:" in capsys.readouterr().err
    lacking = tmp_path / "lacking.grammar"
    lacking.write_text("start P\n(N, R) -> p\nP -> (N, R)\n")
    assert main(["check", "arc_hybrid", "--grammar", str(lacking)]) == 2
    assert "lacks terminal(s) s" in capsys.readouterr().err
    assert main(["check", "arc_standard", "--max-n", "501"]) == 2
    assert "max_n <= 500" in capsys.readouterr().err


def test_check_grammar_does_not_need_the_systems_own_grammar(tmp_path, capsys):
    """A copied system file whose grammar was left behind, checked with
    --grammar: loading it looked for its own grammar first and failed.  (The
    name is changed: a copy naming arc_hybrid.grammar finds the shipped one.)"""
    shipped = data_dir("systems") / "arc_hybrid.toml"
    copy = tmp_path / "copy.toml"
    copy.write_text(shipped.read_text().replace('"arc_hybrid.grammar"', '"left_behind.grammar"'))
    grammar = data_dir("grammars") / "arc_hybrid.grammar"
    assert main(["check", str(copy), "--grammar", str(grammar), "--examples", "20"]) == 0
    out = capsys.readouterr().out
    assert f"ok    arc_hybrid strategy=none method=grammar grammar={grammar}: 20 examples" in out
    assert main(["check", str(copy), "--examples", "20"]) == 2  # without --grammar: as before
    err = capsys.readouterr().err
    assert err.startswith(f"semiparse check: error: {copy}:") and len(err.splitlines()) == 1
    assert err.endswith(": completion grammar 'left_behind.grammar' not found next to the "
                        "system file nor among the shipped grammars\n")
    lacking = tmp_path / "lacking.grammar"
    lacking.write_text("start P\n(N, R) -> p\nP -> (N, R)\n")
    assert main(["check", str(copy), "--grammar", str(lacking), "--examples", "20"]) == 2
    assert f"terminal 's' is not in grammar {lacking}" in capsys.readouterr().err


def test_warnings_are_one_line_each(tmp_path, capsys):
    """A grammar warning came out as Python prints one: the library's file
    and line, then a line of its source."""
    grammar = tmp_path / "dead.grammar"
    grammar.write_text("start P\n(N, R0) -> p\nP -> (N, R0)\nP -> (N, R1)\nS -> (L, R1)\n"
                       "(L, _) -> P (L, _)\n(L, _) -> S (L, _)\n(_, R1) -> (_, R0) P\n")
    assert main(["check", "arc_hybrid", "--grammar", str(grammar), "--examples", "5"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"semiparse check: warning: {grammar}:5:1: constituent 'S' derives no tree"
    assert [line for line in lines if not line.startswith("semiparse check: ")] == []


@settings(max_examples=200)
@given(st.data())
def test_gold_tree_strategies(data):
    projective = data.draw(st.sampled_from([True, False, None]))
    heads = data.draw(gold_trees(1 if projective is not False else 3, 7, projective))
    check_tree(heads)
    if projective is not None:
        assert no_crossing(heads) == projective


@pytest.mark.parametrize("min_n, max_n", [(0, 5), (6, 5), (1, MAX_WORDS + 1), (1, 10**9),
                                          (1.0, 5), (True, 5), (1, "8")])
def test_gold_tree_strategies_refuse_sizes_they_cannot_draw(min_n, max_n):
    with pytest.raises(ValueError, match="min_n|max_n"):
        gold_trees(min_n, max_n)


@settings(max_examples=200)
@given(st.data())
def test_computations_are_legal_runs_from_the_initial_configuration(data):
    name = data.draw(st.sampled_from(["arc_standard", "arc_hybrid", "arc_eager"]))
    system = load_system(name)
    n = data.draw(st.integers(1, 7))
    comp = data.draw(computations(name, n))
    config = system.initial(n)
    for t in comp.transitions:
        assert t in system.legal(*config)
        config = system.apply(*config, t)[:3]
    assert config == (comp.stack, comp.buffer, comp.arcs)


@settings(max_examples=50)
@given(oracle_examples("arc_standard", max_n=6))
def test_oracle_examples_are_reachable_configurations_of_the_gold_trees_sentence(ex):
    system = load_system("arc_standard")
    config = system.initial(len(ex.heads) - 1)
    for t in ex.computation.transitions:
        assert t in system.legal(*config)
        config = system.apply(*config, t)[:3]
    assert config == (ex.computation.stack, ex.computation.buffer, ex.computation.arcs)


@pytest.mark.parametrize("strategy", ["none", "lbr", "strict_lbr", "rbl"])
def test_oracle_examples_draw_every_strategy_of_the_system(strategy):
    from hypothesis import find

    assert find(oracle_examples("arc_standard", max_n=4), lambda ex: ex.strategy == strategy,
                settings=settings(database=None)).strategy == strategy


def test_check_without_grammar_checks_every_registered_method(capsys):
    import copy

    import semiparse
    from semiparse.transitions import register_method, register_system

    system = copy.copy(load_system("arc_hybrid"))
    system.name, system.grammar, system.projective_form = "grammarless_hybrid", None, False
    register_system(system)
    declared = semiparse.oracle("arc_hybrid", method="grammar")
    register_method("grammarless_hybrid", "borrowed",
                    lambda s, b, heads, arcs, strategy: declared.scores(s, b, heads),
                    strategies=("none",), projective_only=False, rank=5)
    assert main(["check", "grammarless_hybrid", "--examples", "40", "--max-n", "6"]) == 0
    assert "ok    grammarless_hybrid strategy=none method=borrowed" in capsys.readouterr().out


def test_bench_oracle_runs_and_plots(shared_data, tmp_path, capsys):
    """A smoke run (no timing is asserted): every method agrees with the grammar path."""
    conllu = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    plot = tmp_path / "oracle.png"
    assert main(["bench", "oracle", str(conllu), "--systems", "arc_hybrid", "--sizes", "10", "20",
                 "--per-size", "2", "--seconds", "0.001", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "arc_hybrid, strategy none: mean cpu time per oracle call" in out
    assert "disagreed" not in out and "failed" not in out
    assert plot.stat().st_size > 1000
    # the plot over the treebank it reads: refused before any work (it was overwritten)
    copy = tmp_path / "dev.conllu"
    copy.write_bytes(conllu.read_bytes())
    assert main(["bench", "oracle", str(copy), "--systems", "arc_hybrid", "--sizes", "10",
                 "--per-size", "1", "--seconds", "0.001", "--plot", str(copy)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert copy.read_bytes() == conllu.read_bytes()


def test_bench_batch_checks_the_batch_against_single_calls(shared_data, capsys):
    """A smoke run (no timing is asserted): the batch equals single calls,
    on one and on two threads, or the command fails."""
    conllu = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    assert main(["bench", "batch", str(conllu), "--sentences", "8", "--rounds", "1",
                 "--systems", "arc_standard", "arc_hybrid"]) == 0
    out = capsys.readouterr().out
    assert "medians of 1 alternating rounds" in out
    assert [line.split()[0] for line in out.splitlines()[-2:]] == ["arc_standard", "arc_hybrid"]


@pytest.mark.parametrize("option", [["--strategy", "lbr"], ["--method", "linear"],
                                    ["--grammar", "projective"]])
@pytest.mark.parametrize("system", ["top_down", "in_order"])
def test_constituent_systems_refuse_the_options_of_dependency_systems(capsys, system, option):
    """These options were ignored: the check ran and passed whatever they said."""
    assert main(["check", system, *option, "--examples", "3", "--max-n", "3"]) == 2
    err = capsys.readouterr().err
    assert f"{system} is a constituent system" in err and f"{option[0]} apply to dependency" in err


@pytest.mark.parametrize("option", [[], ["--system", "arc_hybrid"]])
def test_bench_oracle_without_data_names_semiparse_data(tmp_path, monkeypatch, capsys, option):
    """Without FILEs the benchmark reads ../shared/data relative to the
    working directory: run elsewhere, it said only that no files were
    under ../shared/data/ud.  The error says where it looked and why, and
    names SEMIPARSE_DATA, set or not."""
    monkeypatch.delenv("SEMIPARSE_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "oracle", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("semiparse bench oracle: error: ../shared/data/ud")
    assert (f"SEMIPARSE_DATA is not set, and the default ../shared/data is relative to the "
            f"working directory, {tmp_path}): set SEMIPARSE_DATA to the shared data folder") in err
    monkeypatch.setenv("SEMIPARSE_DATA", str(tmp_path / "empty"))
    assert main(["bench", "oracle", *option]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'empty' / 'ud'}" in err and f"(SEMIPARSE_DATA is {tmp_path / 'empty'})" in err


def _swift_declaring_critical_buffer(folder):
    """arc_swift2 with critical_buffer = true: its buffer front takes edges
    from nodes deep in the stack, so the reduction is wrong."""
    text = (data_dir("systems") / "arc_swift2.toml").read_text()
    assert "critical_buffer" not in text
    text = text.replace('name = "arc_swift2"', 'name = "swift_cb"').replace(
        "[completion]\n", "[completion]\ncritical_buffer = true\n")
    path = folder / "swift_cb.toml"
    path.write_text(text)
    return str(path)


def test_a_wrong_critical_buffer_is_named_in_the_counterexample(tmp_path, capsys):
    """The counterexample said method=grammar and never named the key: where
    the oracle without the reduction agrees with the exhaustive search on
    the counterexample, it says that the declaration is wrong."""
    assert main(["check", _swift_declaring_critical_buffer(tmp_path), "--examples", "300",
                 "--max-n", "6"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  swift_cb strategy=none method=grammar" in out
    assert ("critical_buffer = true is wrong for this system: without it the oracle agrees "
            "here") in out
    # a wrong grammar is wrong with or without the reduction: no such line
    text = (data_dir("grammars") / "arc_hybrid.grammar").read_text()
    bad = tmp_path / "bad.grammar"
    bad.write_text(text.replace("(_, R1) -> (_, R0) P", "(_, R1) -> (_, R1) P | (_, R0) P"))
    assert main(["check", "arc_hybrid", "--grammar", str(bad), "--examples", "300"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  arc_hybrid" in out and "critical_buffer = true is wrong" not in out


def _tree_line(lines, label):
    """``(transition, heads, gold edges, computation)`` of a tree line."""
    import re

    line = next(x for x in lines if x.startswith(label))
    m = re.fullmatch(label + r"\s+after (\w+): heads (\[[-0-9, ]*\]) \(-1: none\), (\d+) gold "
                     r"edges? from the configuration on(?:, by ([\w ]+))?(?: \(.*\))?", line)
    assert m, line
    return m.group(1), eval(m.group(2)), int(m.group(3)), (m.group(4) or "").split()


@pytest.mark.parametrize("system, grammar, fix", [
    ("arc_hybrid", "arc_hybrid", ("(_, R1) -> (_, R0) P", "(_, R1) -> (_, R1) P | (_, R0) P")),
    ("arc_standard", "arc_hybrid", None)])  # arc-hybrid's grammar is wrong for arc-standard
def test_counterexamples_show_the_grammars_tree_and_an_exhaustive_one(tmp_path, system, grammar,
                                                                      fix):
    """A counterexample showed only the scores: it shows, after the first
    transition where they differ, the best tree the grammar derives and a
    best tree of the exhaustive search with the computation that builds it;
    each counts the gold edges its side scored."""
    from semiparse.heads import check_tree
    from semiparse.testing.checking import check

    text = (data_dir("grammars") / f"{grammar}.grammar").read_text()
    bad = tmp_path / "bad.grammar"
    bad.write_text(text.replace(*fix) if fix else text)
    [result] = check(system, ["none"], examples=300, grammar=str(bad))
    m = result.mismatch
    assert m is not None and m.error is None
    text = m.describe("grammar")
    lines = [line.strip() for line in text.splitlines()]
    t, exhaustive_tree, gained, computation = _tree_line(lines, "exhaustive tree:")
    assert t == next(x for x in load_system(system).transitions if m.got.get(x) != m.expected.get(x))
    assert gained == m.expected[t] and computation[0] == t
    config, rules = (m.stack, m.buffer, m.arcs), load_system(system)
    for step in computation:
        config = rules.apply(*config, step)[:3]
    assert rules.is_final(*config) and list(config[2]) == exhaustive_tree
    check_tree(exhaustive_tree)
    grammar_line = next(x for x in lines if x.startswith("grammar tree:"))
    if "derives no tree" in grammar_line:
        assert m.got[t] == float("-inf")
    else:
        _, grammar_tree, grammar_gained, _ = _tree_line(lines, "grammar tree:")
        assert grammar_gained == m.got[t]
        assert [h for h, a in zip(grammar_tree, m.arcs) if a >= 0] == [a for a in m.arcs if a >= 0]


def test_a_passing_system_without_critical_buffer_is_told_the_speed_up(monkeypatch, capsys):
    """A system file without critical_buffer got an oracle about 11x slower
    on long sentences, and check said only that the key "would make it
    faster": it runs its own configurations through the oracle with the key,
    compares them with the exhaustive search, and prints the speed-up
    measured on them."""
    from semiparse.testing import checking
    from semiparse.transitions.oracles.oracle import Oracle

    seen = []

    def measured(system, trial, own, rounds=3):
        seen.append((system, trial, list(own)))
        return 4.0

    # the trial check of HINT_EXAMPLES examples is another test's concern
    monkeypatch.setattr(checking, "HINT_EXAMPLES", 1)
    monkeypatch.setattr(checking, "measured_speedup", measured)
    path = str(Path(__file__).parents[1] / "systems" / "arc_standard_root_end.toml")
    assert main(["check", path, "--examples", "150", "--max-n", "6"]) == 0
    out = capsys.readouterr().out
    [hint] = [line for line in out.splitlines() if line.startswith("hint  ")]
    assert hint.startswith("hint  arc_standard_root_end strategy=none method=grammar grammar=")
    assert (": add critical_buffer = true: 4.0x faster on the 150 configurations of this check "
            "(n <= 6), on which the oracle with it agrees with the exhaustive search.  Check the "
            "file again") in hint
    [(system, trial, own)] = seen
    assert not system.completion_spec.critical_buffer and trial.completion_spec.critical_buffer
    assert len(own) == 150 and max(len(heads) - 1 for _, _, heads, _, _ in own) <= 6
    exhaustive = Oracle(system, "none", "exhaustive")
    for stack, buffer, heads, arcs, expected in own[::15]:  # the check's own, with its answers
        assert exhaustive.scores_exhaustive(stack, buffer, heads, arcs, True) == expected
    # the real measurement: a ratio of times on those configurations
    monkeypatch.undo()
    ratio = checking.measured_speedup(system, trial, own[:30], rounds=1)
    assert 0 < ratio < float("inf")
    # a short measured gain is not called one
    monkeypatch.setattr(checking, "HINT_EXAMPLES", 1)
    monkeypatch.setattr(checking, "measured_speedup", lambda *a, **k: 0.97)
    [result] = checking.check(path, ["none"], examples=40, max_n=4)
    assert result.hint.startswith("add critical_buffer = true: 1.0x, as fast, on the 40 "
                                  "configurations of this check (n <= 4), whose buffers are too "
                                  "short to gain")


def test_a_counterexample_stands_when_its_trees_cannot_be_shown(tmp_path, monkeypatch):
    from semiparse.testing import checking

    def fail(*args):
        raise RuntimeError("too long")

    monkeypatch.setattr(checking, "best_computation", fail)
    text = (data_dir("grammars") / "arc_hybrid.grammar").read_text()
    bad = tmp_path / "bad.grammar"
    bad.write_text(text.replace("(_, R1) -> (_, R0) P", "(_, R1) -> (_, R1) P | (_, R0) P"))
    [result] = checking.check("arc_hybrid", examples=300, grammar=str(bad))
    assert not result.ok
    lines = result.mismatch.describe("grammar").splitlines()
    assert lines[-2].startswith("differ at:") and lines[-1] == (
        "(no trees shown: RuntimeError: too long)")


@pytest.mark.parametrize("bench", [["projectivize"], ["train"]])
def test_every_benchmark_without_data_names_semiparse_data(tmp_path, monkeypatch, capsys, bench):
    """The benchmarks that read the shared data by default (every UD file,
    or a training file) say where they looked as bench oracle does."""
    monkeypatch.setenv("SEMIPARSE_DATA", str(tmp_path / "empty"))
    assert main(["bench", *bench]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"semiparse bench {bench[0]}: error: {tmp_path / 'empty' / 'ud'}")
    assert f"(SEMIPARSE_DATA is {tmp_path / 'empty'}): set SEMIPARSE_DATA" in err

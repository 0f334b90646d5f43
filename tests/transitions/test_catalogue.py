"""The shipped catalogue of transition systems (docs/systems.md).

Each catalogue system's grammar oracle equals the exhaustive search
(``semiparse check``; the larger counts docs/systems.md gives run as slow
tests) and has no dead end (docs/systems.md); each trains (a
perceptron, one epoch on a few sentences) and parses into trees.
``semiparse check --all`` checks and lists every shipped system and fails
when one fails; docs/systems.md lists exactly the files in systems/.
"""
import re
from pathlib import Path

import pytest

import semiparse
from semiparse.cli import main
from semiparse.heads import tree_problems
from semiparse.testing.checking import check
from semiparse.perceptron import read_trees
from semiparse.transitions.systems import registry
from semiparse.transitions.systems.loading import available_systems, load_system

from support import REPO, short_hint_trial  # noqa: F401 (a fixture)

DOC = REPO / "docs" / "systems.md"
CATALOGUE = ("arc_standard_root_end", "arc_hybrid_root_end", "arc_eager_root_end",
             "arc_eager_single_root", "arc_standard_no_root", "arc_swift2", "arc_swift3")


def _doc_sections():
    """``{name: section text}`` of docs/systems.md (one ``## `name` `` heading each)."""
    parts = re.split(r"^## `([a-z_0-9]+)`.*$", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _ci_examples(name):
    """The example count of the ``semiparse check NAME --examples N`` command
    docs/systems.md gives for ``name`` (the count the slow test runs)."""
    m = re.search(rf"semiparse check {name} --examples (\d+)", _doc_sections()[name])
    assert m, f"docs/systems.md gives no check command for {name}"
    return int(m.group(1))


def _check(name, examples, seed):
    (result,) = check(name, examples=examples, max_n=8, seed=seed)
    assert result.ok, result.mismatch.describe("grammar")
    assert result.calls == examples
    return result


@pytest.mark.parametrize("name", CATALOGUE)
def test_the_grammar_oracle_equals_the_exhaustive_search(name, short_hint_trial):
    assert _check(name, 150, seed=1).dead_ends == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", CATALOGUE)
def test_the_documented_check_passes(name):
    assert _check(name, _ci_examples(name), seed=0).dead_ends == 0


@pytest.mark.parametrize("name", ["arc_hybrid_root_end", "arc_eager_root_end"])
def test_the_root_is_shifted_only_onto_an_empty_stack(name):
    """Shifted onto words it would leave a dead end (the stack [.., w, 0],
    the buffer empty): shift_root requires the empty stack, shift a word."""
    config = semiparse.system(name).initial(2)  # stack [], buffer [1, 2, 0]
    assert config.legal() == ["shift"]
    config = config.apply("shift").apply("shift")  # stack [1, 2], buffer [0]
    assert "shift_root" not in config.legal() and "shift" not in config.legal()
    config = config.apply("left_arc").apply("left_arc")  # 0 -> 2, then 0 -> 1
    assert not config.stack and config.legal() == ["shift_root"]
    assert config.apply("shift_root").is_final()


@pytest.fixture(scope="module")
def few(shared_data, tmp_path_factory):
    dev = shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"
    path = tmp_path_factory.mktemp("data") / "few.conllu"
    blocks = dev.read_text(encoding="utf-8").split("\n\n")[:12]
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", CATALOGUE)
def test_trains_and_parses_into_trees(few, tmp_path, name):
    model, out = tmp_path / "m.npz", tmp_path / "out.conllu"
    assert main(["train", str(few), "--system", name, "--oracle", "dynamic", "--epochs", "1",
                 "--quiet", "-o", str(model)]) == 0
    assert main(["parse", str(model), str(few), "-o", str(out), "--quiet"]) == 0
    gold, parsed = read_trees(few), read_trees(out)
    assert [len(t) for t in parsed] == [len(t) for t in gold]
    for tree in parsed:
        assert [p for p in tree_problems(tree.heads) if not p[2]] == []
        if name == "arc_standard_no_root":  # its trees have one root child
            assert list(tree.heads[1:]).count(0) == 1


def test_check_all_checks_every_shipped_system(capsys):
    assert main(["check", "--all", "--examples", "2"]) == 0
    out = capsys.readouterr().out
    checked = set(re.findall(r"^ok    (\S+) strategy=", out, flags=re.M))
    assert checked == set(available_systems())
    assert set(CATALOGUE) <= checked
    for name in ("top_down", "in_order"):
        assert f"check {name}: oracle == exhaustive search on 2 examples" in out
    # every registered method of a shipped system is checked as well
    assert "arc_standard strategy=none method=linear" in out
    assert "arc_hybrid strategy=none method=cost" in out
    assert re.search(r"^check --all: (\d+)/\1 checks passed", out, flags=re.M)


def test_check_all_fails_when_one_system_fails(capsys, monkeypatch, short_hint_trial):
    def wrong(stack, buffer, heads, arcs, strategy):
        return {}

    monkeypatch.setitem(registry._METHODS, "arc_swift2", {"wrong": registry.Method(
        "arc_swift2", "wrong", wrong, ("none",), False, 50.0, 0, None)})
    assert main(["check", "--all", "--examples", "3"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  arc_swift2 strategy=none method=wrong" in out
    assert re.search(r"^check --all: .*; failed: arc_swift2$", out, flags=re.M)


@pytest.mark.parametrize("extra", [["arc_swift2"], ["--method", "grammar"],
                                   ["--strategy", "none"], ["--grammar", "x.grammar"]])
def test_check_all_refuses_a_choice_of_its_own(capsys, extra):
    assert main(["check", "--all", *extra]) == 2
    assert "--all checks every system" in capsys.readouterr().err


def test_the_docs_list_exactly_the_shipped_systems():
    shipped = {p.stem for p in (REPO / "systems").glob("*.toml")}
    sections = _doc_sections()
    assert set(sections) == shipped
    for name, text in sections.items():
        system = load_system(name)
        assert f"semiparse check {name} --examples" in text
        assert re.search(r"\b(19|20)\d\d\b", text), f"{name}: no citation (author and year)"
        if system.grammar is not None:
            assert f"grammars/{Path(system.grammar_name).name}" in text


@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_train_refuses_a_system_without_an_oracle_before_reading_data(tmp_path, capsys, oracle):
    text = (REPO / "systems" / "arc_swift2.toml").read_text(encoding="utf-8")
    cut = text.index("[completion]")
    path = tmp_path / "bare.toml"  # arc_swift2 without its completion grammar
    path.write_text(text[:cut] + '[strategy.none]\ndescription = "every computation"\n',
                    encoding="utf-8")
    missing = tmp_path / "missing.conllu"  # never read: the system is refused first
    assert main(["train", str(missing), "--system", str(path), "--oracle", oracle,
                 "-o", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert "'arc_swift2' has no dynamic oracle to train with" in err
    assert ("static oracle is derived from it" in err) == (oracle == "static")
    assert "missing.conllu" not in err and "exhaustive" not in err
    assert not (tmp_path / "m.npz").exists()

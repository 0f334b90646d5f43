"""Grammar files under bad input: bytes that are not UTF-8, empty files,
files without ``start``, rules that are not split, very many rules, and
byte-level mutations of the shipped grammars.

Every file is written under pytest's tmp_path.
"""
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

from semiparse.grammar import Grammar, GrammarError, GrammarWarning, load_grammar
from semiparse.resources import data_dir

from support import mutated

SMALL = "start S\n(S, S) -> s\nS -> (S, S)\n"


def test_invalid_utf8_in_a_grammar_file_names_line_and_column(tmp_path):
    path = tmp_path / "latin1.grammar"
    path.write_bytes(b"start S\n(S, S) -> s\n# caf\xe9\nS -> (S, S)\n")
    with pytest.raises(GrammarError, match=r"latin1\.grammar:3:6: not valid UTF-8 \(invalid "
                       r"continuation byte at byte 25\)") as info:
        load_grammar(path)
    assert (info.value.line, info.value.column) == (3, 6)


@pytest.mark.parametrize("text, line", [
    ("", 1), ("\n", 1), ("# nothing\n\n\n", 3), ("# no newline at the end", 1),
    ("(S, S) -> s\nS -> (S, S)", 2),
])
def test_no_start_names_the_last_line(tmp_path, text, line):
    path = tmp_path / "nostart.grammar"
    path.write_text(text)
    with pytest.raises(GrammarError, match=rf"nostart\.grammar:{line}: no 'start' declaration"):
        load_grammar(path)


def test_no_terminals_names_the_last_line():
    with pytest.raises(GrammarError, match=r"^g:2: no preterminal rule") as info:
        Grammar.from_text("# comment\nstart S\n", "g")
    assert info.value.line == 2


@pytest.mark.parametrize("rule, children", [
    ("S -> S S", "'S S' has 2 children (S, S)"),
    ("(S, _) -> S S (S, _)", "'S S (S, _)' has 2 children (S, S)"),
    ("(_, S) -> (_, S) S | (_, S) S NP VP", "'(_, S) S NP VP' has 3 children (S, NP, VP)"),
])
def test_rules_with_several_children_say_why(rule, children):
    with pytest.raises(GrammarError, match=r"^g:3:\d+: ") as info:
        Grammar.from_text(f"start S\n(S, S) -> s\n{rule}\nS -> (S, S)\n", "g")
    assert info.value.reason == (f"{children}, but a rule attaches one child on one side of a head: "
                                 "'(B2, _) -> A (B, _)' or '(_, C2) -> (_, C) A'")


def test_other_syntax_errors_keep_the_general_message():
    with pytest.raises(GrammarError, match=r"^g:3:9: unexpected 'S': expected a rule of the form"):
        Grammar.from_text("start S\n(S, S) -> s\nS -> (S S)\n", "g")


def test_a_duplicate_among_twenty_thousand_rules(tmp_path):
    """The duplicate check is one pass over a set (it used to compare every
    rule with all rules before it: minutes for this file)."""
    rules = [f"(L{k}, _) -> S (S, _)" for k in range(20000)]
    path = tmp_path / "big.grammar"
    path.write_text("\n".join([SMALL.strip()] + rules + [rules[12345]]) + "\n")
    with pytest.raises(GrammarError, match=r"big\.grammar:20004:16: rule '\(L12345, _\) -> S "
                       r"\(S, _\)' is given twice"):
        load_grammar(path)


@pytest.fixture(scope="module")
def shipped():
    shipped = data_dir("grammars")  # a Traversable: no glob when installed
    return [p.read_bytes() for p in sorted(shipped.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".grammar")]


@pytest.mark.slow
def test_fuzz_grammars(shipped, tmp_path):
    # 1000 mutations (of up to 3 edits) of the few shipped grammars; 2000
    # took 14-40 s of the test run, parsing each twice
    @settings(max_examples=1000, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(shipped, max_edits=3))
    def fuzz(data):
        path = tmp_path / "fuzzed.grammar"
        path.write_bytes(data)
        for load in (lambda: load_grammar(path),
                     lambda: Grammar.from_text(data.decode("utf-8", "replace"), "fuzzed")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GrammarWarning)
                try:
                    assert isinstance(load(), Grammar)
                except GrammarError as exc:
                    assert isinstance(exc.line, int) and exc.line >= 1, exc
                    assert "\n" not in str(exc)

    fuzz()


def chain(n, closed=True):
    """Constituent A{k} needs left state L{k}, which needs A{k+1}, listed so
    that a pass over the rules in file order learns one link at a time; the
    last constituent finishes from plain states (``closed``) or from a right
    state that itself needs A0 (a cycle: nothing derives a tree)."""
    lines = ["start A0", "(S, S) -> s",
             f"A{n} -> (S, S)" if closed else f"A{n} -> (S, R)\n(_, R) -> (_, S) A0"]
    for k in range(n):
        lines += [f"A{k} -> (L{k}, S)", f"(L{k}, _) -> A{k + 1} (S, _)"]
    return "\n".join(lines) + "\n"


def test_a_long_chain_of_constituents_loads():
    """Productive constituents are found by a worklist (repeated passes over
    the rules took minutes on chains of this length)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GrammarWarning)
        grammar = Grammar.from_text(chain(6000), "chain")
    assert len(grammar.constituents) == 6001


def test_a_cycle_derives_no_tree():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GrammarWarning)
        Grammar.from_text(chain(50, closed=False), "cycle")
    names = {re.search(r"constituent '(\w+)' derives no tree", str(w.message)).group(1)
             for w in caught}
    assert names == {f"A{k}" for k in range(51)}


def test_grammar_text_and_terminals_of_the_wrong_type_are_value_errors():
    """from_text(None) was an AttributeError, encode(None) or encode(5) a TypeError."""
    with pytest.raises(ValueError, match=r"text must be the grammar's text \(a string\), got NoneType"):
        Grammar.from_text(None)
    grammar = load_grammar("projective")
    for terminals in (None, 5, [["s"]]):
        with pytest.raises(ValueError, match="terminals must be a string or a sequence of terminal names"):
            grammar.encode(terminals)
    assert grammar.encode(["s", "s"])[0].tolist() == grammar.encode("ss")[0].tolist()


def test_a_path_object_is_a_path_even_where_a_shipped_grammar_has_its_name(tmp_path, monkeypatch):
    # Path("projective") loaded the shipped grammar, not the file
    monkeypatch.chdir(tmp_path)
    (tmp_path / "projective").write_text(SMALL)
    from pathlib import Path
    assert list(load_grammar(Path("projective")).terminals) == ["s"]
    assert list(load_grammar("./projective").terminals) == ["s"]
    assert load_grammar("projective").name == "projective"   # a bare string: the shipped one
    (tmp_path / "projective").unlink()
    with pytest.raises(ValueError, match="no grammar file 'projective' \\(a shipped grammar is "
                                         "named by a string"):
        load_grammar(Path("projective"))


@pytest.mark.parametrize("bad", [None, 3, b"projective"])
def test_what_is_not_a_grammar_name_or_path_is_a_value_error(bad):
    with pytest.raises(ValueError, match="a grammar is a shipped name, a path or a Grammar"):
        load_grammar(bad)


@pytest.mark.parametrize("text, where", [
    ("start start\n(S, S) -> s\nstart -> (S, S)\n", "3:7"),
    ("start S\n(S, S) -> s\nS -> (S, S)\nstart -> (S, S)\n", "4:7"),
])
def test_a_constituent_named_start_is_refused_with_the_reason(text, where):
    # the message was "unexpected '->'", with no word of the keyword
    with pytest.raises(GrammarError, match=f"^k:{where}: unexpected '->' after start: 'start' is "
                                           f"the keyword of the start declaration"):
        Grammar.from_text(text, name="k")

"""The grammar DSL: loading, checks, error positions, round trip."""
import importlib.resources
import os
import re
import warnings

import numpy as np
import pytest

from brute_force import NEG_INF, projective_trees

import semiparse
from semiparse.grammar import Grammar, GrammarError, GrammarWarning
from semiparse.resources import data_dir

TABLE_3 = """start S
(S, S) -> s
S -> (S, S)
(S, _) -> S (S, _)
(_, S) -> (_, S) S
"""


def test_shipped_grammars_load_by_name_and_path():
    for name in ("projective", "arc_standard"):
        by_name = semiparse.load_grammar(name)
        by_path = semiparse.load_grammar(str(data_dir("grammars") / f"{name}.grammar"))
        assert by_name.rules == by_path.rules and by_name.start == "S"
    assert semiparse.load_grammar("projective").rules == Grammar.from_text(TABLE_3).rules


def test_single_root_grammar_loads_by_name_and_derives_one_child_of_the_root():
    """grammars/single_root.grammar (``grammar="single_root"`` in semiparse.torch):
    the projective trees whose root has exactly one child, each once."""
    g = semiparse.load_grammar("single_root")
    assert g.name == "single_root" and sorted(g.terminals) == ["r", "s"]
    w = np.zeros((5, 5))
    want = [h for h in projective_trees(5) if h.count(0) == 1]
    assert semiparse.parse(g, "rssss", w, "counting").value == len(want)
    for heads in want:  # every such tree once: its edges alone allow one derivation
        forced = np.full((5, 5), NEG_INF)
        forced[heads[1:], range(1, 5)] = 0.0
        assert semiparse.parse(g, "rssss", forced, "counting").value == 1
    forced = np.full((5, 5), NEG_INF)
    forced[0, 1:] = 0.0  # four children of the root
    assert semiparse.parse(g, "rssss", forced, "counting").value == 0


def test_arc_standard_grammar_is_spec_table_4():
    g = semiparse.load_grammar("arc_standard")
    assert sorted(str(r) for r in g.rules) == sorted([
        "(P, P) -> p", "(S, S) -> s", "P -> (P, P)", "S -> (S, S)", "S -> (P, S)",
        "(S, _) -> P (P, _)", "(S, _) -> P (S, _)", "(S, _) -> S (S, _)",
        "(_, S) -> (_, P) S", "(_, S) -> (_, S) S",
    ])


def test_alternatives_comments_and_round_trip():
    text = """# two terminals, alternatives on one line
start S
(S, S) -> s | t   # both start in S
S -> (S, S) | (S, T)
(_, T) -> (_, S) S
(S, _) -> S (S, _)
"""
    g = Grammar.from_text(text)
    assert g.terminals == {"s": ("S", "S"), "t": ("S", "S")}
    assert len(g.rules) == 6
    again = Grammar.from_text(g.to_text())
    assert again.rules == g.rules and again.start == g.start


@pytest.mark.parametrize(
    "text, line, column, reason",
    [
        ("start S\n(S, S) -> s\nS -> (S S)\n", 3, 9, "unexpected 'S'"),
        ("start S\n(S, S) -> s\nS ->\n", 3, 3, "unexpected end of file"),
        ("start S\n(S, S) -> s\n(S, S) -> s\nS -> (S, S)\n", 3, 11, "second preterminal rule"),
        ("start S\n(S, S) -> s\nS -> (S, S)\n(S, _) -> T (S, _)\n", 4, 11, "undefined constituent 'T'"),
        ("start S\n(S, S) -> s\nS -> (Q, S)\n", 3, 1, "undefined left state 'Q'"),
        ("start S\n(S, S) -> s\nS -> (S, S)\n(_, S) -> (_, R) S\n", 4, 18, "undefined right state 'R'"),
        ("start X\n(S, S) -> s\nS -> (S, S)\n", 1, 7, "start symbol 'X' has no rule"),
        ("(S, S) -> s\nS -> (S, S)\n", 2, None, "no 'start' declaration"),
        ("start S\nstart S\n(S, S) -> s\nS -> (S, S)\n", 2, 7, "several 'start'"),
        ("start S\nS -> (S, S)\n", 2, None, "undefined left state|no preterminal"),
        ("start S\n(S, S) -> s\nS -> (S, S)\nS -> (S, S)\n", 4, 1, "given twice"),
        ("start S\n(S, S) -> s ; S -> (S, S)\n", 2, 13, "unexpected character ';'"),
        # an alternative of a finish rule is blamed at its own pair
        ("start S\n(S, S) -> s\nS -> (S, S)\n   | (S, T)\n", 4, 7, "undefined right state 'T'"),
        ("start S\n(S, S) -> s\nS -> (S, S)\n   | (S, S)\n", 4, 7, "given twice"),
        # a name left over at a line's end, not the next line's first token
        ("start S T\n(S, S) -> s\nS -> (S, S)\n", 1, 9, "'T' at the end of the line is followed by '\\('"),
        ("start S\n(S, S) -> s t  # two terminals\nS -> (S, S)\n", 2, 13,
         "'t' at the end of the line .* a missing '\\|'"),
    ],
)
def test_errors_name_file_line_column_and_reason(text, line, column, reason):
    with pytest.raises(GrammarError, match=reason) as info:
        Grammar.from_text(text, "bad.grammar")
    err = info.value
    assert err.file == "bad.grammar" and err.line == line and err.column == column
    where = "".join(f":{x}" for x in (line, column) if x is not None)
    assert str(err).startswith(f"bad.grammar{where}: ")
    assert "\n" not in str(err)


def test_load_from_file_reports_the_path(tmp_path):
    path = tmp_path / "broken.grammar"
    path.write_text("start S\n(S, S) -> s\nS -> (S, X)\n")
    with pytest.raises(GrammarError, match=r"broken\.grammar:3:1: undefined right state 'X'"):
        semiparse.load_grammar(str(path))


def test_unknown_grammar_name_lists_the_shipped_ones():
    with pytest.raises(ValueError, match="arc_standard.*projective"):
        semiparse.load_grammar("no_such_grammar")


def test_useless_symbols_warn_but_load():
    text = TABLE_3 + "T -> (S, S)\nU -> (S, V)\n(_, V) -> (_, V) U\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = Grammar.from_text(text, "w.grammar")
    messages = [str(w.message) for w in caught if issubclass(w.category, GrammarWarning)]
    assert any("'T' is never used" in m for m in messages)
    assert any("'U' derives no tree" in m for m in messages)
    assert g.start == "S"


def test_a_constituent_used_only_by_unused_ones_is_never_used_too():
    """T is a child only on the way to U, which nothing uses: neither can be
    part of a derivation of the start symbol."""
    text = TABLE_3 + "T -> (S, S)\n(S2, _) -> T (S, _)\nU -> (S2, S)\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Grammar.from_text(text, "w.grammar")
    messages = [str(w.message) for w in caught if issubclass(w.category, GrammarWarning)]
    assert messages == ["w.grammar:6:1: constituent 'T' is never used (only a child of constituents "
                        "that are never used themselves)",
                        "w.grammar:8:1: constituent 'U' is never used (not the start symbol, never "
                        "a child)"]


def test_a_state_that_ends_no_constituent_warns():
    """A head led into right state T, which no finish rule takes (nor a state
    T leads to), loses every derivation through it: most likely a typo."""
    text = TABLE_3 + "(_, T) -> (_, S) S\n(_, T2) -> (_, T) S\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Grammar.from_text(text, "w.grammar")
    messages = [str(w.message) for w in caught if issubclass(w.category, GrammarWarning)]
    assert any(re.search(r"^w\.grammar:\d+:\d+: right state 'T' ends no constituent", m) for m in messages)
    assert any("right state 'T2' ends no constituent" in m for m in messages)


def test_shipped_grammars_have_no_warnings():
    for path in data_dir("grammars").iterdir():
        if path.name.endswith(".grammar"):
            with warnings.catch_warnings():
                warnings.simplefilter("error", GrammarWarning)
                Grammar.from_text(path.read_text(), path.name)


@pytest.mark.skipif(not os.environ.get("CI"), reason="development checkouts read grammars/ directly")
def test_grammars_are_package_data_of_the_installed_package():
    shipped = importlib.resources.files("semiparse.grammars")
    names = {p.name for p in shipped.iterdir()}
    assert {"projective.grammar", "arc_standard.grammar"} <= names
    assert "site-packages" in str(shipped)

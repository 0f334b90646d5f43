"""Constituency: PTB trees, top-down / in-order systems, exact oracles against
exhaustive search, evalb scoring, the commands."""
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.cli._constituent_check import run as run_check
from semiparse.transitions.constituent.oracle import Gold, oracle
from semiparse.treebank.evalb import Scores, brackets, evaluate, score
from semiparse.transitions.constituent.exhaustive import Search
from semiparse.transitions.constituent.systems import FINISH, NT, REDUCE, SHIFT, Done, system
from semiparse.treebank.brackets import (
    Tree,
    TreeError,
    constituents,
    from_constituents,
    indexed_constituents,
    read_ptb,
    strip_function_tags,
    tree,
    write_ptb,
)
from semiparse.testing import constituent_checking as checking

FIGURE1 = "(S (NP (DT The) (NN public)) (VP (VBZ is) (ADVP (RB still)) (ADJP (JJ cautious))) (. .))"


@pytest.fixture(scope="module")
def ptb(shared_data):
    return read_ptb(shared_data / "ptb" / "wsj_sample_combined.mrg")


@pytest.fixture
def ptb_read_once(ptb, monkeypatch):
    """The constituent check reads the PTB sample for its gold trees at each
    call (2 to 5 s): here it gets this module's copy of the same file
    (test_ptb_sample_is_read_and_cleaned checks the reading)."""
    read = checking.ptb_trees
    monkeypatch.setattr(checking, "ptb_trees", lambda path=None: ptb if path is None else read(path))


# ---------------------------------------------------------------- trees

def test_ptb_sample_is_read_and_cleaned(ptb):
    assert len(ptb) == 3914 and not ptb.skipped
    assert str(ptb[0]).startswith("(S (NP (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP")
    labels = {x for t in ptb for x, _, _ in constituents(t)}
    assert not any("-" in x[1:] or "=" in x for x in labels), "function tags left"
    tags = {tag for t in ptb for tag, _ in t.leaves()}
    assert "-NONE-" not in tags and "-LRB-" in tags


def test_raw_reading_keeps_traces_and_tags(shared_data):
    raw = read_ptb(shared_data / "ptb" / "wsj_sample_combined.mrg",
                   remove_traces=False, strip_tags=False, drop_outer=False)
    assert raw[0].label == "" and raw[0].children[0].children[0].label == "NP-SBJ"
    assert any(tag == "-NONE-" for t in raw[:10] for tag, _ in t.leaves())


@pytest.mark.parametrize("label, base", [
    ("NP-SBJ", "NP"), ("NP-SBJ-1", "NP"), ("PP-LOC=2", "PP"), ("NP=3", "NP"),
    ("-NONE-", "-NONE-"), ("-LRB-", "-LRB-"), ("ADVP|PRT", "ADVP|PRT"), ("S", "S")])
def test_strip_function_tags(label, base):
    assert strip_function_tags(label) == base


def test_round_trip_of_the_sample(ptb, shared_data, tmp_path):
    out = tmp_path / "out.mrg"
    write_ptb(ptb, out)
    assert list(read_ptb(out)) == list(ptb)
    raw = read_ptb(shared_data / "ptb" / "wsj_sample_combined.mrg",
                   remove_traces=False, strip_tags=False, drop_outer=False)
    write_ptb(raw, out)
    again = read_ptb(out, remove_traces=False, strip_tags=False, drop_outer=False)
    assert list(again) == list(raw)


@settings(max_examples=40)
@given(checking.random_trees(7))
def test_round_trip_random(t):
    assert tree(str(t)) == t
    built = list(reversed(constituents(t)))  # inner before outer: a build order
    assert from_constituents(built, t.leaves()) == t


def test_constituent_set_of_figure_1():
    t = tree(FIGURE1)
    assert set(constituents(t)) == {("S", 0, 6), ("NP", 0, 2), ("VP", 2, 5), ("ADVP", 3, 4), ("ADJP", 4, 5)}
    repeated = tree("(NP (NP (NP (NN a)) (NN b)))")
    assert indexed_constituents(repeated) == [("NP", 0, 2, 0), ("NP", 0, 2, 1), ("NP", 0, 1, 0)]


BAD = """( (S (NP (DT a)) (VP (VB b))) )
( (S (NP (DT a) (VP (VB b))) )
( (S (NP (-NONE- *)) ) )
)
()
( (S (NP (DT a)) (VP (VB b))) )
junk
( (S (NP (DT a)) (VP (VB b) (NN x y))) )
( (S (NP (DT a
"""


def test_a_close_bracket_after_a_tree_on_its_line_makes_that_tree_bad(tmp_path, capsys):
    """``(S (NN a)))`` was kept as a good tree plus a skipped ')': with
    --on-error skip the counts then matched a file missing a tree, and evalb
    paired the trees out of step (F1 100 against the wrong gold trees)."""
    path = tmp_path / "t.mrg"
    path.write_text("(S (NP (NN a)) (VP (V b)))))\n(S (Z (NN a)) (W (V b)))\n")
    tb = read_ptb(path, on_error="skip")
    assert [t.to_string() for t in tb] == ["(S (Z (NN a)) (W (V b)))"]
    assert [str(e) for e in tb.skipped] == [f"{path}:1: unbalanced brackets: ')' at line 1 after the "
                                            f"tree closed"]
    gold = tmp_path / "g.mrg"
    gold.write_text("(S (NP (NN a)) (VP (V b)))\n(S (X (NN a)) (Y (V b)))\n(S (Z (NN a)) (W (V b)))\n")
    assert main(["evalb", "--on-error", "skip", str(gold), str(path)]) == 2
    assert "has no partner" in capsys.readouterr().err


def test_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.mrg"
    path.write_text(BAD)
    with pytest.raises(TreeError, match=r"bad\.mrg:2: unbalanced brackets"):
        read_ptb(path)
    tb = read_ptb(path, on_error="skip")
    assert len(tb) == 2
    reasons = [str(e).split(": ", 1)[1] for e in tb.skipped]
    assert [e.line for e in tb.skipped] == [2, 3, 4, 5, 7, 8, 9]
    assert reasons[1].startswith("empty tree") and reasons[3] == "empty tree '()'"
    assert "outside any tree" in reasons[4] and "end of file" in reasons[6]
    with pytest.raises(ValueError, match="on_error"):
        read_ptb(path, on_error="ignore")


# ---------------------------------------------------------------- systems

def test_figures_3_and_5():
    t = tree(FIGURE1)
    td = " ".join(map(str, system("top_down").static_oracle(t)))
    assert td == "NT-S NT-NP SH SH RE NT-VP SH NT-ADVP SH RE NT-ADJP SH RE RE SH RE"
    io = " ".join(map(str, system("in_order").static_oracle(t)))
    assert io == "SH NT-NP SH RE NT-S SH NT-VP SH NT-ADVP RE SH NT-ADJP RE RE SH RE FI"


@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_static_oracle_rebuilds_every_ptb_tree(ptb, name):
    s = system(name)
    for t in ptb:
        c = s.run(s.static_oracle(t), len(t))
        assert s.tree(c, t.leaves()) == t


def test_legality():
    td, io = system("top_down"), system("in_order")
    c = td.initial(2)
    assert td.legal(c) == [NT(None)]
    c = td.apply(c, NT("S"))
    assert not td.is_legal(c, REDUCE)  # empty constituent
    c = td.apply(c, SHIFT)
    assert not td.is_legal(c, REDUCE)  # root closed before the end
    with pytest.raises(ValueError, match="not legal"):
        td.apply(c, REDUCE)
    c = io.apply(io.initial(2), SHIFT)
    assert io.legal(c) == [NT(None)]  # a second parentless node could never attach
    c = io.apply(io.apply(c, NT("X")), REDUCE)
    assert c.stack == (Done(0, 1, "X"),) and not io.is_legal(c, FINISH)
    with pytest.raises(ValueError, match="unknown transition system"):
        system("bottom_up")


# ---------------------------------------------------------------- oracles

@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_static_path_has_zero_loss(ptb, name):
    s, o = system(name), oracle(name)
    for t in ptb[:60]:
        gold = Gold(t)
        c = s.initial(gold.n)
        for step in s.static_oracle(t):
            assert o.loss(c, gold) == 0
            assert step in o.optimal(c, gold)
            c = s.apply(c, step)
        assert o.loss(c, gold) == 0


@pytest.mark.parametrize("name", ["top_down", "in_order"])
@settings(max_examples=150)
@given(checking.random_trees(6), st.lists(st.tuples(st.booleans(), st.integers(0, 50)), max_size=30))
def test_oracle_equals_exhaustive_on_random_trees(name, t, choices):
    checking.check_walk(name, t, choices)


@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_oracle_equals_exhaustive_on_ptb_windows(ptb, name):
    step = st.tuples(st.integers(0, 3).map(bool), st.integers(0, 50))

    @settings(max_examples=100)
    @given(checking.gold_trees(7, ptb), st.lists(step, max_size=36))
    def check(t, choices):
        checking.check_walk(name, t, choices)

    check()


def test_paper_formula_counterexamples_are_handled():
    # in-order: NT-X above a non-gold first child still gives the gold span
    t = tree("(X (T a) (T b) (T c))")
    s, o = system("in_order"), oracle("in_order")
    c = s.run([SHIFT, NT("Z"), SHIFT, REDUCE, NT("X")], 3)
    assert o.loss(c, t) == 1 == Search("in_order", t).loss(c)
    # top-down: the inner of two gold NTs at one position pushed first
    t = tree("(A (B (T a) (T b)) (T c))")
    s, o = system("top_down"), oracle("top_down")
    c = s.run([NT("B")], 3)
    assert o.loss(c, t) == 1 == Search("top_down", t).loss(c)
    # a unary chain's order does not matter to the multiset loss
    t = tree("(A (B (A (T a) (T b))))")
    c = s.run([NT("A"), NT("A"), NT("B")], 2)
    assert o.loss(c, t) == 0 == Search("top_down", t).loss(c)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_exhaustive_search_against_plain_enumeration(name):
    s = system(name)
    for text in ["(A (T a))", "(A (B (T a)) (T b))", "(A (A (T a) (T b)))", "(B (T a) (C (T b)))"]:
        t = tree(text)
        gold = Gold(t)
        search = Search(name, gold)
        # every configuration reachable in up to 3 steps with any labels
        frontier = [s.initial(gold.n)]
        for _ in range(3):
            nxt = []
            for c in frontier:
                for u in s.legal(c):
                    for v in ([NT(x) for x in gold.labels + ["?"]] if u.kind == "NT" else [u]):
                        nxt.append(s.apply(c, v))
            frontier = nxt
            for c in frontier:
                truth = search.loss(c)
                s2 = _brute_from(name, c, gold, 2)
                assert truth == s2, (text, str(c))


def _brute_from(name, c0, gold, extra):
    """Minimum loss over every sequence from ``c0`` pushing at most
    ``len(gold) + extra`` NTs (plain enumeration, no memo, no pruning).

    ``c0`` is validated once; the configurations the walk reaches from it are
    the system's own, so it takes the system's trusted steps (``_terminal``,
    ``_legal_all``, ``_step``: what ``is_final``, ``legal`` and ``apply`` do
    after validating), which give the same transitions and configurations
    at a fifth of the cost (validation was four fifths of it)."""
    s = system(name)
    nts_of = [NT(x) for x in gold.labels + ["?"]]
    limit = len(gold) + extra
    best = float("inf")

    def walk(c, nts):
        nonlocal best
        if s._terminal(c):
            built = Counter(c.built)
            best = min(best, sum(((built - gold.counts) + (gold.counts - built)).values()))
            return
        for u in s._legal_all(c):
            if u.kind == "NT":
                if nts < limit:
                    for t in nts_of:
                        walk(s._step(c, t), nts + 1)
            else:
                walk(s._step(c, u), nts)

    c0 = s.validate(c0)
    walk(c0, 0)
    return best


def test_checker_reports_a_broken_oracle(monkeypatch, capsys, ptb_read_once):
    class Broken(type(oracle("in_order"))):
        def _terms(self, c, gold):
            terms = super()._terms(c, gold)
            return terms._replace(erroneous=terms.erroneous + (c.i == 1))

    monkeypatch.setattr("semiparse.testing.checking.make_oracle", lambda name: Broken(name))
    assert run_check("in_order", examples=30, max_n=3, seed=1) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "gold tree:" in out and "configuration:" in out


def test_checker_run_passes(capsys, ptb_read_once):
    assert run_check("top_down", examples=15, max_n=4, seed=3) == 0
    assert "oracle == exhaustive search on 15 examples" in capsys.readouterr().out


def test_the_check_returns_a_check_result(monkeypatch, ptb_read_once):
    from semiparse.testing.checking import OracleMismatch
    from semiparse.testing.constituent_checking import check

    result = check("in_order", examples=10, max_n=3, seed=2)
    assert result.ok and result.calls == 10 and result.configurations >= 10
    assert (result.system, result.strategy, result.method) == ("in_order", "none", "lis")

    class Broken(type(oracle("in_order"))):
        def _terms(self, c, gold):
            terms = super()._terms(c, gold)
            return terms._replace(erroneous=terms.erroneous + (c.i == 1))

    monkeypatch.setattr("semiparse.testing.checking.make_oracle", Broken)
    result = check("in_order", examples=30, max_n=3, seed=1)
    assert not result.ok and isinstance(result.mismatch, OracleMismatch)
    assert "gold tree:" in result.mismatch.describe(result.method)


def test_one_family_and_one_entry_point_with_the_dependency_systems():
    import semiparse
    from semiparse.transitions.oracles.protocol import DynamicOracle, ExhaustiveSearch, GoldTree

    t = tree("(A (T a) (T b))")
    for name in ("top_down", "in_order"):
        assert semiparse.system(name).name == name and semiparse.system(name).initial(2).n == 2
        assert isinstance(semiparse.oracle(name), DynamicOracle)
        assert isinstance(Search(name, t), ExhaustiveSearch) and isinstance(Gold(t), GoldTree)


def test_oracle_api_errors():
    o = oracle("top_down")
    with pytest.raises(ValueError, match="words"):
        o.loss(system("top_down").initial(3), tree("(A (T a))"))
    with pytest.raises(ValueError, match="chain"):
        oracle("top_down", chain="fast")


# ---------------------------------------------------------------- evaluation

def test_evalb_conventions():
    gold = tree("(S (NP (DT the) (NN dog)) (VP (VBD barked) (ADVP (RB away))) (. .))")
    test = tree("(S (NP (DT the)) (VP (NN dog) (VBD barked) (PRT (RB away))) (. .))")
    assert brackets(gold)[("S", 0, 5)] == 1
    assert brackets(gold, [True] * 4 + [False])[("S", 0, 4)] == 1  # '.' deleted
    s = score(gold, test)
    # gold: S NP VP ADVP; test: S NP(0,1) VP(1,4) ADVP(=PRT)
    assert s == Scores(matched=2, gold=4, test=4)
    assert s.f1 == pytest.approx(0.5)
    assert evaluate([gold, gold], [test, gold]) == Scores(6, 8, 8)
    with pytest.raises(ValueError, match="yield mismatch"):
        score(gold, tree("(S (NN cat) (. .))"))


@settings(max_examples=30)
@given(checking.random_trees(6), checking.random_trees(6))
def test_evalb_against_direct_count(a, b):
    if len(a) != len(b):
        return
    s = score(a, b)
    ga, gb = Counter(constituents(a)), Counter(constituents(b))
    assert s.matched == sum((ga & gb).values()) and s.gold == len(constituents(a))
    assert 0 <= s.precision <= 1 and (s.f1 == 1) == (ga == gb)


# ---------------------------------------------------------------- commands

def test_commands(shared_data, tmp_path, capsys):
    sample = shared_data / "ptb" / "wsj_sample_combined.mrg"
    out = tmp_path / "clean.mrg"
    assert main(["ptb-convert", str(sample), "-o", str(out)]) == 0
    assert "3914 trees written, 0 skipped" in capsys.readouterr().err
    assert main(["evalb", str(out), str(sample)]) == 0
    assert "F1 100.00" in capsys.readouterr().out
    bad = tmp_path / "bad.mrg"
    bad.write_text(BAD)
    assert main(["ptb-convert", str(bad), "-o", str(tmp_path / "x.mrg")]) == 2
    assert "bad.mrg:2: unbalanced brackets" in capsys.readouterr().err
    assert main(["ptb-convert", str(bad), "--on-error", "skip", "-o", str(tmp_path / "x.mrg")]) == 0
    assert "2 trees written, 7 skipped" in capsys.readouterr().err
    gold = tmp_path / "gold.mrg"
    gold.write_text("(S (NN a) (NN b))\n(S (NN c))\n")
    test = tmp_path / "test.mrg"
    test.write_text("(S (NN a) (NN b))\n(S (NN d))\n")
    assert main(["evalb", str(gold), str(test)]) == 2
    assert "test.mrg:2: yield mismatch" in capsys.readouterr().err
    assert main(["evalb", str(gold), str(test), "--on-error", "skip"]) == 0
    assert "1 scored, 1 skipped" in capsys.readouterr().out


@pytest.mark.parametrize("text, kept, options", [
    ("(NN dog)", "( (NN dog) )", []),
    ("( (-NONE- *) )", "( (-NONE- *) )", ["--keep-traces"]),
    ("( (S (NN a)) (S (NN b)) )", "( (S (NN a)) (S (NN b)) )", []),
])
def test_ptb_convert_is_idempotent_on_an_outer_bracket_it_keeps(tmp_path, capsys, text, kept, options):
    """The outer bracket stays over one word (the systems need a phrasal root) and over
    several roots: written as PTB writes it, not counted by evalb, dropped by --no-outer
    where it holds one node."""
    source, once, twice = tmp_path / "in.mrg", tmp_path / "once.mrg", tmp_path / "twice.mrg"
    source.write_text(text + "\n")
    assert main(["ptb-convert", *options, str(source), "-o", str(once)]) == 0
    assert main(["ptb-convert", *options, str(once), "-o", str(twice)]) == 0
    assert once.read_text() == twice.read_text() == kept + "\n"
    assert main(["ptb-convert", "--no-outer", *options, str(once)]) == 0
    assert capsys.readouterr().out == (kept if text.count("(S") > 1 else kept[2:-2]) + "\n"
    if not options:  # evalb removes traces
        assert main(["evalb", str(source), str(once)]) == 0
        assert "brackets: gold {0}, test {0}, matched {0}".format(text.count("(S")) in capsys.readouterr().out


def test_top_is_the_outer_bracket(tmp_path, capsys):
    """COLLINS.prm has DELETE_LABEL TOP: evalb does not count it, ptb-convert reads it
    as PTB's outer bracket."""
    gold, test = tmp_path / "gold.mrg", tmp_path / "test.mrg"
    gold.write_text("(TOP (S (NP (DT the) (NN dog)) (VP (VBD ran))))\n(TOP (NN dog))\n")
    test.write_text("( (S (NP (DT the) (NN dog)) (VP (VBD ran))) )\n(NN dog)\n")
    assert main(["evalb", str(gold), str(test)]) == 0
    assert "brackets: gold 3, test 3, matched 3" in capsys.readouterr().out
    assert main(["ptb-convert", str(gold)]) == 0
    assert capsys.readouterr().out == "( (S (NP (DT the) (NN dog)) (VP (VBD ran))) )\n( (NN dog) )\n"
    assert brackets(tree("(S (TOP (NN a)) (ROOT (NN b)))")) == Counter({("S", 0, 2): 1, ("ROOT", 1, 2): 1})


def test_evalb_refuses_a_file_without_trees(tmp_path, capsys):
    """Two empty files scored 0 with exit status 0."""
    empty, one = tmp_path / "empty.mrg", tmp_path / "one.mrg"
    empty.write_text("\n")
    one.write_text("(S (NN a))\n")
    for gold, test in ((empty, empty), (one, empty), (empty, one)):
        assert main(["evalb", str(gold), str(test)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"semiparse evalb: error: {empty}:1: no trees\n"


def test_tree_api_errors(tmp_path):
    leaves = [("T", "a"), ("T", "b"), ("T", "c")]
    with pytest.raises(ValueError, match="cross"):
        from_constituents([("A", 0, 2), ("B", 1, 3), ("S", 0, 3)], leaves)
    with pytest.raises(ValueError, match="single rooted tree"):
        from_constituents([("A", 0, 1)], leaves)
    changed = Tree("S", [Tree("NN", ["a"])])
    changed.children[0].children[0] = "a b"  # a word Tree("NN", ["a b"]) refuses
    with pytest.raises(ValueError, match="cannot write"):
        write_ptb([changed], tmp_path / "x.mrg")
    assert not (tmp_path / "x.mrg").exists()
    with pytest.raises(ValueError, match="no phrasal node"):
        system("in_order").static_oracle(tree("(NN a)"))
    s = system("top_down")
    done = s.run(s.static_oracle(tree("(S (A a) (B b))")), 2)
    for leaves in (["a", "b"], [("A", 1), ("B", "b")], ["ab", "cd"], "ab"):  # IndexError, AttributeError,
        with pytest.raises(ValueError, match="leaves must be a list of"):  # or a tree of letters
            s.tree(done, leaves)
    for name in ("top_down", "in_order"):  # the dynamic oracle said loss 0 (the search: 1)
        for query in ("loss", "optimal", "breakdown"):
            with pytest.raises(ValueError, match=r"tree \(S a\) has no phrasal node"):
                getattr(oracle(name), query)(system(name).initial(1), tree("(S a)"))
    with pytest.raises(ValueError, match="one bracketed tree"):
        tree("(A (T a)) (B (T b))")


# ---------------------------------------------------------------- one family

def test_the_registry_lists_and_gives_the_constituent_systems():
    import semiparse
    from semiparse.transitions import SystemProtocol, available_systems, load_system

    assert {"top_down", "in_order"} <= set(available_systems())
    assert available_systems("constituent") == ["in_order", "top_down"]
    assert "arc_standard" in available_systems("dependency")
    assert not set(available_systems("dependency")) & {"top_down", "in_order"}
    for name in ("top_down", "in_order", "arc_hybrid"):
        s = semiparse.system(name)
        assert isinstance(s, SystemProtocol) and s.name == name
        assert s.kind == ("dependency" if name == "arc_hybrid" else "constituent")
        c = s.initial(2)
        steps = iter(s.static_oracle(tree("(A (T a) (T b))")) if s.kind == "constituent" else ())
        while not s.is_final(c):
            assert s.validate(c) == c
            t = next(steps) if s.kind == "constituent" else s.legal(c)[0]
            assert t in s.legal(c) or NT(None) in s.legal(c)
            c = s.apply(c, t)
    assert load_system("top_down").kind == "constituent"


def test_the_dependency_system_refuses_another_system_s_configuration():
    import semiparse

    c = semiparse.system("arc_hybrid").initial(2)
    with pytest.raises(ValueError, match="belongs to transition system 'arc_hybrid'"):
        semiparse.system("arc_standard").legal(c)
    with pytest.raises(ValueError, match="expected a Configuration"):
        semiparse.system("arc_standard").is_final(("stack", "buffer"))


@settings(max_examples=60, deadline=None)
@given(t=checking.random_trees(max_n=4), steps=st.lists(st.integers(0, 20), max_size=12),
       name=st.sampled_from(["top_down", "in_order"]))
def test_constituent_scores_have_the_optimal_transitions_as_their_best(t, steps, name):
    from semiparse.transitions import best_of

    s, o = system(name), oracle(name)
    gold = Gold(t)
    c = s.initial(gold.n)
    for k in steps:
        if s.is_final(c):
            assert o.scores(c, gold) == {}
            break
        scores = o.scores(c, gold)
        assert best_of(scores) == set(o.optimal(c, gold))
        assert max(scores.values()) == -o.loss(c, gold)
        for u, value in scores.items():
            if u.kind == "NT" and u.label is None:
                continue
            assert value == -o.loss(s.apply(c, u), gold)
        c = s.apply(c, sorted(u for u in scores if u.label is not None or u.kind != "NT")[k % len(
            [u for u in scores if u.label is not None or u.kind != "NT"])])


def test_is_terminal_is_a_deprecated_name_of_is_final():
    s = system("in_order")
    c = s.run([SHIFT, NT("A"), REDUCE, FINISH], 1)
    with pytest.warns(DeprecationWarning, match="is_terminal is is_final"):
        assert s.is_terminal(c) is True
    assert s.is_final(c) is True


def test_register_system_takes_a_constituent_system_with_its_oracle():
    import semiparse
    from semiparse.transitions import register_system
    from semiparse.transitions.constituent.oracle import oracle_of
    from semiparse.transitions.constituent.systems import TopDown
    from semiparse.transitions.systems import registry

    class Mine(TopDown):
        name = "my_top_down"

    with pytest.raises(ValueError, match="needs the maker of its oracle"):
        register_system(Mine())
    with pytest.raises(ValueError, match="TransitionSystem or SystemProtocol"):
        register_system(object())
    try:
        register_system(Mine(), oracle_of)
        assert semiparse.system("my_top_down").name == "my_top_down"
        assert semiparse.oracle("my_top_down").name == "my_top_down"
    finally:
        registry._SYSTEMS.pop("my_top_down", None)
        registry._ORACLES.pop("my_top_down", None)
    with pytest.raises(ValueError, match="no oracle is registered"):
        semiparse.oracle(Mine())

"""Bracketed trees and constituency configurations under bad input: bytes
that are not UTF-8, any line ending, trees nested thousands deep, invalid
configurations, and byte-level mutations of real PTB trees.

Every file is written under pytest's tmp_path.
"""
import contextlib
import functools
import inspect
import io
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semiparse import cli
from semiparse.cli import main
from semiparse.constituency import (
    FINISH,
    NT,
    SHIFT,
    Configuration,
    Gold,
    Transition,
    Tree,
    TreeError,
    constituents,
    oracle,
    read_ptb,
    score,
    system,
    tree,
    write_ptb,
)
from semiparse.transitions.constituent.exhaustive import Search, min_loss
from semiparse.transitions.constituent.systems import Done, Open

from support import mutated

GOOD = "(S (NP (DT the) (NN dog)) (VP (VBD ran)))"
LATIN1 = "(S (NP (NN caf\xe9)) (VP (VBD ran)))".encode("latin-1")
ERROR_LINE = re.compile(r"semiparse (ptb-convert|evalb): error: (.+):(\d+): (.+)")


def run(*argv):
    """``(status, stdout, stderr)`` of ``semiparse ARGV`` run in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def one_error_line(err):
    """The ``(file, line, reason)`` of a one-line CLI error (asserts the form)."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    match = ERROR_LINE.fullmatch(lines[0])
    assert match, lines[0]
    return match.group(2), int(match.group(3)), match.group(4)


def latin1_file(tmp_path, newline=b"\n"):
    """Good tree (line 1), Latin-1 tree (line 2), good tree (line 3)."""
    path = tmp_path / "latin1.mrg"
    path.write_bytes(newline.join([GOOD.encode(), LATIN1, GOOD.encode(), b""]))
    return path


# -- 1. bytes that are not UTF-8 -------------------------------------------------

@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_invalid_utf8_is_a_file_line_error(tmp_path, newline):
    path = latin1_file(tmp_path, newline)
    with pytest.raises(TreeError, match=r"latin1\.mrg:2: not valid UTF-8 \(invalid continuation "
                       r"byte at byte 14\)") as info:
        read_ptb(path)
    assert info.value.line == 2


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_skip_drops_only_the_tree_with_invalid_utf8(tmp_path, newline):
    path = latin1_file(tmp_path, newline)
    bank = read_ptb(path, on_error="skip")
    assert [str(t) for t in bank] == [GOOD, GOOD]
    assert [(e.line, e.reason[:19]) for e in bank.skipped] == [(2, "not valid UTF-8 (in")]


def test_invalid_utf8_outside_a_tree_is_one_error(tmp_path):
    path = tmp_path / "outside.mrg"
    path.write_bytes(GOOD.encode() + b"\n\xff\xfe\n" + GOOD.encode() + b"\n")
    bank = read_ptb(path, on_error="skip")
    assert len(bank) == 2 and [e.line for e in bank.skipped] == [2]
    assert bank.skipped[0].reason.startswith("not valid UTF-8")


def test_ptb_convert_skips_a_tree_with_invalid_utf8(tmp_path):
    path, out = latin1_file(tmp_path), tmp_path / "out.mrg"
    status, _, err = run("ptb-convert", path, "-o", out, "--on-error", "skip")
    assert status == 0
    assert out.read_text() == f"( {GOOD} )\n" * 2
    assert f"{path}:2: not valid UTF-8" in err and "2 trees written, 1 skipped" in err


def test_ptb_convert_and_evalb_fail_on_invalid_utf8_with_file_line(tmp_path):
    path, good = latin1_file(tmp_path), tmp_path / "good.mrg"
    good.write_text(f"{GOOD}\n{GOOD}\n{GOOD}\n")
    status, _, err = run("ptb-convert", path, "-o", tmp_path / "out.mrg")
    assert status == 2 and one_error_line(err)[:2] == (str(path), 2)
    status, _, err = run("evalb", good, path)
    assert status == 2 and one_error_line(err)[:2] == (str(path), 2)
    status, out, err = run("evalb", good, path, "--on-error", "skip")
    assert status == 0 and "2 scored, 1 skipped" in out


def test_a_byte_order_mark_at_the_start_is_dropped(tmp_path):
    path, out = tmp_path / "bom.mrg", tmp_path / "out.mrg"
    path.write_bytes(b"\xef\xbb\xbf" + f"{GOOD}\n{GOOD}\n".encode())
    assert run("ptb-convert", path, "-o", out) == (0, "", "ptb-convert: 2 trees written, 0 skipped\n")
    assert out.read_text() == f"( {GOOD} )\n" * 2


def test_ptb_convert_checks_its_output_before_reading(tmp_path):
    path = tmp_path / "in.mrg"
    path.write_text(f"{GOOD}\n")
    status, _, err = run("ptb-convert", path, "-o", path)
    assert status == 2 and "is also an input" in err
    assert path.read_text() == f"{GOOD}\n"
    status, _, err = run("ptb-convert", tmp_path / "missing.mrg", "-o", tmp_path / "no" / "out.mrg")
    assert status == 2 and "does not exist" in err and "missing.mrg" not in err


def test_evalb_tree_count_mismatch_names_file_and_line(tmp_path):
    gold, test = tmp_path / "gold.mrg", tmp_path / "test.mrg"
    gold.write_text(f"{GOOD}\n{GOOD}\n")
    test.write_text(f"{GOOD}\n\n{GOOD}\n{GOOD}\n")
    status, _, err = run("evalb", gold, test)
    assert status == 2
    assert one_error_line(err) == (str(test), 4, f"tree 3 has no partner: {test} has 3 trees, "
                                   f"but {gold} has 2")
    status, _, err = run("evalb", test, gold)
    assert status == 2 and one_error_line(err)[:2] == (str(test), 4)


# -- 2. trees of any depth ---------------------------------------------------------

def deep(depth, label="S"):
    return f"({label} " * depth + "(NN x)" + ")" * depth


@pytest.mark.parametrize("depth", [500, 5000])
def test_deep_trees_through_the_api(tmp_path, depth):
    text = deep(depth)
    t = tree(text)
    assert str(t) == text and t == tree(text) and t != tree(deep(depth, "NP"))
    assert hash(t) == hash(tree(text)) and len(t) == 1
    assert constituents(t) == [("S", 0, 1)] * depth
    path = tmp_path / "deep.mrg"
    path.write_text(f"( {deep(depth, 'S-SBJ')} )\n" + "(S (-NONE- *) " * depth + "(NN y)"
                    + ")" * depth + "\n")
    first, second = read_ptb(path)
    assert first == t and constituents(second) == [("S", 0, 1)] * depth
    write_ptb([first], tmp_path / "out.mrg")
    assert read_ptb(tmp_path / "out.mrg")[0] == t
    assert score(t, t) == (depth, depth, depth)
    for name in ("top_down", "in_order"):
        s = system(name)
        transitions = s.static_oracle(t)
        assert len(transitions) == 2 * depth + 1 + (name == "in_order")
        assert s.tree(s.run(transitions, 1), t.leaves()) == t
        assert oracle(name).loss(s.initial(1), t) == 0


@pytest.mark.parametrize("depth", [500, 5000])
def test_deep_trees_through_the_cli(tmp_path, depth):
    path, out = tmp_path / "deep.mrg", tmp_path / "out.mrg"
    path.write_text(f"( {deep(depth)} )\n{deep(depth, 'NP')}\n")
    status, _, err = run("ptb-convert", path, "-o", out)
    assert status == 0, err
    assert out.read_text() == f"( {deep(depth)} )\n( {deep(depth, 'NP')} )\n"
    status, report, err = run("evalb", path, out)
    assert status == 0, err
    assert f"brackets: gold {2 * depth}, test {2 * depth}, matched {2 * depth}" in report
    assert "F1 100.00" in report


def test_exhaustive_search_on_a_deep_chain():
    t = tree(deep(500))
    for name in ("top_down", "in_order"):
        assert min_loss(name, system(name).initial(1), t) == 0


@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_exhaustive_search_keeps_its_own_stack(name):
    """A chain 500 deep needs about 1000 nested sub-searches; they must not be
    Python frames (the search is quadratic in the depth, so the test uses a
    low recursion limit instead of a chain deeper than the default one)."""
    search = Search(name, tree(deep(500)))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)
    try:
        value = search.future(system(name).initial(1), 0)
    finally:
        sys.setrecursionlimit(limit)
    assert value == 0


# -- 5. configurations are validated ----------------------------------------------

GOLD = tree("(S (NP (DT the) (NN dog)) (VP (VBD ran)))")
TOP_DOWN_OK = Configuration((Open("S", 0, 0), Done(0, 1)), 1, 3)
IN_ORDER_OK = Configuration((Done(0, 1), Open("NP", 1, 0), Done(1, 2)), 2, 3)


def entry_points(name):
    """Every public function taking a configuration, as ``f(c)``."""
    s, o = system(name), oracle(name)
    return {
        "legal": s.legal,
        "is_legal": lambda c: s.is_legal(c, SHIFT),
        "apply": lambda c: s.apply(c, SHIFT),
        "is_final": s.is_final,
        "tree": lambda c: s.tree(c, GOLD.leaves()),
        "validate": s.validate,
        "loss": lambda c: o.loss(c, GOLD),
        "breakdown": lambda c: o.breakdown(c, GOLD),
        "optimal": lambda c: o.optimal(c, GOLD),
        "scores": lambda c: o.scores(c, GOLD),
        "min_loss": lambda c: min_loss(name, c, GOLD),
    }


BAD = {
    "buffer index above n": (lambda c: c._replace(i=4), r"buffer index i=4 is outside 0\.\.3"),
    "buffer index below 0": (lambda c: c._replace(i=-1), r"buffer index i=-1 is outside"),
    "bool buffer index": (lambda c: c._replace(i=True), r"buffer index i must be an integer, not True"),
    "float buffer index": (lambda c: c._replace(i=1.0), r"must be an integer, not 1\.0"),
    "string n": (lambda c: c._replace(n="3"), r"number of words n must be an integer, not '3'"),
    "no words": (lambda c: c._replace(n=0, i=0, stack=()), r"at least one word"),
    "finished not a bool": (lambda c: c._replace(finished=1), r"finished must be True or False"),
    "not a configuration": (lambda c: tuple(c), r"expected a Configuration, got tuple"),
    "stack not a tuple": (lambda c: c._replace(stack=None), r"must be tuples"),
    "stack item of another type": (lambda c: c._replace(stack=c.stack + ((1, 2),)),
                                   r"expected a Done or an Open item"),
    "gap in the stack": (lambda c: c._replace(stack=c.stack[:-1] + (Done(c.i, c.i + 1),), i=c.i + 1),
                         r"expected a node over words \[\d, r\)"),
    "stack short of the buffer": (lambda c: c._replace(i=c.i + 1), r"the stack covers words 0\.\.\d"),
    "float in a stack item": (lambda c: c._replace(stack=c.stack[:-1] + (Done(0.0, 1),)),
                              r"left end of stack item \d must be an integer"),
    "word over two positions": (lambda c: c._replace(stack=c.stack[:-1] + (Done(c.i - 1, c.i + 1),),
                                                     i=c.i + 1),
                                r"a word \(label None\) spans one position"),
    "constituent never built": (lambda c: c._replace(stack=c.stack[:-1] + (Done(c.i - 1, c.i, "X"),)),
                                r"must be one of the built constituents"),
    "built span beyond the buffer": (lambda c: c._replace(built=(("X", 0, 3),)),
                                     r"built constituent 0 \('X', 0, 3\) is not a span"),
    "built item not a triple": (lambda c: c._replace(built=("X",)), r"expected \(label, l, r\)"),
    "label not a string": (lambda c: c._replace(stack=(Open(7, 0, 0),) + c.stack[1:]),
                           r"the label must be a string"),
}


@pytest.mark.parametrize("name, good", [("top_down", TOP_DOWN_OK), ("in_order", IN_ORDER_OK)])
@pytest.mark.parametrize("problem", sorted(BAD))
def test_every_entry_point_rejects_a_bad_configuration(name, good, problem):
    change, message = BAD[problem]
    bad = change(good)
    if problem == "label not a string" and name == "in_order":
        bad = good._replace(stack=(Done(0, 1), Open(7, 1, 0), Done(1, 2)))
    for entry, f in entry_points(name).items():
        with pytest.raises(ValueError, match=message):
            f(bad)


@pytest.mark.parametrize("name, bad, message", [
    ("top_down", Configuration((Done(0, 1),), 1, 3), r"bottom of a top-down stack"),
    ("top_down", Configuration((), 0, 3, finished=True), r"never 'finished'"),
    ("top_down", Configuration((Open("S", 0, 0), Done(0, 1), Open("S", 0, 0)), 1, 3),
     r"index = start = 1"),
    ("top_down", Configuration((Open("S", 0, 0), Done(0, 1), Done(1, 2), Done(2, 3), Open("S", 3, 3)),
                               3, 3), r"\(< n = 3\)"),
    ("in_order", Configuration((Open("S", 0, 0),), 0, 3), r"follows a finished node"),
    ("in_order", Configuration((Done(0, 1), Open("S", 1, 1)), 1, 3), r"starts where that node starts"),
    ("in_order", Configuration((Done(0, 1), Done(1, 2)), 2, 3), r"at most one finished node"),
    ("in_order", Configuration((Done(0, 1),), 1, 3, finished=True), r"one constituent spanning"),
])
def test_unreachable_shapes_are_rejected(name, bad, message):
    for f in entry_points(name).values():
        with pytest.raises(ValueError, match=message):
            f(bad)


def test_bad_transitions_are_rejected():
    s = system("top_down")
    for t in ("SH", Transition("NT", 3), Transition("NT", "S (X"), None):
        with pytest.raises(ValueError, match="Transition|label"):
            s.apply(TOP_DOWN_OK, t)
    with pytest.raises(ValueError, match="not legal"):
        s.apply(TOP_DOWN_OK, FINISH)


PRETERMINAL = Tree("DT", ["a"])
BAD_CONSTRUCTIONS = {  # what was accepted (or an AttributeError): the ValueError expected
    "Gold(Tree('S', [5]))": (lambda: Gold(Tree("S", [5])),
                             r"child 5 of \(S \.\.\.\) is neither a Tree nor a word"),
    "a label with brackets": (lambda: Tree("S (X", [PRETERMINAL]), r"a tree's label must be a "
                              r"string without spaces or brackets, got 'S \(X'"),
    "a label not a string": (lambda: Tree(5, [PRETERMINAL]), "label must be a string .*got 5"),
    "a string of children": (lambda: Tree("S", "abc"),
                             "must be a list of trees or of one word, got 'abc'"),
    "no children at all": (lambda: Tree("S", None), "must be a list of trees or of one word, got None"),
    "a word with a space": (lambda: Tree("DT", ["a b"]), "word 'a b' of \\(DT .*spaces or brackets"),
    "an empty word": (lambda: Tree("DT", [""]), "word '' of \\(DT .*empty"),
    "two words": (lambda: Tree("S", ["a", "b"]), "mixes words and trees or has several words"),
    "a word beside a tree": (lambda: Tree("S", [PRETERMINAL, "b"]), "mixes words and trees"),
    "an unlabelled preterminal": (lambda: Tree("", ["a"]), "the preterminal of 'a' needs a label"),
    "Gold of a node without children": (lambda: Gold(Tree("S", [PRETERMINAL, Tree("NP", [])])),
                                        r"the node \(NP\) of the tree has no children"),
    "a static oracle of an empty tree": (lambda: system("in_order").static_oracle(Tree("S", [])),
                                         r"the node \(S\) of the tree has no children"),
    "Gold of a number": (lambda: Gold(5), "expected a Tree, got int"),
    "NT('S (X')": (lambda: NT("S (X"), r"the label of NT must be a string without spaces or "
                   r"brackets, got 'S \(X'"),
    "NT of a number": (lambda: NT(3), "the label of NT must be a string .*got 3"),
    "NT of a line break": (lambda: NT("S\n"), "the label of NT must be a string"),
}


@pytest.mark.parametrize("make", BAD_CONSTRUCTIONS)
def test_bad_trees_and_labels_are_refused_when_made(make):
    """Trees, gold trees and NT transitions that bracketed text cannot hold or
    the systems cannot build: a ValueError naming the problem at once, not
    an AttributeError in Gold or a label written as brackets later."""
    function, message = BAD_CONSTRUCTIONS[make]
    with pytest.raises(ValueError, match=message):
        function()


ATOMS = (st.text(st.characters(codec="utf-8"), max_size=4)
         | st.sampled_from(["S", "NP", "-LRB-", "(", "a b"]))


@settings(max_examples=300, deadline=None)
@given(label=ATOMS, tag=ATOMS, word=ATOMS)
def test_a_label_or_word_is_taken_exactly_when_bracketed_text_holds_it(label, tag, word):
    """Taken: a tree that reads back from its bracketed form, and an NT
    transition that builds it; refused: a ValueError when made.  A phrasal
    label may be empty (PTB's outer bracket)."""
    def holds(atom):
        return atom != "" and not any(ch.isspace() or ch in "()" for ch in atom)

    if not ((label == "" or holds(label)) and holds(tag) and holds(word)):
        with pytest.raises(ValueError, match="spaces or brackets|needs a label"):
            Tree(label, [Tree(tag, [word])])
        if label and not holds(label):
            with pytest.raises(ValueError, match="the label of NT"):
                NT(label)
        return
    made = Tree(label, [Tree(tag, [word])])
    assert tree(made.to_string()) == made
    s = system("top_down")
    assert s.run(s.static_oracle(made), 1).built == ((label, 0, 1),)
    assert Gold(made).items == [(label, 0, 1)] and NT(label).label == label


def test_good_trees_and_labels_are_still_taken():
    assert Gold(tree(GOOD)).n == 3 and NT(None).label is None
    outer = Tree("", [tree(GOOD)])  # PTB's outer bracket, an NT that builds it too
    assert outer.to_string() == f"( {GOOD} )" and NT("").label == ""
    assert Gold(outer).items[0] == ("", 0, 3)
    built = Tree("S", [])  # made empty, then given children, as the systems do
    built.children.append(PRETERMINAL)
    assert Gold(built).n == 1


@pytest.mark.parametrize("name, good", [("top_down", TOP_DOWN_OK), ("in_order", IN_ORDER_OK)])
def test_numpy_integers_are_accepted_and_python_ints_returned(name, good):
    numpy_config = good._replace(
        i=np.int64(good.i), n=np.int32(good.n),
        stack=tuple(Done(np.int64(s.l), np.int64(s.r), s.label) if type(s) is Done
                    else Open(s.label, np.int64(s.index), np.int64(s.start)) for s in good.stack))
    o = oracle(name)
    assert system(name).validate(numpy_config) == good
    loss, terms = o.loss(numpy_config, GOLD), o.breakdown(numpy_config, GOLD)
    assert type(loss) is int and all(type(x) is int for x in terms)
    assert loss == o.loss(good, GOLD) == min_loss(name, numpy_config, GOLD)
    assert o.optimal(numpy_config, GOLD) == o.optimal(good, GOLD)
    assert system(name).apply(numpy_config, SHIFT) == system(name).apply(good, SHIFT)


# -- 6. byte-level fuzzing of real PTB trees ------------------------------------------

def ptb_blocks(shared_data, limit=60):
    """The first ``limit`` trees of the PTB sample as raw bytes, one block each."""
    raw = (shared_data / "ptb" / "wsj_sample_combined.mrg").read_bytes()
    blocks = re.split(rb"\n(?=\()", raw)
    return [block + b"\n" for block in blocks[:limit]]


@pytest.fixture(scope="module")
def blocks(shared_data):
    return ptb_blocks(shared_data)


def check_outcome(status, err, files):
    """Success, or status 2 with one line ``semiparse CMD: error: FILE:LINE: reason``."""
    assert status in (0, 2), (status, err)
    if status == 2:
        file, line, _ = one_error_line(err)
        assert file in map(str, files) and line >= 1
    else:
        assert "Traceback" not in err


@pytest.fixture
def parser_built_once(monkeypatch):
    """``cli.main`` builds its argument parser anew at each call, which was
    most (85%) of the time of this fuzzer's calls on a few trees: build it
    once here (as tests/treebank/test_conllu_robust.py does)."""
    monkeypatch.setattr(cli, "build_parser", functools.lru_cache(maxsize=None)(cli.build_parser))


@pytest.mark.slow
def test_fuzz_bracketed_trees(blocks, tmp_path, parser_built_once):
    original = tmp_path / "gold.mrg"
    original.write_bytes(b"".join(blocks[:3]))

    @settings(max_examples=2000, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(blocks), st.sampled_from(["fail", "skip"]))
    def fuzz(data, on_error):
        path, out = tmp_path / "bad.mrg", tmp_path / "out.mrg"
        path.write_bytes(data)
        try:
            read_ptb(path, on_error=on_error)
        except TreeError as exc:
            assert re.fullmatch(rf"{re.escape(str(path))}:\d+: .+", str(exc)) and exc.line >= 1
        status, _, err = run("ptb-convert", path, "-o", out, "--on-error", on_error)
        check_outcome(status, err, [path])
        if status == 0:  # what ptb-convert writes reads back, words unchanged
            written = [t.words() for t in read_ptb(out)]
            assert written == [t.words() for t in read_ptb(path, on_error="skip")]
        status, _, err = run("evalb", original, path, "--on-error", on_error)
        check_outcome(status, err, [original, path])
        status, _, err = run("evalb", path, path, "--on-error", on_error)
        check_outcome(status, err, [path])

    fuzz()

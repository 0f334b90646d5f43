"""CoNLL-U reading/writing: lossless round trips, validation messages, atomic output."""
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from semiparse.heads import is_tree as heads_is_tree
from semiparse.heads import no_crossing
from semiparse.treebank.conllu import (
    ConlluError,
    apply_policy,
    atomic_output,
    read_conllu,
    tree_problems,
)

SAMPLE = (
    "# sent_id = 1\n"
    "# text = Don't go.\n"
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDo\tdo\tAUX\t_\t_\t3\taux\t3:aux\t_\n"
    "2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t3:advmod\t_\n"
    "3\tgo\tgo\tVERB\t_\t_\t0\troot\t0:root\tSpaceAfter=No\n"
    "3.1\tgo\tgo\tVERB\t_\t_\t_\t_\t0:root\tCopyOf=3\n"
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t3:punct\t_\n"
    "\n"
    "# sent_id = 2\n"
    "1\tHi\thi\tINTJ\t_\t_\t0\troot\t0:root\t_\n"
    "\n"
)


def sentences_of(text, **kw):
    return list(read_conllu(io.BytesIO(text.encode()), name="t.conllu", **kw))


@pytest.mark.parametrize("opening", [b"", b"\xef\xbb\xbf", b"\n\n", b"\xef\xbb\xbf\n \n"])
def test_a_byte_order_mark_or_blank_lines_that_open_a_file_hide_no_comment(opening):
    # the first sentence's sent_id was lost after either (count showed _)
    text = b"# sent_id = a\n# text = x\n1\tx\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    first, second = read_conllu(io.BytesIO(opening + text + text.replace(b"= a", b"= b")), name="t")
    blank = opening.count(b"\n")
    assert list(first.comments()) == ["# sent_id = a", "# text = x"]
    assert list(second.comments()) == ["# sent_id = b", "# text = x"]
    assert first.start_line == 1 + blank and first.first_line == 1
    assert second.start_line == second.first_line == 5 + blank
    assert first.tokenlist().metadata["sent_id"] == "a" and first.tokenlist()[0]["form"] == "x"
    assert first.render_bytes() == opening + text   # the bytes as read


def test_reads_words_skipping_ranges_and_empty_nodes():
    first, second = sentences_of(SAMPLE)
    assert first.heads == [-1, 3, 3, 0, 3]
    assert [first.line_of(d) for d in range(1, 5)] == [4, 5, 6, 8]
    assert second.heads == [-1, 0] and second.first_line == 10
    assert first.tokenlist()[1]["form"] == "Do"


def test_round_trip_every_shared_ud_file_is_lossless(ud_files):
    for path in ud_files:
        out = io.StringIO()
        for sentence in read_conllu(path):
            assert sentence.heads is not None, sentence.errors
            out.write(sentence.render(list(sentence.heads)))
        assert out.getvalue().encode("utf-8") == path.read_bytes(), path


def test_render_changes_only_the_head_column_and_mark_undoes():
    text = SAMPLE.replace("\n", "\r\n")  # line endings are kept too
    first = sentences_of(text)[0]
    new = [-1, 3, 1, 0, 3]
    out = first.render(new)
    old_lines, new_lines = first.text().split("\r\n"), out.split("\r\n")
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    assert changed == [4]
    assert new_lines[4].split("\t")[6] == "1"
    assert new_lines[4].split("\t")[:6] == old_lines[4].split("\t")[:6]
    marked = first.render(new, mark=True)
    assert "\tOrigHead=3\r\n" in marked
    back = sentences_of(marked)[0]
    assert back.heads == new
    text_back, heads_back = back.unmarked()
    assert text_back == first.text() and heads_back == first.heads
    marked3 = first.render([-1, 3, 3, 0, 1], mark=True)
    with pytest.raises(ConlluError, match=r"t.conllu:8: MISC already holds OrigHead"):
        sentences_of(marked3)[0].render([-1, 3, 3, 0, 3], mark=True)


def test_mark_appends_to_existing_misc_and_unmark_removes_it():
    first = sentences_of(SAMPLE)[0]
    out = first.render([-1, 3, 3, 4, 0], mark=True)
    assert "\tSpaceAfter=No|OrigHead=0\n" in out and "\tOrigHead=3\n" in out
    text, heads = sentences_of(out)[0].unmarked()
    assert heads == [-1, 3, 3, 0, 3]
    assert text == first.text()


@pytest.mark.parametrize(
    "text",
    [
        "\n\n" + SAMPLE,  # blank lines before the first sentence
        SAMPLE.rstrip("\n"),  # no final newline
        SAMPLE + "\n\n# a comment after the last sentence\n",
        SAMPLE.replace("\n\n# sent_id = 2", "\n\n\n\n# sent_id = 2"),
        "",
    ],
)
def test_odd_layouts_round_trip(text):
    sentences = sentences_of(text)
    assert "".join(s.render(s.heads) for s in sentences) == text
    assert [s.heads for s in sentences if len(s)] == ([[-1, 3, 3, 0, 3], [-1, 0]] if text else [])
    assert all(not s.errors for s in sentences)


def test_streaming_reads_no_further_than_needed():
    consumed = []

    def lines():
        for line in (SAMPLE * 1000).encode().splitlines(keepends=True):
            consumed.append(line)
            yield line

    reader = read_conllu(lines(), name="gen")
    next(reader)
    # the first sentence plus the first line of the next one
    assert len(consumed) == 10


BAD = [
    ("1\tA\ta\tX\t_\t_\t_\tdep\t_\t_\n", 1, r"HEAD of word 1 is '_'"),
    ("1\tA\ta\tX\t_\t_\tx\tdep\t_\t_\n", 1, r"HEAD 'x' of word 1 is not an integer"),
    ("1\tA\ta\tX\t_\t_\t2.5\tdep\t_\t_\n", 1, r"HEAD '2.5' of word 1 is not an integer"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t5\tdep\t_\t_\n", 2, r"HEAD 5 of word 2 is out of range 0..2"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t-1\tdep\t_\t_\n", 2, r"HEAD -1 of word 2 is out of range 0..2"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t2\tdep\t_\t_\n", 2, r"word 2 is headed by itself"),
    (
        "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t3\tdep\t_\t_\n3\tC\tc\tX\t_\t_\t2\tdep\t_\t_\n",
        2,
        r"cycle 2 -> 3 -> 2",
    ),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t0\troot\t_\t_\n", 2, r"2 words attached to 0 \(words 1, 2\)"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\n", 1, r"expected 10 tab-separated columns, found 9"),
    ("2\tA\ta\tX\t_\t_\t0\troot\t_\t_\n", 1, r"word ID 2 out of sequence \(expected 1\)"),
    ("x\tA\ta\tX\t_\t_\t0\troot\t_\t_\n", 1, r"bad ID 'x'"),
]


@pytest.mark.parametrize("body,line,reason", BAD)
def test_bad_trees_report_file_line_reason(body, line, reason):
    text = "# good\n1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n# c\n" + body + "\n"
    good, bad = sentences_of(text)
    assert good.heads == [-1, 0] and not good.errors
    assert bad.heads is None
    with pytest.raises(ConlluError, match=rf"^t\.conllu:{line + 4}: {reason}"):
        list(apply_policy([good, bad], "fail"))
    messages = []
    kept = list(apply_policy([good, bad], "keep", warn=messages.append))
    assert [usable for _, usable in kept] == [True, False]
    assert kept[1][0].render([-1, 0]) == bad.text()  # an unusable tree is copied as is
    assert "sentence copied unchanged" in messages[0]
    skipped = list(apply_policy([good, bad], "skip", warn=messages.append))
    assert [s for s, _ in skipped] == [good]


def test_multiple_roots_can_be_a_warning():
    text = "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t0\troot\t_\t_\n\n"
    (sentence,) = sentences_of(text, multiple_roots="warn")
    assert sentence.heads == [-1, 0, 0]
    messages = []
    assert list(apply_policy([sentence], "fail", warn=messages.append)) == [(sentence, True)]
    assert messages == ["t.conllu:2: warning: 2 words attached to 0 (words 1, 2); UD allows one"]


def test_invalid_utf8_names_the_line():
    data = b"1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n1\t\xff\ta\tX\t_\t_\t0\troot\t_\t_\n"
    with pytest.raises(ConlluError, match=r"^x:3: not valid UTF-8"):
        list(apply_policy(read_conllu(io.BytesIO(data), name="x"), "fail"))


def reaches_zero(heads):
    """Brute force: every word reaches 0 by following heads (any number of
    words on 0)."""
    n = len(heads) - 1
    for d in range(1, n + 1):
        x, steps = d, 0
        while x != 0 and steps <= n:
            if not 0 <= heads[x] <= n or heads[x] == x:
                return False
            x, steps = heads[x], steps + 1
        if x != 0:
            return False
    return True


def is_tree(heads):
    """Brute force: a tree with one word on 0."""
    return reaches_zero(heads) and sum(h == 0 for h in heads[1:]) == 1


@given(st.integers(1, 7).flatmap(lambda n: st.lists(st.integers(-1, n + 1), min_size=n, max_size=n)))
def test_tree_problems_agree_with_brute_force(tail):
    heads = [-1] + tail
    assert (not tree_problems(heads)) == is_tree(heads)


def crosses(heads):
    """Brute force: some two edges cross (one has exactly one end strictly
    inside the other)."""
    edges = [(min(h, d), max(h, d)) for d, h in enumerate(heads) if d]
    return any(a < c < b < e for a, b in edges for c, e in edges)


@given(st.integers(1, 8).flatmap(lambda n: st.lists(st.integers(-1, n + 1), min_size=n, max_size=n)),
       st.sampled_from([None, 2 ** 70, -2 ** 70]))
def test_the_c_tree_checks_agree_with_brute_force(tail, huge):
    heads = [-1] + tail
    if huge is not None:
        heads[-1] = huge   # far out of range: no tree
    assert heads_is_tree(heads) == reaches_zero(heads)
    if reaches_zero(heads):
        assert no_crossing(heads) == (not crosses(heads))


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.conllu"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_output(target) as out:
            out.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.conllu"]
    with atomic_output(target) as out:
        out.write("new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.conllu"]


TWO_WORDS = "1\ta\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n\n"


@pytest.mark.parametrize("heads,message", [
    ([-1, 99, 0], r"head 99 of word 1 is out of range 0\.\.2"),
    ([-1, -1, 0], r"head -1 of word 1 is out of range"),
    ([-1, -5, 0], r"head -5 of word 1 is out of range"),
    ([-1, 0, True], r"heads must be a sequence of integer heads: element 2 is True"),
    ([-1, 2.7, 0], r"element 1 is 2\.7"),
    ([-1, "2", 0], r"element 1 is '2'"),
    ([-1, 2], r"1 heads given for a sentence of 2 words"),
])
def test_render_and_relabeled_refuse_bad_heads(heads, message):
    (sentence,) = sentences_of(TWO_WORDS)
    with pytest.raises(ValueError, match=message):
        sentence.render(heads)
    with pytest.raises(ValueError, match=message):
        sentence.relabeled(heads, [None, "nsubj", "root"])
    with pytest.raises(ValueError, match="heads must be a sequence of integer heads, got NoneType"):
        sentence.relabeled(None, [None, "nsubj", "root"])


def test_numpy_heads_and_a_kept_unknown_head_are_written():
    (sentence,) = sentences_of(TWO_WORDS)
    assert sentence.render([-1, np.int64(0), np.int32(1)]) == sentence.relabeled([-1, 0, 1], sentence.deprels()).decode()
    (partial,) = sentences_of(TWO_WORDS.replace("\t2\tnsubj", "\t_\tnsubj"), partial=True)
    assert partial.heads == [-1, -1, 0]
    assert partial.relabeled([-1, -1, 0], [None, "obj", "root"]) == TWO_WORDS.replace("\t2\tnsubj", "\t_\tobj").encode()
    with pytest.raises(ValueError, match="head -1 of word 2 is out of range"):
        partial.render([-1, -1, -1])


@pytest.mark.parametrize("deprels,message", [
    ([None, "x\n9\tinjected", "root"], r"DEPREL of word 1 must be a non-empty string without tabs"),
    ([None, "a\tb", "root"], r"DEPREL of word 1 must be"),
    ([None, "nsubj", ""], r"DEPREL of word 2 must be .*got ''"),
    ([None, "nsubj", 3], r"DEPREL of word 2 must be .*got 3"),
    ([None, "nsubj"], r"deprels must be a sequence of 3 labels"),
    (None, r"deprels must be a sequence of 3 labels"),
    ("abc", r"deprels must be a sequence of 3 labels"),
])
def test_relabeled_refuses_bad_deprels(deprels, message):
    (sentence,) = sentences_of(TWO_WORDS)
    with pytest.raises(ValueError, match=message):
        sentence.relabeled([-1, 2, 0], deprels)


def test_relabeled_refuses_a_line_break_in_metadata():
    (sentence,) = sentences_of(TWO_WORDS)
    with pytest.raises(ValueError, match="metadata 'k': 'a\\\\nb' holds a line break"):
        sentence.relabeled([-1, 2, 0], [None, "nsubj", "root"], {"k": "a\nb"})
    with pytest.raises(ValueError, match="holds a line break"):
        sentence.relabeled([-1, 2, 0], [None, "nsubj", "root"], {"k\r": "v"})


@pytest.mark.parametrize("word", [0, -1, 3, True, 1.0])
def test_a_word_index_outside_1_to_n_is_refused(word):
    (sentence,) = sentences_of(TWO_WORDS)
    with pytest.raises(ValueError, match=r"word must be an integer 1\.\.2"):
        sentence.columns(word)
    with pytest.raises(ValueError, match=r"word must be an integer 1\.\.2"):
        sentence.line_of(word)
    assert sentence.columns(np.int64(2))[1] == "b" and sentence.line_of(2) == 2


@pytest.mark.parametrize("source,message", [
    (TWO_WORDS.encode(), r"source must be a path, '-', a file object or an iterable of byte strings, "
                         r"got bytes \(for data in memory: io.BytesIO\(data\)\)"),
    (5, "got int"),
    ([TWO_WORDS], "source must give byte strings, got str"),
])
def test_read_conllu_says_what_a_source_may_be(source, message):
    with pytest.raises(ValueError, match=message):
        list(read_conllu(source))
    assert [s.heads for s in read_conllu([TWO_WORDS.encode()[:9], TWO_WORDS.encode()[9:]])] == [[-1, 2, 0]]


def test_partial_on_error_and_multiple_roots_must_be_documented_values():
    with pytest.raises(ValueError, match="partial must be True or False, got 'yes'"):
        sentences_of(TWO_WORDS, partial="yes")
    (sentence,) = sentences_of(TWO_WORDS)
    with pytest.raises(ValueError, match="on_error must be one of fail, skip, keep, not 'bogus'"):
        sentence.unmarked(on_error="bogus")
    with pytest.raises(ValueError, match="partial must be True or False, got 'no'"):
        sentence.unmarked(partial="no")
    with pytest.raises(ValueError, match="multiple_roots must be 'error' or 'warn', not None"):
        sentence.unmarked(multiple_roots=None)
    assert sentence.unmarked() == (TWO_WORDS, [-1, 2, 0])

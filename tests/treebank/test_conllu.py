"""CoNLL-U reading/writing: lossless round trips, validation messages, atomic output."""
import io

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

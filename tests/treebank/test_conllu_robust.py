"""Robust CoNLL-U reading: line endings, invalid UTF-8 and tampered OrigHead
under --on-error, memory that stays flat, and a fuzz test over mutated real
sentences (every outcome is a one-line FILE:LINE error or an output that
differs from the input only in HEAD)."""
import contextlib
import functools
import io
import json
import os
import re
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from semiparse import cli, is_projective
from semiparse.treebank.conllu import (
    ConlluError,
    apply_policy,
    count_sentences,
    read_conllu,
)

# Two non-projective trees (edges 3 -> 1 and 4 -> 2 cross), with comments.
TEXT = (
    "# sent_id = a\n"
    "# text = A B C D\n"
    "1\tA\ta\tX\t_\t_\t3\tdep\t_\t_\n"
    "2\tB\tb\tX\t_\t_\t4\tdep\t_\t_\n"
    "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n"
    "4\tD\td\tX\t_\t_\t3\tdep\t_\tSpaceAfter=No\n"
    "\n"
    "# sent_id = b\n"
    "1-2\tAB\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tA\ta\tX\t_\t_\t3\tdep\t_\t_\n"
    "2\tB\tb\tX\t_\t_\t4\tdep\t_\t_\n"
    "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n"
    "3.1\tC\tc\tX\t_\t_\t_\t_\t3:dep\t_\n"
    "4\tD\td\tX\t_\t_\t3\tdep\t_\t_\n"
    "\n"
)
GOOD = "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\t_\n\n"
ENDINGS = {"lf": ["\n"], "crlf": ["\r\n"], "cr": ["\r"], "mixed": ["\r", "\r\n", "\n"]}


def with_endings(text, kind):
    """``text`` (LF endings) with the line endings of ``kind`` (``mixed``
    cycles through the three kinds line by line; in TEXT no CR ends up
    right before a blank line, where CR + LF would make one CRLF)."""
    cycle = ENDINGS[kind]
    lines = text.split("\n")
    return "".join(line + cycle[i % len(cycle)] for i, line in enumerate(lines[:-1])) + lines[-1]


def run(*argv):
    """``(status, stdout, stderr)`` of ``semiparse ARGV`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main([str(a) for a in argv])
        except SystemExit as exc:  # argparse (--help)
            status = exc.code
    return status, out.getvalue(), err.getvalue()


# Line endings -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cr", "crlf", "mixed"])
def test_line_endings_are_read_and_written_as_read(tmp_path, kind):
    plain, other = tmp_path / "lf.conllu", tmp_path / f"{kind}.conllu"
    plain.write_bytes(TEXT.encode())
    other.write_bytes(with_endings(TEXT, kind).encode())
    want = [(s.first_line, s.word_lines, s.heads) for s in read_conllu(plain)]
    assert [(s.first_line, s.word_lines, s.heads) for s in read_conllu(other)] == want
    assert run("projectivize", plain, "-o", tmp_path / "lf.out")[0] == 0
    assert run("projectivize", other, "-o", tmp_path / "other.out") == (0, "", "")
    expected = with_endings((tmp_path / "lf.out").read_text(), kind).encode()
    assert (tmp_path / "other.out").read_bytes() == expected != other.read_bytes()
    status, out, _ = run("count", other)
    assert status == 0
    assert out.splitlines()[1].split()[1:4] == ["2", "8", "2"]  # sentences, tokens, non-projective
    assert count_sentences(other) == 2  # the progress bar's count ahead


@pytest.mark.parametrize("kind", ["cr", "crlf", "mixed"])
def test_a_line_ending_cut_between_two_reads_is_one_ending(kind):
    data = with_endings(TEXT, kind).encode()
    whole = [(s.first_line, s.word_lines, s.heads, s.raw) for s in read_conllu([data])]
    assert len(whole) == 2
    for cut in range(1, len(data)):
        assert [(s.first_line, s.word_lines, s.heads, s.raw) for s in read_conllu([data[:cut], data[cut:]])] == whole


# --unmark with a tampered OrigHead ----------------------------------------

TAMPERED = [
    # words 2 and 3 would head each other
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\tOrigHead=3\n"
     "3\tC\tc\tX\t_\t_\t1\tdep\t_\tSpaceAfter=No|OrigHead=2\n\n",
     6, r"after restoring OrigHead: cycle 2 -> 3 -> 2 \(each arrow goes from a word to its head\)"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\tOrigHead=2\n\n",
     6, r"after restoring OrigHead: word 2 is headed by itself"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\tOrigHead=9\n\n",
     6, r"bad OrigHead value in MISC 'OrigHead=9'"),
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\tOrigHead=1|OrigHead=1\n\n",
     6, r"OrigHead given 2 times in MISC 'OrigHead=1\|OrigHead=1'"),
    # a second word restored to the root (UD allows one)
    ("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\tSpaceAfter=No|OrigHead=0\n\n",
     6, r"after restoring OrigHead: 2 words attached to 0 \(words 1, 2\); UD allows one"),
]


@pytest.mark.parametrize("bad,line,reason", TAMPERED)
def test_unmark_checks_the_restored_tree_under_on_error(tmp_path, bad, line, reason):
    source = tmp_path / "marked.conllu"
    source.write_text(GOOD + "# c\n" + bad + GOOD)
    out = tmp_path / "out.conllu"
    status, _, err = run("projectivize", "--unmark", source, "-o", out)
    assert status == 2 and not out.exists()
    assert re.fullmatch(rf"semiparse projectivize: error: {re.escape(str(source))}:{line}: {reason}\n", err)
    status, _, err = run("projectivize", "--unmark", "--on-error", "keep", source, "-o", out)
    assert status == 0 and out.read_text() == source.read_text()
    assert re.fullmatch(rf"{re.escape(str(source))}:{line}: {reason} \(sentence copied unchanged\)\n", err)
    status, _, err = run("projectivize", "--unmark", "--on-error", "skip", source, "-o", out)
    assert status == 0 and out.read_text() == GOOD + GOOD
    assert err.endswith("(sentence skipped)\n")


def test_unmark_warns_of_a_second_root_with_multiple_roots_warn(tmp_path):
    source, out = tmp_path / "marked.conllu", tmp_path / "out.conllu"
    source.write_text(GOOD + TAMPERED[-1][0])
    status, _, err = run("projectivize", "--unmark", "--multiple-roots", "warn", source, "-o", out)
    restored = TAMPERED[-1][0].replace("\t1\tdep\t_\tSpaceAfter=No|OrigHead=0", "\t0\tdep\t_\tSpaceAfter=No")
    assert status == 0 and out.read_text() == GOOD + restored
    assert err == f"{source}:5: warning: after restoring OrigHead: 2 words attached to 0 (words 1, 2); UD allows one\n"


def test_unmark_still_restores_good_marks(tmp_path):
    source, marked, back = tmp_path / "in.conllu", tmp_path / "marked.conllu", tmp_path / "back.conllu"
    source.write_bytes(with_endings(TEXT, "mixed").encode())
    assert run("projectivize", "--mark", source, "-o", marked)[0] == 0
    assert run("projectivize", "--unmark", "--on-error", "skip", marked, "-o", back) == (0, "", "")
    assert back.read_bytes() == source.read_bytes()


# Invalid UTF-8 under --on-error --------------------------------------------

BAD_UTF8 = GOOD.encode() + b"# c\n1\tA\xff\ta\tX\t_\t_\t0\troot\t_\t_\n\n" + GOOD.encode()


def test_a_byte_order_mark_inside_a_file_is_named():
    """Two files with a BOM joined: the second BOM used to give 'expected 10
    tab-separated columns, found 1', naming nothing visible."""
    part = b"\xef\xbb\xbf# c\n" + GOOD.encode()
    first, second = read_conllu([part + part], name="x")
    assert first.heads == [-1, 0, 1] and not first.errors
    assert [str(e) for e in second.errors] == [
        "x:5: the line starts with a byte-order mark (U+FEFF), which only the first line of a file may have"]


def test_invalid_utf8_is_an_error_of_its_sentence():
    first, bad, last = read_conllu([BAD_UTF8], name="x")
    assert first.heads == last.heads == [-1, 0, 1] and bad.heads is None
    assert [str(e) for e in bad.errors] == ["x:5: not valid UTF-8 (invalid start byte at byte 3)"]
    assert bad.text().encode("utf-8", "surrogateescape") == bad.raw
    with pytest.raises(ConlluError, match="^x:5: not valid UTF-8"):
        list(apply_policy([first, bad, last], "fail"))


W1 = "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n"
W2 = "2\tB\tb\tX\t_\t_\t1\tdep\t_\t_\n"


@pytest.mark.parametrize("text, reason", [
    (W1 + W2.replace("\tdep\t", "\t\t"), "x:2: DEPREL of word 2 is empty: CoNLL-U writes _ for no label"),
    (W1 + W2.replace("\t1\tdep", "\t\tdep"), "x:2: HEAD '' of word 2 is not an integer"),
    (W1.replace("\tA\t", "\t\t") + W2, "x:1: column 2 (FORM) is empty"),
    (W1[1:] + W2, "x:1: column 1 (ID) is empty"),
    ("1-2\tAB\t_\t_\t_\t_\t_\t_\t\t_\n" + W1 + W2, "x:1: column 9 (DEPS) is empty"),
    (W1 + "1-2\tAB\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2,
     "x:2: multiword token 1-2 must come right before word 1 (the next word is 2)"),
    ("2-3\tBC\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + W2,
     "x:1: multiword token 2-3 must come right before word 2 (the next word is 1)"),
    (W1 + "2-3\tBC\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2, "x:2: multiword token 2-3 ends after the last word (2)"),
    (W1 + "_" + W2[1:], "x:2: bad ID '_'"),  # was read as a line that is not a word
])
def test_empty_columns_and_misplaced_multiword_tokens_are_errors(text, reason):
    """Every column but MISC needs a value (``_`` for none); a multiword
    token comes right before its first word and ends at a word; an ID is a
    word, a multiword range or an empty node."""
    [sentence] = read_conllu([(text + "\n").encode()], name="x")
    assert sentence.heads is None and str(sentence.errors[0]).startswith(reason)


def test_an_empty_misc_and_good_multiword_tokens_are_read():
    text = "1-2\tAB\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + W2.replace("\t_\n", "\t\n") + "\n"
    [sentence] = read_conllu([text.encode()], name="x")
    assert sentence.heads == [-1, 0, 1] and not sentence.errors


def test_invalid_utf8_sentence_is_skipped_or_counted_under_on_error(tmp_path):
    source, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    source.write_bytes(BAD_UTF8)
    message = f"{source}:5: not valid UTF-8 (invalid start byte at byte 3)"
    assert run("projectivize", source, "-o", out) == (2, "", f"semiparse projectivize: error: {message}\n")
    assert run("projectivize", "--on-error", "skip", source, "-o", out) == (0, "", f"{message} (sentence skipped)\n")
    assert out.read_bytes() == (GOOD + GOOD).encode()
    for policy in ("skip", "keep"):
        status, printed, _ = run("count", "--on-error", policy, source)
        assert status == 0 and printed.splitlines()[1].split()[1:3] == ["2", "4"]


def test_invalid_utf8_sentence_is_kept_byte_for_byte(tmp_path):
    source, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    source.write_bytes(BAD_UTF8)
    status, _, err = run("projectivize", "--on-error", "keep", source, "-o", out)
    assert (status, err) == (0, f"{source}:5: not valid UTF-8 (invalid start byte at byte 3) (sentence copied unchanged)\n")
    assert out.read_bytes() == BAD_UTF8


# count ----------------------------------------------------------------------


def test_count_help_shows_a_single_percent_sign():
    status, out, _ = run("count", "--help")
    assert status == 0 and "% non-projective" in out and "%%" not in out


def test_count_json_is_what_json_dump_of_it_all_writes(tmp_path):
    files = [tmp_path / "a.conllu", tmp_path / "b.conllu", tmp_path / "empty.conllu"]
    files[0].write_text(TEXT)
    files[1].write_text(GOOD + TEXT)
    files[2].write_text("")
    status, out, _ = run("count", "--json", *files)
    assert status == 0
    document = json.loads(out)
    assert [len(f["per_sentence"]) for f in document["files"]] == [2, 3, 0]
    assert out == json.dumps(document, indent=1) + "\n"


PEAK = """
import os, sys
sys.stdout = open(os.devnull, "w")
from semiparse.cli import main
status = main(sys.argv[1:])
with open("/proc/self/status") as status_file:
    peak = next(line.split()[1] for line in status_file if line.startswith("VmHWM:"))
print(status, peak, file=sys.stderr)
"""


def peak_kb(tmp_path, *argv):
    """Peak resident memory (KB) of ``semiparse ARGV`` in a fresh process:
    VmHWM, since ``ru_maxrss`` also counts the pages of the forking parent."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    # cwd: not the checkout, whose uncompiled sources would shadow the installed package
    done = subprocess.run([sys.executable, "-c", PEAK, *map(str, argv)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    status, kb = done.stderr.split()[-2:]
    assert status == "0", done.stderr
    return int(kb)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("mode", [[], ["--per-sentence"], ["--json"]])
def test_count_memory_does_not_grow_with_the_number_of_sentences(tmp_path, mode):
    sentence = "# sent_id = s\n1\tA\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tB\tb\tX\t_\t_\t0\troot\t_\t_\n\n"
    small, large = tmp_path / "small.conllu", tmp_path / "large.conllu"
    small.write_text(sentence * 15_000)
    large.write_text(sentence * 60_000)
    # Rows kept in memory cost over 200 bytes a sentence: 9 MB for the 45,000 more.
    assert peak_kb(tmp_path, "count", large, *mode) - peak_kb(tmp_path, "count", small, *mode) < 4_000


# Huge comment blocks ------------------------------------------------------


def test_a_huge_comment_block_costs_about_its_size(tmp_path):
    path = tmp_path / "comments.conllu"
    data = b"# c\n" * 200_000 + b"1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        (sentence,) = read_conllu(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # A Python string per line would take over 50 bytes for each 4-byte line.
    assert peak < 5 * len(data)
    assert sentence.heads == [-1, 0] and sentence.line_of(1) == 200_001
    assert sentence.render([-1, 0]).encode() == data
    assert len(sentence.lines) == 200_002 and sentence.word_lines == [200_000]


# Fuzzing ------------------------------------------------------------------


def kinds(sentence):
    """What makes a real sentence interesting for the fuzz test."""
    ids = [line.split("\t", 1)[0] for line in sentence.lines if line[:1].isdigit()]
    found = {"multiword" if any("-" in i for i in ids) else None,
             "empty node" if any("." in i for i in ids) else None,
             "non-projective" if not is_projective(sentence.heads) else None}
    return (found - {None}) or {"plain"}


@pytest.fixture(scope="session")
def real_sentences(ud_files):
    """A few dozen short sentences of the shared treebanks (bytes, comments
    included): some with multiword tokens, empty nodes, non-projective
    trees, some plain."""
    wanted = {"multiword": 8, "empty node": 3, "non-projective": 12, "plain": 8}
    picked = []
    for path in ud_files:
        for sentence in read_conllu(path):
            if sentence.heads is None or not 2 <= len(sentence) <= 40:
                continue
            found = kinds(sentence)
            kind = next((k for k in found if wanted.get(k)), None)
            # Empty nodes are rare (in longer sentences): any length will do.
            if kind and (len(sentence) <= 14 or "empty node" in found):
                wanted[kind] -= 1
                picked.append(sentence.raw)
        if not any(wanted.values()):
            break
    assert not any(wanted.values()), wanted
    return picked


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def parser_built_once():
    """``cli.main`` builds its argument parser anew at each call, which is
    most of the time of a call on a small file: build it once here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "build_parser", functools.lru_cache(maxsize=None)(cli.build_parser))
        yield


VALUES = st.sampled_from([b"0", b"1", b"2", b"3", b"-1", b"_", b"", b"x", b"1.1", b"1-2", b"01", b"99",
                          b"+1", b" 1", b"\xd9\xa1"])


def mutate(data, draw):
    """One random byte-level change of ``data`` (LF or other endings)."""
    lines = data.splitlines(keepends=True) or [b""]
    i = draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    body = line.rstrip(b"\r\n")
    eol, cols = line[len(body):], body.split(b"\t")
    k, m = draw(st.integers(0, len(cols) - 1)), draw(st.integers(0, len(cols) - 1))
    op = draw(st.sampled_from([
        "drop line", "duplicate line", "swap lines", "drop column", "duplicate column", "swap columns",
        "head", "id", "endings", "line ending", "bom", "latin-1", "invalid bytes", "byte", "truncate",
    ]))
    if op == "drop line":
        del lines[i]
    elif op == "duplicate line":
        lines.insert(i, line)
    elif op == "swap lines":
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op in ("drop column", "duplicate column", "swap columns", "head", "id"):
        if op == "drop column":
            del cols[k]
        elif op == "duplicate column":
            cols.insert(k, cols[k])
        elif op == "swap columns":
            cols[k], cols[m] = cols[m], cols[k]
        else:
            cols[6 if op == "head" and len(cols) > 6 else 0] = draw(VALUES)
        lines[i] = b"\t".join(cols) + eol
    elif op == "endings":
        new = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
        lines = [x.rstrip(b"\r\n") + new for x in lines]
    elif op == "line ending":
        lines[i] = body + draw(st.sampled_from([b"\n", b"\r\n", b"\r", b""]))
    data = b"".join(lines)
    at = draw(st.integers(0, len(data)))
    if op == "bom":
        data = b"\xef\xbb\xbf" + data
    elif op == "latin-1":
        data = data.decode("utf-8", "surrogateescape").encode("latin-1", "replace")
    elif op == "invalid bytes":
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])) + data[at:]
    elif op == "byte":
        data = data[:at] + draw(st.sampled_from([b"\t", b"\r", b"\n", b"\x00", b" ", b"#", b"\x85"])) + data[at:]
    elif op == "truncate":
        data = data[:at]
    return data


def assert_only_heads_differ(before, after):
    """``after`` is ``before`` with some HEAD columns changed, nothing else."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    for a, b in zip(old, new):
        if a != b:
            a, b = a.split(b"\t"), b.split(b"\t")
            assert len(a) == len(b) == 10 and a[:6] == b[:6] and a[7:] == b[7:], (a, b)


def assert_one_error_line(err, command, path, data):
    """``semiparse COMMAND: error: PATH:LINE: reason``, one line, LINE in the file."""
    match = re.fullmatch(rf"semiparse {command}: error: {re.escape(str(path))}:(\d+): [^\n]+\n", err)
    assert match, err
    assert 1 <= int(match.group(1)) <= len(data.splitlines()) + 1


def _without_deps_note(err):
    """stderr without projectivize's count of words whose DEPS still names the
    old head (a note, not an error)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("semiparse projectivize: ") or "DEPS entry" not in line)


@pytest.mark.slow
@settings(max_examples=2000)
@given(st.data())
def test_fuzz_mutated_real_sentences(fuzz_dir, real_sentences, parser_built_once, data):
    chosen = data.draw(st.lists(st.sampled_from(real_sentences), min_size=1, max_size=3))
    text = b"".join(chosen)
    for _ in range(data.draw(st.integers(1, 4))):
        text = mutate(text, data.draw)
    source, out = fuzz_dir / "in.conllu", fuzz_dir / "out.conllu"
    source.write_bytes(text)

    read = list(read_conllu(source))  # the reader records problems, never raises
    assert b"".join(s.raw for s in read) == text
    errors = [e for s in read for e in s.errors]
    event("errors" if errors else "no errors")

    status, printed, err = run("projectivize", source, "-o", out)
    if errors:
        assert status == 2 and err == f"semiparse projectivize: error: {errors[0]}\n"
        assert_one_error_line(err, "projectivize", source, text)
    else:
        assert (status, printed, _without_deps_note(err)) == (0, "", "")
        assert_only_heads_differ(text, out.read_bytes())
        assert all(is_projective(s.heads) for s in read_conllu(out) if len(s))

    status, printed, err = run("count", source)
    if errors:
        assert status == 2 and printed == ""
        assert_one_error_line(err, "count", source, text)
    else:
        assert status == 0 and err == "" and str(source) in printed

    valid = all(not e.reason.startswith("not valid UTF-8") for e in errors)
    event("valid UTF-8" if valid else "invalid UTF-8")
    status, printed, err = run("projectivize", "--on-error", "keep", source, "-o", out)
    assert status == 0, err
    assert_only_heads_differ(text, out.read_bytes())
    for line in _without_deps_note(err).splitlines():
        assert line.startswith(f"{source}:") and line.endswith(" (sentence copied unchanged)"), line
    assert run("count", "--on-error", "keep", source)[0] == 0

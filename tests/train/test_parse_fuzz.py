"""Fuzzing `semiparse parse` and `semiparse evaluate` with mutated CoNLL-U.

Documents of small random trees (comments, multiword tokens, empty nodes)
are mutated in ways the reader accepts (any line ends, a byte order mark,
comment blocks of their own anywhere, several or whitespace-only blank
lines, comments between word lines, no final line end) and in ways it does
not (odd column counts, truncated lines, bad HEAD values, cycles, bytes that
are not UTF-8).  Each command runs in-process: it either succeeds (for
`parse`, with every byte but HEAD and DEPREL as read and those the model's)
or fails with one line ``FILE:LINE: reason`` and no output file; accepted
mutations alone always succeed.
"""
import contextlib
import functools
import io
import json
import os
import random
import re
import tempfile

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from semiparse import cli
from semiparse.cli import main
from semiparse.perceptron import RDAOptions, Trainer, Tree

from support import BOM, check_parse_output, predictions, trees

FORMS = ["a", "b", "ab", "Ωμέγα", "日本", "x.y", "q-r", "Z"]
TAGS = ["NOUN", "VERB", "DET", "PUNCT"]
LABELS = ["nsubj", "obj", "det", "punct", "nmod:poss"]
@st.composite
def sentences(draw):
    """One sentence: forms, tags, heads, labels, the words that start a
    two-word token, the words followed by an empty node, the comments."""
    n = draw(st.integers(1, 6))
    heads = draw(trees(n, n, single_root=True))
    labels = [None] + ["root" if h == 0 else draw(st.sampled_from(LABELS)) for h in heads[1:]]
    tokens = set()
    for d in range(1, n):
        if d - 1 not in tokens and draw(st.integers(0, 5)) == 0:
            tokens.add(d)
    return {
        "forms": [None] + draw(st.lists(st.sampled_from(FORMS), min_size=n, max_size=n)),
        "tags": [None] + draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)),
        "heads": heads, "labels": labels, "tokens": tokens,
        "empty": {d for d in range(1, n + 1) if draw(st.integers(0, 7)) == 0},
        "comments": draw(st.lists(st.sampled_from(["# sent_id = s", "# text = a b", "#"]), max_size=2)),
    }


def retreed(draw, doc):
    """The same sentences and words with other trees and labels (a parser's output)."""
    out = []
    for s in doc:
        n = len(s["forms"]) - 1
        heads = draw(trees(n, n, single_root=True))
        labels = [None] + ["root" if h == 0 else draw(st.sampled_from(LABELS)) for h in heads[1:]]
        out.append({**s, "heads": heads, "labels": labels})
    return out


def lines_of(doc):
    """The document's lines (bytes, no line ends), ``b""`` between sentences;
    and for each sentence the indices of its word lines."""
    lines, words = [], []
    for s in doc:
        lines += [c.encode() for c in s["comments"]]
        mine = []
        for d in range(1, len(s["forms"])):
            form = s["forms"][d]
            if d in s["tokens"]:
                lines.append(f"{d}-{d + 1}\t{form}{s['forms'][d + 1]}\t_\t_\t_\t_\t_\t_\t_\t_".encode())
            mine.append(len(lines))
            lines.append(f"{d}\t{form}\t{form.lower()}\t{s['tags'][d]}\t_\t_\t{s['heads'][d]}\t"
                         f"{s['labels'][d]}\t_\t_".encode())
            if d in s["empty"]:
                lines.append(f"{d}.1\t{form}\t_\t_\t_\t_\t_\t_\t{d}:dep\t_".encode())
        words.append(mine)
        lines.append(b"")
    return lines, words


ACCEPTED = ("comment block", "blank lines", "whitespace separator", "comment between words")
REFUSED = ("odd columns", "truncated", "bad head", "cycle", "not utf-8")


def _dominates(heads, d, e):
    """Whether word ``e`` is ``d`` or below it in the tree ``heads``."""
    while e > 0 and e != d:
        e = heads[e]
    return e == d


@st.composite
def files(draw, doc):
    """``(bytes, accepted)``: the document with random mutations; ``accepted``
    when all of them are ones every reader takes."""
    lines, words = lines_of(doc)
    mutations = draw(st.lists(st.sampled_from(ACCEPTED + REFUSED), max_size=4))
    separators = [i for i, line in enumerate(lines) if line == b""]
    inserts = []  # (before line, lines): applied last, so that the indices above hold
    for kind in mutations:
        k = draw(st.integers(0, len(words) - 1))
        index = draw(st.sampled_from(words[k]))
        cols = lines[index].split(b"\t")
        boundaries = [0] + [i + 1 for i in separators]
        if kind == "odd columns":
            lines[index] = b"\t".join(cols[:-1] if draw(st.booleans()) else cols + [b"_"])
        elif kind == "truncated":
            lines[index] = lines[index][:draw(st.integers(0, max(len(lines[index]) - 1, 0)))]
        elif kind in ("bad head", "cycle") and len(cols) < 7:
            continue  # the line was cut short by an earlier mutation
        elif kind == "bad head":
            cols[6] = draw(st.sampled_from([b"x", b"-1", b"99", b"_", b"0", b"", b"1.5", b"01"]))
            lines[index] = b"\t".join(cols)
        elif kind == "cycle":  # the word's head becomes itself or a word below it
            d, heads = words[k].index(index) + 1, doc[k]["heads"]
            below = [e for e in range(1, len(heads)) if _dominates(heads, d, e)]
            cols[6] = str(draw(st.sampled_from(below))).encode()
            lines[index] = b"\t".join(cols)
        elif kind == "not utf-8":
            cut = draw(st.integers(0, len(lines[index])))
            bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"]))
            lines[index] = lines[index][:cut] + bad + lines[index][cut:]
        elif kind == "whitespace separator":
            blank = draw(st.sampled_from([b" ", b"\t", b" \t ", b"\x0b"]))
            lines[draw(st.sampled_from(separators))] = blank
        elif kind == "comment block":
            inserts.append((draw(st.sampled_from(boundaries)), [b"# newdoc id = d", b""]))
        elif kind == "blank lines":
            inserts.append((draw(st.sampled_from(boundaries)), [b""] * draw(st.integers(1, 3))))
        else:  # a comment after a word line
            inserts.append((index + 1, [b"# a note"]))
    for at, new in sorted(inserts, key=lambda insert: -insert[0]):
        lines[at:at] = new
    eols = draw(st.sampled_from([[b"\n"], [b"\r\n"], [b"\r"], [b"\n", b"\r\n", b"\r"]]))
    ends = []
    for line in lines:
        choices = eols
        if line == b"" and ends and ends[-1] == b"\r":  # CR, then LF alone, would read as one CRLF
            choices = [e for e in eols if e != b"\n"] or [b"\r\n"]
        ends.append(draw(st.sampled_from(choices)))
    data = b"".join(line + end for line, end in zip(lines, ends))
    if draw(st.booleans()):
        data = data.rstrip(b"\r\n") + ends[-1]  # no blank line at the end
    if draw(st.integers(0, 3)) == 0:
        data = BOM + data
    return data, all(kind in ACCEPTED for kind in mutations)


@pytest.fixture(scope="session")
def fuzz_model(tmp_path_factory):
    """A small model: one epoch on 40 random trees over the same words."""
    rng = random.Random(0)
    train = []
    for _ in range(40):
        n = rng.randint(1, 8)
        order = rng.sample(range(1, n + 1), n)
        heads = [-1] * (n + 1)
        heads[order[0]] = 0
        for i, d in enumerate(order[1:], 1):
            heads[d] = order[rng.randrange(i)]
        labels = [None] + ["root" if h == 0 else rng.choice(LABELS) for h in heads[1:]]
        train.append(Tree(["<root>"] + [rng.choice(FORMS) for _ in range(n)],
                          ["<root>"] + [rng.choice(TAGS) for _ in range(n)], heads, labels))
    model = Trainer(system="arc_standard", oracle="dynamic", options=RDAOptions(), epochs=1, seed=0,
                    progress=False).run(train, nonproj="projectivize")
    path = tmp_path_factory.mktemp("fuzz-model") / "model.npz"
    model.save(path)
    return path


@pytest.fixture(scope="module")
def parser_built_once():
    """``cli.main`` builds its argument parser anew at each call, a large
    part of the time of a call on a small file: build it once here (as
    tests/treebank/test_conllu_robust.py does)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "build_parser", functools.lru_cache(maxsize=None)(cli.build_parser))
        yield


def run(argv):
    """``(status, stdout, stderr)`` of ``semiparse ARGV`` run in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def check_refusal(command, status, err, inputs):
    """Status 2 with one line ``semiparse COMMAND: error: FILE:LINE: reason``
    naming one of the inputs."""
    assert status == 2, err
    names = "|".join(re.escape(str(path)) for path in inputs)
    assert re.fullmatch(rf"semiparse {command}: error: ({names}):\d+: [^\n]+\n", err), err


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_fuzz_parse(fuzz_model, parser_built_once, data):
    doc = data.draw(st.lists(sentences(), min_size=1, max_size=4))
    given_bytes, accepted = data.draw(files(doc))
    with tempfile.TemporaryDirectory() as folder:
        src, out = os.path.join(folder, "in.conllu"), os.path.join(folder, "out.conllu")
        with open(src, "wb") as f:
            f.write(given_bytes)
        status, _, err = run(["parse", str(fuzz_model), src, "-o", out, "--quiet"])
        event(f"status {status}, {'accepted' if accepted else 'refused'} mutations")
        assert "Traceback" not in err
        if status == 0:
            with open(out, "rb") as f:
                check_parse_output(given_bytes, f.read(), predictions(fuzz_model, src))
        else:
            check_refusal("parse", status, err, [src])
            assert os.listdir(folder) == ["in.conllu"]  # no output, no temporary file left
        assert status == 0 or not accepted


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_fuzz_evaluate(parser_built_once, data):
    doc = data.draw(st.lists(sentences(), min_size=1, max_size=4))
    gold_bytes, gold_ok = data.draw(files(doc))
    mode = data.draw(st.sampled_from(["parser output", "itself", "mismatched"]))
    if mode == "mismatched":
        other = data.draw(st.lists(sentences(), min_size=1, max_size=4))
    else:
        other = retreed(data.draw, doc)
    system_bytes, system_ok = data.draw(files(other))
    with tempfile.TemporaryDirectory() as folder:
        gold, system = os.path.join(folder, "gold.conllu"), os.path.join(folder, "system.conllu")
        for path, content in ((gold, gold_bytes), (system, system_bytes)):
            with open(path, "wb") as f:
                f.write(content)
        if mode == "itself":
            system, system_ok = gold, gold_ok
        status, out, err = run(["evaluate", gold, system, "--json"])
        event(f"{mode}: status {status}" + (", scorer note" if "note:" in err else ""))
        assert "Traceback" not in err
        if status == 0:
            scores = json.loads(out)
            if scores["conll18"] is None:  # the scorer refuses the system file: one note
                assert re.fullmatch(rf"semiparse evaluate: note: no CoNLL 2018 metrics: the official "
                                    rf"scorer refuses {re.escape(system)}:\d+: [^\n]+\n", err), err
            else:  # the same words: the official UAS is today's UAS
                assert err == "" and scores["conll18"]["uas"]["f1"] == pytest.approx(scores["uas"])
            if mode == "itself":
                assert scores["uas"] == scores["las"] == 100.0
        else:
            check_refusal("evaluate", status, err, [gold, system])
        if gold_ok and system_ok and mode != "mismatched":
            assert status == 0 and scores["conll18"] is not None

"""Fuzzing the treebank commands, bench and demo in-process through
``semiparse.cli.main``: generated and mutated CoNLL-U through ``projectivize``
(every option that makes sense, and the round trips ``--mark``/``--unmark``
and ``--encode``/``deprojectivize``), ``deprojectivize`` and ``count``, and
the numeric options of ``bench`` and ``demo``.  Each run exits 0 with what
the command promises (bytes kept, trees projective and optimal, counts
exact against brute force on small trees) or 2 with one line naming the
file and line; never a traceback.
"""
import contextlib
import functools
import io
import json
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from semiparse import cli
from semiparse.cli import main
from semiparse.cli._treebank import use_single_root
from semiparse.treebank.columns import universal
from semiparse.treebank.conllu import read_conllu
from semiparse.treebank.projectivity import (
    NoProjectiveTree,
    count_optimal_projectivizations,
    is_projective,
)

from brute_force import projective_optima
from support import trees

pytestmark = pytest.mark.slow


def fuzz(examples):
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LABELS = ["nsubj", "obj", "punct", "nmod:poss", "obl:tmod", "dep", "root"]
ODD_LABELS = ["a^b", "x||y", "#", "*", "", "obj||*"]
HEAD, DEPREL, DEPS, MISC = 6, 7, 8, 9


@pytest.fixture(scope="module", autouse=True)
def parser_built_once():
    """``cli.main`` builds its argument parser anew at each call, a large
    part of the time of a call on a small file: build it once for this
    module's fuzzers (as tests/treebank/test_conllu_robust.py does).  The
    commands run here keep no state in their parser (no list defaults)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "build_parser", functools.lru_cache(maxsize=None)(cli.build_parser))
        yield


def run(argv):
    """``(status, stdout, stderr)`` of ``semiparse ARGV`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as stop:  # argparse refusing an option
            status = stop.code
    return status, out.getvalue(), err.getvalue()


def assert_one_line_error(status, err, command, file_line=True):
    assert "Traceback" not in err, err
    assert status == 2, err
    last = err.rstrip("\n").splitlines()[-1]
    pattern = rf"semiparse {command}: error: \S+:\d+: " if file_line else rf"semiparse {command}: error: "
    assert re.match(pattern, last), err


# -- generated CoNLL-U ----------------------------------------------------------

@st.composite
def sentences(draw):
    """The lines of one sentence (no line endings): comments, words, and now
    and then a multiword token or an empty node."""
    n = draw(st.one_of(st.integers(1, 3), st.integers(4, 8), st.integers(4, 8)))  # mostly long enough to cross
    heads = draw(trees(n, n))
    lines = [f"# sent_id = s{draw(st.integers(0, 99))}"] if draw(st.booleans()) else []
    if draw(st.booleans()):
        lines.append("# text = " + draw(st.sampled_from(["a b", "ümlaut", "tab\tin text"])))
    odd = draw(st.integers(0, 9)) == 0
    for d in range(1, n + 1):
        if d < n and draw(st.integers(0, 7)) == 0:
            lines.append(f"{d}-{d + 1}\tab\t_\t_\t_\t_\t_\t_\t_\t_")
        label = draw(st.sampled_from(LABELS + (ODD_LABELS if odd else [])))
        deps = draw(st.sampled_from(["_", f"{heads[d]}:{label}", f"{heads[d]}", f"{heads[d]}:{label}|{d}.1:x",
                                     "", f"0:root|{heads[d]}:{label}"]))
        misc = draw(st.sampled_from(["_", "_", "", "SpaceAfter=No", "a=1|b=2", "|", "OrigHead=1"
                                     if odd else "_"]))
        form = draw(st.sampled_from(["w", "Bé", "x y", "ǅ"]))
        lines.append(f"{d}\t{form}\t{form.lower()}\tX\t_\t_\t{heads[d]}\t{label}\t{deps}\t{misc}")
        if draw(st.integers(0, 9)) == 0:
            lines.append(f"{d}.1\tE\t_\t_\t_\t_\t_\t_\t{d}:dep\t_")
    return lines


MUTATIONS = ["head x", "head out of range", "head _", "cycle", "nine columns", "bad utf-8",
             "id out of sequence", "bad id"]


@st.composite
def documents(draw, mutate=True):
    """A CoNLL-U file as bytes: a few sentences with mixed line endings, a
    BOM, comment-only blocks, runs of blank or whitespace-only lines;
    sometimes one mutation."""
    blocks = [draw(sentences()) for _ in range(draw(st.integers(1, 4)))]
    if draw(st.integers(0, 5)) == 0:
        blocks.insert(draw(st.integers(0, len(blocks))), ["# newdoc id = d1"])
    if mutate and draw(st.integers(0, 3)) == 0:
        lines = draw(st.sampled_from([b for b in blocks if b != ["# newdoc id = d1"]]))
        words = [i for i, line in enumerate(lines) if re.match(r"\d+\t", line)]
        i = draw(st.sampled_from(words))
        cols = lines[i].split("\t")
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "head x":
            cols[HEAD] = "x"
        elif kind == "head out of range":
            cols[HEAD] = str(draw(st.sampled_from([-1, 99, 10 ** 30])))
        elif kind == "head _":
            cols[HEAD] = "_"
        elif kind == "cycle":
            cols[HEAD] = cols[0]
        elif kind == "nine columns":
            cols = cols[:9]
        elif kind == "bad utf-8":
            cols[1] = "\udcff"  # encoded back with surrogateescape: the byte 0xff
        elif kind == "id out of sequence":
            cols[0] = str(int(cols[0]) + 5)
        else:
            cols[0] = "1.x"
        lines[i] = "\t".join(cols)
    ends = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    out = []
    for block in blocks:
        separators = [draw(st.sampled_from(["", "", "", " ", "\t "])) for _ in range(draw(st.sampled_from([1, 1, 2, 3])))]
        for line in block + separators:
            end = draw(st.sampled_from(["\n", "\r\n", "\r"])) if ends == "mixed" else ends
            out.append(line + end)
    text = "".join(out)
    if draw(st.integers(0, 5)) == 0:
        text = text.rstrip("\r\n")  # no final line ending
    data = text.encode("utf-8", "surrogateescape")
    return (b"\xef\xbb\xbf" + data) if draw(st.integers(0, 7)) == 0 else data


# -- checks ---------------------------------------------------------------------

def word_columns(line):
    """The 10 columns of a word line (its line ending cut off), else None."""
    cols = line.rstrip(b"\r\n").split(b"\t")
    return cols if len(cols) == 10 else None


def assert_only_columns_changed(before, after, columns):
    """``after`` is ``before`` line for line, byte for byte (line endings
    included), except the given columns of word lines."""
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    for old, new in zip(old_lines, new_lines):
        if old == new:
            continue
        assert old[len(old.rstrip(b"\r\n")):] == new[len(new.rstrip(b"\r\n")):]  # the same line ending
        a, b = word_columns(old), word_columns(new)
        assert a is not None and b is not None, (old, new)
        for k in range(10):
            assert k in columns or a[k] == b[k], (k, old, new)


def usable_pairs(before_path, after_path, multiple_roots):
    """Sentences read back from the input and output files, paired."""
    before = list(read_conllu(before_path, multiple_roots=multiple_roots))
    after = list(read_conllu(after_path, multiple_roots=multiple_roots))
    assert len(before) == len(after)
    return zip(before, after)


def copied_with_warning(err, source, sentence):
    """Whether ``err`` warns that ``sentence`` was copied unchanged, at one of its lines."""
    lines = range(sentence.first_line, sentence.first_line + len(sentence.raw.splitlines()))
    return any(re.match(rf"{re.escape(str(source))}:(\d+): .*\(sentence copied unchanged\)$", w)
               and int(w[len(str(source)) + 1:].split(":")[0]) in lines for w in err.splitlines())


PROJECTIVIZE_OPTIONS = st.fixed_dictionaries({
    "on_error": st.sampled_from(["fail", "fail", "keep", "skip"]),
    "multiple_roots": st.sampled_from(["error", "warn"]),
    "root": st.sampled_from(["single", "any"]),
    "mode": st.sampled_from(["plain", "mark", "encode", "update-deps", "only"]),
    "tie_break": st.sampled_from([None, "first", "closest", "random"]),
    "encoding": st.sampled_from(["head", "path", "head+path"]),
    "only": st.sampled_from(["punct", "nsubj,obj", "nmod,obl", "dep"]),
})


@pytest.mark.slow
@fuzz(300)
@given(data=documents(), options=PROJECTIVIZE_OPTIONS)
def test_projectivize_keeps_its_promises(tmp_path_factory, data, options):
    tmp = tmp_path_factory.mktemp("projectivize")
    source, out, back = tmp / "in.conllu", tmp / "out.conllu", tmp / "back.conllu"
    source.write_bytes(data)
    common = ["--on-error", options["on_error"], "--multiple-roots", options["multiple_roots"],
              "--root", options["root"]]
    argv = ["projectivize", str(source), "-o", str(out), *common]
    if options["tie_break"]:
        argv += ["--tie-break", options["tie_break"]] + (["--seed", "3"] if options["tie_break"] == "random" else [])
    mode = options["mode"]
    changed = {HEAD}
    if mode == "mark":
        argv.append("--mark")
        changed.add(MISC)
    elif mode == "encode":
        argv += ["--encode", options["encoding"]]
        changed.add(DEPREL)
    elif mode == "update-deps":
        argv.append("--update-deps")
        changed.add(DEPS)
    elif mode == "only":
        argv += ["--only", options["only"]]
    status, _, err = run(argv)
    event(f"{mode}: status {status}")
    if status != 0:
        assert_one_line_error(status, err, "projectivize")
        assert not out.exists()
        return
    assert "Traceback" not in err
    result = out.read_bytes()
    if options["on_error"] == "skip":  # sentences may be gone: each kept one is checked below
        return
    assert_only_columns_changed(data, result, changed)
    for before, after in usable_pairs(source, out, options["multiple_roots"]):
        if before.heads is None or after.heads is None:
            continue
        if after.raw == before.raw and not is_projective(before.heads):
            # --only words cannot make it projective, or a label cannot be
            # encoded: copied under --on-error keep, with a warning
            assert copied_with_warning(err, source, before)
            continue
        assert is_projective(after.heads)
        single = options["root"] == "single" and before.heads.count(0) == 1
        if single:
            assert after.heads.count(0) == 1
        kept = sum(a == b for a, b in zip(before.heads[1:], after.heads[1:]))
        moved = [d for d in range(1, len(before) + 1) if before.heads[d] != after.heads[d]]
        if mode == "only":
            allowed = set(options["only"].split(","))
            assert all(universal(before.columns(d)[DEPREL]) in allowed for d in moved)
        else:
            assert kept == count_optimal_projectivizations(before.heads, single_root=single)[0]
    copied = "(sentence copied unchanged)" in err
    event(f"{mode}: changed" if result != data else f"{mode}: unchanged")
    if options["root"] == "any":  # the output may give the root several children, as asked:
        common[3] = "warn"        # reading it back must allow them
    if mode == "mark" and not copied and b"OrigHead" not in data:  # --unmark reads any OrigHead
        status, _, err = run(["projectivize", "--unmark", str(out), "-o", str(back), *common])
        assert status == 0, err
        assert back.read_bytes() == data
    if mode == "encode" and not copied:
        status, _, err = run(["deprojectivize", str(out), "-o", str(back), *common])
        assert status == 0, err
        if options["encoding"] == "head+path":
            assert back.read_bytes() == data
        else:
            assert_only_columns_changed(data, back.read_bytes(), {HEAD})


@fuzz(60)
@given(data=documents(), on_error=st.sampled_from(["fail", "keep", "skip"]))
def test_deprojectivize_changes_only_heads_and_labels(tmp_path_factory, data, on_error):
    tmp = tmp_path_factory.mktemp("deprojectivize")
    source, out = tmp / "in.conllu", tmp / "out.conllu"
    source.write_bytes(data)
    status, _, err = run(["deprojectivize", str(source), "-o", str(out), "--on-error", on_error,
                          "--multiple-roots", "warn"])
    if status != 0:
        assert_one_line_error(status, err, "deprojectivize")
        assert not out.exists()
        return
    assert "Traceback" not in err
    if on_error != "skip":
        assert_only_columns_changed(data, out.read_bytes(), {HEAD, DEPREL})


@fuzz(150)
@given(data=documents(), options=st.fixed_dictionaries({
    "on_error": st.sampled_from(["fail", "keep", "skip"]),
    "multiple_roots": st.sampled_from(["error", "warn"]),
    "root": st.sampled_from(["single", "any"]),
    "output": st.sampled_from(["--json", "--per-sentence", "table"]),
    "only": st.sampled_from([None, None, "punct,dep", "nsubj,obj,root"]),
}))
def test_count_is_exact(tmp_path_factory, data, options):
    source = tmp_path_factory.mktemp("count") / "in.conllu"
    source.write_bytes(data)
    argv = ["count", str(source), "--on-error", options["on_error"],
            "--multiple-roots", options["multiple_roots"], "--root", options["root"]]
    argv += [] if options["output"] == "table" else [options["output"]]
    argv += ["--only", options["only"]] if options["only"] else []
    status, out, err = run(argv)
    event(f"status {status}")
    if status != 0:
        assert_one_line_error(status, err, "count")
        return
    assert "Traceback" not in err
    expected = []  # (length, lost, optimal trees) of every sentence counted
    for sentence in read_conllu(source, multiple_roots=options["multiple_roots"]):
        if sentence.heads is None or not len(sentence):
            continue
        heads = sentence.heads
        single = use_single_root(options["root"], heads)
        only = None
        if options["only"]:
            wanted = set(options["only"].split(","))
            only = {d for d in range(1, len(heads)) if universal(sentence.columns(d)[DEPREL]) in wanted}
        if len(heads) <= 6:
            optima, kept = projective_optima(heads, single, only)
            count = len(optima)
            if kept is None:
                continue  # no projective tree moves only those words: left out
        else:
            try:
                kept, count = count_optimal_projectivizations(heads, single_root=single, only=only)
            except NoProjectiveTree:
                continue
        expected.append((len(sentence), len(sentence) - kept, count))
    if options["output"] == "--json":
        document = json.loads(out)
        (found,) = document["files"]
        rows = [(r["length"], r["lost"], r["optimal_trees"]) for r in found["per_sentence"]]
        assert rows == expected
        assert found["sentences"] == len(expected) and found["words"] == sum(e[0] for e in expected)
    elif options["output"] == "--per-sentence":
        lines = out.split("file:line\tsent_id\tlength\tlost\toptimal_trees\n")[1].splitlines()
        rows = [tuple(int(x) for x in line.split("\t")[2:]) for line in lines]
        assert rows == [e for e in expected if e[1]]
    else:
        assert str(len(expected)) in out.splitlines()[1].split()


# -- numeric options of bench and demo -----------------------------------------

def refused_ints(low, high=None):
    """Integers outside ``low..high`` and text that is no integer."""
    outside = st.integers(max_value=low - 1)
    if high is not None:
        outside = st.one_of(outside, st.integers(min_value=high + 1))
    return st.one_of(outside.map(str), st.sampled_from(["1.5", "1e3", "", "ten", "0x10", " "]))


REFUSED_SECONDS = st.one_of(
    st.floats(max_value=0, allow_nan=False).map(repr),
    st.floats(min_value=61, allow_infinity=True, allow_nan=False).map(repr),
    st.sampled_from(["nan", "-nan", "inf", "-inf", "1e400", "", "abc"]),
)

BENCH_OPTIONS = [  # (command, option, refused values)
    (["bench", "batch"], "--sentences", refused_ints(1)),
    (["bench", "batch"], "--rounds", refused_ints(1)),
    (["bench", "batch"], "--jobs", refused_ints(1, 256)),
    (["bench", "projectivize"], "--repeat", refused_ints(1)),
    (["bench", "projectivize"], "--python-every", refused_ints(1)),
    (["bench", "engine"], "--lengths", refused_ints(1, 2000)),
    (["bench", "engine"], "--python-max-n", refused_ints(0)),
    (["bench", "engine"], "--seconds", REFUSED_SECONDS),
    (["bench", "engine"], "--seed", refused_ints(0)),
    (["bench", "oracle"], "--sizes", refused_ints(1)),
    (["bench", "oracle"], "--per-size", refused_ints(1)),
    (["bench", "oracle"], "--seconds", REFUSED_SECONDS),
    (["bench", "fast-oracle"], "--sizes", refused_ints(1)),
    (["bench", "fast-oracle"], "--per-size", refused_ints(1)),
    (["bench", "fast-oracle"], "--seconds", REFUSED_SECONDS),
    (["bench", "constituency"], "--sentences", refused_ints(1)),
    (["bench", "constituency"], "--configs", refused_ints(1)),
    (["bench", "constituency"], "--exhaustive-max", refused_ints(0)),
    (["bench", "train"], "--sentences", refused_ints(1)),
    (["bench", "train"], "--epochs", refused_ints(1)),
    (["demo"], "--sentences", refused_ints(1, 100_000)),
    (["demo"], "--max-length", refused_ints(1, 200)),
    (["count", "-"], "--jobs", refused_ints(1)),
    (["projectivize"], "--jobs", refused_ints(1)),
]


@fuzz(150)
@given(data=st.data())
def test_bench_and_demo_refuse_meaningless_numbers(data):
    """Zero, negative, non-finite, too large or not a number, where
    meaningless: status 2 and the reason on one line, before any work."""
    command, option, values = data.draw(st.sampled_from(BENCH_OPTIONS))
    value = data.draw(values)
    status, out, err = run([*command, f"{option}={value}"])
    assert status == 2 and out == "", err
    assert "Traceback" not in err
    assert re.fullmatch(rf"semiparse .*: error: argument {option}(/\S+)?: expected .*, got .*",
                        err.rstrip("\n").splitlines()[-1]), err


@fuzz(25)
@given(sentences=st.integers(1, 6), max_length=st.integers(1, 9), seed=st.integers(-10 ** 30, 10 ** 30))
def test_demo_runs_at_any_small_size(tmp_path_factory, sentences, max_length, seed):
    out_dir = tmp_path_factory.mktemp("demo")
    status, out, err = run(["demo", "--sentences", str(sentences), "--max-length", str(max_length),
                            "--seed", str(seed), "-o", str(out_dir)])
    assert status == 0, err
    assert "checked: every output tree is projective and optimal" in out
    assert len(list(read_conllu(out_dir / "sample.projective.conllu"))) == sentences

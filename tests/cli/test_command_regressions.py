"""Regressions of the treebank commands, bench and demo on inputs that once
crashed them or lost data: each test failed before its fix."""
import argparse
import importlib.util
import json
import signal
import subprocess
import sys
import time
import warnings

import pytest

from semiparse.cli import main, seconds
from semiparse.treebank.projectivity import (
    TreeTooLarge,
    count_optimal_projectivizations,
)


# A non-projective tree (the edge 1 -> 4 crosses 0 -> 2) whose changed
# words carry unusual MISC and DEPS values.
def _sentence(misc1="", deps2="0:root"):
    rows = [
        ("1", "3", "nsubj", "3:nsubj", misc1),
        ("2", "0", "root", deps2, "_"),
        ("3", "2", "obj", "2:obj", "SpaceAfter=No"),
        ("4", "1", "det", "1:det", "_"),
    ]
    return "# sent_id = s1\n" + "".join(
        f"{i}\tw{i}\tw{i}\tX\t_\t_\t{h}\t{rel}\t{deps}\t{misc}\n" for i, h, rel, deps, misc in rows
    ) + "\n"


def test_mark_then_unmark_restores_an_empty_misc(tmp_path):
    """An empty MISC column (not ``_``) marked and unmarked comes back empty."""
    source = tmp_path / "in.conllu"
    source.write_bytes(_sentence(misc1="").encode())
    marked, restored = tmp_path / "marked.conllu", tmp_path / "restored.conllu"
    assert main(["projectivize", "--mark", str(source), "-o", str(marked)]) == 0
    assert marked.read_bytes() != source.read_bytes()
    assert main(["projectivize", "--unmark", str(marked), "-o", str(restored)]) == 0
    assert restored.read_bytes() == source.read_bytes()


def test_partial_mark_then_partial_unmark_restores_the_file(tmp_path):
    """``--partial --mark`` output, with a word whose HEAD stays ``_``, comes
    back byte for byte through ``--partial --unmark``."""
    rows = [(1, "3"), (2, "_"), (3, "0"), (4, "2"), (5, "1")]
    source = tmp_path / "in.conllu"
    source.write_text("# sent_id = p1\n" + "".join(
        f"{i}\tw{i}\tw{i}\tX\t_\t_\t{h}\tdep\t_\t_\n" for i, h in rows) + "\n")
    marked, restored = tmp_path / "marked.conllu", tmp_path / "restored.conllu"
    assert main(["projectivize", "--partial", "--mark", str(source), "-o", str(marked)]) == 0
    assert "OrigHead=" in marked.read_text()
    assert main(["projectivize", "--partial", "--unmark", str(marked), "-o", str(restored)]) == 0
    assert restored.read_bytes() == source.read_bytes()


def test_update_deps_leaves_a_bare_deps_head_and_says_where(tmp_path, capsys):
    """A moved word whose DEPS entry for its old head is a bare head (``0``,
    no relation) keeps that entry, with a warning at its line; the other
    moved word's entry moves as before."""
    source = tmp_path / "in.conllu"
    source.write_bytes(_sentence(misc1="_", deps2="0").encode())
    out = tmp_path / "out.conllu"
    assert main(["projectivize", "--update-deps", str(source), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{source}:3: warning: DEPS entry '0' of word 2 names no relation" in err
    assert "1 moved to the new head (--update-deps), 1 left where they were" in err
    before = [line.split("\t") for line in source.read_text().splitlines()[1:5]]
    after = [line.split("\t") for line in out.read_text().splitlines()[1:5]]
    heads = [int(cols[6]) for cols in after]
    assert after[1][8] == "0"  # the bare entry, as it was
    assert after[0][8] == f"{heads[0]}:nsubj"  # the other one moved with its relation
    for old, new in zip(before, after):
        assert old[:6] + old[7:8] + old[9:] == new[:6] + new[7:8] + new[9:]


def _long_count_input(path, sentences=300, n=200):
    """Non-projective trees that keep ``count`` busy for seconds."""
    heads = [0] + [1] * (n - 1)
    heads[2] = n  # word 3 hangs from word n: its edge crosses 1 -> 2
    block = "".join(f"{d}\tw\tw\tX\t_\t_\t{heads[d - 1]}\tdep\t_\t_\n" for d in range(1, n + 1)) + "\n"
    path.write_text(block * sentences)


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8])
def test_ctrl_c_at_any_moment_of_start_up_is_quiet(tmp_path, delay):
    """SIGINT while ``python -m semiparse count`` starts (the sub-commands
    being imported) or runs: no traceback, status 130.

    ``delay`` counts from the moment ``semiparse.cli`` is imported (``-X
    importtime`` reports it on stderr), the first line of the package's own
    start-up; before it, an interrupt meets the interpreter's own start-up
    (the ``site`` module and ``.pth`` files), which no package controls."""
    source = tmp_path / "long.conllu"
    _long_count_input(source)
    process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "semiparse", "count", str(source)],
                               cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = []
    for line in process.stderr:
        seen.append(line.decode())
        if line.rstrip().endswith(b"| semiparse.cli"):
            break
    else:
        pytest.fail("semiparse.cli was never imported: " + "".join(seen[-5:]))
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=60)
    err = "".join(seen) + rest.decode()
    assert "Traceback" not in err, err
    # 130, or the end by SIGINT itself, which a shell reports as 130: CPython
    # 3.11 ends so whenever the interrupt met code run by exec or eval of a
    # string (namedtuple and dataclass creation at import), even once caught.
    assert process.returncode in (128 + signal.SIGINT, -signal.SIGINT), err


def test_an_interrupt_wrapped_by_a_class_creation_is_quiet(monkeypatch, capsys):
    """An interrupt while an import makes a class reaches ``run`` as the
    RuntimeError of a ``__set_name__`` call: status 130, no traceback; other
    errors still propagate."""
    import semiparse.cli
    from semiparse.__main__ import _interrupted, run

    def interrupted_import():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__") from exc

    monkeypatch.setattr(semiparse.cli, "main", interrupted_import)
    assert run() == 128 + signal.SIGINT
    assert _interrupted(KeyboardInterrupt()) and not _interrupted(ValueError("x"))
    monkeypatch.setattr(semiparse.cli, "main", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run()


def _huge_tree_file(path, n=200_000):
    """A non-projective tree of ``n`` words (word 3 hangs from word n across
    1 -> 2), then a one-word sentence: no chart for the first fits anywhere."""
    heads = [0] + [1] * (n - 1)
    heads[2] = n
    path.write_text("# sent_id = big\n" + "".join(
        f"{d}\tw\tw\tX\t_\t_\t{heads[d - 1]}\tdep\t_\t_\n" for d in range(1, n + 1))
        + "\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")


def test_count_refuses_a_tree_whose_chart_cannot_fit_before_allocating(tmp_path, capsys):
    """``count`` on a tree whose chart would not fit in memory: FILE:LINE and
    the memory it would need (exit 2), or the sentence left out under
    ``--on-error skip``; never a MemoryError."""
    source = tmp_path / "huge.conllu"
    _huge_tree_file(source)
    assert main(["count", str(source)]) == 2
    err = capsys.readouterr().err
    assert f"{source}:1: counting the optimal projectivizations of a non-projective tree of 200000 words " \
           "would need about" in err and "TiB of memory" in err and "available" in err
    assert len(err.splitlines()) == 1
    assert main(["count", "--json", "--on-error", "skip", str(source)]) == 0
    out, err = capsys.readouterr()
    assert '"sentences": 1' in out and "(sentence skipped)" in err


def test_projectivize_refuses_uncontracted_huge_trees_by_line(tmp_path, capsys):
    """``projectivize`` paths that cannot contract (random, --only) and trees
    that contraction does not shrink: FILE:LINE, or the sentence copied under
    ``--on-error keep``."""
    source = tmp_path / "huge.conllu"
    _huge_tree_file(source)
    out = tmp_path / "out.conllu"
    for options in (["--tie-break", "random"], ["--only", "dep"], []):
        assert main(["projectivize", *options, str(source), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{source}:1: " in err and "would need about" in err and len(err.splitlines()) == 1
        assert not out.exists()
    assert main(["projectivize", "--on-error", "keep", str(source), "-o", str(out)]) == 0
    assert out.read_bytes() == source.read_bytes()


def test_count_optimal_projectivizations_refuses_before_allocating():
    """The API says the same with a ValueError (TreeTooLarge)."""
    heads = [-1, 0] + [1] * 199_999
    heads[3] = 200_000
    with pytest.raises(TreeTooLarge, match="would need about .* of memory"):
        count_optimal_projectivizations(heads)


@pytest.mark.parametrize("mode", [[], ["--round-trip"]])
def test_compare_pseudo_names_the_line_of_a_huge_tree(tmp_path, capsys, mode):
    source = tmp_path / "huge.conllu"
    _huge_tree_file(source)
    assert main(["compare-pseudo", *mode, str(source)]) == 2
    err = capsys.readouterr().err
    assert f"{source}:1: projectivizing a non-projective tree of 200000 words" in err


def _dev_file(ud_files):
    return next(f for f in ud_files if f.name.endswith("-dev.conllu"))


def test_bench_fast_oracle_runs(ud_files, capsys):
    """It passed a system's name where the system was needed (AttributeError)."""
    argv = ["bench", "fast-oracle", str(_dev_file(ud_files)), "--systems", "arc_standard", "lr_spine",
            "--sizes", "10", "--per-size", "1", "--seconds", "0.001"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "arc_standard: mean time per call" in out and "lr_spine: mean time per call" in out


@pytest.mark.parametrize("bench, text", [
    ("projectivize", "# only a comment\n\n"),
    ("batch", "# only a comment\n\n"),
    ("train", _sentence()),  # no projective sentence
])
def test_bench_on_a_file_without_trees_says_so(tmp_path, capsys, bench, text):
    """No tree to time: one line naming the file and status 2, not a
    ZeroDivisionError (or, for train, a message naming no file)."""
    source = tmp_path / "none.conllu"
    source.write_text(text)
    assert main(["bench", bench, str(source)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(source) in err


_WORD = "{}\tw\tw\tX\t_\t_\t{}\tdep\t_\t_\n"
_GOOD = _WORD.format(1, 0) + _WORD.format(2, 1) + "\n"  # lines 1-3
BENCH_INPUTS = [  # the benchmarks reading CoNLL-U files, FILE last
    ["batch"], ["fast-oracle"], ["oracle"], ["oracle", "--system", "arc_hybrid"], ["projectivize"],
    ["train"], pytest.param(["neural"], marks=pytest.mark.skipif(
        importlib.util.find_spec("torch") is None, reason="bench neural needs torch")),
]
BAD_INPUTS = {  # name: (bytes, or None for a missing file; the error after FILE)
    "missing": (None, ": cannot read: No such file or directory"),
    "empty": (b"", ":1: no sentences"),
    "comments alone": (b"# text = x\n\n", ":1: no sentences"),
    "three columns": (b"1\tw\tw\n\n", ":1: expected 10 tab-separated columns, found 3"),
    "HEAD not an integer": (_WORD.format(1, "x").encode(), ":1: HEAD 'x' of word 1 is not an integer"),
    "HEAD _": (_WORD.format(1, "_").encode(), ":1: HEAD of word 1 is '_' (no basic tree; the "
               "benchmarks read complete trees)"),
    "not UTF-8": (_WORD.format(1, 0).replace("w", "\udcff", 1).encode("utf-8", "surrogateescape"),
                  ":1: not valid UTF-8 (invalid start byte at byte 2)"),
    "a cycle after a good tree": ((_GOOD + _WORD.format(1, 2) + _WORD.format(2, 1)).encode(),
                                  ":4: cycle 1 -> 2 -> 1 (each arrow goes from a word to its head)"),
}


def test_outputs_never_replace_the_system_file_or_its_grammar(tmp_path, capsys):
    """train and parse with --system FILE.toml wrote their output over that file or
    the completion grammar it names (-o, --checkpoint)."""
    from semiparse.resources import data_dir

    system, grammar = tmp_path / "my.toml", tmp_path / "my.grammar"
    system.write_text((data_dir("systems") / "arc_hybrid.toml").read_text().replace(
        'grammar = "arc_hybrid.grammar"', 'grammar = "my.grammar"'))
    grammar.write_text((data_dir("grammars") / "arc_hybrid.grammar").read_text())
    before = system.read_bytes(), grammar.read_bytes()
    source = tmp_path / "in.conllu"
    source.write_text(_GOOD)
    model = tmp_path / "m.npz"
    assert main(["train", str(source), "--system", str(system), "--epochs", "1", "--quiet",
                 "-o", str(model)]) == 0
    for argv in (["train", str(source), "--system", str(system), "-o", str(system)],
                 ["train", str(source), "--system", str(system), "-o", str(grammar)],
                 ["parse", str(model), str(source), "--system", str(system), "-o", str(grammar)]):
        capsys.readouterr()
        assert main(argv) == 2
        assert "is also an input of this command" in capsys.readouterr().err
    assert (system.read_bytes(), grammar.read_bytes()) == before


@pytest.mark.parametrize("command, why", [
    (["deprojectivize"], "semiparse deprojectivize reads complete trees"),
    (["compare-pseudo", "--round-trip"], "semiparse compare-pseudo reads complete trees"),
    (["evaluate", "GOOD"], "evaluate scores complete trees"),
])
def test_commands_without_partial_do_not_suggest_it(tmp_path, capsys, command, why):
    """They suggested --partial, which they do not take."""
    source, good = tmp_path / "in.conllu", tmp_path / "good.conllu"
    source.write_text(_WORD.format(1, "_") + "\n")
    good.write_text(_WORD.format(1, 0) + "\n")
    assert main([str(good) if a == "GOOD" else a for a in command] + [str(source)]) == 2
    assert capsys.readouterr().err.endswith(f"{source}:1: HEAD of word 1 is '_' (no basic tree; {why})\n")


def test_evaluate_names_a_byte_order_mark_inside_a_file(tmp_path, capsys):
    """It reported a word ID out of sequence on the next line (two files joined)."""
    joined, good = tmp_path / "joined.conllu", tmp_path / "good.conllu"
    joined.write_bytes((_GOOD + "\ufeff" + _GOOD).encode())
    good.write_text(_GOOD + _GOOD)
    assert main(["evaluate", str(good), str(joined)]) == 2
    assert f"{joined}:4: the line starts with a byte-order mark" in capsys.readouterr().err


@pytest.mark.parametrize("bad", BAD_INPUTS)
@pytest.mark.parametrize("bench", BENCH_INPUTS, ids=" ".join)
def test_bench_inputs_are_read_alike(tmp_path, capsys, bench, bad):
    """Every benchmark reads its CoNLL-U files as training does: one line
    ``FILE:LINE: reason`` and status 2 before anything is timed.  Bad
    sentences were skipped, a file without trees timed nothing with status
    0, and the same file had other messages from one benchmark to the next."""
    data, reason = BAD_INPUTS[bad]
    source = tmp_path / "in.conllu"
    if data is not None:
        source.write_bytes(data)
    assert main(["bench", *bench, str(source)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"semiparse bench {bench[0]}: error: {source}{reason}\n"


@pytest.mark.parametrize("bench", BENCH_INPUTS[:5], ids=" ".join)
def test_bench_files_may_be_directories(tmp_path, capsys, bench):
    """FILES are taken as by the treebank commands: a directory stands for its
    ``*.conllu`` files (it was an OSError for all but bench projectivize)."""
    assert main(["bench", *bench, str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f": {tmp_path}: no .conllu files in this directory\n")
    (tmp_path / "in.conllu").write_text(_GOOD + "1\tw\n")
    assert main(["bench", *bench, str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f": {tmp_path / 'in.conllu'}:4: expected 10 "
                                            f"tab-separated columns, found 2\n")


NUMERIC_OPTIONS = [  # (argv before the option, option, refused values)
    (["demo"], "--sentences", ["0", "-3", "100001", "1e3", "x"]),
    (["demo"], "--max-length", ["0", "-1", "201", "10**9"]),
    (["bench", "batch"], "--sentences", ["0", "-1"]),
    (["bench", "batch"], "--rounds", ["0", "-2"]),
    (["bench", "batch"], "--jobs", ["0", "-1", "257", "99999999999999999999"]),
    (["bench", "projectivize"], "--repeat", ["0", "-1"]),
    (["bench", "projectivize"], "--python-every", ["0", "-5"]),
    (["bench", "engine"], "--lengths", ["0", "-4", "2001", "1000000000"]),
    (["bench", "engine"], "--python-max-n", ["-1"]),
    (["bench", "engine"], "--seconds", ["0", "-0.5", "nan", "inf", "61", "1e308"]),
    (["bench", "engine"], "--seed", ["-1"]),
    (["bench", "oracle"], "--sizes", ["0", "-10"]),
    (["bench", "oracle"], "--per-size", ["0", "-1"]),
    (["bench", "oracle"], "--seconds", ["0", "nan", "-inf", "1e9"]),
    (["bench", "fast-oracle"], "--sizes", ["0"]),
    (["bench", "fast-oracle"], "--per-size", ["0"]),
    (["bench", "fast-oracle"], "--seconds", ["0", "nan", "inf"]),
    (["bench", "torch"], "--seconds", ["0", "nan", "inf", "61"]),  # nan and inf timed forever
    (["bench", "constituency"], "--sentences", ["0", "-1"]),
    (["bench", "constituency"], "--configs", ["0"]),
    (["bench", "constituency"], "--exhaustive-max", ["-1"]),
    (["bench", "train"], "--sentences", ["0"]),
    (["bench", "train"], "--epochs", ["0", "-1"]),
]


@pytest.mark.parametrize("argv, option, values", NUMERIC_OPTIONS, ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_bench_and_demo_refuse_meaningless_numbers(capsys, argv, option, values):
    """Zero, negative, non-finite or too large where meaningless: the usage
    and one line naming the option, status 2, before any work."""
    for value in values:
        with pytest.raises(SystemExit) as stop:
            main([*argv, f"{option}={value}"])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert f"error: argument {option}" in err.splitlines()[-1] and ": expected " in err, err


def test_bench_engine_refuses_a_batch_too_large_for_memory(capsys):
    assert main(["bench", "engine", "--parts", "batch", "--batch", "100000", "2000"]) == 2
    assert "SENTENCES x (WORDS + 1)^2" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1e-300", "61"])
def test_seconds_type_refuses_what_would_never_end_or_never_time(value):
    """``--seconds nan`` or ``inf`` made the timing loops run for ever."""
    with pytest.raises(argparse.ArgumentTypeError, match="seconds above 0 and at most 60"):
        seconds(60)(value)


def test_demo_at_the_smallest_sizes(tmp_path, capsys):
    """One sentence of one word, the smallest sizes still allowed, runs."""
    assert main(["demo", "--sentences", "1", "--max-length", "1", "-o", str(tmp_path)]) == 0
    assert "1/1 gold edges kept (100.00%)" in capsys.readouterr().out


def test_count_plot_to_stdout_holds_only_the_png(tmp_path, capsysbinary):
    """``--plot -``: standard output is the PNG alone, the table goes to stderr;
    with --json or --per-sentence, which need standard output too, status 2."""
    source = tmp_path / "in.conllu"
    source.write_text(_sentence(misc1="_"))
    assert main(["count", "--plot", "-", str(source)]) == 0
    out, err = capsysbinary.readouterr()
    assert out.startswith(b"\x89PNG\r\n\x1a\n") and b"non-proj" not in out
    assert b"non-proj" in err
    for extra in ("--json", "--per-sentence"):
        assert main(["count", "--plot", "-", extra, str(source)]) == 2
        out, err = capsysbinary.readouterr()
        assert out == b"" and b"--plot - writes the PNG to standard output" in err


def test_count_plot_without_non_projective_sentences_warns_nothing(tmp_path, capsys):
    """A treebank with no non-projective tree gives a plot that says so, and
    no matplotlib warning (turned into an error here)."""
    source = tmp_path / "in.conllu"
    source.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    png = tmp_path / "plot.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["count", "--plot", str(png), str(source)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG") and capsys.readouterr().err == ""


def _heads_of(path):
    return [line.split("\t")[6] for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#") and line.split("\t")[0].isdigit()]


@pytest.mark.parametrize("encoding", ["head", "path"])
def test_encode_defaults_to_the_tie_break_that_restores_most(ud_files, tmp_path, encoding):
    """With --encode the default tie-break is closest: its output is that of
    --tie-break closest, and decoding it gives back more gold heads than with
    first (the old default) on a shared dev file."""
    source = next(f for f in ud_files if f.name == "da_ddt-ud-dev.conllu")
    gold = _heads_of(source)
    restored = {}
    for name, options in (("default", []), ("closest", ["--tie-break", "closest"]),
                          ("first", ["--tie-break", "first"])):
        encoded, back = tmp_path / f"{name}.enc.conllu", tmp_path / f"{name}.back.conllu"
        assert main(["projectivize", "--encode", encoding, *options, str(source), "-o", str(encoded)]) == 0
        assert main(["deprojectivize", str(encoded), "-o", str(back)]) == 0
        restored[name] = sum(a == b for a, b in zip(_heads_of(back), gold))
    assert (tmp_path / "default.enc.conllu").read_bytes() == (tmp_path / "closest.enc.conllu").read_bytes()
    assert restored["default"] > restored["first"]


def test_compare_pseudo_round_trip_leaves_out_encoded_sentences_under_on_error(tmp_path, capsys):
    """Labels already encoded cannot be encoded again: under --on-error keep
    (or skip) the sentence is left out with a warning and the rest measured;
    under fail, one line and status 2."""
    plain, encoded = tmp_path / "plain.conllu", tmp_path / "encoded.conllu"
    plain.write_text(_sentence(misc1="_"))
    assert main(["projectivize", "--encode", "head", str(plain), "-o", str(encoded)]) == 0
    capsys.readouterr()
    for policy in ("keep", "skip"):
        assert main(["compare-pseudo", "--round-trip", "--json", "--on-error", policy, str(encoded), str(plain)]) == 0
        out, err = capsys.readouterr()
        assert f"{encoded}:2: DEPREL 'nsubj||" in err and err.rstrip().endswith("(sentence left out)")
        files = json.loads(out)["files"]
        assert files[0]["methods"] == [] and files[1]["methods"][0]["arcs_lost"] == 2
    assert main(["compare-pseudo", "--round-trip", str(encoded)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_bench_errors_name_the_benchmark(tmp_path, capsys):
    assert main(["bench", "projectivize", str(tmp_path / "missing.conllu")]) == 2
    assert capsys.readouterr().err.startswith("semiparse bench projectivize: error: ")


def test_a_directory_given_as_input_is_named_without_errno(tmp_path, capsys):
    """An OSError with a file name reads ``PATH: reason`` like the other file
    errors, not ``[Errno 21] Is a directory: 'PATH'``."""
    for command in ("projectivize", "deprojectivize"):
        assert main([command, str(tmp_path)]) == 2
        assert capsys.readouterr().err == f"semiparse {command}: error: {tmp_path}: Is a directory\n"


def test_evaluate_refuses_standard_input_for_both_files(capsys):
    assert main(["evaluate", "-", "-"]) == 2
    assert "GOLD and SYSTEM cannot both be - (standard input is read once)" in capsys.readouterr().err


def test_a_full_disk_names_the_output(tmp_path):
    """A write that fails for lack of space names the output and leaves no
    file behind (a full disk, simulated: tests write to no real device)."""
    import errno
    import os

    from semiparse.treebank.outputs import OutputError, open_output

    target = tmp_path / "out.conllu"
    with pytest.raises(OutputError, match=f"^{target}: cannot write: No space left on device$"):
        with open_output(str(target)) as out:
            out.write("x")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert os.listdir(tmp_path) == []


def test_bench_projectivize_refuses_a_fifo(tmp_path, capsys):
    """It read the FIFO once, then blocked opening it again for the end-to-end rows."""
    import os

    fifo = tmp_path / "in.conllu"
    os.mkfifo(fifo)
    assert main(["bench", "projectivize", "--repeat", "1", str(fifo)]) == 2
    assert f"{fifo}: not a regular file" in capsys.readouterr().err


def test_a_file_named_twice_is_refused(tmp_path, capsys):
    """compare-pseudo and count read it twice and counted its trees twice."""
    source = tmp_path / "in.conllu"
    source.write_bytes(_sentence(misc1="_").encode())
    for argv in ([str(source), str(source)], [str(tmp_path), str(source)]):
        assert main(["count", *argv]) == 2
        assert "named twice (directly or through a directory)" in capsys.readouterr().err
    for command in (["count"], ["compare-pseudo", "--round-trip"]):  # stdin was read twice, the second time empty
        assert main([*command, "-", str(source), "-"]) == 2
        assert "-: standard input named twice: it can be read only once" in capsys.readouterr().err


def test_standard_input_that_reads_a_file_named_too_is_refused(tmp_path):
    """count - /dev/stdin < FILE and count FILE - < FILE counted FILE's trees twice."""
    source = tmp_path / "in.conllu"
    source.write_bytes(_sentence(misc1="_").encode())
    for argv, message in ((["-", "/dev/stdin"], "/dev/stdin: the same file as -"),
                          ([str(source), "-"], f"-: the same file as {source}")):
        with open(source, "rb") as stdin:
            # in the checkout the uncompiled sources would shadow the installed package
            done = subprocess.run([sys.executable, "-m", "semiparse", "count", *argv], stdin=stdin,
                                  capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr and not done.stdout


def test_treebanks_of_one_file_name_in_two_folders_keep_their_own_rows():
    from semiparse.cli.count import treebank_names

    paths = ["a/train.conllu", "b/train.conllu", "UD_X/x-train.conllu", "UD_X/x-dev.conllu",
             "c/dev.conllu"]
    assert treebank_names(paths) == {"a/train.conllu": "a/train", "b/train.conllu": "b/train",
                                     "UD_X/x-train.conllu": "UD_X", "UD_X/x-dev.conllu": "UD_X",
                                     "c/dev.conllu": "dev"}


def test_bench_constituency_refuses_an_empty_treebank(tmp_path, capsys):
    """It printed empty tables with status 0 (bench projectivize refuses the same)."""
    empty = tmp_path / "empty.mrg"
    empty.write_text("")
    assert main(["bench", "constituency", "--treebank", str(empty)]) == 2
    assert f"{empty}: no tree to time" in capsys.readouterr().err

"""Outputs and process behaviour of the commands: inputs that are pipes,
outputs that are symlinks, FIFOs or inputs, signals, closed pipes.

Everything happens in temporary directories (FIFOs and symlinks made
there); no test touches a real device.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from semiparse.cli import _treebank, main
from semiparse.treebank.outputs import OutputError, check_output, open_output

# Word 2 -> 4 crosses 1 -> 3: non-projective, so projectivize changes a HEAD.
NONPROJ = (
    "# sent_id = a\n"
    "1\tA\ta\tX\t_\t_\t3\tdep\t_\t_\n"
    "2\tB\tb\tX\t_\t_\t4\tdep\t_\t_\n"
    "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n"
    "4\tD\td\tX\t_\t_\t3\tdep\t_\t_\n"
    "\n"
)
PROJ = (
    "1\tE\te\tX\t_\t_\t2\tdep\t_\t_\n"
    "2\tF\tf\tX\t_\t_\t0\troot\t_\t_\n"
    "\n"
)
TEXT = NONPROJ + PROJ


def _command(*args):
    """``python -m semiparse ARGS``; run it in a temporary directory, since in
    the checkout the uncompiled sources would shadow the installed package."""
    return [sys.executable, "-m", "semiparse", *args]


def _feed_fifo(path, data):
    """Write ``data`` into the FIFO ``path`` from a thread (opening blocks until a reader comes)."""
    def write():
        with open(path, "wb") as fifo:
            fifo.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# -- inputs that can be read only once -------------------------------------------------------------

def test_projectivize_reads_a_pipe_on_stdin_path(tmp_path):
    """`cat f | semiparse projectivize /dev/stdin` used to write nothing."""
    expected = tmp_path / "expected.conllu"
    expected.write_text(TEXT)
    assert main(["projectivize", str(expected), "-o", str(expected)]) == 0
    result = subprocess.run(_command("projectivize", "/dev/stdin"), input=TEXT.encode(),
                            capture_output=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.read_bytes()
    assert result.stdout != TEXT.encode()


def test_count_reads_a_fifo_once(tmp_path, capsys):
    """`semiparse count <(cat f)` used to report 0 sentences: the progress bar read the pipe first."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = _feed_fifo(fifo, (TEXT * 400).encode())  # more sentences than PROGRESS_MIN
    assert main(["count", "--json", str(fifo)]) == 0
    writer.join(10)
    import json

    stats = json.loads(capsys.readouterr().out)
    assert stats["total"]["sentences"] == 800
    assert stats["total"]["non_projective"] == 400


# -- outputs ---------------------------------------------------------------------------------------

def test_output_through_a_symlink_keeps_the_link(tmp_path):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    real = tmp_path / "data" / "real.conllu"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.conllu"
    link.symlink_to(real)
    assert main(["projectivize", str(source), "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() != "old\n" and real.read_text().count("\n") == TEXT.count("\n")
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.conllu"]  # no temporary left


def test_output_keeps_the_permissions_of_the_file_it_replaces(tmp_path):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    out = tmp_path / "out.conllu"
    out.write_text("old\n")
    out.chmod(0o640)
    assert main(["projectivize", str(source), "-o", str(out)]) == 0
    assert out.stat().st_mode & 0o777 == 0o640


def test_output_into_a_fifo_is_streamed(tmp_path):
    """A FIFO used to be replaced by a regular file, so its reader got nothing."""
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["projectivize", str(source), "-o", str(fifo)]) == 0
    reader.join(10)
    assert fifo.exists() and not fifo.is_file()
    expected = tmp_path / "expected.conllu"
    assert main(["projectivize", str(source), "-o", str(expected)]) == 0
    assert received == [expected.read_bytes()]


def test_output_in_a_missing_directory_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    monkeypatch.setattr(_treebank, "read_conllu", lambda *a, **k: pytest.fail("input read before the check"))
    target = tmp_path / "missing" / "out.conllu"
    assert main(["projectivize", str(source), "-o", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"semiparse projectivize: error: {target}: directory ") and "does not exist" in err
    assert "\n" not in err


def test_output_that_is_a_directory_is_refused(tmp_path, capsys):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    assert main(["projectivize", str(source), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"semiparse projectivize: error: {tmp_path}: is a directory"


def test_plot_over_an_input_is_refused(tmp_path, capsys):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    assert main(["count", str(source), "--plot", str(source)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert source.read_text() == TEXT


@pytest.mark.parametrize("command", [["projectivize"], ["projectivize", "--encode", "head"], ["deprojectivize"]])
def test_in_place_projectivize_and_deprojectivize_stay_allowed(tmp_path, command):
    """Both read their input to its end before the rename (docs/architecture.md, Errors)."""
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    if command == ["deprojectivize"]:
        assert main(["projectivize", "--encode", "head", str(source), "-o", str(source)]) == 0
    expected = tmp_path / "expected.conllu"
    assert main([*command, str(source), "-o", str(expected)]) == 0
    assert main([*command, str(source), "-o", str(source)]) == 0
    assert source.read_bytes() == expected.read_bytes()


def test_check_output_refuses_an_input_also_through_a_link(tmp_path):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    link = tmp_path / "other-name.conllu"
    link.symlink_to(source)
    with pytest.raises(OutputError, match="is also an input"):
        check_output(link, [source])
    check_output(link, [source], allow_input=True)
    check_output("-", [source])


def test_write_errors_name_the_users_path_not_the_temporary(tmp_path, monkeypatch):
    """An -o error used to name `.x.conllu.hgdvxl94.tmp`."""
    target = tmp_path / "x.conllu"

    real_open = os.open

    def refuse(name, *args, **kwargs):
        if str(name).endswith(".tmp"):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(OutputError) as error:
        with open_output(target) as out:
            out.write("never\n")
    assert str(error.value) == f"{target}: cannot write here: Permission denied"


def test_an_interrupt_just_after_the_temporary_is_created_removes_it(tmp_path, monkeypatch):
    """Ctrl-C or SIGTERM can land between the creation of the temporary file
    and the code that cleans it up; the file used to stay behind."""
    real_open = os.open

    def create_then_interrupt(name, *args, **kwargs):
        fd = real_open(name, *args, **kwargs)
        if str(name).endswith(".tmp"):
            os.close(fd)
            raise KeyboardInterrupt
        return fd

    monkeypatch.setattr(os, "open", create_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        with open_output(tmp_path / "x.conllu") as out:
            out.write("never\n")
    assert list(tmp_path.iterdir()) == []


# -- signals and pipes -----------------------------------------------------------------------------

def _big_input(tmp_path, sentences=40000):
    source = tmp_path / "big.conllu"
    source.write_text(NONPROJ * sentences)
    return source


def _fifo_feed(source):
    """A write end of the FIFO ``source`` (opened without waiting for a reader:
    O_RDWR on Linux) that writes without blocking; see :func:`_feed`."""
    fd = os.open(source, os.O_RDWR)
    os.set_blocking(fd, False)
    return fd


def _feed(fd, data, process, seconds=60):
    """Write ``data`` to the non-blocking ``fd`` as the reader takes it; give up
    if the process ends."""
    end = time.monotonic() + seconds
    while data and time.monotonic() < end and process.poll() is None:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            time.sleep(0.01)


def _wait_for_temporary(directory, process, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if [p for p in directory.iterdir() if p.name.endswith(".tmp")]:
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_during_projectivize_removes_the_temporary(tmp_path, signum, status):
    """The input comes through a FIFO that stays open until the signal is
    sent, so the signal always lands while projectivize is running (with a
    plain file, a fast run could end first)."""
    source = tmp_path / "in.conllu"
    os.mkfifo(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = subprocess.Popen(_command("projectivize", str(source), "-o", str(out_dir / "o.conllu")),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    feed = _fifo_feed(source)
    try:
        _feed(feed, (NONPROJ * 20).encode(), process)
        assert _wait_for_temporary(out_dir, process), "no temporary file appeared"
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        os.close(feed)
        process.kill()
    assert process.returncode == status, err
    assert list(out_dir.iterdir()) == []
    assert b"Traceback" not in err


def test_ctrl_c_with_workers_is_quiet(tmp_path):
    """With --jobs 2 the workers used to print `Process ForkPoolWorker-N` tracebacks.
    The input comes through a FIFO kept open, so the run is still going when
    the interrupt comes."""
    source = tmp_path / "in.conllu"
    os.mkfifo(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = subprocess.Popen(
        _command("projectivize", "--jobs", "2", str(source), "-o", str(out_dir / "o.conllu")),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=tmp_path,
    )
    feed = _fifo_feed(source)
    try:
        _feed(feed, (NONPROJ * 2000).encode(), process)  # the first batch starts the pool
        assert _wait_for_temporary(out_dir, process), "no temporary file appeared"
        time.sleep(0.3)  # let the pool start
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole process group
        _, err = process.communicate(timeout=60)
    finally:
        os.close(feed)
        process.kill()
    assert process.returncode == 130
    assert b"ForkPoolWorker" not in err and b"Traceback" not in err, err.decode()
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("name", ["/dev/stdout", "/proc/self/fd/1", "link"])
def test_output_named_by_the_stdout_descriptor_appends_and_pipes(tmp_path, name):
    """`-o /dev/stdout >> FILE` used to replace FILE (the path leads to it
    through /proc/self/fd/1, and was renamed over), and `-o /dev/stdout | cat`
    was refused as a path that does not exist; both now write into the
    descriptor itself."""
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    expected = tmp_path / "expected.conllu"
    assert main(["projectivize", str(source), "-o", str(expected)]) == 0
    if name == "link":
        name = tmp_path / "out"
        name.symlink_to("/dev/stdout")
    appended = tmp_path / "appended.txt"
    appended.write_text("KEEP\n")
    with open(appended, "ab") as out:
        result = subprocess.run(_command("projectivize", str(source), "-o", str(name)), stdout=out,
                                stderr=subprocess.PIPE, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert appended.read_bytes() == b"KEEP\n" + expected.read_bytes()
    piped = subprocess.run(_command("projectivize", str(source), "-o", str(name)), capture_output=True,
                           timeout=120, cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == expected.read_bytes()


def test_output_named_by_a_closed_descriptor_is_refused(tmp_path, capsys):
    source = tmp_path / "in.conllu"
    source.write_text(TEXT)
    fd = os.open(source, os.O_RDONLY)
    os.close(fd)  # a number no file is open under now
    assert main(["projectivize", str(source), "-o", f"/dev/fd/{fd}"]) == 2
    assert f"/dev/fd/{fd}: cannot write here: descriptor {fd}" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["projectivize", "IN"], ["deprojectivize", "IN"],
                                  ["projectivize", "IN", "-o", "/dev/stdout"]])
def test_standard_output_appending_to_the_input_is_refused(tmp_path, args):
    """`semiparse projectivize IN >> IN` read what it appended, forever (the file grew
    to the size limit)."""
    source = tmp_path / "in.conllu"
    source.write_text(NONPROJ * 3)
    before = source.read_bytes()
    with open(source, "ab") as out:
        done = subprocess.run(_command(*[str(source) if a == "IN" else a for a in args]), stdout=out,
                              stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert f"standard output writes into {source}, which this command reads" in done.stderr.decode()
    assert source.read_bytes() == before


@pytest.mark.parametrize("args, closed, message", [
    (["projectivize"], "stdin", "standard input is closed"),
    (["count", "-"], "stdin", "standard input is closed"),
    (["projectivize", "IN"], "stdout", "-: cannot write here: standard output"),
    (["count", "IN"], "stdout", "standard output is closed"),   # printed nothing, status 0
])
def test_a_closed_standard_stream_is_an_error(tmp_path, args, closed, message):
    source = tmp_path / "in.conllu"
    source.write_text(NONPROJ)
    command = _command(*[str(source) if a == "IN" else a for a in args])
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
    done = subprocess.run(command, **streams, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120,
                          preexec_fn=lambda: os.close(0 if closed == "stdin" else 1))
    assert done.returncode == 2 and message in done.stderr.decode(), done.stderr


@pytest.mark.parametrize("args", [["projectivize"], ["count", "--per-sentence"]])
def test_a_closed_pipe_ends_quietly(tmp_path, args):
    """`semiparse projectivize f | head -2` used to print `error: [Errno 32] Broken pipe`, exit 2."""
    source = _big_input(tmp_path, sentences=20000)
    process = subprocess.Popen(_command(*args, str(source)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=tmp_path)
    process.stdout.readline()
    process.stdout.close()  # the reader goes away, as `head` does
    err = process.stderr.read()
    process.wait(timeout=120)
    assert err == b""
    assert process.returncode == 128 + signal.SIGPIPE


def test_many_jobs_on_few_sentences_start_no_pool(tmp_path, monkeypatch):
    """`--jobs 10000` on 3 sentences used to start 10000 processes."""
    source = tmp_path / "in.conllu"
    source.write_text(NONPROJ * 3)
    monkeypatch.setattr(_treebank.multiprocessing, "get_context",
                        lambda *a: pytest.fail("a process pool was started for 3 sentences"))
    expected = tmp_path / "expected.conllu"
    assert main(["projectivize", str(source), "-o", str(expected)]) == 0
    out = tmp_path / "out.conllu"
    assert main(["projectivize", "--jobs", "10000", str(source), "-o", str(out)]) == 0
    assert out.read_bytes() == expected.read_bytes()


def test_pool_is_capped_by_the_cores(monkeypatch):
    sizes = []

    class Pool:
        def __init__(self, jobs, initializer=None):
            sizes.append(jobs)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, function, batch, chunksize):
            return list(map(function, batch))

    context = type("Context", (), {"Pool": Pool})
    monkeypatch.setattr(_treebank.multiprocessing, "get_context", lambda *a: context)
    monkeypatch.setattr(_treebank.os, "cpu_count", lambda: 3)
    assert list(_treebank.mapped(abs, range(-2000, 0), 10000)) == list(range(2000, 0, -1))
    assert sizes == [3]


@pytest.mark.parametrize("delay", [1.5, 3.0])
def test_sigterm_during_check_stops_quietly(tmp_path, delay):
    """check draws its examples with hypothesis, which took SIGTERM landing
    in its data generation for a flaky strategy and printed its own
    traceback (exit status 1); it is an interrupt, as Ctrl-C is."""
    process = subprocess.Popen(_command("check", "in_order"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        time.sleep(delay)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143, err
    assert b"Traceback" not in err and b"Flaky" not in err


def test_sigterm_raised_again_never_cuts_a_cleanup_short():
    """The timer that raises SIGTERM's exception again (where Python ignored
    it) holds off while the first one is on its way: a finally block that
    outlasts several of its ticks (a slow removal of temporary files) runs
    to its end."""
    from semiparse.cli import Terminated, _stopped, _terminate, _terminating

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGALRM)}
    done = []
    try:
        signal.signal(signal.SIGTERM, _terminate)
        _terminating.clear()
        with pytest.raises(Terminated):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            finally:
                start = time.monotonic()
                while time.monotonic() - start < 0.3:   # six ticks of the timer
                    pass
                done.append("cleanup finished")
    finally:
        _stopped()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    assert done == ["cleanup finished"]

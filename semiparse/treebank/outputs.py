"""Output files that never lose data.

Where an output goes decides how it is written:

- ``None`` or ``"-"``: standard output, streamed.

Text is written as UTF-8 with ``errors="surrogateescape"``: bytes that were
not valid UTF-8 in an input read the same way (a CoNLL-U sentence copied
under ``--on-error keep``) go out exactly as they came in.
- a regular file, or a path where nothing exists yet (through symbolic
  links: the file they lead to): written to a uniquely named temporary file
  next to it and renamed over it only when everything was written, so a
  failure, Ctrl-C or SIGTERM never leaves a half-written or replaced file,
  and a symbolic link stays a link.  A replaced file keeps its permissions.
- a FIFO, a character device or a socket: streamed straight into it (it
  cannot be replaced without cutting off whoever reads it).
- ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N`` (or a
  link to one): written into that inherited descriptor, so that ``>>``
  appends and a pipe gets the text, as a shell user means by them (the file
  behind the descriptor is never replaced).

:func:`check_output` runs before any work, so a mistake in an output path
(missing directory, a directory, one of the inputs) costs nothing.  Every
message names the path as the user gave it, never the temporary file.
"""
import contextlib
import errno
import io
import os
import re
import secrets
import stat
import sys
from pathlib import Path
from semiparse.errors import OutputError


def is_stdout(path):
    return path is None or str(path) == "-"


def _is_stream(mode):
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


_DESCRIPTOR = re.compile(r"/dev/(stdout|stderr)|/dev/fd/(\d+)|/proc/self/fd/(\d+)")


def _descriptor(path):
    """The inherited file descriptor ``path`` names (following links), or None."""
    here = os.path.abspath(path)
    for _ in range(40):
        found = _DESCRIPTOR.fullmatch(here)
        if found:
            name, *numbers = found.groups()
            return {"stdout": 1, "stderr": 2}[name] if name else int(numbers[0] or numbers[1])
        if not os.path.islink(here):
            return None
        here = os.path.normpath(os.path.join(os.path.dirname(here), os.readlink(here)))
    return None


def _resolve(path):
    """``(target, stat or None)``: the file ``path`` leads to through links,
    and what is there now."""
    target = Path(os.path.realpath(path))
    try:
        return target, os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write here: {exc.strerror}") from None


def _same_file(a, b):
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_output(path, inputs=(), allow_input=False):
    """Raise :class:`OutputError` unless ``path`` can be written.

    ``inputs``: the paths the same command reads; an output that is one of
    them is refused (unless ``allow_input``: a command that reads its input
    whole before the atomic rename may write in place).
    """
    fd = 1 if is_stdout(path) else _descriptor(path)
    if fd is not None:
        _check_descriptor("-" if is_stdout(path) else path, fd, inputs)
        return
    target, info = _resolve(path)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path}: is a directory")
    if info is not None and _is_stream(info.st_mode):
        return
    if not target.parent.exists():
        raise OutputError(f"{path}: directory {target.parent} does not exist")
    if not target.parent.is_dir():
        raise OutputError(f"{path}: {target.parent} is not a directory")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: directory {target.parent} is not writable")
    if info is None or allow_input:
        return
    for name in inputs:
        if is_stdout(name):
            continue
        with contextlib.suppress(OSError):
            if _same_file(info, os.stat(name)):
                raise OutputError(f"{path}: is also an input of this command; choose another output")


def _check_descriptor(path, fd, inputs):
    """Refuse an output descriptor that is closed, or that writes into a
    regular file the command reads (``cmd IN >> IN`` would read what it
    appends, forever): it is written as it goes, never renamed into place."""
    try:
        info = os.fstat(fd)
    except OSError as exc:
        what = "standard output" if fd == 1 else f"descriptor {fd}"
        raise OutputError(f"{path}: cannot write here: {what}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        return
    for name in inputs:
        with contextlib.suppress(OSError, TypeError):
            if name is not None and _same_file(info, os.fstat(0) if is_stdout(name) else os.stat(name)):
                where = "standard output" if fd == 1 else f"descriptor {fd}"
                raise OutputError(f"{path}: {where} writes into {'standard input' if is_stdout(name) else name}, "
                                  f"which this command reads; choose another output")


@contextlib.contextmanager
def open_output(path, binary=False):
    """A stream for ``path``, written as the module docstring says: text
    (UTF-8, line endings written as given) or ``binary``."""
    fd = None if is_stdout(path) else _descriptor(path)
    if is_stdout(path) or fd == 1:
        with _full("-" if is_stdout(path) else path), _stdout(binary) as out:
            yield out
        return
    if fd is not None:
        try:
            raw = os.fdopen(os.dup(fd), "wb")
        except OSError as exc:
            raise OutputError(f"{path}: cannot write here: descriptor {fd}: {exc.strerror}") from None
        with _full(path), _wrap(raw, binary) as out:
            yield out
        return
    target, info = _resolve(path)
    if info is not None and _is_stream(info.st_mode):
        with _opened(path, target, binary) as out:
            yield out
        return
    tmp = None
    try:
        # The name is chosen before the file is created, so that an interrupt
        # (Ctrl-C, SIGTERM) arriving just after the creation still removes it.
        while True:
            tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                break
            except FileExistsError:
                continue
            except OSError as exc:
                tmp = None
                raise OutputError(f"{path}: cannot write here: {exc.strerror}") from None
        with _full(path), _wrap(os.fdopen(fd, "wb"), binary) as out:
            yield out
        if info is not None:
            mode = stat.S_IMODE(info.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        try:
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write here: {exc.strerror}") from None
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


@contextlib.contextmanager
def _opened(path, target, binary):
    """Stream straight into a FIFO, device or socket."""
    try:
        raw = open(target, "wb")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write here: {exc.strerror}") from None
    with _full(path), _wrap(raw, binary) as out:
        yield out


@contextlib.contextmanager
def _full(path):
    """Name ``path`` in the errors of writing to it that the disk gives (no
    space, quota, size limit), which carry no file name."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None


def _wrap(raw, binary):
    """``raw`` (a binary file) itself, or a UTF-8 text layer that owns it."""
    return raw if binary else io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")


@contextlib.contextmanager
def _stdout(binary):
    if binary:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape", newline="",
                           write_through=True)
    try:
        yield out
        out.flush()
    finally:
        out.detach()

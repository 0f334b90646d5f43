"""The ``semiparse`` command line.

Every module in :mod:`semiparse.cli` that defines ``add_parser(subparsers)``
contributes one sub-command; the parser it returns must set ``func`` (a
callable taking the parsed arguments and returning an exit code).  Benchmarks
plug into ``semiparse bench`` the same way from :mod:`semiparse.bench`.
"""
import argparse
import contextlib
import importlib
import math
import os
import pkgutil
import signal
import sys
import threading
import warnings

from semiparse import __version__
from semiparse.errors import SemiparseError, UserError


def int_range(low, high=None):
    """An argparse type: an integer from ``low`` to ``high`` (no upper
    bound when None); anything else is refused on one line (status 2)."""
    expected = f"an integer from {low} to {high}" if high is not None else (
        "a positive integer" if low == 1 else f"an integer >= {low}")

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


def seconds(high):
    """An argparse type: a finite number of seconds above 0 and at most ``high``."""

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 < value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 and at most {high}, got {text!r}")
        return value

    return parse


def pyplot():
    """``matplotlib.pyplot`` drawing to files (the Agg backend), or a
    UserError naming the extra that installs it (``--plot`` options call it
    before their work, so a missing matplotlib costs no run)."""
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'semiparse[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plugins(package):
    pkg = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{package}.{info.name}")
            if hasattr(module, "add_parser"):
                yield module


def build_parser():
    parser = argparse.ArgumentParser(
        prog="semiparse",
        description="Dynamic oracles, optimal projectivization and tree counting "
        "with semiring split-bilexical parsing.",
    )
    parser.add_argument("--version", action="version", version=f"semiparse {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _plugins("semiparse.cli"):
        module.add_parser(sub)
    bench = sub.add_parser("bench", help="speed benchmarks, each against a baseline in the same run")
    bench_sub = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    bench_sub.required = True
    for module in _plugins("semiparse.bench"):
        module.add_parser(bench_sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process so that ``finally`` blocks (and
    the removal of temporary output files) run as they do on Ctrl-C.  An
    interrupt to every library between: hypothesis (``semiparse check``)
    stops on one, where another exception landing in its data generation
    came out as its own FlakyStrategyDefinition traceback."""


# Whether a SIGTERM is waiting for the command to stop: [] none, [True] one
# is, [False] the command has stopped for it.
_terminating = []


def _terminate(signum, frame):
    """Raise :class:`Terminated`.  Python reports and then ignores an
    exception raised inside a garbage collector callback or a ``__del__``
    (hypothesis times its collections with one), so until the command has
    stopped a timer raises it again every 50 ms, unless it is on its way
    (the ``finally`` blocks it runs, which remove temporary files, are not
    cut short)."""
    if not _terminating:
        _terminating.append(True)
        sys.unraisablehook = _unraisable
        signal.signal(signal.SIGALRM, _terminate)
        signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    if _terminating[0] and not isinstance(sys.exc_info()[1], Terminated):
        raise Terminated()


def _unraisable(info, default=sys.unraisablehook):
    """Python's report of an exception it ignores, but for a
    :class:`Terminated` (raised again by :func:`_terminate`'s timer)."""
    if not isinstance(info.exc_value, Terminated):
        default(info)


def _stopped():
    """The command has stopped: no SIGTERM is raised again."""
    if _terminating:
        _terminating[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def _signals_held(on_main_thread):
    """Hold SIGINT and SIGTERM back while the sub-commands are imported and
    deliver them once the imports are done.  An interrupt raised inside an
    extension module's initialisation (numpy's, say) can come out as an
    ImportError that no longer names it; held back, it arrives as itself."""
    if not on_main_thread:
        yield
        return
    caught = []
    held = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
            for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
    if caught:
        signal.raise_signal(caught[0])


def main(argv=None):
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return
    its exit status.  Signals are handled from the start: building the
    parser imports every sub-command, the longest part of start-up, with
    signals held until the imports are done."""
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if on_main_thread else None
    if on_main_thread:
        _terminating.clear()
    name = "semiparse"
    closed = _stand_in_for_closed_streams()
    try:
        with _signals_held(on_main_thread):
            parser = build_parser()
        args = parser.parse_args(argv)
        name = " ".join(["semiparse", args.command] + ([args.benchmark] if args.command == "bench" else []))
        with warnings.catch_warnings():
            # a warning is one line, as errors are: not Python's file, line and source
            warnings.showwarning = lambda message, *_, **__: print(f"{name}: warning: {message}",
                                                                   file=sys.stderr)
            return args.func(args) or 0
    except (SemiparseError, ValueError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _reader_gone()
        # Mistakes in the input (bad files, bad values) are reported, not traced.
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            exc = f"{exc.filename}: {exc.strerror}"  # as the other file errors, not "[Errno 21] ..."
        elif isinstance(exc, OSError) and exc.strerror:   # no file named (standard output's)
            exc = exc.strerror
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        _stopped()
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    finally:
        for stream in closed:
            setattr(sys, stream, None)
        if on_main_thread:
            _stopped()
            signal.signal(signal.SIGTERM, previous)


class _Closed:
    """Standard input or output where the process was started with it closed
    (Python makes it None: print() would drop the results without a word)."""

    def __init__(self, what):
        self.what = what

    def __getattr__(self, name):
        raise UserError(f"{self.what} is closed")


def _stand_in_for_closed_streams():
    """Put a :class:`_Closed` in place of a closed ``sys.stdin`` or
    ``sys.stdout``; the names of those replaced (set back to None after)."""
    closed = [name for name in ("stdin", "stdout") if getattr(sys, name) is None]
    for name in closed:
        setattr(sys, name, _Closed({"stdin": "standard input", "stdout": "standard output"}[name]))
    return closed


def _reader_gone():
    """Standard output's reader went away (``| head``): stop quietly with the
    status of a process ended by SIGPIPE, as Unix tools do.  Standard output
    is pointed at /dev/null so that Python's final flush stays silent."""
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())

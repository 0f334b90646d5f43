"""``python -m semiparse`` and the ``semiparse`` script: the command line,
quiet on Ctrl-C from the start.

:func:`semiparse.cli.main` turns an interrupt into status 130 once it runs,
start-up included (importing the sub-commands takes most of it); an
interrupt before or after it (importing ``cli``, exiting) is caught by
:func:`run`, and any that still slips through ends the process without a
traceback.
"""
import signal
import sys


def _interrupted(exc):
    """Whether ``exc`` is an interrupt or was caused by one: an interrupt
    while a class is made (an import) reaches us as the RuntimeError of a
    ``__set_name__`` call, the interrupt as its cause."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _no_traceback_on_interrupt(kind, value, traceback):
    """An interrupt outside every handler: no traceback; Python then ends the
    process by SIGINT, which a shell reports as status 130."""
    if not _interrupted(value):
        sys.__excepthook__(kind, value, traceback)


def run():
    """The exit status of the command line, an interrupt anywhere included."""
    sys.excepthook = _no_traceback_on_interrupt
    try:
        from semiparse.cli import main

        return main()
    except BaseException as exc:
        if not isinstance(exc, SystemExit) and _interrupted(exc):
            return 128 + signal.SIGINT
        raise


if __name__ == "__main__":
    sys.exit(run())

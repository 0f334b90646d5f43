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


def _no_traceback_on_interrupt(kind, value, traceback):
    """An interrupt outside every handler: no traceback; Python then ends the
    process by SIGINT, which a shell reports as status 130."""
    if not issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, traceback)


def run():
    """The exit status of the command line, an interrupt anywhere included."""
    sys.excepthook = _no_traceback_on_interrupt
    try:
        from semiparse.cli import main

        return main()
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(run())

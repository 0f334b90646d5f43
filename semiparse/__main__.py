"""``python -m semiparse``: the command line, quiet on Ctrl-C from the start.

:func:`semiparse.cli.main` turns an interrupt into status 130 once it runs,
start-up included (importing the sub-commands takes most of it); an
interrupt before or after it (importing ``cli``, exiting) is caught here,
and any that still slips through ends the process without a traceback.
"""
import signal
import sys


def _no_traceback_on_interrupt(kind, value, traceback):
    """An interrupt outside every handler: no traceback; Python then ends the
    process by SIGINT, which a shell reports as status 130."""
    if not issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, traceback)


sys.excepthook = _no_traceback_on_interrupt
try:
    from .cli import main

    status = main()
except KeyboardInterrupt:
    status = 128 + signal.SIGINT
sys.exit(status)

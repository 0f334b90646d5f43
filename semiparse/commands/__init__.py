"""Sub-commands of the ``semiparse`` CLI: one module each, see :mod:`semiparse.cli`."""

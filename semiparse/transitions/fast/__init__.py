"""Fast exact oracle kernels: arc-standard's (``linear``, ``right_stack``,
``cubic_critical``), the arc-eager and arc-hybrid costs (``cost``) and
LR-spine's ``spine_table``.  Kernels only: they are registered as oracle
methods by :mod:`semiparse.transitions.oracles.methods`, which lists them.

See docs/fast-oracles.md for the algorithms and measured speed.
"""

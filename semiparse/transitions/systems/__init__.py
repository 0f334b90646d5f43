"""Transition systems: the protocol (``interface``), the registry of systems
and methods written in Python, loading by name, path or ``module:attr``,
the declared systems (``declared``: a system file read and run), the
shipped LR-spine system (``lr_spine``) and ``compiled`` (what
:func:`semiparse.system` returns).  The system-file format has its own room,
``format/``."""

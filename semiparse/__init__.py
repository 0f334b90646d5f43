"""semiparse: one semiring split-bilexical parser, many answers.

Dynamic oracles for transition-based dependency parsers, optimal
projectivization and exact tree counting all come from parsing with a split
grammar over a semiring.  The public names below are imported lazily so that
``import semiparse`` stays cheap.
"""
import importlib

from semiparse._support import moved as _moved

__version__ = "0.1.0"

_moved.install()  # the previous layout's module paths, with a DeprecationWarning

_EXPORTS = {
    # the one family of errors and warnings (semiparse.errors)
    "SemiparseError": "semiparse.errors",
    "SemiparseWarning": "semiparse.errors",
    # core engine
    "load_grammar": "semiparse.grammar",
    "Grammar": "semiparse.grammar",
    "GrammarError": "semiparse.grammar",
    "parse": "semiparse.chart.engine",
    "ParseResult": "semiparse.chart.result",
    "count_projective": "semiparse.chart.engine",
    # queries on the distribution over trees
    "entropy": "semiparse.queries.expectation",
    "expected": "semiparse.queries.expectation",
    "sample": "semiparse.queries.sampling",
    "parse_labelled": "semiparse.chart.engine",
    "marginals": "semiparse.queries.marginals",
    "max_marginals": "semiparse.queries.marginals",
    # treebank tools
    "is_projective": "semiparse.treebank.projectivity",
    "projectivize": "semiparse.treebank.projectivity",
    "count_optimal_projectivizations": "semiparse.treebank.projectivity",
}

# dynamic oracles and their systems (below): dependency and constituent systems
__all__ = sorted(_EXPORTS) + ["oracle", "system", "__version__"]

def system(name_or_path):
    """A transition system to step through, by the registry of
    :func:`semiparse.transitions.system`: for a dependency system (a shipped
    or registered name, a TOML file, ``module:attr`` or a system object) the
    :class:`~semiparse.transitions.systems.compiled.System` of its compiled
    machine; for ``"top_down"`` or ``"in_order"`` the constituent system."""
    from semiparse.transitions import system as registered_system

    return registered_system(name_or_path)


def oracle(system, strategy="none", method="auto", **options):
    """A dynamic oracle, by the registry of :func:`semiparse.transitions.oracle`:
    for a dependency transition system (a shipped or registered name, a TOML
    file or a system object) the :class:`~semiparse.transitions.Oracle` of
    ``strategy`` and ``method``; for ``"top_down"`` or ``"in_order"`` the
    constituent oracle (``options``: ``chain``)."""
    from semiparse.transitions import oracle as registered_oracle

    return registered_oracle(system, strategy, method, **options)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'semiparse' has no attribute {name!r}")


def __dir__():
    return __all__

"""Registries of transition systems and of oracle methods.

Two plug-in points, both filled at import time:

- :func:`register_system` adds a transition system written in Python: a
  dependency definition (a subclass of
  :class:`semiparse.transitions.systems.interface.TransitionSystem`, compiled
  by ``semiparse.system``), or any system implementing
  :class:`~semiparse.transitions.systems.interface.SystemProtocol` with the
  maker of its oracle (the constituent systems ``top_down`` and
  ``in_order``); the systems declared as data in ``systems/*.toml`` are
  found by name without registration.  The registry is the one list of the
  systems of each kind (:func:`registered_systems`).
- :func:`register_method` adds a way to compute the oracle scores of one
  system, e.g. a fast algorithm exact for projective gold trees.
  ``semiparse.oracle(system, method="auto")`` picks the registered method of
  lowest rank that supports the strategy and applies to the gold tree, and
  falls back to the grammar path (rank :data:`GRAMMAR_RANK`, or
  :data:`GRAMMAR_REDUCED_RANK` where it runs in C on reduced strings).

The registry imports and registers the systems written in Python that ship
(:class:`~semiparse.transitions.systems.lr_spine.LRSpine`, and the
constituent systems of :mod:`semiparse.transitions.constituent` with their
oracle); the
shipped fast methods are registered by
:mod:`semiparse.transitions.oracles.methods`, which reads this registry.
"""
from dataclasses import dataclass

from semiparse.transitions.constituent.oracle import oracle_of
from semiparse.transitions.constituent.systems import InOrder, TopDown
from semiparse.transitions.systems.interface import SystemProtocol, TransitionSystem
from semiparse.transitions.systems.lr_spine import LRSpine

GRAMMAR_RANK = 100
# The grammar path of a declared system that declares ``critical_buffer``,
# under strategy none: in C on reduced strings (``_grammar_rows.pyx``), it is
# faster than the methods ranked above it (arc-standard's ``cubic_critical``
# by 4x on the non-projective trees of the Gothic dev set).
GRAMMAR_REDUCED_RANK = 40

_SYSTEMS = {}
_ORACLES = {}  # name -> the oracle maker of a registered SystemProtocol
_METHODS = {}


@dataclass(frozen=True)
class Method:
    """A registered oracle method.

    ``fn(stack, buffer, heads, arcs, strategy) -> dict[str, int]`` returns the
    same scores as the grammar path; ``strategies`` are the strategy names it
    supports; ``projective_only`` says it is exact only for projective gold
    trees; lower ``rank`` is preferred by ``method="auto"``, which uses the
    method only from ``min_size`` on (k + m, the stack size less one plus the
    buffer size: where ``semiparse bench oracle`` measured it to beat the
    grammar path) and the grammar path below.  ``rows``, if given, is a
    :class:`semiparse.transitions.oracles._row_kernels.RowKernel`: the same scores computed in C
    on the C configuration, which ``Oracle.scores_batch`` runs without the GIL.
    """

    system: str
    name: str
    fn: object
    strategies: tuple
    projective_only: bool
    rank: float
    min_size: int = 0
    rows: object = None

    def applies(self, strategy, projective):
        """Whether this method is exact for ``strategy`` and a gold tree of this kind."""
        return strategy in self.strategies and (projective or not self.projective_only)


def register_method(system, method, fn, strategies, projective_only, rank, min_size=0,
                    rows=None):
    """Register ``fn`` as oracle method ``method`` of transition system ``system``
    (the fields are those of :class:`Method`).

    Registering the same (system, method) again replaces the earlier entry.
    """
    if not isinstance(system, str) or not system:
        raise ValueError(f"register_method: system must be a non-empty name, got {system!r}")
    if not isinstance(method, str) or not method or method in ("auto", "grammar", "exhaustive"):
        raise ValueError(f"register_method: method name {method!r} is empty or reserved "
                         "('auto', 'grammar' and 'exhaustive' are built in)")
    if not callable(fn):
        raise ValueError(f"register_method: fn for {system}/{method} is not callable")
    if isinstance(strategies, str):
        strategies = (strategies,)
    strategies = tuple(strategies)
    if not strategies or not all(isinstance(s, str) for s in strategies):
        raise ValueError(f"register_method: strategies for {system}/{method} must be a "
                         f"non-empty tuple of names, got {strategies!r}")
    if isinstance(min_size, bool) or not isinstance(min_size, int) or min_size < 0:
        raise ValueError(f"register_method: min_size for {system}/{method} must be an integer "
                         f">= 0, got {min_size!r}")
    _METHODS.setdefault(system, {})[method] = Method(
        system, method, fn, strategies, bool(projective_only), float(rank), min_size, rows)


def registered_methods(system):
    """``{name: Method}`` registered under ``system`` (a name) so far; the
    shipped fast methods are there once :mod:`semiparse.transitions.oracles.methods`
    is imported, which :func:`~semiparse.transitions.oracles.methods.methods` ensures."""
    return dict(_METHODS.get(system, {}))


def register_system(system, oracle=None):
    """Register a transition system object: a dependency definition (a
    ``TransitionSystem`` subclass instance), or any system implementing
    ``SystemProtocol`` with ``oracle``, the maker of its dynamic oracle:
    ``oracle(system, strategy, method, **options)``."""
    if isinstance(system, TransitionSystem):
        if oracle is not None:
            raise ValueError(f"register_system: {system.name} is a dependency definition, whose "
                             f"oracle is semiparse's own: give no oracle")
    elif isinstance(system, SystemProtocol):
        if not callable(oracle):
            raise ValueError(f"register_system: {system.name} needs the maker of its oracle, "
                             f"oracle(system, strategy, method, **options), got {oracle!r}")
    else:
        raise ValueError(f"register_system needs a TransitionSystem or SystemProtocol instance, "
                         f"got {system!r}")
    if not isinstance(system.name, str) or not system.name:
        raise ValueError(f"register_system: the system's name must be a non-empty string, "
                         f"got {system.name!r}")
    _SYSTEMS[system.name] = system
    _ORACLES.pop(system.name, None)
    if oracle is not None:
        _ORACLES[system.name] = oracle
    return system


def registered_systems(kind=None, ordered=False):
    """Names of the systems registered from Python (of ``kind``, if given:
    ``"dependency"`` or ``"constituent"``), sorted, or in the order they
    were registered with ``ordered`` (the constituent systems: top-down,
    then in-order)."""
    names = [name for name, system in _SYSTEMS.items() if kind in (None, system.kind)]
    return names if ordered else sorted(names)


def lookup_system(name):
    """The registered Python system called ``name``, or None."""
    return _SYSTEMS.get(name)


def lookup_oracle(system):
    """The oracle maker registered with ``system`` (a ``SystemProtocol``
    instance of a registered name and type), or None."""
    registered = _SYSTEMS.get(getattr(system, "name", None))
    if registered is None or type(registered) is not type(system):
        return None
    return _ORACLES.get(system.name)


register_system(LRSpine())
register_system(TopDown(), oracle_of)
register_system(InOrder(), oracle_of)

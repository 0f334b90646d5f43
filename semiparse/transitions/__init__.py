"""Transition systems and their dynamic oracles: dependency and constituent.

A transition system is declared as data (``systems/*.toml``: stack/buffer
rewrites, how a configuration becomes the input of its completion grammar,
strategies) or written in Python (:class:`TransitionSystem`, registered with
:func:`register_system`).  Its oracle is the completion grammar parsed with
the max-plus semiring (:func:`oracle`); :meth:`Oracle.scores_exhaustive`
gives the same scores by exhaustive search, and ``semiparse check`` compares
the two.  Fast methods plug in through :func:`register_method`.
:func:`system` gives configurations to step through by name, for users' own
training loops, scored one by one or in batches (:meth:`Oracle.scores_batch`).

Every system implements one protocol (:class:`SystemProtocol`: ``initial``,
``legal``, ``apply``, ``is_final``, ``validate``, ``oracle``) and every oracle
one interface (:class:`~semiparse.transitions.oracles.protocol.DynamicOracle`:
``scores(config, gold)``, ``optimal(config, gold)``).  The constituent
systems ``top_down`` and ``in_order`` (:mod:`.constituent`) are registered
beside the dependency ones: :func:`available_systems` lists them,
:func:`system` and :func:`oracle` give them by name.
"""
from semiparse.transitions.runtime._configuration import Configuration
from semiparse.transitions.systems.compiled import System, oracle, system
from semiparse.transitions.oracles.oracle import Oracle, best_of
from semiparse.transitions.oracles.methods import methods
from semiparse.transitions.systems.registry import GRAMMAR_RANK, register_method, register_system
from semiparse.transitions.systems.interface import SystemProtocol, TransitionSystem
from semiparse.transitions.systems.loading import available_systems, load_system
from semiparse.transitions.systems.format.system_file import SystemFileError


def get_system(spec):
    """Deprecated name of :func:`load_system`, kept for one release."""
    import warnings

    warnings.warn("semiparse.transitions.get_system is load_system; the old name will be removed "
                  "in the next release", DeprecationWarning, stacklevel=2)
    return load_system(spec)


__all__ = ["oracle", "Oracle", "best_of", "system", "System", "Configuration", "load_system", "available_systems", "register_method",
           "register_system", "methods", "SystemProtocol", "TransitionSystem", "GRAMMAR_RANK", "SystemFileError"]

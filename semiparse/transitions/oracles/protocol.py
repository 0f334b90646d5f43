"""The oracle family every kind of transition system implements: a gold tree
prepared once for its oracle (:class:`GoldTree`), the dynamic oracle
(:class:`DynamicOracle`) and the exhaustive search that is its ground truth
(:class:`ExhaustiveSearch`).

Two implementations: the dependency systems' (:class:`.gold.Gold`,
:class:`.oracle.Oracle`, :class:`.exhaustive.Search`, scoring transitions by
the gold edges still reachable) and the constituent systems'
(:mod:`semiparse.transitions.constituent`: ``gold.Gold``, ``oracle.Oracle``,
``exhaustive.Search``, by the labelled-span loss).  Both oracles answer
``scores(config, gold)`` and ``optimal(config, gold)`` with the same
meaning: a value per legal transition, the best of which are the optimal
ones, those after which the best tree reachable from ``config`` stays
reachable.  ``semiparse.oracle`` gives either through the system registry,
and ``semiparse check`` proves either against its search with the same
result and counterexample types (:mod:`semiparse.testing.checking`).
"""
from abc import ABC, abstractmethod

from semiparse.errors import OverBudget  # noqa: F401  (the searches' budget)


class GoldTree(ABC):
    """A gold tree, checked once and prepared for an oracle; ``n`` is its
    number of words."""

    __slots__ = ()


class DynamicOracle(ABC):
    """The dynamic oracle of one transition system (its ``system``).

    ``gold`` is a gold tree as the family writes it (dependency: a head list;
    constituent: a ``Tree``) or its prepared :class:`GoldTree`."""

    __slots__ = ()

    @abstractmethod
    def scores(self, config, gold):
        """``{transition: value}`` for the legal transitions of ``config``
        (empty if it is final): higher is better, and the transitions of the
        highest value are :meth:`optimal` (dependency: sigma, the gold edges
        still reachable after the transition; constituent: minus the minimum
        loss after it)."""

    @abstractmethod
    def optimal(self, config, gold):
        """The legal transitions of ``config`` that keep the best tree
        reachable from it reachable, against the gold tree ``gold``."""


class ExhaustiveSearch(ABC):
    """The ground truth for one system and gold tree: the best tree
    reachable from a configuration, by memoized search over every
    computation (exponential; for the short sentences of ``semiparse check``).
    A search bounded in the states it visits raises
    :class:`~semiparse.errors.OverBudget` past them."""

    __slots__ = ()


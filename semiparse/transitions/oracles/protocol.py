"""The oracle family every kind of transition system implements: a gold tree
prepared once for its oracle (:class:`GoldTree`), the dynamic oracle
(:class:`DynamicOracle`) and the exhaustive search that is its ground truth
(:class:`ExhaustiveSearch`).

Two implementations: the dependency systems' (:class:`.gold.Gold`,
:class:`.oracle.Oracle`, :class:`.exhaustive.Search`, scoring transitions by
the gold edges still reachable) and the constituent systems'
(:mod:`semiparse.constituency`: ``dynamic.Gold``, ``dynamic.Oracle``,
``exhaustive.Search``, by the labelled-span loss).  ``semiparse.oracle``
gives either, and ``semiparse check`` proves either against its search with
the same result and counterexample types (:mod:`semiparse.testing.checking`).
"""
from abc import ABC, abstractmethod


class GoldTree(ABC):
    """A gold tree, checked once and prepared for an oracle; ``n`` is its
    number of words."""

    __slots__ = ()


class DynamicOracle(ABC):
    """The dynamic oracle of one transition system (its ``system``)."""

    __slots__ = ()

    @abstractmethod
    def optimal(self, config, gold):
        """The legal transitions of ``config`` that keep the best tree
        reachable from it reachable, against the gold tree ``gold``."""


class ExhaustiveSearch(ABC):
    """The ground truth for one system and gold tree: the best tree
    reachable from a configuration, by memoized search over every
    computation (exponential; for the short sentences of ``semiparse check``)."""

    __slots__ = ()

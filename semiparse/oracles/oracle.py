"""``semiparse.oracle``: dynamic oracles for transition systems.

An oracle scores each legal transition t from a configuration c against a
gold tree: sigma_t = (1 if the edge t adds is gold) + the most gold edges any
computation from t(c) allowed by the strategy can still add (edges built
before c are not counted).  Methods: ``"grammar"`` (the system's completion
grammar, exact for any gold tree), ``"exhaustive"`` (search over all
computations, small n only), and any registered fast method.
"""
from .exhaustive import NEG_INF, Search
from .gold import Gold
from .grammar_path import grammar_scores
from .registry import GRAMMAR_RANK, system_methods
from .system import load_system

BUILTIN = ("auto", "grammar", "exhaustive")


class Oracle:
    """A dynamic oracle for one system, strategy and method (see :func:`oracle`)."""

    def __init__(self, system, strategy="none", method="auto"):
        self.system = load_system(system)
        self.system.check_strategy(strategy)
        self.strategy = strategy
        registered = {m.name: m for m in system_methods(self.system)}
        if method not in BUILTIN and method not in registered:
            raise ValueError(f"unknown oracle method {method!r} for {self.system.name}: expected "
                             f"one of {', '.join(BUILTIN + tuple(registered))}")
        if method == "grammar" and self.system.grammar is None:
            raise ValueError(f"transition system {self.system.name!r} has no completion grammar: "
                             f"method 'grammar' does not apply")
        if method in registered and strategy not in registered[method].strategies:
            raise ValueError(f"oracle method {method!r} of {self.system.name} does not support "
                             f"strategy {strategy!r} (it supports "
                             f"{', '.join(registered[method].strategies)})")
        self.method = method
        self._registered = registered
        self._gold = self._fn = self._search = None

    def __repr__(self):
        return f"<Oracle {self.system.name} strategy={self.strategy} method={self.method}>"

    # -- gold trees are checked once and cached --------------------------------

    def _prepare(self, stack, buffer, heads, arcs):
        gold = self._gold
        if gold is None or (gold.heads is not heads and not _same_ints(gold.heads, heads)):
            gold = self._gold = Gold(heads)
            self._fn = self._search = None
        stack, buffer, arcs = self.system.validate(stack, buffer, arcs, gold.n)
        return gold, stack, buffer, arcs

    def _choose(self, gold):
        """Name of the method used for this gold tree."""
        if self.method != "auto":
            return self.method
        best, best_rank = None, float("inf")
        if self.system.grammar is not None:
            best, best_rank = "grammar", GRAMMAR_RANK
        for m in self._registered.values():
            if m.rank < best_rank and m.applies(self.strategy, gold.projective):
                best, best_rank = m.name, m.rank
        if best is None:
            raise ValueError(f"no oracle method of {self.system.name} applies to strategy "
                             f"{self.strategy!r} and this gold tree, and the system has "
                             f"no completion grammar")
        return best

    def _resolve(self, gold):
        """The scoring function for this gold tree: (stack, buffer, gold, arcs) -> dict.

        Under ``auto`` a method with a ``min_size`` serves the configurations
        of that size and more, the grammar path the smaller ones."""
        name = self._choose(gold)
        system, strategy = self.system, self.strategy
        grammar = lambda s, b, g, a: grammar_scores(system, g, s, b, a, strategy)
        if name == "grammar":
            return grammar
        if name == "exhaustive":
            return lambda s, b, g, a: self._exhaustive(g).scores(s, b, a)
        m = self._registered[name]
        if m.projective_only and not gold.projective:
            raise ValueError(f"oracle method {name!r} of {self.system.name} is exact only for "
                             f"projective gold trees, and this one is not projective")
        fn, small = m.fn, m.min_size
        if self.method == "auto" and small and system.grammar is not None:
            return lambda s, b, g, a: (grammar(s, b, g, a) if len(s) - 1 + len(b) < small
                                       else fn(s, b, g.heads, a, strategy))
        return lambda s, b, g, a: fn(s, b, g.heads, a, strategy)

    def _exhaustive(self, gold):
        if self._search is None:
            self._search = Search(self.system, gold.heads, self.strategy)
        return self._search

    # -- the API ------------------------------------------------------------------

    def scores(self, stack, buffer, heads, arcs=None):
        """``{transition: sigma}`` for every legal transition (empty if final)."""
        gold, stack, buffer, arcs = self._prepare(stack, buffer, heads, arcs)
        if self._fn is None:
            self._fn = self._resolve(gold)
        return self._fn(stack, buffer, gold, arcs)

    def optimal(self, stack, buffer, heads, arcs=None):
        """The set of transitions with maximal sigma."""
        return best_of(self.scores(stack, buffer, heads, arcs))

    def scores_exhaustive(self, stack, buffer, heads, arcs=None):
        """The same scores by exhaustive search over all computations (small n only)."""
        gold, stack, buffer, arcs = self._prepare(stack, buffer, heads, arcs)
        return self._exhaustive(gold).scores(stack, buffer, arcs)

    def method_for(self, heads):
        """Name of the method :meth:`scores` uses for the gold tree ``heads``
        (under ``auto``, for configurations of at least its ``min_size``)."""
        return self._choose(Gold(heads))


def _same_ints(cached, heads):
    """Whether ``heads`` (a list, tuple or numpy array) holds exact ints equal to
    the cached gold heads (``True`` or ``1.0`` compare equal to 1 but are not
    heads)."""
    if hasattr(heads, "tolist"):
        heads = heads.tolist()
    return (isinstance(heads, (tuple, list)) and len(heads) == len(cached)
            and set(map(type, heads)) == {int} and tuple(heads) == cached)


def best_of(scores):
    """Names with the maximal score (all of them if none is finite)."""
    if not scores:
        return set()
    top = max(scores.values())
    return {t for t, v in scores.items() if v == top}


def oracle(system, strategy="none", method="auto"):
    """A dynamic oracle for ``system`` (a name, a TOML file or a system object).

    strategy: one of the system's strategies (arc-standard: "none", "lbr",
    "strict_lbr", "rbl").  method: "auto" (the fastest registered method that
    is exact for the strategy and the gold tree, else the grammar path),
    "grammar", "exhaustive" or a registered method name.
    """
    return Oracle(system, strategy, method)


__all__ = ["Oracle", "oracle", "best_of", "NEG_INF"]

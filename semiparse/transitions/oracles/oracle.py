"""``semiparse.oracle``: dynamic oracles for transition systems.

An oracle scores each legal transition t from a configuration c against a
gold tree: sigma_t = (1 if the edge t adds is gold) + the most gold edges any
computation from t(c) allowed by the strategy can still add (edges built
before c are not counted).  Methods: ``"grammar"`` (the system's completion
grammar, exact for any gold tree), ``"exhaustive"`` (search over all
computations, small n only), ``"search"`` (an exact search over the
computations with an admissible bound: the oracle of a system whose
completion is of kind ``search``, such as the swap systems; strategy
``none``), ``"spanning"`` (the value of a maximum branching over the arcs
reachable by themselves, in O(n): the oracle of a completion of kind
``spanning``, such as Covington's system; strategy ``none``), and any
registered fast method.

Partial gold trees (some heads ``-1``, unknown; :mod:`semiparse.treebank.partial`)
are accepted where the caller passes ``partial=True``: sigma then counts the
known gold edges only.  The grammar path and the exhaustive search are exact
for them, and so is a registered method whose ``fn`` has the attribute
``partial = True`` (``projective_masked``); ``auto`` chooses among these,
and the other methods refuse such trees.
"""

import threading

import numpy as np

from semiparse._support.threads import pool
from semiparse.errors import OverBudget
from semiparse.transitions.runtime._configuration import Configuration, fill_rows, kernel_scores
from semiparse.transitions.oracles._grammar_rows import grammar_kernel
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.oracles.exhaustive import Search
from semiparse.transitions.oracles._search import BoundedSearch
from semiparse.transitions.oracles._spanning import SpanningValue
from semiparse.transitions.oracles.protocol import DynamicOracle
from semiparse.transitions.oracles.gold import Gold
from semiparse.treebank.partial import partial_flag
from semiparse.transitions.oracles.grammar_method import grammar_scores
from semiparse.transitions.systems.interface import NEG_INF
from semiparse.transitions.oracles.methods import system_methods
from semiparse.transitions.systems.registry import GRAMMAR_RANK, GRAMMAR_REDUCED_RANK
from semiparse.transitions.systems.loading import definition_sha256, load_system

BUILTIN = ("auto", "grammar", "exhaustive", "search", "spanning")
KEPT_TREES = 256  # gold trees (tuples) an oracle keeps checked, with their kernels' data, between calls
# The grammar path's C work for a gold tree keeps its chart from one row to
# the next up to a limit (a string that starts as the last one did is parsed
# from where they differ): SINGLE_CALL_CHART bytes for the one work of single
# calls; the works of a scores_batch call, and those kept between calls,
# share KEPT_CHARTS bytes, each at least MIN_KEPT_CHART.
SINGLE_CALL_CHART = 16 << 20
KEPT_CHARTS = 64 << 20
MIN_KEPT_CHART = 256 << 10


class Oracle(DynamicOracle):
    """A dynamic oracle for one system, strategy and method (see :func:`oracle`)."""

    def __init__(self, system, strategy="none", method="auto", max_states=None):
        self.system = load_system(system)
        if max_states is not None and (isinstance(max_states, bool)
                                       or not isinstance(max_states, int) or max_states < 1):
            raise ValueError(f"max_states must be a positive int or None, got {max_states!r}")
        self.max_states = max_states
        self.system.check_strategy(strategy)
        self.strategy = strategy
        registered = {m.name: m for m in system_methods(self.system)}
        if not isinstance(method, str) or (method not in BUILTIN and method not in registered):
            raise ValueError(f"unknown oracle method {method!r} for {self.system.name}: expected "
                             f"one of {', '.join(BUILTIN + tuple(registered))}")
        if method == "grammar" and self.system.grammar is None:
            raise ValueError(f"transition system {self.system.name!r} has no completion grammar: "
                             f"method 'grammar' does not apply{_why_no_grammar(self.system)}")
        if method in ("search", "spanning") and strategy != "none":
            raise ValueError(f"oracle method {method!r} serves strategy 'none' only, not "
                             f"{strategy!r}")
        if method == "search" and getattr(self.system, "compiled_moves", None) != "rewrite":
            raise ValueError(f"oracle method 'search' runs declared systems only; "
                             f"{self.system.name!r} is not one")
        if method == "spanning" and getattr(self.system, "reachable", None) is None:
            raise ValueError(f"oracle method 'spanning' needs a completion of kind \"spanning\" "
                             f"(its reachable arcs declared); {self.system.name!r} has none")
        if method in registered and strategy not in registered[method].strategies:
            raise ValueError(f"oracle method {method!r} of {self.system.name} does not support "
                             f"strategy {strategy!r} (it supports "
                             f"{', '.join(registered[method].strategies)})")
        self.method = method
        self._registered = registered
        self._gold = self._fn = self._search = None
        # scores keeps its gold tree, function and C work between calls: calls
        # from several threads take turns (they would corrupt the C work)
        self._lock = threading.RLock()
        self._kept_trees = {False: {}, True: {}}   # partial -> id of a tuple of heads -> _Kept
        self._chart_share = None   # the chart limit of the works kept (see _give_back)
        self._kernels = {}      # (projective, partial) of a gold tree -> its C kernel, see _kernel
        self._searches = {}     # (heads, partial) -> its BoundedSearch, see _bounded
        self._column = {t: i for i, t in enumerate(self.transitions)}

    def __repr__(self):
        return f"<Oracle {self.system.name} strategy={self.strategy} method={self.method}>"

    def __reduce__(self):  # a fresh oracle: what one keeps between calls is a cache
        return Oracle, (self.system, self.strategy, self.method, self.max_states)

    # -- gold trees are checked once and cached --------------------------------

    def _prepare(self, stack, buffer, heads, arcs, partial, words=None):
        """``(gold, stack, buffer, arcs)``: the checked gold tree (kept while
        the same heads come back) and the configuration validated, unless
        ``words`` says it is a :class:`Configuration`'s, valid by construction
        (only legal moves change one)."""
        gold = self._gold
        if (gold is None or (gold.partial and not partial)
                or (gold.heads is not heads and not _same_ints(gold.heads, heads))):
            gold = self._gold = self._gold_of(heads, partial)
            self._fn = self._search = None
        if words is None:
            return (gold, *self.system.validate(stack, buffer, arcs, gold.n))
        if words != gold.n:
            raise ValueError(f"the configuration has {words} words but the gold heads have "
                             f"{gold.n} (the root's -1, then one head per word)")
        return gold, stack, buffer, arcs if self.system.needs_arcs else None

    def _gold_of(self, heads, partial):
        """The checked :class:`Gold` of ``heads``: a tuple's is kept from one
        call to the next (:meth:`_kept`), other sequences are checked anew."""
        if type(heads) is not tuple:
            return Gold(heads, partial)
        return self._kept(heads, partial).gold

    def _kept(self, heads, partial):
        """What this oracle keeps between calls for a tuple of gold heads (a
        tuple cannot change): its checked :class:`Gold`, and once a
        ``scores_batch`` call has used it, its C kernel with the kernel's
        data, remembered values included (:class:`_Kept`).  A training loop
        that passes each sentence's tuple at every step has its tree checked
        once, and each step's configurations find their values among the
        successors scored at the step before.  At most :data:`KEPT_TREES`
        per value of ``partial``."""
        found = self._take(heads, partial)
        self._give_back([found], partial)
        return found

    def _take(self, heads, partial):
        """:meth:`_kept`, removed from what this oracle keeps while the caller
        uses it (given back by :meth:`_give_back`), so that calls on other
        threads never share a kernel's data."""
        with self._lock:
            found = self._kept_trees[bool(partial)].pop(id(heads), None)
        if found is None or found.heads is not heads:
            found = _Kept(heads, Gold(heads, partial))
        return found

    def _give_back(self, taken, partial):
        """Keep these :class:`_Kept` for the next calls (emptying the store
        first if they would not fit), except those whose kernel ran out of
        memory: one of their works is returned (its rows are not exact: the
        caller raises MemoryError), else None.  The works kept then share
        :data:`KEPT_CHARTS` equally."""
        kept_trees, short = self._kept_trees[bool(partial)], None
        with self._lock:   # no _take while the works kept share the chart budget anew
            if len(kept_trees) + len(taken) > KEPT_TREES:
                kept_trees.clear()
            for kept in taken:
                if kept.watch is not None and kept.watch.out_of_memory:
                    short = kept.watch
                elif len(kept_trees) < KEPT_TREES:
                    kept_trees[id(kept.heads)] = kept
            stores = self._kept_trees.values()
            share = _chart_share(sum(map(len, stores)))
            # every work kept has the last share: only a new one changes them all
            changed = share != self._chart_share
            self._chart_share = share
            for kept in (k for store in stores for k in store.values()) if changed else taken:
                if kept.watch is not None and kept.watch.chart_limit != share:
                    kept.watch.chart_limit = share
        return short

    def cache_clear(self):
        """Forget what this oracle keeps between calls: the checked gold trees,
        the C kernels' data and the configuration values their memos hold.
        Scores do not change; the next calls start cold (benchmarks time
        them so) and the memory is freed."""
        with self._lock:
            for kept_trees in self._kept_trees.values():
                kept_trees.clear()
            self._kernels.clear()
            self._searches.clear()
            self._gold = self._fn = self._search = None

    def _choose(self, gold):
        """Name of the method used for this gold tree."""
        if self.method != "auto":
            return self.method
        best, best_rank = None, float("inf")
        if self.system.completion_kind in ("search", "spanning") and self.strategy == "none":
            best, best_rank = self.system.completion_kind, GRAMMAR_RANK
        if self.system.grammar is not None:
            reduced = (self._grammar_in_c() is not None
                       and self.system.completion_spec.critical_buffer)
            best, best_rank = "grammar", GRAMMAR_REDUCED_RANK if reduced else GRAMMAR_RANK
        for m in self._registered.values():
            if (m.rank < best_rank and m.applies(self.strategy, gold.projective)
                    and (not gold.partial or accepts_partial(m))):
                best, best_rank = m.name, m.rank
        if best is None:
            kind = "this partial gold tree" if gold.partial else "this gold tree"
            raise ValueError(f"no oracle method of {self.system.name} applies to strategy "
                             f"{self.strategy!r} and {kind}, and the system has "
                             f"no completion grammar{_why_no_grammar(self.system)}")
        return best

    def _resolve(self, gold):
        """The scoring function for this gold tree: (stack, buffer, gold, arcs) -> dict.

        Under ``auto`` a method with a ``min_size`` serves the configurations
        of that size and more, the grammar path the smaller ones."""
        name = self._choose(gold)
        system, strategy = self.system, self.strategy
        if name == "grammar":
            return self._grammar_fn(gold)
        if name == "exhaustive":
            return lambda s, b, g, a: self._exhaustive(g).scores(s, b, a)
        if name == "search":
            search = self._bounded(gold)
            return lambda s, b, g, a: search.scores(s, b, a)
        if name == "spanning":
            spanning = SpanningValue(machine_for(self.system), gold.heads)
            return lambda s, b, g, a: spanning.scores(s, b, a)
        m = self._registered[name]
        if gold.partial and not accepts_partial(m):
            raise ValueError(f"oracle method {name!r} of {self.system.name} needs a complete "
                             f"gold tree, and this one has unknown heads (-1): use method "
                             f"'grammar' or 'auto' for partial trees")
        if m.projective_only and not gold.projective:
            raise ValueError(f"oracle method {name!r} of {self.system.name} is exact only for "
                             f"projective gold trees, and this one is not projective")
        fn, small = m.fn, m.min_size
        if self.method == "auto" and small and system.grammar is not None:
            grammar = self._grammar_fn(gold)
            return lambda s, b, g, a: (grammar(s, b, g, a) if len(s) - 1 + len(b) < small
                                       else fn(s, b, g.heads, a, strategy))
        return lambda s, b, g, a: fn(s, b, g.heads, a, strategy)

    def _grammar_in_c(self):
        """The C kernel of this system's grammar path, where it has one and
        the strategy is none (``_grammar_rows.pyx``); else None."""
        return grammar_kernel(self.system) if self.strategy == "none" else None

    def _grammar_fn(self, gold):
        """The grammar path for this gold tree: ``(stack, buffer, gold, arcs)
        -> dict``, in C where the system has the kernel (strategy none)."""
        kernel = self._grammar_in_c()
        if kernel is None:
            system, strategy = self.system, self.strategy
            return lambda s, b, g, a: grammar_scores(system, g, s, b, a, strategy)
        machine = machine_for(self.system)
        columns = np.arange(len(kernel.columns), dtype=np.intc)

        def new_work():   # the oracle's only work for single calls: its chart may stay large
            made = kernel.gold_type(gold.heads)
            made.chart_limit = SINGLE_CALL_CHART
            return made

        work = new_work()

        def scores(s, b, g, a):
            nonlocal work
            out, used = kernel_scores(machine, kernel, work, columns, g.n, s, b, a), work
            if _out_of_memory(used):  # its mark stays: the next call takes a fresh work
                work = new_work()
            _check_memory(used)
            return out
        return scores

    def _bounded(self, gold):
        """The bounded search of a gold tree, kept (with its memo) for the
        last :data:`KEPT_TREES` trees, so that a batch whose rows alternate
        between sentences, and a loop that comes back to a sentence, find the
        values it remembers."""
        key = (tuple(gold.heads), gold.partial)
        found = self._searches.pop(key, None)
        if found is None:
            found = BoundedSearch(machine_for(self.system), gold.heads, self.max_states)
        self._searches[key] = found   # the most recent last
        if len(self._searches) > KEPT_TREES:
            del self._searches[next(iter(self._searches))]
        return found

    def _exhaustive(self, gold):
        if self._search is None:
            self._search = Search(self.system, gold.heads, self.strategy)
        return self._search

    def _unpack(self, config, heads, arcs, where="the configuration", call="scores"):
        """``(stack, buffer, arcs)`` of a :class:`Configuration` of this
        oracle's system (ValueError for another system's)."""
        if heads is not None or arcs is not None:
            raise TypeError(f"with a configuration, pass only the gold heads: "
                            f"{call}(config, heads)")
        check_system(config, self.system, where, f"this oracle's {self.system.name!r}")
        return config.stack, config.buffer, config.arcs

    def _arguments(self, call, stack, buffer, heads, arcs):
        """``(stack, buffer, heads, arcs, words)`` of a call made as
        ``call(config, heads)`` (``words``: the configuration's number of
        words) or as ``call(stack, buffer, heads[, arcs])`` (``words`` None)."""
        if isinstance(stack, Configuration):
            config, gold = stack, buffer
            stack, buffer, arcs = self._unpack(config, heads, arcs, call=call)
            return stack, buffer, gold, arcs, config.n
        if heads is None and not isinstance(stack, (list, tuple, np.ndarray)):
            raise ValueError(f"{call}(config, heads): config must be a Configuration (from "
                             f"semiparse.system(name).initial(n)), got {stack!r:.60} "
                             f"({type(stack).__name__}); or give stack, buffer and the gold "
                             f"heads: {call}(stack, buffer, heads[, arcs])")
        return stack, buffer, heads, arcs, None

    # -- the API ------------------------------------------------------------------

    @property
    def transitions(self):
        """The system's transition names: the columns of :meth:`scores_batch`."""
        return self.system.transitions

    def scores(self, stack, buffer, heads=None, arcs=None, partial=False):
        """``{transition: sigma}`` for every legal transition (empty if final).

        The configuration is ``stack, buffer[, heads, arcs]`` or a
        :class:`Configuration`: ``scores(config, heads)``.  ``partial=True``
        accepts unknown heads (``-1``) in ``heads`` (see the module doc)."""
        stack, buffer, heads, arcs, words = self._arguments("scores", stack, buffer, heads, arcs)
        partial = partial_flag(partial)
        with self._lock:
            gold, stack, buffer, arcs = self._prepare(stack, buffer, heads, arcs, partial, words)
            if self._fn is None:
                self._fn = self._resolve(gold)
            return self._fn(stack, buffer, gold, arcs)

    def optimal(self, stack, buffer, heads=None, arcs=None, partial=False):
        """The set of transitions with maximal sigma (arguments as :meth:`scores`)."""
        return best_of(self.scores(stack, buffer, heads, arcs, partial))

    def scores_batch(self, configs, golds, n_jobs=1, partial=False):
        """sigma for many configurations at once, as a float array with one row
        per configuration and one column per transition (:attr:`transitions`
        order), -inf where a transition does not apply.

        ``configs``: :class:`Configuration` objects of this oracle's system
        (e.g. from ``semiparse.system(name).initial(n)``), of any sentences;
        ``golds``: the gold heads of each configuration's sentence, one per
        configuration (repeating one object for the configurations of a
        sentence prepares its tree once).  Rows whose method has a C kernel
        (``linear`` and ``right_stack`` of arc-standard, ``cost`` of
        arc-hybrid and arc-eager: projective gold trees; the grammar path of
        a declared system under strategy ``none``, any gold tree) are
        computed in C without the GIL, on ``n_jobs`` threads if > 1, the
        rows of one gold object in one thread; rows of the grammar path
        under other strategies too, in Python around charts filled without
        the GIL; the others through :meth:`scores`.  Rows are computed from
        the last configuration to the first, and arc-standard's ``linear``
        kernel and the grammar path (strategy ``none``) remember the value of
        each configuration they score: when the configurations of a gold
        tree follow a computation (as when a loop collects a sentence's
        configurations and then scores them), each one's successor has been
        scored already and costs nothing.  A gold tree passed as a tuple keeps
        its C kernel's data, and the values remembered, from one call to the
        next (at most :data:`KEPT_TREES` trees), so a training loop that scores
        one step of many sentences per call gets the same saving; the
        grammar path's charts kept share :data:`KEPT_CHARTS` bytes.
        ``partial=True`` accepts unknown heads (``-1``) in ``golds``; such
        trees are scored by the grammar path or through :meth:`scores`, as
        the other C kernels are exact only for complete trees.  With
        ``max_states`` (method ``search``), a row whose search runs past it
        is NaN throughout: no answer, never an estimate.
        """
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
            raise ValueError(f"n_jobs must be an int >= 1, got {n_jobs!r}")
        partial = partial_flag(partial)
        try:
            configs, golds = list(configs), list(golds)
        except TypeError:
            raise ValueError(f"scores_batch(configs, golds): both must be sequences (of "
                             f"Configuration objects, of gold heads), got "
                             f"{type(configs).__name__} and {type(golds).__name__}") from None
        n_jobs = int(min(n_jobs, max(len(configs), 1)))  # more threads than rows would idle
        if any(t.endswith("_K") for t in self.system.transitions):
            raise ValueError(f"scores_batch needs a system with a fixed set of transitions; "
                             f"{self.system.name} has families {self.system.transitions}: "
                             f"use scores()")
        column = self._column
        share = _chart_share(len({id(heads) for heads in golds}))
        used = []      # the _Kept of each gold object, in order
        taken = []     # those this call took from what the oracle keeps (see _take)
        fresh = []     # those of lists, made for this call only

        def prepare(heads, i):
            try:
                if type(heads) is tuple:
                    kept = self._take(heads, partial)
                    taken.append(kept)
                else:   # a list may change: checked, and its kernel's data made, anew
                    kept = _Kept(heads, Gold(heads, partial))
                    fresh.append(kept)
            except ValueError as exc:
                raise ValueError(f"golds[{i}]: {exc}") from None
            used.append(kept)
            if kept.rows is None:
                kept.prepare(self._kernel(kept.gold))
            if kept.watch is not None:
                kept.watch.chart_limit = share
            return kept.rows or None, kept.gold.n

        def check(config, i):
            self._unpack(config, None, None, where=f"configs[{i}]")

        out = np.empty((len(configs), len(self.transitions)))
        try:
            rows = fill_rows(configs, golds, machine_for(self.system), prepare, check, out, n_jobs)
        finally:
            short = self._give_back(taken, partial)
        _check_memory(short or next((k.watch for k in fresh if _out_of_memory(k.watch)), None))
        if not rows:
            return out
        checked = {id(kept.heads): kept.gold for kept in used}
        grammar_golds = {key for key in {id(golds[i]) for i in rows}
                         if self._choose(checked[key]) == "grammar"}
        by_grammar = {i for i in rows if id(golds[i]) in grammar_golds}
        for i in rows:
            if i not in by_grammar:
                try:
                    found = self.scores(configs[i], golds[i], partial=partial)
                except OverBudget:   # only with max_states: no answer for this row
                    out[i] = np.nan
                    continue
                for t, v in found.items():
                    out[i, column[t]] = v
        # the grammar path's rows: those of one gold object in one thread, from
        # the last to the first, each configuration's value kept for the rows
        # before it (a successor's value then costs no parse)
        groups = {}
        for i in sorted(by_grammar, reverse=True):
            groups.setdefault(id(golds[i]), []).append(i)

        def group_rows(indices):
            memo = {} if self.strategy == "none" else None
            return [(i, self._grammar_row(configs[i], checked[id(golds[i])], memo)) for i in indices]

        if n_jobs > 1 and len(groups) > 1:
            done = list(pool(n_jobs).map(group_rows, groups.values()))
        else:
            done = [group_rows(indices) for indices in groups.values()]
        for group in done:
            for i, row in group:
                for t, v in row.items():
                    out[i, column[t]] = v
        return out

    def _grammar_row(self, config, gold, memo):
        """:meth:`scores` by the grammar path for a checked :class:`Gold`,
        without touching the state that :meth:`scores` keeps from one call to
        the next (so rows run on threads: the chart is filled without the
        GIL); ``memo`` (None: not kept) maps configurations of this gold
        tree to their values."""
        stack, buffer, arcs = self._unpack(config, None, None)
        stack, buffer, arcs = self.system.validate(stack, buffer, arcs, gold.n)
        return grammar_scores(self.system, gold, stack, buffer, arcs, self.strategy, memo)

    def _kernel(self, gold):
        """``(kernel, strategy code, columns)`` for :func:`fill_rows` if the
        method for this gold tree has a C kernel for this strategy, else None;
        made once per kind of gold tree (projective, partial), on which alone
        the choice depends."""
        kind = (gold.projective, gold.partial)
        if kind not in self._kernels:
            self._kernels[kind] = self._make_kernel(gold)
        return self._kernels[kind]

    def _make_kernel(self, gold):
        name = self._choose(gold)
        column = self._column
        if name == "grammar":
            kernel = self._grammar_in_c()
            if kernel is None:
                return None
            return kernel, 0, np.array([column[t] for t in kernel.columns], dtype=np.intc)
        method = self._registered.get(name)
        kernel = getattr(method, "rows", None)
        if (kernel is None or gold.partial or self.strategy not in kernel.strategy_codes
                or not method.applies(self.strategy, gold.projective)
                or (self.method == "auto" and method.min_size and self.system.grammar)):
            return None
        columns = np.array([column[t] for t in kernel.columns], dtype=np.intc)
        return kernel, kernel.strategy_codes[self.strategy], columns

    def scores_exhaustive(self, stack, buffer, heads=None, arcs=None, partial=False):
        """The same scores by exhaustive search over all computations (small n
        only); the configuration is given as to :meth:`scores`: ``stack,
        buffer, heads[, arcs]`` or ``scores_exhaustive(config, heads)``."""
        stack, buffer, heads, arcs, words = self._arguments("scores_exhaustive", stack, buffer,
                                                            heads, arcs)
        partial = partial_flag(partial)
        with self._lock:
            gold, stack, buffer, arcs = self._prepare(stack, buffer, heads, arcs, partial, words)
            return self._exhaustive(gold).scores(stack, buffer, arcs)

    def method_for(self, heads, partial=False):
        """Name of the method :meth:`scores` uses for the gold tree ``heads``
        (under ``auto``, for configurations of at least its ``min_size``)."""
        return self._choose(Gold(heads, partial))

    def accepts_partial(self):
        """Whether this oracle's method is exact for partial gold trees (for
        ``auto``: whether some method of the system is)."""
        if self.method in BUILTIN[1:]:
            return True
        if self.method == "auto":
            return (self.system.grammar is not None
                    or self.system.completion_kind in ("search", "spanning")
                    or any(map(accepts_partial, self._registered.values())))
        return accepts_partial(self._registered[self.method])


def accepts_partial(method):
    """Whether a registered method is exact for partial gold trees: its
    ``fn`` says so with the attribute ``partial = True``."""
    return getattr(method.fn, "partial", False) is True


class _Kept:
    """A tuple of gold heads, its checked :class:`Gold` and, once a
    ``scores_batch`` call has prepared it, its C kernel's part of a row job:
    ``(kernel, work, strategy code, columns)``, ``()`` where no kernel
    applies, None until prepared; ``watch``: the work if it can run out of
    memory (the grammar path's), else None."""

    __slots__ = ("heads", "gold", "rows", "watch")

    def __init__(self, heads, gold):
        self.heads, self.gold, self.rows, self.watch = heads, gold, None, None

    def prepare(self, kernel):
        """Make the kernel's data for this tree (``kernel`` from ``Oracle._kernel``)."""
        if kernel is None:
            self.rows = ()
            return
        work = kernel[0].gold_type(self.gold.heads)
        self.rows = (kernel[0], work, kernel[1], kernel[2])
        self.watch = work if hasattr(work, "out_of_memory") else None


def _chart_share(works):
    """The chart limit of each of ``works`` grammar-path works that share
    :data:`KEPT_CHARTS`."""
    return max(MIN_KEPT_CHART, KEPT_CHARTS // max(1, works))


def _out_of_memory(work):
    """Whether a C kernel could not allocate what a row needed (its row would
    not be exact); kernels that never run out (and None) say no."""
    return getattr(work, "out_of_memory", False)


def _check_memory(work):
    """MemoryError where :func:`_out_of_memory`."""
    if _out_of_memory(work):
        raise MemoryError("the oracle's chart does not fit in memory")


def _same_ints(cached, heads):
    """Whether ``heads`` (a list, tuple or numpy array) holds exact ints equal to
    the cached gold heads (``True`` or ``1.0`` compare equal to 1 but are not
    heads)."""
    if hasattr(heads, "tolist"):
        heads = heads.tolist()
    return (isinstance(heads, (tuple, list)) and len(heads) == len(cached)
            and set(map(type, heads)) == {int} and tuple(heads) == cached)


def _why_no_grammar(system):
    """``": REASON"`` if no split grammar can describe the system, else ``""``."""
    reason = getattr(system, "not_split", None)
    return f" (and cannot have one: {reason}; use method='exhaustive' on short sentences)" \
        if reason else ""


def check_system(config, system, where="the configuration", whose=None):
    """ValueError unless the Configuration ``config`` belongs to the system
    object ``system`` (the same definition); ``whose`` names ``system`` in
    the message (default: its name)."""
    mine = config.system
    if mine is system:
        return
    sha = definition_sha256(mine)
    if sha is None or mine.name != system.name or sha != definition_sha256(system):
        raise ValueError(f"{where} belongs to transition system {mine.name!r}, not to "
                         f"{whose or repr(system.name)} (or to another definition of that name)")


def best_of(scores):
    """Names with the maximal score (all of them if none is finite)."""
    if not scores:
        return set()
    top = max(scores.values())
    return {t for t, v in scores.items() if v == top}


def oracle(system, strategy="none", method="auto", max_states=None):
    """A dynamic oracle for ``system`` (a name, a TOML file or a system object).

    strategy: one of the system's strategies (arc-standard: "none", "lbr",
    "strict_lbr", "rbl").  method: "auto" (the fastest registered method that
    is exact for the strategy and the gold tree, else the grammar path, or
    the search or the branching of a completion of kind search or spanning),
    "grammar", "exhaustive", "search", "spanning" or a registered method name.  max_states: for the search, the
    most configurations one call may expand (None: no limit); past it,
    :meth:`Oracle.scores` raises :class:`~semiparse.errors.OverBudget`.
    """
    return Oracle(system, strategy, method, max_states)


__all__ = ["Oracle", "oracle", "best_of", "NEG_INF"]

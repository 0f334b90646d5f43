"""Proving an oracle right: hypothesis against the exhaustive search.

Two checks over the one oracle family, sharing the hypothesis driver
(:func:`run_examples`), the results (:class:`CheckResult`, with a budget of
states per example where the search needs one) and the counterexamples
(:class:`OracleMismatch`):

* :func:`check`, the dependency systems' (below);
* :func:`check_walks`, the walk check of any system whose oracle gives the
  loss of a configuration (the constituent systems): generic over the
  system protocol and the oracle interface, given the gold trees of its kind
  (:mod:`semiparse.testing.constituent_checking` has the constituent ones).

:func:`check` draws gold trees (projective and not, complete and partial
where the method accepts partial trees), configurations
reachable from the initial one (by random transitions mixed with steps that
follow the oracle under test) and, per strategy, compares the oracle's scores
with :meth:`Oracle.scores_exhaustive`.  A mismatch is shrunk by hypothesis to
a small counterexample.  ``semiparse check`` is the command-line front end.

:class:`CheckResult`, :class:`OracleMismatch` and :func:`run_examples` serve
the constituent check as well (:mod:`semiparse.testing.constituent_checking`),
so that ``semiparse check`` reports both from the same results.

Along the way (strategy none) it notes dead ends: drawn configurations, or
their successors, that are not final and from which no final configuration
is reachable (a parser that reaches one cannot finish; see
docs/training.md), as the exhaustive search finds them.  The oracles agree with
the exhaustive search there, so these are reported beside the result, not as
a mismatch.
"""
import copy
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from semiparse.errors import OverBudget, SemiparseError
from semiparse.grammar import load_grammar_text
from semiparse.transitions.oracles._grammar_rows import grammar_kernel
from semiparse.transitions.oracles.exhaustive import best_computation
from semiparse.transitions.oracles.gold import Gold
from semiparse.transitions.oracles.grammar_method import grammar_tree
from semiparse.transitions.oracles.oracle import Oracle
from semiparse.transitions.oracles.methods import system_methods
from semiparse.transitions.systems.compiled import oracle as registered_oracle
from semiparse.transitions.systems.compiled import system as registered_system
from semiparse.transitions.systems.loading import load_system


class OracleMismatch(ABC):
    """A counterexample of ``semiparse check``: where the checked oracle and
    the exhaustive search differ (:class:`Mismatch` for the dependency
    systems, ``ConstituentMismatch`` for the constituent ones)."""

    @abstractmethod
    def describe(self, method):
        """The counterexample in a few lines; ``method`` names the checked oracle."""


@dataclass
class Mismatch(OracleMismatch):
    """A configuration where the checked method and the exhaustive search differ."""

    heads: list
    strategy: str
    stack: tuple
    buffer: tuple
    arcs: tuple
    transitions: list
    got: dict
    expected: dict
    error: str = None
    explained: list = field(default_factory=list)  # more lines (see explain)

    def describe(self, method):
        arcs = "" if self.arcs is None else f"  arcs {list(self.arcs)}"
        lines = [
            f"gold heads:      {self.heads}",
            f"strategy:        {self.strategy}",
            f"configuration:   stack {list(self.stack)}  buffer {list(self.buffer)}{arcs}",
            f"reached by:      {' '.join(self.transitions) or '(initial configuration)'}",
        ]
        if self.error:
            lines.append(f"{method} raised: {self.error}")
        else:
            lines.append(f"{method + ' sigma:':<17}{self.got}")
            lines.append(f"{'exhaustive:':<17}{self.expected}")
            diff = sorted(t for t in set(self.got) | set(self.expected)
                          if self.got.get(t) != self.expected.get(t))
            lines.append(f"{'differ at:':<17}{', '.join(diff)}")
        return "\n".join(lines + self.explained)


@dataclass
class DeadEnd:
    """A configuration that is not final and has no legal transition."""

    stack: tuple
    buffer: tuple
    arcs: tuple
    transitions: list

    def describe(self):
        arcs = "" if self.arcs is None else f" arcs {list(self.arcs)}"
        return (f"stack {list(self.stack)} buffer {list(self.buffer)}{arcs}, reached by "
                f"{' '.join(self.transitions) or '(initial configuration)'}")


def dead_end(system, stack, buffer, arcs, transitions, scores):
    """The :class:`DeadEnd` at the configuration or one step after it, or
    None.  ``scores``: the exhaustive search's, under strategy none, where a
    transition scores -inf exactly when no final configuration is reachable
    after it (a dead end with legal transitions, whose every path leads to
    one without any)."""
    if system.is_final(stack, buffer, arcs):
        return None
    if all(v == float("-inf") for v in scores.values()):
        return DeadEnd(stack, buffer, arcs, transitions)
    for t, v in scores.items():
        if v == float("-inf"):
            return DeadEnd(*system.apply(stack, buffer, arcs, t)[:3], transitions + [t])
    return None


@dataclass
class CheckResult:
    """The outcome of checking one oracle (one strategy, one method) on
    ``examples`` hypothesis examples; ``mismatch`` is the shrunk
    counterexample, None if the oracle agreed everywhere."""

    system: str
    strategy: str
    method: str
    examples: int
    max_n: int
    seed: int
    calls: int = 0  # examples examined, shrinking included
    mismatch: OracleMismatch = None
    grammar: str = None
    notes: list = field(default_factory=list)
    dead_ends: int = 0  # examples at or one step before a dead end
    dead_end: DeadEnd = None  # the first of them
    configurations: int = 0  # configurations compared, where an example holds several
    hint: str = None  # advice for a system that passed (see reduction_hint)
    # the walk check's budget: an example whose exhaustive search passes
    # max_states states (None: unbounded) is skipped, neither passed nor failed
    max_states: int = None
    skipped: int = 0  # examples stopped by the budget
    passed: int = 0  # examples checked to the end of their walk

    @property
    def ok(self):
        return self.mismatch is None


def with_grammar(system, path):
    """A copy of a declared system whose completion grammar is read from
    ``path``; a system file is read with it, so that the grammar its
    ``[completion]`` names is not needed."""
    system = load_system(system, grammar_file=path)
    if system.grammar is None:
        raise ValueError(f"transition system {system.name!r} has no completion grammar to replace")
    grammar, text = load_grammar_text(path)
    completion = system.completion_spec
    missing = [t for _, _, t in completion.rules if t not in grammar.terminals]
    missing += [t for t in completion.prefix if t not in grammar.terminals]
    if missing:
        raise ValueError(f"{path}: grammar lacks terminal(s) {', '.join(sorted(set(missing)))} "
                         f"that {system.name} puts in the completion string")
    clone = copy.copy(system)
    clone.set_completion(completion.with_grammar(grammar, str(path), text))
    return clone


def check(system, strategies=None, examples=2000, max_n=8, seed=0, method="grammar",
          grammar=None):
    """Compare ``method`` with the exhaustive search; one :class:`CheckResult` per strategy.

    system: name, TOML path or system object; grammar: optional path of a
    completion grammar to use instead of the system's own.
    """
    from semiparse.testing.strategies import MAX_WORDS, oracle_examples

    system = load_system(system) if grammar is None else with_grammar(system, grammar)
    if examples < 1 or not 1 <= max_n <= MAX_WORDS:
        raise ValueError(f"check needs examples >= 1 and 1 <= max_n <= {MAX_WORDS}, "
                         f"got {examples} and {max_n}")
    projective_only = any(m.name == method and m.projective_only
                          for m in system_methods(system))
    results = []
    for strategy in strategies or system.strategies:
        checked = Oracle(system, strategy, method)
        exhaustive = Oracle(system, strategy, "exhaustive")
        partial = checked.accepts_partial()
        # the configurations examined, with the exhaustive search's scores,
        # where the check may advise critical_buffer (see reduction_hint)
        own = [] if strategy == "none" and method == "grammar" and could_reduce(system) else None
        result = CheckResult(system.name, strategy, method, examples, max_n, seed,
                             grammar=getattr(system, "grammar_name", None))
        if projective_only:
            result.notes.append("projective gold trees only (the method is exact only for those)")
        elif not partial:
            result.notes.append("complete gold trees only (the method refuses partial ones)")

        def examine(ex):
            c = ex.computation
            expected = exhaustive.scores_exhaustive(c.stack, c.buffer, ex.heads, c.arcs, partial)
            if strategy == "none":
                seen = dead_end(system, c.stack, c.buffer, c.arcs, list(c.transitions), expected)
                if seen is not None:
                    result.dead_ends += 1
                    result.dead_end = result.dead_end or seen
            try:
                got = checked.scores(c.stack, c.buffer, ex.heads, c.arcs, partial)
            except Exception as exc:  # a crashing method is a counterexample too
                result.mismatch = Mismatch(ex.heads, strategy, c.stack, c.buffer, c.arcs,
                                           c.transitions, {}, expected,
                                           f"{type(exc).__name__}: {exc}")
                raise
            if got != expected:
                result.mismatch = Mismatch(ex.heads, strategy, c.stack, c.buffer, c.arcs,
                                           c.transitions, got, expected)
                raise AssertionError("oracle scores differ from the exhaustive search")
            if own is not None:
                own.append((c.stack, c.buffer, tuple(ex.heads), c.arcs, expected))

        run_examples(result, oracle_examples(system, max_n, [strategy], {strategy: checked},
                                             projective=True if projective_only else None,
                                             partial=partial), examine)
        if isinstance(result.mismatch, Mismatch) and result.mismatch.error is None:
            try:
                result.mismatch.explained = explain(system, method, result.mismatch, partial)
            except Exception as exc:  # the counterexample stands without its trees
                result.mismatch.explained = [f"(no trees shown: {type(exc).__name__}: {exc})"]
        if result.ok and own is not None:
            result.hint = reduction_hint(system, own, examples, max_n, seed)
        results.append(result)
    return results


def reduces(system, strategy):
    """Whether the grammar path of ``system`` under ``strategy`` leaves the
    buffer nodes that are not critical out of its strings: the system
    declares ``critical_buffer`` and the path runs in C (strategy none)."""
    spec = getattr(system, "completion_spec", None)
    return (strategy == "none" and spec is not None and spec.critical_buffer
            and grammar_kernel(system) is not None)


def with_critical_buffer(system, declared):
    """A copy of a declared ``system`` with ``critical_buffer`` declared or not."""
    clone = copy.copy(system)
    clone.set_completion(system.completion_spec.declaring_critical_buffer(declared))
    return clone


def explain(system, method, m, partial):
    """Lines that explain the :class:`Mismatch` ``m`` of ``method``: at the
    first transition where the scores differ, the best tree the completion
    grammar derives after it (method grammar) and a best tree the exhaustive
    search finds, with the computation that builds it; and where
    ``critical_buffer`` is declared and the grammar path without the
    reduction agrees with the exhaustive search here, that the declaration
    is wrong."""
    differ = [t for t in system.transitions if m.got.get(t) != m.expected.get(t)]
    first = next((t for t in differ if t in m.expected), None)
    if first is None or m.arcs is None:
        return []
    lines = []
    gold = Gold(m.heads, partial)
    before = tuple(m.arcs)
    after = system.apply(m.stack, m.buffer, before, first)[2]
    reduced = method == "grammar" and reduces(system, m.strategy)

    def tree(arcs):
        gained = sum(1 for d in range(1, gold.n + 1)
                     if before[d] < 0 and arcs[d] == gold.heads[d] >= 0)
        return (f"after {first}: heads {list(arcs)} (-1: none), {gained} gold "
                f"edge{'' if gained == 1 else 's'} from the configuration on")

    if method == "grammar" and system.grammar is not None:
        stack, buffer, arcs = system.validate(m.stack, m.buffer, before, gold.n)
        found = grammar_tree(system, gold, stack, buffer, arcs, m.strategy, first)
        if found is None:
            text = f"after {first}: the grammar derives no tree"
        else:
            heads = list(after)
            for d, h in found.items():
                if heads[d] < 0:
                    heads[d] = h
            text = tree(heads)
        if reduced:
            text += " (over the whole buffer, without the critical_buffer reduction)"
        lines.append(f"{'grammar tree:':<17}{text}")
    found = best_computation(system, gold.heads, m.strategy, m.stack, m.buffer, before, first)
    if found is None:
        lines.append(f"{'exhaustive tree:':<17}after {first}: no final configuration is reachable")
    else:
        lines.append(f"{'exhaustive tree:':<17}{tree(found[1])}, by {' '.join(found[0])}")
    if reduced:
        plain = Oracle(with_critical_buffer(system, False), m.strategy, "grammar")
        if plain.scores(m.stack, m.buffer, gold.heads, before, partial) == m.expected:
            lines.append("critical_buffer = true is wrong for this system: without it the oracle "
                         "agrees here (the buffer cannot be reduced to its critical nodes; "
                         "docs/oracles.md, \"The critical buffer\"): remove it from [completion]")
    return lines


def could_reduce(system):
    """Whether ``system``'s grammar path runs in C and could reduce the buffer
    to its critical nodes, but the system does not declare it."""
    spec = getattr(system, "completion_spec", None)
    return spec is not None and not spec.critical_buffer and grammar_kernel(system) is not None


# Examples a trial of critical_buffer takes at least before check suggests
# it: a wrong declaration can agree on a few hundred (arc-swift's, which first
# differs on sentences of 6 words).
HINT_EXAMPLES = 2000


def reduction_hint(system, own, examples, max_n, seed):
    """Advice to declare ``critical_buffer`` if, declared, the oracle agrees
    with the exhaustive search on the check's own configurations ``own``
    (``(stack, buffer, heads, arcs, expected)``) and, where the check drew
    fewer than :data:`HINT_EXAMPLES` examples, on a check of that many;
    with the speed-up measured on ``own``.  Else None."""
    trial = with_critical_buffer(system, True)
    reduced = Oracle(trial, "none", "grammar")
    for stack, buffer, heads, arcs, expected in own:
        if reduced.scores(stack, buffer, heads, arcs, True) != expected:
            return None
    more = ""
    if examples < HINT_EXAMPLES:
        [result] = check(trial, ["none"], HINT_EXAMPLES, max_n, seed)
        if not result.ok:
            return None
        more = f", as on {result.calls} examples of a check of its own"
    speedup = measured_speedup(system, trial, own)
    if speedup >= 1.05:
        gain = f"{speedup:.1f}x faster on the {len(own)} configurations of this check (n <= {max_n})"
    else:
        gain = (f"{speedup:.1f}x, as fast, on the {len(own)} configurations of this check (n <= "
                f"{max_n}), whose buffers are too short to gain (the gain grows with the buffer)")
    return (f"add critical_buffer = true: {gain}, on which the oracle with it agrees with the "
            f"exhaustive search{more}.  Check the file again with it declared, with more "
            f"examples and longer sentences (--examples, --max-n), before relying on it "
            f"(docs/oracles.md, \"The critical buffer\")")


def measured_speedup(system, trial, own, rounds=3):
    """Time per call of the grammar path of ``system`` over that of
    ``trial`` (the same with ``critical_buffer``) on the configurations
    ``own``: the best of ``rounds`` alternating rounds, each oracle cleared
    before each (every call is then the first for its tree, as on the
    check's examples)."""
    oracles = [Oracle(system, "none", "grammar"), Oracle(trial, "none", "grammar")]
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for i, oracle in enumerate(oracles):
            oracle.cache_clear()
            start = time.perf_counter()
            for stack, buffer, heads, arcs, _ in own:
                oracle.scores(stack, buffer, heads, arcs, True)
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0] / max(best[1], 1e-9)


def run_examples(result, strategy, examine, phases=None):
    """Call ``examine`` on ``result.examples`` examples drawn from the
    hypothesis ``strategy`` (seeded with ``result.seed``; ``phases``:
    hypothesis's, default all).  ``examine`` sets ``result.mismatch``
    before it raises on a counterexample; hypothesis shrinks it, and the
    smallest stays in ``result``.  Any other failure propagates."""
    options = {} if phases is None else {"phases": phases}

    @hypothesis_seed(result.seed)
    @settings(max_examples=result.examples, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, **options)
    @given(strategy)
    def prop(example):
        result.calls += 1
        examine(example)

    try:
        prop()
    except Exception:
        if result.mismatch is None:
            raise


# -- the walk check: any system whose oracle gives a configuration's loss -----

def make_oracle(name):
    """The oracle a walk check proves: the registered system's."""
    return registered_oracle(name)


class WalkMismatch(OracleMismatch, SemiparseError, AssertionError):
    """Where an oracle and the exhaustive search differ on a walk: ``what``
    differs at ``configuration``, reached from the initial one by
    ``transitions`` for the gold ``tree``; ``loss`` and ``breakdown`` are the
    oracle's there."""

    def __init__(self, system, what, tree, transitions, configuration, loss, breakdown):
        self.system, self.what, self.tree = system, what, tree
        self.transitions, self.configuration = list(transitions), configuration
        self.loss, self.breakdown = loss, breakdown
        super().__init__(self.describe())

    def describe(self, method=None):
        return (f"{self.system}: {self.what}\n  gold tree: {self.tree}\n"
                f"  transitions: {' '.join(map(str, self.transitions)) or '(none)'}\n"
                f"  configuration: {self.configuration}\n"
                f"  oracle loss: {self.loss} {self.breakdown}")


def check_walk(system, tree, choices, oracle=None, max_states=None):
    """Walk from the initial configuration of ``system`` (a registered name
    or a system): choice ``(optimal, k)`` picks the k-th (mod) optimal or
    possible transition.  On every configuration of the walk the oracle's
    loss (``oracle.loss``) must equal the exhaustive search's
    (``oracle.search(gold, max_states).loss``) and no term of its
    ``breakdown`` be negative; at the end of the walk its optimal
    transitions must be exactly those (of ``search.options``) whose
    successor keeps the exhaustive minimum.  Raises :class:`WalkMismatch`
    where they disagree, and :class:`OverBudget` (with ``checked``, the
    configurations compared before) when the exhaustive search of the walk
    passes ``max_states`` states; returns the number of configurations
    checked."""
    system = registered_system(system)
    name = system.name
    oracle = oracle or make_oracle(name)
    gold = oracle.gold(tree)
    search = oracle.search(gold, max_states)
    c = system.initial(gold.n)
    history = []
    checked = 0

    def truth(c):
        try:
            return search.loss(c)
        except OverBudget as exc:
            exc.checked = checked
            raise

    def fail(c, what):
        raise WalkMismatch(name, what, tree, history, c, oracle.loss(c, gold),
                           oracle.breakdown(c, gold))

    for optimal, k in choices:
        expected = truth(c)
        if oracle.loss(c, gold) != expected:
            fail(c, f"oracle loss {oracle.loss(c, gold)} != exhaustive {expected}")
        if min(oracle.breakdown(c, gold)) < 0:
            fail(c, "a loss term is negative")
        checked += 1
        if system.is_final(c):
            break
        pool = oracle.optimal(c, gold) if optimal else search.options(c)
        if not pool:
            fail(c, "no optimal transition in a non-terminal configuration")
        t = pool[k % len(pool)]
        history.append(t)
        c = system.apply(c, t)
    # the optimal set at the last configuration
    if not system.is_final(c):
        expected = truth(c)
        if oracle.loss(c, gold) != expected:
            fail(c, f"oracle loss {oracle.loss(c, gold)} != exhaustive {expected}")
        checked += 1
        good = set()
        for t in search.options(c):
            # the best tree after t is as good as the best from c
            if truth(system.apply(c, t)) == expected:
                good.add(t)
        mine = set(oracle.optimal(c, gold))
        if mine != good:
            fail(c, f"optimal transitions {sorted(map(str, mine))} != exhaustive {sorted(map(str, good))}")
    return checked


def check_walks(system, trees, examples, max_n, seed=0, progress=None, max_states=None, notes=()):
    """Compare the oracle of ``system`` with its exhaustive search on
    ``examples`` hypothesis examples: a gold tree drawn from ``trees`` (a
    hypothesis strategy; the kind's generator) and a walk of at most
    ``4 * max_n + 8`` steps, a step arbitrary with probability 1/4, else
    optimal (:func:`check_walk`).  Returns a :class:`CheckResult` (strategy
    ``none``, method the oracle's); an example whose exhaustive search
    passes ``max_states`` states (None: unbounded) is counted in
    ``skipped``.  ``progress``, if given, is called as ``progress(done,
    result)`` before the first example (``done`` 0) and after each example
    that passed or was skipped."""
    from hypothesis import Phase
    from hypothesis import strategies as st

    name = registered_system(system).name
    if examples < 1 or max_n < 1:
        raise ValueError("examples and max_n must be positive")
    oracle = make_oracle(name)
    missing = [a for a in ("loss", "breakdown", "gold", "search") if not hasattr(oracle, a)]
    if missing:
        raise ValueError(f"the oracle of {name!r} has no {', '.join(missing)}: the walk check "
                         f"does not apply to it (check compares its scores)")
    result = CheckResult(name, "none", oracle.method, examples, max_n, seed,
                         notes=list(notes), max_states=max_states)
    done = 0
    if progress is not None:
        progress(done, result)
    step = st.tuples(st.integers(0, 3).map(bool), st.integers(0, 50))
    walk = st.lists(step, min_size=1, max_size=4 * max_n + 8)

    def examine(example):
        nonlocal done
        try:
            result.configurations += check_walk(name, *example, oracle=oracle, max_states=max_states)
        except WalkMismatch as exc:
            result.mismatch = exc
            raise
        except OverBudget as exc:
            # not a failure (hypothesis would shrink it) and not a pass
            if result.mismatch is None:  # not while shrinking a mismatch
                result.configurations += exc.checked
                result.skipped += 1
        else:
            if result.mismatch is None:
                result.passed += 1
        done += 1
        if progress is not None:
            progress(done, result)

    run_examples(result, st.tuples(trees, walk), examine, phases=[Phase.generate, Phase.shrink])
    return result

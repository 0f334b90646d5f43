"""Proving an oracle right: hypothesis against the exhaustive search.

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

from semiparse.grammar import load_grammar_text
from semiparse.transitions.oracles._grammar_rows import grammar_kernel
from semiparse.transitions.oracles.exhaustive import best_computation
from semiparse.transitions.oracles.gold import Gold
from semiparse.transitions.oracles.grammar_method import grammar_tree
from semiparse.transitions.oracles.oracle import Oracle
from semiparse.transitions.oracles.methods import system_methods
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

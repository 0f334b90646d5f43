"""Ground truth for the constituency oracles: the minimum Hamming loss over all
legal transition sequences from a configuration, by memoized search.

The loss of a final tree is split along the computation: the gold
constituents ending at or after the buffer index and not yet built are
*pending*; a Reduce that makes a pending one costs 0, any other Reduce costs 1
(erroneous constituent); a Shift from ``i`` costs the pending ones ending at
``i`` (no later Reduce can end there); the pending ones left at the end cost 1
each.  So ``loss(c) = |γc \\ γG| + (gold ending before i, not built) +
future(c)``, and ``future`` depends only on the stack, ``i`` and the gold
constituents built that end at ``i``: that is the memo key.

Labels: an NT builds a constituent starting at a known word (top-down: the
buffer index; in-order: the left end of the node below it), so a label that
no gold constituent starting there has can only give an erroneous
constituent, and all such labels behave alike: NT-X is tried with the gold
labels at that start and one label outside the gold tree, and the key
replaces the other labels by it.

Bound.  The systems allow unboundedly many non-terminals (unary chains), so the
search needs a bound that cannot exclude an optimal tree.  It is an
iterative-deepening search on ``future``: with a bound ``b = 0, 1, 2, ...``,
a state is abandoned when a lower bound of its future cost exceeds what is
left of ``b``; the first ``b`` for which a computation is found gives the
minimum.  The lower bound counts, for each (label, start) of an open NT or a
pending gold constituent starting before the buffer index, the mismatch
between the two numbers: each open NT makes exactly one constituent (so
extra NTs are erroneous) and only an open NT can still make a pending
constituent whose start has been passed (top-down), or in-order an open NT or
a new NT above a stack node with that left end (pending constituents at a
start that no stack node has are lost).

Cost.  The lower bound is weak once a configuration has lost several gold
constituents: every unit of ``b`` lets the search push one more NT (any label
class, at any depth of a unary chain), so the states explored grow about
five- to tenfold per unit of the minimum loss, whatever the sentence length.
A five-word tree whose walk has lost six constituents already needs millions
of states, and the memo (every state is a key) grows with them.  ``Search(...,
max_states=N)`` therefore counts the states it visits (memo hits included,
over all calls of one search) and raises :class:`OverBudget` past ``N``; the
memo it leaves holds only finished entries.  The default, None, is unbounded.
"""
from collections import Counter
from numbers import Integral

from semiparse.transitions.constituent.gold import as_gold
from semiparse.transitions.constituent.systems import NT, Open, system as get_system
from semiparse.errors import OverBudget
from semiparse.transitions.oracles.protocol import ExhaustiveSearch

FRESH = "<not-gold>"


class Search(ExhaustiveSearch):
    """Memoized minimum-loss search for one system and one gold tree."""

    def __init__(self, name, gold, max_states=None):
        if max_states is not None and (isinstance(max_states, bool)
                                       or not isinstance(max_states, Integral) or max_states < 1):
            raise ValueError(f"max_states must be a positive integer or None, got {max_states!r}")
        self.max_states = None if max_states is None else int(max_states)
        self.states = 0  # states visited, memo hits included
        self.system = get_system(name)
        self.gold = gold = as_gold(gold)
        fresh = FRESH
        while fresh in gold.labels:
            fresh += "'"
        self.fresh = fresh
        self.labels = list(gold.labels) + [fresh]  # every label class
        self.top_down = self.system.name == "top_down"
        self.memo = {}  # key -> (value, exact): exact value or a strict lower bound
        self.at_start = {}
        for x, l, _ in gold.items:
            self.at_start.setdefault(l, set()).add(x)
        self.at_start = {l: sorted(xs) + [fresh] for l, xs in self.at_start.items()}

    def nt_labels(self, c):
        """Labels worth trying for an NT in ``c`` (see the module docstring)."""
        return self.at_start.get(self.system.nt_start(c), [self.fresh])

    def _key(self, c):
        i = c.i
        at_start, fresh = self.at_start, self.fresh
        stack = tuple(
            (s.label if s.label in at_start.get(s.start, ()) else fresh, s.index, s.start)
            if type(s) is Open else (s.l, s.r, s.label is None) for s in c.stack)
        # built gold constituents ending at i can still be repeated (unary chains)
        recent = tuple(sorted(Counter(x for x in c.built if x[2] == i and x in self.gold.counts).items()))
        return stack, i, c.finished, recent

    def _pending(self, key):
        """Counter of the pending gold constituents of a key."""
        _, i, _, recent = key
        pending = Counter({x: k for x, k in self.gold.counts.items() if x[2] >= i})
        pending.subtract(dict(recent))
        return +pending

    def _lower(self, key, pending):
        stack, i = key[0], key[1]
        opens = Counter((s[0], s[2]) for s in stack if len(s) == 3 and not isinstance(s[2], bool))
        need = Counter()
        for (x, l, _), k in pending.items():
            need[(x, l)] += k
        lefts = {s[0] for s in stack if len(s) == 3 and isinstance(s[2], bool)}
        bound = 0
        for key2 in set(opens) | set(need):
            have, want = opens.get(key2, 0), need.get(key2, 0)
            if have > want:
                bound += have - want
            elif key2[1] < i and want > have and (self.top_down or key2[1] not in lefts):
                bound += want - have
        return bound

    def future(self, c, budget):
        """Minimum future cost from ``c`` if at most ``budget``, else a lower
        bound of it that exceeds ``budget``.  The search is as deep as the
        transition sequences, so it runs :meth:`_future` on an explicit stack
        rather than on Python's."""
        frames, value = [self._future(c, budget)], None
        while frames:
            try:
                request = frames[-1].send(value)
            except StopIteration as done:
                frames.pop()
                value = done.value
            else:
                frames.append(self._future(*request))
                value = None
        return value

    def _future(self, c, budget):
        """:meth:`future` as a generator: yields ``(configuration, budget)`` for
        each sub-search and is sent its result."""
        system = self.system
        self.states += 1
        if self.max_states is not None and self.states > self.max_states:
            raise OverBudget(self.max_states)
        key = self._key(c)
        memo = self.memo
        known = memo.get(key)
        if known is not None and (known[1] or known[0] > budget):
            return known[0]
        pending = self._pending(key)
        if system._terminal(c):
            value = sum(pending.values())
            memo[key] = (value, True)
            return value
        lower = self._lower(key, pending)
        if known is not None:
            lower = max(lower, known[0])
        if lower > budget:
            memo[key] = (lower, False)
            return lower
        best = float("inf")
        for t in system._legal_all(c):
            if t.kind == "NT":
                for x in self.nt_labels(c):
                    best = min(best, (yield system._step(c, NT(x)), budget))
                continue
            d = system._step(c, t)
            if t.kind == "SH":
                cost = sum(k for x, k in pending.items() if x[2] == c.i)
            elif t.kind == "RE":
                cost = 0 if pending.get(d.built[-1], 0) > 0 else 1
            else:
                cost = 0
            if cost <= budget:
                best = min(best, cost + (yield d, budget - cost))
            else:
                best = min(best, cost)
        exact = best <= budget
        memo[key] = (best if exact else max(best, budget + 1), exact)
        return memo[key][0]

    def options(self, c):
        """The transitions worth trying from ``c``: the legal ones, NT-X with
        every gold label and one label outside the gold tree."""
        out = []
        for t in self.system.legal(c):
            out.extend([NT(x) for x in self.labels] if t.kind == "NT" else [t])
        return out

    def loss(self, c):
        """Minimum loss of a tree reachable from ``c`` (validated first);
        :class:`OverBudget` past ``max_states`` states."""
        c = self.system.validate(c)
        gold = self.gold
        if c.n != gold.n:
            raise ValueError(f"configuration has {c.n} words, gold tree {gold.n}")
        built = Counter(c.built)
        matched = sum(min(k, gold.counts.get(x, 0)) for x, k in built.items())
        matched_before = sum(min(k, gold.counts.get(x, 0)) for x, k in built.items() if x[2] < c.i)
        missed = sum(k for x, k in gold.counts.items() if x[2] < c.i) - matched_before
        budget = 0
        while True:
            value = self.future(c, budget)
            if value <= budget:
                return len(c.built) - matched + missed + value
            budget = value


def min_loss(name, c, gold, search=None):
    """True minimum Hamming loss from configuration ``c`` (exhaustive)."""
    search = search or Search(name, gold)
    return search.loss(c)

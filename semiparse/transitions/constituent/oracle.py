"""Exact dynamic oracles for the top-down and in-order systems.

After Fernández-González and Gómez-Rodríguez 2018, section 3.  The loss of a
configuration c is the minimum Hamming loss (size of the multiset symmetric
difference of labelled spans) between the gold tree and a tree reachable from
c.  It has the four terms of their section 3.1::

    loss(c) = |U(c)| + |γc \\ γG| + |αc \\ αG| + out_of_order(c)

* ``erroneous`` |γc \\ γG|: constituents built that are not gold (multisets:
  a repeat of an identical gold constituent beyond its gold count is wrong);
* ``wrong_nts`` |αc \\ αG|: open non-terminals that can no longer become any
  gold constituent (each will close into a wrong one);
* ``unreachable`` |U(c)|: gold constituents neither built nor individually
  reachable (below);
* ``out_of_order``: reachable gold constituents and gold-compatible open
  non-terminals lost because they cannot all be used in the order the stack
  imposes: ``(#reachable + #compatible) - best``, where ``best`` is the
  maximum weight of a consistent choice, a matched open NT weighing 2 (it wins
  a gold constituent and avoids an erroneous one), any other gold
  constituent 1.

Reachability (exact versions of the conditions of their section 3.2).  A
gold constituent (X, l, r) not already built needs ``r >= i``; then

top-down
    ``l > i``: always reachable (Shift ... NT-X ... Reduce); ``l == i``: an NT
    pushed now, on top of the whole stack; ``l < i``: only an open NT with
    label X pushed at ``l``, closing at ``r`` -- not at ``r == i`` while an NT
    pushed at ``i`` is open (it needs a word first), and the bottom NT closes
    at ``n``.

in-order
    ``l >= i``: always reachable; ``l < i``: ``l`` must be the left end of the
    first child of an open NT (its ``start``) or of the finished node on top of
    the stack: the open NT itself if its label is X, or a wrapper made after
    it closes (NT-X above the reduced constituent, at or outside the span the
    NT closes at), or a wrapper of the top node.  Other finished nodes are
    sealed inside their parents.

Candidates at different starts never conflict (they all contain the word
before ``i`` and nest by start), so ``best`` is a sum over starts.  In-order,
each open NT's start is a choice between leaving it unmatched or matching it
to one span.  Top-down, the open NTs pushed at one start must take gold spans
from the outside in: the paper's longest increasing subsequence, computed in
O(k log k) with a Fenwick tree (:func:`_longest_chain`); identical spans of a
gold unary chain may be matched in any order (the loss compares multisets),
for which a small capacity-aware programme is used (:func:`_same_start`).

The paper matches stack non-terminals by their node ``(X, j)`` and accepts any
stack item's left end in its condition (iii); both make its formula inexact
(see docs/constituency.md).  The version here equals the exhaustive search of
:mod:`semiparse.transitions.constituent.exhaustive` on every configuration tested
(``semiparse check top_down|in_order``).
"""
from collections import Counter
from typing import NamedTuple

from semiparse.transitions.constituent.exhaustive import FRESH, Search
from semiparse.transitions.constituent.gold import Gold, as_gold
from semiparse.transitions.constituent.systems import NT, Done, Open, system as get_system
from semiparse.transitions.oracles.protocol import DynamicOracle


class Breakdown(NamedTuple):
    """The four terms of the loss; ``total`` is their sum."""
    unreachable: int
    erroneous: int
    wrong_nts: int
    out_of_order: int

    @property
    def total(self):
        return self.unreachable + self.erroneous + self.wrong_nts + self.out_of_order


def _longest_chain(run_choices, size):
    """Longest strictly increasing sequence picking at most one value from each
    entry of ``run_choices`` (lists of ints in ``range(size)``), as
    ``ending[v]`` = the longest such sequence ending with value v (0 if none).
    Patience-style with a Fenwick tree of prefix maxima: O(k log size)."""
    tree = [0] * (size + 1)
    ending = [0] * size
    for choices in run_choices:
        values = []
        for v in choices:
            k, top = v, 0  # maximum over values < v
            while k > 0:
                if tree[k] > top:
                    top = tree[k]
                k -= k & -k
            values.append((v, top + 1))
        for v, length in values:
            if length > ending[v]:
                ending[v] = length
            k = v + 1
            while k <= size:
                if tree[k] < length:
                    tree[k] = length
                k += k & -k
    return ending


def _same_start(run, allowed, spans, with_rest, general=False):
    """Top-down, one start position: the best weight of matching the open NTs
    ``run`` (stack order, labels) to gold spans there.  Matched NTs must take
    spans in nesting order (outer first, so group indices non-decreasing) and
    at most the available copies of a label in a span (identical spans in a
    unary chain may come in any order: the loss compares multisets).  A match
    weighs 2; with ``with_rest`` (the start is the buffer index) every gold
    constituent left at or inside the last matched span weighs 1 (pushed on
    top later).  A longest non-decreasing subsequence with capacities,
    computed by :func:`_longest_chain` in O(k log k) when every span there
    holds one gold constituent (the paper's case), else (or with ``general``)
    by a small dynamic programme over (span, labels used there)."""
    sizes = [sum(labels.values()) for _, labels in spans]
    if not general and all(size == 1 for size in sizes):
        ending = _longest_chain(allowed, len(spans))
        if not with_rest:
            return 2 * max(ending, default=0)
        return max([len(spans)] + [2 * k + len(spans) - 1 - g for g, k in enumerate(ending) if k])
    states = {(-1, ()): 0}
    for (_, label), choices in zip(run, allowed):
        new = dict(states)
        for (g, used), weight in states.items():
            for h in choices:
                if h < g:
                    continue
                taken = dict(used) if h == g else {}
                if taken.get(label, 0) >= spans[h][1][label]:
                    continue
                taken[label] = taken.get(label, 0) + 1
                key = (h, tuple(sorted(taken.items())))
                if new.get(key, -1) < weight + 2:
                    new[key] = weight + 2
        states = new
    if not with_rest:
        return max(states.values())
    best = 0
    for (g, used), weight in states.items():
        rest = sum(sizes[max(g, 0):]) - sum(k for _, k in used)
        best = max(best, weight + rest)
    return best


class Oracle(DynamicOracle):
    """Dynamic oracle of one system: ``loss``, ``breakdown``, and the
    family's interface, ``scores`` and ``optimal``."""

    def __init__(self, name, chain="lis"):
        self.system = get_system(name)
        self.name = self.system.name
        if chain not in ("lis", "general"):
            raise ValueError(f"chain must be 'lis' or 'general', not {chain!r}")
        self.chain = chain

    @property
    def method(self):
        """How the scores are computed (the family's name for it): ``chain``."""
        return self.chain

    def _terms(self, c, gold):
        if c.n != gold.n:
            raise ValueError(f"configuration has {c.n} words, gold tree {gold.n}")
        i, n = c.i, c.n
        built = Counter(c.built)
        matched_built = sum(min(k, gold.counts.get(key, 0)) for key, k in built.items())
        erroneous = len(c.built) - matched_built
        items, counts, repeat = gold.items, gold.counts, gold.repeat

        def groups(l):
            """[(r, Counter of available labels)] of the gold spans starting at l, outer first."""
            out = []
            for r, ranks in gold.groups_at[l]:
                if r < i:
                    break
                labels = Counter(items[p][0] for p in ranks
                                 if repeat[p] < counts[items[p]] - built.get(items[p], 0))
                if labels:
                    out.append((r, labels))
            return out

        stack = c.stack
        opens = [(k, s) for k, s in enumerate(stack) if type(s) is Open]
        best = reachable = compatible = 0
        if self.name == "in_order":
            free = gold.at_least[i]
            for _, item in opens:
                spans = groups(item.start)
                total = sum(sum(labels.values()) for _, labels in spans)
                reachable += total
                score, outer = total, 0
                for r, labels in spans:
                    outer += sum(labels.values())
                    if labels[item.label]:
                        # the NT closes at r; wrappers: the other spans at or outside r
                        score = max(score, 2 + outer - 1)
                compatible += any(labels[item.label] for _, labels in spans)
                best += score
            if stack and type(stack[-1]) is Done and not c.finished:
                total = sum(sum(labels.values()) for _, labels in groups(stack[-1].l))
                reachable += total
                best += total
        else:
            free = gold.at_least[i + 1]
            low = i + 1 if opens and opens[-1][1].index == i else i
            runs = {}
            for k, item in opens:
                runs.setdefault(item.start, []).append((k, item.label))
            if i < n:
                runs.setdefault(i, [])
            for l, run in runs.items():
                spans = groups(l)
                allowed = [[g for g, (r, labels) in enumerate(spans)
                            if labels[x] and r >= low and (k > 0 or r == n)] for k, x in run]
                compatible += sum(1 for a in allowed if a)
                if l == i:
                    reachable += sum(sum(labels.values()) for _, labels in spans)
                else:
                    usable = {(g, x) for (_, x), a in zip(run, allowed) for g in a}
                    reachable += sum(spans[g][1][x] for g, x in usable)
                best += _same_start(run, allowed, spans, l == i, self.chain == "general")
        unreachable = len(items) - matched_built - free - reachable
        out_of_order = reachable + compatible - best
        return Breakdown(unreachable, erroneous, len(opens) - compatible, out_of_order)

    def breakdown(self, config, gold):
        """The four loss terms of ``config`` against ``gold`` (Tree or Gold)."""
        return self._terms(self.system.validate(config), as_gold(gold))

    def loss(self, config, gold):
        """Minimum Hamming loss of a tree reachable from ``config``."""
        return self.breakdown(config, gold).total

    def gold(self, tree):
        """``tree`` (a Tree) prepared for this oracle: a :class:`Gold`."""
        return as_gold(tree)

    def search(self, gold, max_states=None):
        """The exhaustive search (ground truth) of this system for ``gold``,
        bounded by ``max_states`` visited states (None: unbounded)."""
        return Search(self.system, gold, max_states)

    def scores(self, config, gold):
        """``{transition: value}`` for the legal transitions of ``config``,
        the value of ``t`` minus the minimum loss of a tree reachable after
        it: the best are :meth:`optimal`.  NT-X appears for each label X of
        a gold constituent starting where its constituent will, and
        ``NT(None)`` for every other label (they score alike: one
        erroneous constituent more).  Empty if ``config`` is final."""
        config, gold = self.system.validate(config), as_gold(gold)
        out = {}
        for t in self.system._legal_all(config):
            if t.kind == "NT":
                labels = gold.labels_at[self.system.nt_start(config)]
                other = FRESH
                while other in gold.labels:
                    other += "'"
                for x in labels:
                    out[NT(x)] = -self._terms(self.system._step(config, NT(x)), gold).total
                out[NT(None)] = -self._terms(self.system._step(config, NT(other)), gold).total
            else:
                out[t] = -self._terms(self.system._step(config, t), gold).total
        return out

    def optimal(self, config, gold):
        """The legal transitions that keep the loss: a list of Transition (NT-X
        for each optimal label X; only labels of gold constituents starting
        where the NT's constituent will start can be optimal, any other label
        adds one erroneous constituent)."""
        config, gold = self.system.validate(config), as_gold(gold)
        base = self._terms(config, gold).total
        out = []
        for t in self.system._legal_all(config):
            if t.kind == "NT":
                # an NT whose label no gold constituent at its start has only adds
                # an erroneous constituent (+1); the checker tests every label
                candidates = [NT(x) for x in gold.labels_at[self.system.nt_start(config)]]
            else:
                candidates = [t]
            for u in candidates:
                if self._terms(self.system._step(config, u), gold).total == base:
                    out.append(u)
        return out


def oracle_of(system, strategy="none", method="auto", **options):
    """The oracle maker registered with the constituent systems
    (``semiparse.oracle(name, ...)``): they have no strategies or methods;
    ``options``: those of :class:`Oracle` (``chain``)."""
    if strategy != "none" or method != "auto":
        raise ValueError(f"the constituent system {system.name!r} has no strategies or methods: "
                         f"got strategy={strategy!r}, method={method!r}")
    return Oracle(system, **options)


def oracle(name, chain="lis"):
    """The dynamic oracle of ``"top_down"`` or ``"in_order"``.  ``chain="general"``
    uses the capacity-aware programme at every start (a baseline for the
    benchmark: same losses, no increasing-subsequence shortcut)."""
    return Oracle(name, chain)

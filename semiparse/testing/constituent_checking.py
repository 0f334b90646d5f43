"""The constituent oracles against the exhaustive search (``semiparse check
top_down|in_order``).

Hypothesis draws a gold tree (random trees over a few labels, with unary
chains and repeated labels, or a PTB-sample tree cut to a window of at most
``max_n`` words) and a walk from the initial configuration mixing optimal and
arbitrary legal transitions.  On every configuration of the walk the oracle's
loss must equal the exhaustive minimum, and at the end of the walk its optimal
transitions must be exactly those whose successor keeps the exhaustive
minimum (NT-X tried with every gold label and one label outside the tree).

:func:`check` returns a :class:`ConstituentCheckResult` (the dependency
check's :class:`CheckResult` with the count of examples skipped over
budget), with a :class:`ConstituentMismatch` as its counterexample;
``semiparse check`` prints it.

Budget.  The exhaustive search costs about five to ten times more per unit
of the minimum loss (see :mod:`semiparse.transitions.constituent.exhaustive`): a walk
that loses six or seven gold constituents of a short tree with unary chains
can need tens of millions of states and as many memo entries (gigabytes).
Each example therefore gets its own search bounded by ``max_states``
(:data:`MAX_STATES` by default) visited states; an example whose search
passes it stops there and is counted in ``skipped``, never as a pass (the
configurations of its walk checked before the stop are counted in
``configurations``).
"""
from dataclasses import dataclass
from pathlib import Path

from hypothesis import Phase
from hypothesis import strategies as st

from semiparse.transitions.constituent.exhaustive import OverBudget, Search
from semiparse.transitions.constituent.oracle import Gold, oracle as make_oracle
from semiparse.transitions.constituent.systems import NT, system as get_system
from semiparse.treebank.brackets import Tree, read_ptb, traverse
from semiparse.resources import data_root
from semiparse.errors import SemiparseError
from semiparse.testing.checking import CheckResult, OracleMismatch, run_examples

LABELS = ("A", "B", "C")
# states one example's exhaustive search may visit (memo hits included):
# a few seconds and some hundred MB at most
MAX_STATES = 300_000


@dataclass
class ConstituentCheckResult(CheckResult):
    """A :class:`CheckResult` with the examples whose exhaustive search
    passed ``max_states`` states (``skipped``: neither passed nor failed)."""

    max_states: int = None
    skipped: int = 0  # examples stopped by the budget
    passed: int = 0  # examples checked to the end of their walk


@st.composite
def random_trees(draw, max_n=7, labels=LABELS, max_unary=1):
    """A random tree over 1..max_n words, labels from ``labels``, unary chains
    of at most ``max_unary`` phrasal nodes above one another."""
    n = draw(st.integers(1, max_n))

    def node(l, r, unary):
        label = draw(st.sampled_from(labels))
        if r - l == 1:
            if unary >= max_unary or draw(st.booleans()):
                return Tree(label, [Tree("T", [f"w{l}"])])
            return Tree(label, [node(l, r, unary + 1)])
        cuts = sorted(draw(st.sets(st.integers(l + 1, r - 1), max_size=r - l - 1)))
        if not cuts and unary >= max_unary:
            cuts = [draw(st.integers(l + 1, r - 1))]
        bounds = [l] + cuts + [r]
        children = []
        for a, b in zip(bounds, bounds[1:]):
            if b - a == 1 and len(bounds) > 2 and draw(st.booleans()):
                children.append(Tree("T", [f"w{a}"]))
            else:
                children.append(node(a, b, unary + 1 if len(bounds) == 2 else 0))
        return Tree(label, children)

    return node(0, n, 0)


def window(tree, start, size):
    """``tree`` restricted to words ``[start, start + size)``: nodes left
    without words are removed, and so is a node that the cut leaves with one
    phrasal child of the same span (the cut must not create unary chains)."""
    position = 0
    done = [[]]  # the kept children of each open node (None: cut)
    for node, entering in traverse(tree):
        if entering is None:
            continue
        if entering:
            done.append([])
            continue
        children = [c for c in done.pop() if c is not None]
        if node.is_preterminal:
            kept = Tree(node.label, node.children) if start <= position < start + size else None
            position += 1
        elif len(children) == 1 and len(node.children) > 1 and not children[0].is_preterminal:
            kept = children[0]
        else:
            kept = Tree(node.label, children) if children else None
        done[-1].append(kept)
    out = done[0][0]
    if out.is_preterminal:
        out = Tree("X", [out])
    return out


def ptb_trees(path=None):
    """Trees of the shared PTB sample (None if it cannot be found)."""
    candidates = []
    if path:
        candidates.append(Path(path))
    candidates.append(data_root() / "ptb" / "wsj_sample_combined.mrg")
    for candidate in candidates:
        if candidate.is_file():
            return read_ptb(candidate)
    return None


def gold_trees(max_n, ptb):
    """Random trees, and windows of PTB trees when ``ptb`` is given."""
    mine = random_trees(max_n)
    if not ptb:
        return mine

    @st.composite
    def cut(draw):
        t = draw(st.sampled_from(ptb))
        size = draw(st.integers(1, min(max_n, len(t))))
        start = draw(st.integers(0, len(t) - size))
        return window(t, start, size)

    return st.one_of(mine, cut())


class ConstituentMismatch(OracleMismatch, SemiparseError, AssertionError):
    """Where the oracle of a constituent system and the exhaustive search
    differ: ``what`` differs at ``configuration``, reached from the initial
    one by ``transitions`` for the gold ``tree``; ``loss`` and ``breakdown``
    are the oracle's there."""

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


def check_walk(name, tree, choices, oracle=None, max_states=None):
    """Walk from the initial configuration: choice ``(optimal, k)`` picks the
    k-th (mod) optimal or legal transition.  Raises :class:`ConstituentMismatch`
    when the oracle and the exhaustive search disagree, and
    :class:`OverBudget` (with ``checked``, the configurations compared before)
    when the exhaustive search of the walk passes ``max_states`` states;
    returns the number of configurations checked."""
    system = get_system(name)
    oracle = oracle or make_oracle(name)
    gold = Gold(tree)
    search = Search(name, gold, max_states)
    c = system.initial(gold.n)
    history = []
    checked = 0

    def options(c):
        out = []
        for t in system.legal(c):
            out.extend([NT(x) for x in search.labels] if t.kind == "NT" else [t])
        return out

    def truth(c):
        try:
            return search.loss(c)
        except OverBudget as exc:
            exc.checked = checked
            raise

    def fail(c, what):
        raise ConstituentMismatch(name, what, tree, history, c, oracle.loss(c, gold),
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
        pool = oracle.optimal(c, gold) if optimal else options(c)
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
        for t in options(c):
            # the best tree after t is as good as the best from c
            if truth(system.apply(c, t)) == expected:
                good.add(t)
        mine = set(oracle.optimal(c, gold))
        if mine != good:
            fail(c, f"optimal transitions {sorted(map(str, mine))} != exhaustive {sorted(map(str, good))}")
    return checked


def check(system, examples=200, max_n=7, seed=0, ptb=None, progress=None, max_states=MAX_STATES):
    """Compare the oracle of ``system`` (``top_down`` or ``in_order``) with
    the exhaustive search on ``examples`` hypothesis examples: random trees
    and windows of the PTB sample (``ptb``, else the shared one; without it,
    random trees only, which a note says).  Returns a
    :class:`ConstituentCheckResult` (strategy ``none``, method the oracle's
    ``chain``); an example whose exhaustive search passes ``max_states``
    states (None: unbounded) is counted in ``skipped``.  ``progress``, if
    given, is called as ``progress(done, result)`` before the first example
    (``done`` 0) and after each example that passed or was skipped."""
    name = get_system(system).name
    if examples < 1 or max_n < 1:
        raise ValueError("examples and max_n must be positive")
    trees = ptb_trees(ptb)
    oracle = make_oracle(name)
    result = ConstituentCheckResult(name, "none", oracle.chain, examples, max_n, seed,
                                    max_states=max_states)
    if trees is None:
        result.notes.append("PTB sample not found (set SEMIPARSE_DATA); random trees only")
    done = 0
    if progress is not None:
        progress(done, result)
    # a step is arbitrary with probability 1/4, else optimal
    step = st.tuples(st.integers(0, 3).map(bool), st.integers(0, 50))
    walk = st.lists(step, min_size=1, max_size=4 * max_n + 8)

    def examine(example):
        nonlocal done
        try:
            result.configurations += check_walk(name, *example, oracle=oracle, max_states=max_states)
        except ConstituentMismatch as exc:
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

    run_examples(result, st.tuples(gold_trees(max_n, trees), walk), examine,
                 phases=[Phase.generate, Phase.shrink])
    return result

"""The constituent oracles against the exhaustive search (``semiparse check
top_down|in_order``).

Hypothesis draws a gold tree (random trees over a few labels, with unary
chains and repeated labels, or a PTB-sample tree cut to a window of at most
``max_n`` words) and a walk from the initial configuration mixing optimal and
arbitrary legal transitions.  On every configuration of the walk the oracle's
loss must equal the exhaustive minimum, and at the end of the walk its optimal
transitions must be exactly those whose successor keeps the exhaustive
minimum (NT-X tried with every gold label and one label outside the tree).

:func:`example_trees` gives these gold trees; the walk and its comparison are
the generic walk check of :mod:`semiparse.testing.checking`
(:func:`~semiparse.testing.checking.check_walks`), and :func:`check` runs
it on them.  It returns a :class:`CheckResult` (with the count of examples
skipped over budget), with a :class:`~semiparse.testing.checking.WalkMismatch`
(here also called :class:`ConstituentMismatch`) as its counterexample;
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
from pathlib import Path

from hypothesis import strategies as st

from semiparse.resources import data_root
from semiparse.testing.checking import CheckResult, WalkMismatch, check_walk, check_walks
from semiparse.transitions.systems.compiled import system as registered_system
from semiparse.transitions.systems.loading import available_systems
from semiparse.treebank.brackets import Tree, read_ptb, traverse

LABELS = ("A", "B", "C")
# states one example's exhaustive search may visit (memo hits included):
# a few seconds and some hundred MB at most
MAX_STATES = 300_000


# the names this module had when it held the walk check (now generic)
ConstituentCheckResult = CheckResult
ConstituentMismatch = WalkMismatch
__all__ = ["LABELS", "MAX_STATES", "random_trees", "window", "ptb_trees", "gold_trees", "example_trees",
           "check", "check_walk", "ConstituentCheckResult", "ConstituentMismatch"]


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


def example_trees(max_n, ptb=None):
    """The gold trees of the walk check of a constituent system: a hypothesis
    strategy, and its notes (the PTB sample missing)."""
    trees = ptb_trees(ptb)
    notes = [] if trees is not None else [
        "PTB sample not found (set SEMIPARSE_DATA); random trees only"]
    return gold_trees(max_n, trees), notes


def check(system, examples=200, max_n=7, seed=0, ptb=None, progress=None, max_states=MAX_STATES):
    """The walk check of ``system`` (``top_down`` or ``in_order``) on
    ``examples`` hypothesis examples of :func:`example_trees`: random trees
    and windows of the PTB sample (``ptb``, else the shared one; without it,
    random trees only, which a note says).  Returns a :class:`CheckResult`
    (strategy ``none``, method the oracle's ``chain``); an example whose
    exhaustive search passes ``max_states`` states (None: unbounded) is
    counted in ``skipped``.  ``progress``: see
    :func:`~semiparse.testing.checking.check_walks`."""
    found = registered_system(system)
    if found.kind != "constituent":
        raise ValueError(f"{found.name!r} is not a constituent system: expected one of "
                         f"{', '.join(available_systems('constituent'))}")
    if examples < 1 or max_n < 1:
        raise ValueError("examples and max_n must be positive")
    trees, notes = example_trees(max_n, ptb)
    return check_walks(system, trees, examples, max_n, seed, progress, max_states, notes)

"""``semiparse check top_down|in_order``: the oracle against exhaustive search.

Hypothesis draws a gold tree (random trees over a few labels, with unary
chains and repeated labels, or a PTB-sample tree cut to a window of at most
``max_n`` words) and a walk from the initial configuration mixing optimal and
arbitrary legal transitions.  On every configuration of the walk the oracle's
loss must equal the exhaustive minimum, and at the end of the walk its optimal
transitions must be exactly those whose successor keeps the exhaustive
minimum (NT-X tried with every gold label and one label outside the tree).
"""
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings, seed as hypothesis_seed
from hypothesis import strategies as st

from semiparse.constituency.exhaustive import Search
from semiparse.constituency.dynamic import Gold, oracle as make_oracle
from semiparse.constituency.systems import NT, system as get_system
from semiparse.constituency.trees import Tree, read_ptb, traverse
from semiparse.resources import data_root

LABELS = ("A", "B", "C")


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


class Mismatch(AssertionError):
    pass


def check_walk(name, tree, choices, oracle=None):
    """Walk from the initial configuration: choice ``(optimal, k)`` picks the
    k-th (mod) optimal or legal transition.  Raises :class:`Mismatch` with a
    report when the oracle and the exhaustive search disagree; returns the
    number of configurations checked."""
    system = get_system(name)
    oracle = oracle or make_oracle(name)
    gold = Gold(tree)
    search = Search(name, gold)
    c = system.initial(gold.n)
    history = []
    checked = 0

    def options(c):
        out = []
        for t in system.legal(c):
            out.extend([NT(x) for x in search.labels] if t.kind == "NT" else [t])
        return out

    def truth(c):
        return search.loss(c)

    def fail(c, what):
        raise Mismatch(
            f"{name}: {what}\n  gold tree: {tree}\n  transitions: {' '.join(map(str, history)) or '(none)'}\n"
            f"  configuration: {c}\n  oracle loss: {oracle.loss(c, gold)} {oracle.breakdown(c, gold)}")

    for optimal, k in choices:
        expected = truth(c)
        if oracle.loss(c, gold) != expected:
            fail(c, f"oracle loss {oracle.loss(c, gold)} != exhaustive {expected}")
        if min(oracle.breakdown(c, gold)) < 0:
            fail(c, "a loss term is negative")
        checked += 1
        if system.is_terminal(c):
            break
        pool = oracle.optimal(c, gold) if optimal else options(c)
        if not pool:
            fail(c, "no optimal transition in a non-terminal configuration")
        t = pool[k % len(pool)]
        history.append(t)
        c = system.apply(c, t)
    # the optimal set at the last configuration
    if not system.is_terminal(c):
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


def run(system, examples=200, max_n=7, seed=0, ptb=None):
    """Compare the oracle of ``system`` with exhaustive search on ``examples``
    hypothesis examples; print progress and a summary; return 0 if they agree
    everywhere, 1 (after printing the shrunk counterexample) otherwise."""
    name = get_system(system).name
    if examples < 1 or max_n < 1:
        raise ValueError("examples and max_n must be positive")
    trees = ptb_trees(ptb)
    if trees is None:
        print(f"check {name}: PTB sample not found (set SEMIPARSE_DATA); random trees only")
    oracle = make_oracle(name)
    stats = {"examples": 0, "configurations": 0}
    failure = []
    # a step is arbitrary with probability 1/4, else optimal
    step = st.tuples(st.integers(0, 3).map(bool), st.integers(0, 50))
    walk = st.lists(step, min_size=1, max_size=4 * max_n + 8)

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.generate, Phase.shrink])
    @given(gold_trees(max_n, trees), walk)
    def test(tree, choices):
        try:
            stats["configurations"] += check_walk(name, tree, choices, oracle=oracle)
        except Mismatch as exc:
            failure[:] = [str(exc)]
            raise
        stats["examples"] += 1
        if stats["examples"] % 50 == 0:
            print(f"check {name}: {stats['examples']} examples, {stats['configurations']} configurations",
                  flush=True)

    try:
        test()
    except Mismatch:
        print(f"check {name}: MISMATCH (shrunk counterexample):\n{failure[0]}")
        return 1
    print(f"check {name}: oracle == exhaustive search on {stats['examples']} examples, "
          f"{stats['configurations']} configurations (max {max_n} words, seed {seed})")
    return 0

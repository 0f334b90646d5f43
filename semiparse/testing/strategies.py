"""Hypothesis strategies for testing oracles, systems and grammars.

- :func:`gold_trees`: dependency trees as ``heads`` lists, projective or not,
  optionally partial (some heads hidden as ``-1``);
- :func:`computations` / :func:`configurations`: configurations reachable
  from the initial one, by random transitions, optionally mixed with steps
  that follow an oracle;
- :func:`oracle_examples`: (gold tree, strategy, configuration) triples, what
  ``semiparse check`` draws;
- :func:`perturbed_configurations`: reachable configurations, often edited
  into malformed ones, for testing a system's ``validate`` (with
  :func:`validation_outcome`).

All of them shrink towards small sentences and short computations.
"""
from dataclasses import dataclass

from hypothesis import strategies as st

from semiparse.transitions import load_system
from semiparse.heads import no_crossing
from semiparse.treebank.partial import partial_flag

MAX_WORDS = 500  # the largest tree gold_trees draws


@st.composite
def projective_trees(draw, min_n=1, max_n=8):
    """A projective tree: the result of a random complete arc-standard computation."""
    n = draw(st.integers(min_n, max_n))
    system = load_system("arc_standard")
    stack, buffer, arcs = system.initial(n)
    while not system.is_final(stack, buffer, arcs):
        legal = system.legal(stack, buffer, arcs)
        t = legal[draw(st.integers(0, len(legal) - 1))]
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, t)
    return list(arcs)


@st.composite
def any_trees(draw, min_n=1, max_n=8):
    """Any tree rooted in 0: nodes attached in a random order to earlier ones."""
    n = draw(st.integers(min_n, max_n))
    order = draw(st.permutations(range(1, n + 1)))
    heads, placed = [-1] * (n + 1), [0]
    for d in order:
        heads[d] = placed[draw(st.integers(0, len(placed) - 1))]
        placed.append(d)
    return heads


def gold_trees(min_n=1, max_n=8, projective=None, partial=False):
    """Trees over ``min_n..max_n`` words as ``heads`` lists (``heads[0] == -1``).

    projective: True for projective trees only, False for non-projective ones
    only (needs ``max_n >= 3``), None for a mix of both.  partial: in about
    half the trees a random non-empty set of heads is hidden (``-1``, a
    partial tree, :mod:`semiparse.treebank.partial`); ``projective`` then
    describes the tree before hiding.  Shrinks towards complete trees.
    Sizes above :data:`MAX_WORDS` are refused: their draws would outgrow
    hypothesis' buffer, or memory.
    """
    for name, value in (("min_n", min_n), ("max_n", max_n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 1 <= min_n <= max_n <= MAX_WORDS:
        raise ValueError(f"need 1 <= min_n <= max_n <= {MAX_WORDS}, got min_n={min_n}, max_n={max_n}")
    if not (projective is None or isinstance(projective, bool)):
        raise ValueError(f"projective must be True, False or None, got {projective!r:.40}")
    partial = partial_flag(partial)
    if projective is True:
        trees = projective_trees(min_n, max_n)
    elif projective is False:
        if max_n < 3:
            raise ValueError("non-projective trees need at least 3 words: max_n >= 3")
        trees = any_trees(max(min_n, 3), max_n).filter(lambda h: not no_crossing(h))
    else:
        trees = st.one_of(projective_trees(min_n, max_n), any_trees(min_n, max_n))
    return hidden_heads(trees) if partial else trees


@st.composite
def hidden_heads(draw, trees):
    """A tree drawn from ``trees``, with a random non-empty set of its heads
    made unknown (``-1``) in about half the draws."""
    heads = list(draw(trees))
    if len(heads) > 1 and draw(st.booleans()):
        for d in draw(st.sets(st.integers(1, len(heads) - 1), min_size=1)):
            heads[d] = -1
    return heads


@dataclass
class Computation:
    """A configuration and the transitions that led to it from the initial one."""

    stack: tuple
    buffer: tuple
    arcs: tuple
    transitions: list


@st.composite
def computations(draw, system, n, heads=None, oracle=None, max_steps=None, partial=False):
    """A computation from the initial configuration for ``n`` words.

    Each step is a random legal transition or, when ``oracle`` (an
    :class:`~semiparse.transitions.Oracle`) and ``heads`` are given, possibly one
    of the oracle's optimal transitions (``partial``: ``heads`` may be a
    partial tree).  Stops at a random point (possibly at the initial or a
    final configuration).
    """
    system = load_system(system)
    stack, buffer, arcs = system.initial(n)
    done = []
    limit = 4 * n + 4 if max_steps is None else max_steps
    for _ in range(limit):
        legal = system.legal(stack, buffer, arcs)
        if not legal or not draw(st.booleans()):
            break
        if oracle is not None and draw(st.booleans()):
            legal = sorted(oracle.optimal(stack, buffer, heads, arcs, partial), key=legal.index)
        t = legal[draw(st.integers(0, len(legal) - 1))]
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, t)
        done.append(t)
    return Computation(stack, buffer, arcs, done)


@st.composite
def perturbed_configurations(draw, system, max_n=7):
    """``(n, stack, buffer, arcs)`` for testing a system's ``validate``: a
    configuration reached by random transitions, then often edited: a headed
    position given another earlier head (cycles, trees with gaps), two headed
    positions made each other's head, positions set, inserted or deleted
    anywhere in the stack, buffer or arcs (out-of-range values, duplicates),
    and elements replaced by values that are not integer positions (bools,
    floats, numeric strings, None).  ``arcs`` is None in one draw in six."""
    system = load_system(system)
    n = draw(st.integers(0, max_n))
    stack, buffer, arcs = system.initial(n)
    for _ in range(draw(st.integers(0, 2 * n))):
        legal = system.legal(stack, buffer, arcs)
        if not legal:
            break
        stack, buffer, arcs = system.apply(stack, buffer, arcs, draw(st.sampled_from(legal)))[:3]
    stack, buffer, arcs = list(stack), list(buffer), list(arcs)
    headed = [d for d, h in enumerate(arcs) if h >= 0]
    for _ in range(draw(st.sampled_from([0, 1, 1, 2])) if headed else 0):
        arcs[draw(st.sampled_from(headed))] = draw(st.integers(0, len(arcs) - len(buffer) - 1))
    if len(headed) >= 2 and draw(st.integers(0, 5)) == 0:
        a, b = draw(st.lists(st.sampled_from(headed), min_size=2, max_size=2, unique=True))
        arcs[a], arcs[b] = b, a
    position = st.integers(-2, n + 2)
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        target = draw(st.sampled_from([stack, buffer, arcs]))
        edit = draw(st.sampled_from(["set", "insert", "delete"]))
        if edit == "insert" or not target:
            target.insert(draw(st.integers(0, len(target))), draw(position))
        elif edit == "set":
            target[draw(st.integers(0, len(target) - 1))] = draw(position)
        else:
            del target[draw(st.integers(0, len(target) - 1))]
    targets = [t for t in (stack, buffer, arcs) if t]
    if targets and draw(st.integers(0, 4)) == 0:
        target = draw(st.sampled_from(targets))
        i = draw(st.integers(0, len(target) - 1))
        x = target[i]
        target[i] = draw(st.sampled_from([x == 1, x != 0, float(x), x + 0.5, str(x), None]))
    return n, tuple(stack), tuple(buffer), draw(st.sampled_from([None] + [tuple(arcs)] * 5))


def validation_outcome(check, configuration):
    """What ``check`` (a system's ``validate``) makes of a configuration drawn by
    :func:`perturbed_configurations`: the normalized tuples, or the message of
    the ValueError it raised."""
    n, stack, buffer, arcs = configuration
    try:
        return check(stack, buffer, arcs, n)
    except ValueError as exc:
        return str(exc)


def configurations(system, n, heads=None, oracle=None):
    """``(stack, buffer, arcs)`` reachable from the initial configuration."""
    return computations(system, n, heads, oracle).map(lambda c: (c.stack, c.buffer, c.arcs))


@dataclass
class OracleExample:
    """What ``semiparse check`` tests: a gold tree, a strategy, a computation."""

    heads: list
    strategy: str
    computation: Computation


@st.composite
def oracle_examples(draw, system, max_n=8, strategies=None, oracles=None, projective=None,
                    partial=False):
    """A gold tree, a strategy of ``system`` and a reachable configuration.

    oracles: optional ``{strategy: Oracle}`` used to follow optimal steps;
    partial: the gold tree may be partial (as :func:`gold_trees` draws them).
    """
    system = load_system(system)
    heads = draw(gold_trees(1, max_n, projective, partial))
    strategy = draw(st.sampled_from(list(strategies or system.strategies)))
    oracle = oracles.get(strategy) if oracles else None
    comp = draw(computations(system, len(heads) - 1, heads, oracle, partial=partial))
    return OracleExample(heads, strategy, comp)

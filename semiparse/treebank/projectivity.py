"""Optimal projectivization and its counts (Nederhof 2019, end of section 3).

The best projective tree for a possibly non-projective gold tree is found by
parsing ``s^(n+1)`` with the all-projective grammar (Nederhof 2019, Table 3:
one symbol, any number of left and right children per head) in the max-plus
semiring with ``w(h, d) = 1`` for gold edges and ``0`` otherwise: its value
is the number of gold edges kept.  The (max, count) semiring gives
the number of optimal trees; uniform sampling among them uses
:func:`semiparse.chart.engine.sample_best_tree`.  A projective tree is its own unique
optimal projectivization, so it takes an O(n) path without parsing.

Tie-breaking among optimal trees:

``first``
    deterministic: the engine's backtrace on the tree contracted by
    :func:`contract`, so every projective gold subtree stays whole.
``closest``
    lexicographic: most gold edges first, then the changed heads nearest to
    the gold heads *upwards* -- a word whose gold head ``g`` is replaced by an
    ancestor ``a`` of ``g`` (in the gold tree) costs the number of steps from
    ``g`` up to ``a``; replaced by a non-ancestor it costs ``n + 1``.  The
    total cost of a tree is below ``B = n * (n + 1) + 1``, so max-plus weights
    ``B`` for gold edges and ``-cost`` otherwise encode the pair (gold edges,
    -cost) exactly in one number (all integers far below 2**53).  Solved on
    the contracted tree too (with the original ``n + 1``).
``random``
    uniform over all optimal trees (``seed`` makes it reproducible).

``only`` (a set of word positions) lets just those words change head: every
other word's edges to heads but its gold one get a penalty larger than any
tree can gain (:func:`forced_weights`), so the optimum keeps them all when
some projective tree does, and :class:`NoProjectiveTree` is raised when none
does.  Such trees are solved uncontracted.

``single_root=True`` restricts every tree to one word attached to the root
(as UD requires).  It never lowers the best score -- in an optimal tree the
extra root children can always be hung under one root child without losing
a gold edge or projectivity -- but it changes which trees count as optimal.
The default follows Nederhof 2019 (Table 3: the root may take several
children).

``partial=True`` accepts partial trees (:mod:`semiparse.treebank.partial`:
unknown heads ``-1``): the optimum is then the projective tree with the most
*known* edges, every word with an unknown head taking whichever head serves
that best (edges into it score 0; under ``closest`` they cost nothing
either).  Such trees are solved uncontracted, and ``only`` always includes
the words with unknown heads.
"""
import functools
import os
import random as _random

import numpy as np

from semiparse._support.seeds import seeded
from semiparse.heads import check_tree, no_crossing
from semiparse.treebank.partial import UNKNOWN, check_partial_tree, unknown_words
from semiparse.errors import NoProjectiveTree, TreeTooLarge

TIE_BREAKS = ("first", "closest", "random")


CHECK_ABOVE = 1 << 28  # smaller needs are not checked (no reading of /proc per tree)


def _available_memory():
    """Bytes of memory available now (Linux ``MemAvailable``, else the
    physical memory), or None if unknown."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def _size(count):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024 or unit == "TiB":
            return f"{count:.1f} {unit}" if unit != "bytes" else f"{count} bytes"
        count /= 1024


def _check_memory(m, single_root, value_bytes, what):
    """TreeTooLarge (saying that ``what`` would need so much) unless the chart of ``m`` positions (values of
    ``value_bytes`` each) and the weight matrices fit in the memory
    available.  The engine's chart holds ``2 nl + 2 nr + 2 nl nr + 1`` arrays
    of ``m * m`` values (``nl``, ``nr``: the grammar's left and right
    states); three ``m * m`` float matrices of weights come with it."""
    g = _grammar(bool(single_root))
    nl, nr = len(g.left_states), len(g.right_states)
    need = ((2 * nl + 2 * nr + 2 * nl * nr + 1) * value_bytes + 3 * 8) * m * m
    if need <= CHECK_ABOVE:
        return
    available = _available_memory()
    if available is not None and need > available:
        raise TreeTooLarge(f"{what} would need about {_size(need)} of memory (a chart of {m} "
                           f"positions), more than the {_size(available)} available")

@functools.lru_cache(maxsize=None)
def _grammar(single_root):
    """Table 3 (``projective``), or the same with a terminal ``r`` for
    position 0 whose right side takes exactly one child (``single_root``)."""
    from semiparse.grammar import load_grammar

    return load_grammar("single_root" if single_root else "projective")


def _terminals(m, single_root):
    return ("r" + "s" * (m - 1)) if single_root else "s" * m


def _checked(heads, partial=False):
    """``heads`` as a new list of Python ints, after checking it is a tree
    rooted at 0 (``partial``: a partial tree).  Accepts a list, tuple or 1-D
    array of integers (numpy integer types included); refuses bools, floats
    and strings rather than converting them."""
    if np.ma.isMaskedArray(heads):
        raise ValueError("heads is a masked array, whose mask would be ignored: fill it first")
    if isinstance(heads, np.ndarray) and heads.ndim == 1:
        heads = heads.tolist()
    if not isinstance(heads, (list, tuple, range)):
        raise ValueError(f"heads must be a sequence of integers (list, tuple or 1-D array), "
                         f"got {type(heads).__name__}")
    if not isinstance(partial, (bool, np.bool_)):
        raise ValueError(f"partial must be True or False, got {partial!r}")
    return list(check_partial_tree(heads) if partial else check_tree(heads))


def _rng(seed):
    """A ``random.Random`` from ``seed``: None, an int or a ``random.Random``."""
    if isinstance(seed, _random.Random):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        return seeded(None if seed is None else int(seed))
    raise ValueError(f"seed must be None, an int or a random.Random, got {seed!r}")


def _check_options(heads, single_root, engine):
    """Check the options shared by projectivize and the counts."""
    from semiparse.chart.engine import check_engine

    check_engine(engine)
    if not isinstance(single_root, (bool, np.bool_)):
        raise ValueError(f"single_root must be True or False, got {single_root!r}")
    roots = heads.count(0)
    if single_root and not (roots == 1 or (roots == 0 and UNKNOWN in heads[1:])):
        raise ValueError("single_root=True needs a gold tree with exactly one word attached to 0"
                         + (" (or, partial, none and an unknown head)" if UNKNOWN in heads[1:]
                            else ""))


def _check_only(only, heads):
    """``only`` as a frozenset of word positions ``1..n`` (None stays None)."""
    if only is None:
        return None
    if isinstance(only, (str, bytes)) or not hasattr(only, "__iter__"):
        raise ValueError(f"only must be a collection of word positions, got {only!r}")
    try:
        words = frozenset(only)
    except TypeError:  # unhashable elements
        raise ValueError(f"only must be a collection of word positions, got {only!r:.60}") from None
    n = len(heads) - 1
    for d in words:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or not 1 <= d <= n:
            raise ValueError(f"only: {d!r} is not a word position (expected integers 1..{n})")
    return frozenset(int(d) for d in words)


def _checked_call(heads, single_root, engine, only, partial):
    """``(heads, only, unknown)`` of a call of :func:`projectivize` or
    :func:`count_optimal_projectivizations`, its arguments checked: the words
    of unknown head (a partial tree's) join ``only``, since they may take any
    head."""
    heads = _checked(heads, partial)
    _check_options(heads, single_root, engine)
    only = _check_only(only, heads)
    unknown = unknown_words(heads)
    if unknown and only is not None:
        only = only | frozenset(unknown)
    return heads, only, unknown


def forced_weights(weights, heads, only):
    """``weights`` with every word outside ``only`` tied to its gold head.

    Any other head of such a word costs ``m * (max - min) + 1`` (``m`` =
    ``len(heads)``): more than the rest of a tree can make up, so a tree
    that moves one of them scores below every tree that moves none (with
    ``max >= 0``), and an optimal tree moves one only when no projective
    tree keeps them all."""
    w = np.array(weights, dtype=float)
    penalty = len(heads) * (w.max() - w.min()) + 1
    for d in range(1, len(heads)):
        if d not in only:
            keep = w[heads[d], d]
            w[:, d] = -penalty
            w[heads[d], d] = keep
    return w


def _check_forced(tree, heads, only):
    """``tree``, unless it moves a word outside ``only`` (NoProjectiveTree)."""
    if tree is None or any(tree[d] != heads[d] for d in range(1, len(heads)) if d not in only):
        if not only:
            raise NoProjectiveTree("the tree is not projective, and no word may change head")
        raise NoProjectiveTree(
            f"no projective tree changes only the heads of words {', '.join(map(str, sorted(only)))}: "
            "the edges of the other words cross"
        )
    return tree


def is_projective(heads):
    """True if no two edges of the tree cross (position 0 being the root).

    With the root at the left end this is the same as every subtree covering
    a contiguous span.  ValueError if ``heads`` is not a tree.
    """
    return no_crossing(_checked(heads))


def gold_weights(heads):
    """``w[h, d] = 1`` for gold edges, ``0`` for any other edge (max-plus);
    a word whose head is unknown (``-1``) has no gold edge."""
    m = len(heads)
    w = np.zeros((m, m))
    known = [d for d in range(1, m) if heads[d] != UNKNOWN]
    w[[heads[d] for d in known], known] = 1.0
    return w


def closest_weights(heads, penalty=None):
    """Max-plus weights whose optimum is the ``closest`` tie-break (see module
    doc); ``penalty`` (default n + 1) is the cost of a non-ancestor head."""
    m = len(heads)
    n = m - 1
    penalty = n + 1 if penalty is None else penalty
    big = n * penalty + 1
    w = np.full((m, m), -float(penalty))
    for d in range(1, m):
        g = heads[d]
        if g == UNKNOWN:  # any head keeps as much and costs nothing
            w[:, d] = 0.0
            continue
        w[g, d] = big
        a, steps = heads[g], 1  # heads[0] == -1 ends the walk up
        while a >= 0:
            w[a, d] = -steps
            a, steps = heads[a], steps + 1
    return w


def contract(heads):
    """Shrink a tree by its maximal projective subtrees.

    A gold subtree that is projective (every subtree inside it covers a
    contiguous span) is kept whole by some optimal projectivization, and
    replacing it by its root loses nothing: for any projective tree ``T`` of
    the whole sentence, contracting the span into one node (its head taken
    from the span's shallowest node in ``T``) gives a projective tree of the
    contracted sentence losing no more gold edges outside the span, and
    expanding back puts all gold edges inside it.  The same exchange never
    raises the ``closest`` cost, so both ``first`` and ``closest`` solve the
    contracted tree (counting and sampling cannot: optimal trees may break
    such a subtree).

    Returns ``(kept, small)``: the words kept, ascending, with ``kept[0] ==
    0``, and the contracted tree over positions ``0..len(kept) - 1``.
    """
    m = len(heads)
    children = [[] for _ in range(m)]
    for d in range(1, m):
        children[heads[d]].append(d)
    order = [0]  # parents before children
    for v in order:
        order.extend(children[v])
    low, high, size = list(range(m)), list(range(m)), [1] * m
    for v in reversed(order):  # push each span into the parent's
        h = heads[v]
        if h >= 0:
            if low[v] < low[h]:
                low[h] = low[v]
            if high[v] > high[h]:
                high[h] = high[v]
            size[h] += size[v]
    # a subtree is projective unless it holds a node whose span has a gap
    broken = [False] * m
    for v in range(m):
        if high[v] - low[v] + 1 != size[v]:
            while v >= 0 and not broken[v]:
                broken[v] = True
                v = heads[v]
    kept = [0] + [d for d in range(1, m) if broken[heads[d]]]
    position = {v: k for k, v in enumerate(kept)}
    return kept, [-1] + [position[heads[v]] for v in kept[1:]]


def projectivize(heads, tie_break="first", seed=None, single_root=False, engine="auto", only=None,
                 partial=False):
    """A projective tree keeping the most edges of ``heads`` (a new list).

    ``tie_break`` chooses among the optimal trees: ``"first"``, ``"closest"``
    or ``"random"`` (uniform; ``seed`` an int or a ``random.Random``).
    ``engine`` is passed to :func:`semiparse.parse` (``"python"``: the generic
    engine, for comparison); ``random`` always samples with the Cython engine.
    ``only`` (word positions): just these words may change head; the best
    such tree, or :class:`NoProjectiveTree` when there is none.
    ``partial``: ``heads`` may be a partial tree; the result is a complete
    projective tree keeping the most known edges (see the module doc).
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, not {tie_break!r}")
    if tie_break == "random" and engine == "python":
        raise ValueError("tie_break='random' samples with the Cython engine: use engine='auto'")
    heads, only, unknown = _checked_call(heads, single_root, engine, only, partial)
    rng = _rng(seed) if tie_break == "random" or seed is not None else None  # for every tree
    if not unknown and no_crossing(heads):
        return heads
    from semiparse.chart.engine import parse, sample_best_tree

    g = _grammar(bool(single_root))
    if tie_break == "random":
        _check_memory(len(heads), single_root, 16,
                      f"drawing an optimal projectivization of a non-projective tree of {len(heads) - 1} words")
        w = gold_weights(heads)
        if only is None:
            return sample_best_tree(g, _terminals(len(heads), single_root), w, rng)
        tree = sample_best_tree(g, _terminals(len(heads), single_root), forced_weights(w, heads, only), rng)
        return _check_forced(tree, heads, only)
    kept, small = contract(heads) if only is None and not unknown else (range(len(heads)), heads)
    _check_memory(len(small), single_root, 8, f"projectivizing a non-projective tree of {len(heads) - 1} words"
                  + (f" ({len(small) - 1} once contracted)" if len(small) < len(heads) else ""))
    if tie_break == "closest":
        w = closest_weights(small, penalty=len(heads))  # the original n + 1
    else:
        w = gold_weights(small)
    if only is not None:
        w = forced_weights(w, heads, only)
    tree = parse(g, _terminals(len(small), single_root), w, "viterbi", engine=engine).heads
    out = list(heads)  # words inside contracted subtrees keep their gold heads
    for k in range(1, len(small)):
        out[kept[k]] = kept[tree[k]]
    return out if only is None else _check_forced(out, heads, only)


def count_optimal_projectivizations(heads, single_root=False, engine="auto", only=None,
                                    partial=False):
    """``(score, count)``: gold edges an optimal projective tree keeps, and
    the exact number of projective trees keeping that many (``engine`` as
    for :func:`projectivize`); with ``only``, among the trees that change
    just those words' heads (:class:`NoProjectiveTree` when there are none).
    ``partial``: ``heads`` may be a partial tree; the score counts known
    edges, and the trees differ in any head, unknown ones included."""
    heads, only, unknown = _checked_call(heads, single_root, engine, only, partial)
    if not unknown and no_crossing(heads):
        return len(heads) - 1, 1
    from semiparse.chart.engine import parse

    _check_memory(len(heads), single_root, 16, "counting the optimal projectivizations of a "
                  f"non-projective tree of {len(heads) - 1} words")
    g = _grammar(bool(single_root))
    w = gold_weights(heads) if only is None else forced_weights(gold_weights(heads), heads, only)
    score, count = parse(g, _terminals(len(heads), single_root), w, "maxcount", engine=engine).value
    if score < 0:  # a feasible tree scores at least 0, any other below -n
        _check_forced(None, heads, only)
    return int(score), int(count)

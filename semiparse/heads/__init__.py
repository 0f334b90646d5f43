"""Dependency trees as head lists, and the checks every part of semiparse
shares (the CoNLL-U reader, projectivity and the oracles).

A tree over ``n`` words is a sequence ``heads`` of ``n + 1`` integers with
``heads[0] == -1`` (position 0 is the artificial root) and ``heads[d]`` the
head of word ``d``; following heads from any word reaches 0.
"""
import operator
from collections.abc import Mapping, Set

import numpy as np

from semiparse.heads._checks import is_tree, no_crossing  # noqa: F401  (the C checks, part of this module's API)


def int_tuple(values, what):
    """``values`` as a tuple of Python ints, or ValueError saying that ``what``
    (e.g. "heads must be a sequence of integer heads") fails and at which
    element.  Integer types such as numpy's are normalized; bools, floats and
    strings are refused, since ``int()`` would silently read ``True``, ``0.5``
    or ``"3"`` as positions."""
    if type(values) is tuple and all(type(x) is int for x in values):
        return values   # the common case, already normalized (bools are not of type int)
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{what}, got the string {values!r}")
    if isinstance(values, (Mapping, Set)):  # no order, or not the values meant
        raise ValueError(f"{what}, got {type(values).__name__}")
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError(f"{what}, got {type(values).__name__}") from None
    try:
        if not any(isinstance(x, (bool, np.bool_)) for x in values):
            return tuple(map(operator.index, values))
    except TypeError:  # a float, a string, a 0-d float array, ...
        pass
    i, x = next((i, x) for i, x in enumerate(values) if isinstance(x, (bool, np.bool_))
                or not _is_index(x))
    raise ValueError(f"{what}: element {i} is {x!r} ({type(x).__name__})")


def _is_index(x):
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def find_cycle(heads):
    """A cycle of ``heads`` (``heads[d]`` a position or negative for none) as the
    list ``[x, ..., x]`` of its nodes, or None if following heads from every
    node ends at a headless one.  ValueError for anything else (a head that
    is not an integer or beyond the positions)."""
    try:
        state = [0] * len(heads)  # 0 unseen, 1 on the current path, 2 ends headless
        for d in range(len(heads)):
            path, x = [], d
            while x >= 0 and state[x] == 0:
                state[x] = 1
                path.append(x)
                x = operator.index(heads[x])
            if x >= 0 and state[x] == 1:
                return path[path.index(x):] + [x]
            for y in path:
                state[y] = 2
    except (TypeError, LookupError):
        raise ValueError(f"find_cycle needs a sequence of integer heads, each a position "
                         f"below {len(heads) if hasattr(heads, '__len__') else 0} or negative, "
                         f"got {heads!r:.80}") from None
    return None


def tree_tops(heads):
    """The top of each position's tree in the forest ``heads`` (``heads[d]``
    a position or negative for none; no cycle): itself if headless, else
    the top of its head's."""
    tops = list(range(len(heads)))
    for d in range(len(heads)):
        x = d
        while heads[x] >= 0:
            x = heads[x]
        tops[d] = x
    return tuple(tops)


def tree_problems(heads):
    """Problems of a head list as ``(word, reason, is_multiple_roots)``.

    Checks range, self-loops, cycles and the number of words attached to 0
    (exactly one in UD); ``word`` is the word the problem is reported at.
    ValueError when ``heads`` is not a sequence of integers starting with
    the root's.
    """
    heads = int_tuple(heads, "heads must be a sequence of integer heads")
    if not heads:
        raise ValueError("heads is empty: expected -1 for the root, then a head per word")
    n = len(heads) - 1
    problems = []
    for d in range(1, n + 1):
        h = heads[d]
        if not 0 <= h <= n:
            problems.append((d, f"HEAD {h} of word {d} is out of range 0..{n}", False))
        elif h == d:
            problems.append((d, f"word {d} is headed by itself", False))
    if problems:
        return problems
    roots = [d for d in range(1, n + 1) if heads[d] == 0]
    # Follow heads from every word; state 1 = on the current path, 2 = done.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        d = start
        while state[d] == 0:
            state[d] = 1
            path.append(d)
            d = heads[d]
        if state[d] == 1:  # closed a cycle through d
            cycle = path[path.index(d):]
            first = min(cycle)
            at = cycle.index(first)
            cycle = cycle[at:] + cycle[:at]
            shown = " -> ".join(str(x) for x in cycle + [first])
            problems.append((first, f"cycle {shown} (each arrow goes from a word to its head)", False))
        for x in path:
            state[x] = 2
    if len(roots) > 1:
        listed = ", ".join(str(r) for r in roots)
        problems.append(
            (roots[1], f"{len(roots)} words attached to 0 (words {listed}); UD allows one", True)
        )
    return problems


def check_tree(heads):
    """``heads`` as a tuple of Python ints, or ValueError if it is not a tree
    rooted in 0 (any number of words may be attached to 0); the reason is
    the one the CoNLL-U reader gives (:func:`tree_problems`)."""
    heads = int_tuple(heads, "heads must be a sequence of integer heads")
    if not heads or heads[0] != -1:
        raise ValueError(f"heads must start with -1 for the root 0, got {list(heads[:1])}")
    if not is_tree(heads):
        reason = next(r for _, r, roots_only in tree_problems(heads) if not roots_only)
        raise ValueError(f"heads is not a tree: {reason}")
    return heads

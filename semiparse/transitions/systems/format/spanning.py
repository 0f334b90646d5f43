"""The reachable arcs of a completion of kind ``spanning``: which arcs a
configuration can still build, declared by the classes of their two nodes.

A spanning completion claims that the trees reachable from a configuration
are exactly the forests that keep the arcs built and add arcs each of which
is reachable by itself (its dependent has no head yet and is not the root,
and the classes of its nodes are declared).  The oracle's value is then a
maximum branching over the gold-weighted reachable arcs
(:mod:`semiparse.transitions.oracles.spanning`); ``semiparse check`` proves
the claim against the exhaustive search, so a wrong declaration is caught.
"""
import re

import numpy as np

# The classes of a configuration's nodes: on the stack, set aside (between the
# stack top and the buffer front, with a transition that brings them back),
# the buffer front, the rest of the buffer.  Words in none are gone.
NODE_CLASSES = ("stack", "set_aside", "front", "rest")
GONE = -1
_GROUPS = {"buffer": ("front", "rest"), **{c: (c,) for c in NODE_CLASSES}}
_PAIR = re.compile(r"^\s*(\w+)\s*(->|-)\s*(\w+)\s*$")
_PAIR_FORMS = ("'A -> B' (heads in class A, dependents in class B) or 'A - B' (either way), "
               f"with classes {', '.join(_GROUPS)}")


class Reachable:
    """The declared reachable arcs: ``allowed[a][b]`` whether an arc from a
    node of class ``a`` to one of class ``b`` (indices into
    :data:`NODE_CLASSES`) stays reachable; ``pairs``: the declaration."""

    def __init__(self, allowed, pairs):
        self.allowed = tuple(tuple(bool(x) for x in row) for row in allowed)
        self.pairs = tuple(pairs)

    def classes(self, stack, buffer, n, aside):
        """The class of each position 0..n (:data:`GONE` for none); ``aside``:
        the words set aside (``RewriteSystem.set_aside``)."""
        out = [GONE] * (n + 1)
        for x in aside:
            out[x] = 1
        for x in stack:
            out[x] = 0
        for i, x in enumerate(buffer):
            out[x] = 2 if i == 0 else 3
        return out

    def matrix(self, stack, buffer, arcs, n, aside):
        """``reach[h, d]``: whether arc h -> d is reachable by itself from
        the configuration (``arcs[d]`` the head built for d, or -1; ``aside``
        as for :meth:`classes`)."""
        cls = self.classes(stack, buffer, n, aside)
        allowed = np.array(self.allowed, dtype=bool)
        c = np.array(cls)
        live = c != GONE
        reach = np.zeros((n + 1, n + 1), dtype=bool)
        reach[np.ix_(live, live)] = allowed[np.ix_(c[live], c[live])]
        np.fill_diagonal(reach, False)
        reach[:, 0] = False  # the root never gets a head
        headed = np.array([h >= 0 for h in arcs]) if arcs is not None else np.zeros(n + 1, bool)
        reach[:, headed] = False
        return reach


def read_reachable(comp, fail):
    """The :class:`Reachable` of a ``[completion]`` table of kind
    ``spanning`` (its key ``reachable``, a list of class pairs)."""
    pairs = comp.get("reachable")
    if not pairs:
        fail('a completion of kind "spanning" declares its reachable arcs: reachable = '
             '["stack - buffer", ...], each ' + _PAIR_FORMS, "completion")
    allowed = [[False] * len(NODE_CLASSES) for _ in NODE_CLASSES]
    for i, pair in enumerate(pairs):
        m = _PAIR.match(pair)
        if not m:
            fail(f"completion.reachable {pair!r}: expected {_PAIR_FORMS}",
                 "completion", "reachable", i)
        a, way, b = m.groups()
        for c in (a, b):
            if c not in _GROUPS:
                fail(f"completion.reachable {pair!r}: unknown class {c!r}: expected one of "
                     f"{', '.join(_GROUPS)}", "completion", "reachable", i)
        for x in _GROUPS[a]:
            for y in _GROUPS[b]:
                allowed[NODE_CLASSES.index(x)][NODE_CLASSES.index(y)] = True
                if way == "-":
                    allowed[NODE_CLASSES.index(y)][NODE_CLASSES.index(x)] = True
    return Reachable(allowed, pairs)

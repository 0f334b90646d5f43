"""The LR-spine transition system (Goldberg et al. 2014, section 6.1) and its oracle.

Stack elements are trees given by their left and right spines: the path
from the root through leftmost left children, and through rightmost right
children (the nodes whose subtree reaches the tree's left / right edge, the
only ones that can still take a dependent on that side without crossing an
edge; this is what the update rules of section 6.1 maintain).

- ``shift``: push the buffer front as a one-node tree;
- ``left_arc_K``: the K-th node (1 = the root) of the top tree's left spine
  becomes the head of the second tree's root;
- ``right_arc_K``: the K-th node of the second tree's right spine becomes the
  head of the top tree's root.

The root 0 is the tree at the stack bottom and never becomes a child; the
final configuration holds only its tree and an empty buffer.  The moves are
defined once, in C (``transitions/runtime/_lr_spine_moves.pxd``): :meth:`LRSpine.legal`
and :meth:`LRSpine.apply` run them, as the compiled machine and the oracle do;
:func:`spines` and :func:`child_bounds` are views of a configuration.

A configuration is passed as for every other system: ``stack`` holds the
roots of the stack trees (bottom first), ``buffer`` the remaining positions,
``arcs[d]`` the head built for ``d`` or -1.  The spines follow from ``arcs``
(:func:`spines`).

Its oracle (method ``spine_table``, Goldberg et al. 2014, section 6.2) is a
kernel of :mod:`semiparse.transitions.fast.lr_spine`.
"""
from semiparse.transitions.runtime import _lr_spine_moves as spine_moves
from semiparse.transitions.systems.interface import TransitionSystem, int_configuration


def spines(root, arcs, lo_child=None, hi_child=None):
    """``(left_spine, right_spine)`` of the tree of ``root`` under ``arcs``
    (root first)."""
    if lo_child is None:
        lo_child, hi_child = child_bounds(arcs)
    left, x = [root], root
    while lo_child[x] >= 0:
        x = lo_child[x]
        left.append(x)
    right, x = [root], root
    while hi_child[x] >= 0:
        x = hi_child[x]
        right.append(x)
    return tuple(left), tuple(right)


def child_bounds(arcs):
    """Leftmost left child and rightmost right child of every node (-1 for none)."""
    n1 = len(arcs)
    lo, hi = [-1] * n1, [-1] * n1
    for d in range(n1):
        h = arcs[d]
        if 0 <= h:
            if d < h and (lo[h] < 0 or d < lo[h]):
                lo[h] = d
            if d > h and d > hi[h]:
                hi[h] = d
    return lo, hi


class LRSpine(TransitionSystem):
    """The LR-spine parser of Sartorio, Satta and Nivre (2013) as a transition system."""

    name = "lr_spine"
    transitions = ("shift", "left_arc_K", "right_arc_K")
    # The canonical computation attaches left arcs at once and right arcs only
    # when shifting would lose an edge: attaching incomplete subtrees early
    # (right arcs before shift) reaches spine depths up to 13 on UD Greek,
    # beyond the trainer's spine-depth classes.
    static_order = ("left_arc_K", "shift", "right_arc_K")
    strategies = ("none",)
    needs_arcs = True
    compiled_moves = "lr_spine"  # its moves are those of _lr_spine_moves.pxd
    description = ("LR-spine: shift; left_arc_K (K-th node of the top's left spine heads the "
                   "second root); right_arc_K (K-th node of the second's right spine heads the "
                   "top root)")

    def is_final(self, stack, buffer, arcs):
        return not buffer and len(stack) == 1

    def legal(self, stack, buffer, arcs):
        if arcs is None:
            raise ValueError(_NEEDS_ARCS)
        return spine_moves.legal(stack, buffer, arcs)

    def apply(self, stack, buffer, arcs, t):
        stack, buffer, arcs = _checked(stack, buffer, arcs)
        code = spine_moves.code_of(t)
        if code is None:
            raise ValueError(f"unknown transition {t!r} for lr_spine: expected shift, "
                             f"left_arc_K or right_arc_K (K = 1, 2, ...)")
        after = spine_moves.apply(stack, buffer, arcs, code) if code < 2 ** 31 else None
        if after is None:
            raise ValueError(f"transition {t} is not legal in configuration "
                             f"stack={list(stack)} buffer={list(buffer)}")
        return after

    def search_key(self, stack, buffer, arcs):
        lo, hi = child_bounds(arcs)
        return stack, buffer, tuple(spines(s, arcs, lo, hi) for s in stack)

    def accepts(self, stack, buffer, arcs, n):
        return arcs is not None and spine_moves.accepts(stack, buffer, arcs, n)

    def validate_slowly(self, stack, buffer, arcs, n):
        stack, buffer, arcs = int_configuration(stack, buffer, arcs)
        if not stack or stack[0] != 0:
            raise ValueError(f"stack {list(stack)} must have the root 0 at the bottom")
        if any(a >= b for a, b in zip(stack, stack[1:])) or stack[-1] > n:
            raise ValueError(f"stack {list(stack)}: positions must increase within 0..{n}")
        start = buffer[0] if buffer else n + 1
        if buffer != tuple(range(start, n + 1)) or start <= stack[-1]:
            raise ValueError(f"buffer {list(buffer)} must be the positions after the stack "
                             f"top up to {n}")
        if arcs is None:
            raise ValueError("lr_spine needs arcs: the head given to each position so far, "
                             "-1 for none")
        if len(arcs) != n + 1:
            raise ValueError(f"arcs has length {len(arcs)}: expected n + 1 = {n + 1}")
        roots = set(stack)
        for d, h in enumerate(arcs):
            if (h >= 0) == (d in roots or d >= start):
                raise ValueError(f"arcs[{d}] = {h}: stack roots and buffer nodes have no head, "
                                 f"every other position before the buffer has one")
            if h >= start or h == d or h < -1:
                raise ValueError(f"arcs[{d}] = {h} is not a head of an earlier tree")
        # each stack tree covers the consecutive positions up to the next tree
        owner = list(range(n + 1))
        for d in range(start):
            x, seen = d, 0
            while arcs[x] >= 0:
                x = arcs[x]
                seen += 1
                if seen > n:
                    raise ValueError(f"arcs has a cycle through {d}")
            owner[d] = x
        index = {x: i for i, x in enumerate(stack)}
        seq = [index[owner[d]] for d in range(start)]
        if any(b not in (a, a + 1) for a, b in zip(seq, seq[1:])):
            raise ValueError("the stack trees in arcs must cover consecutive positions, "
                             "in stack order")
        return stack, buffer, arcs


def _checked(stack, buffer, arcs):
    """The configuration as tuples of ints, or ValueError (LR-spine needs arcs)."""
    stack, buffer, arcs = int_configuration(stack, buffer, arcs)
    if arcs is None:
        raise ValueError(_NEEDS_ARCS)
    return stack, buffer, arcs


_NEEDS_ARCS = "lr_spine needs arcs: the head given to each position so far, -1 for none"

"""The static oracles of the swap systems: for ``arc_standard_swap`` the
lazy one of Nivre, Kuhlmann and Hall 2009, which swaps as late as the gold
tree's maximal projective components allow; for ``arc_hybrid_swap`` the
eager one of Nivre 2009 written for its swap.

Nivre 2009's static oracle swaps whenever the top two nodes are out of the
gold tree's projective order (the order in which the tree is projective,
:func:`~semiparse.transitions.oracles._search.projective_order`).  The lazy
one first builds what can be built without swapping: the maximal projective
components are the pieces of the gold tree that arc-standard builds on the
sentence order, attaching a word as soon as it has all its children; a swap
waits while the top, which the swap moves in front of the second, is in the
same component as the buffer front.  ``arc_hybrid_swap`` (de Lhoneux,
Stymne and Nivre 2017) swaps the stack top behind the buffer front, which
must happen while the front is still in the buffer: the lazy rule's
analogue (wait while the front and the node behind it are in one
component) shifts the front onto words that must follow it and loses gold
arcs, as the tests found, so this oracle swaps eagerly there: whenever the
front comes before the top in the projective order.

These oracles serve training with ``--oracle static`` (the set-up of
UUParser) and comparisons with the exact dynamic oracle; they are defined on
the configurations of their own computation, from which the gold tree stays
reachable.  Tests follow them from the initial configuration to the gold
tree, each move optimal by the exact oracle.
"""
from semiparse.transitions.oracles._search import projective_order

# the shipped systems these oracles are written for
SYSTEMS = ("arc_standard_swap", "arc_hybrid_swap")


class SwapStatic:
    """The static oracle of a swap system for one gold tree (complete:
    every head known)."""

    def __init__(self, system_name, heads):
        if system_name not in SYSTEMS:
            raise ValueError(f"the static swap oracle is written for {', '.join(SYSTEMS)}, "
                             f"not {system_name!r}")
        heads = tuple(int(h) for h in heads)
        if any(h < 0 for h in heads[1:]):
            raise ValueError("the static swap oracle needs a complete gold tree (no head -1)")
        self.hybrid = system_name == "arc_hybrid_swap"
        self.heads = heads
        self.place = {x: i for i, x in enumerate(projective_order(heads))}
        self.children = [0] * len(heads)
        for d in range(1, len(heads)):
            self.children[heads[d]] += 1
        self.component = components(heads, self.children)

    def _done(self, x, arcs):
        """Whether x has all its gold children."""
        return sum(1 for d in range(1, len(arcs)) if arcs[d] == x) == self.children[x]

    def move(self, stack, buffer, arcs):
        """The oracle's transition in a configuration (None if final)."""
        gold, place, comp = self.heads, self.place, self.component
        s0 = stack[-1] if stack else None
        s1 = stack[-2] if len(stack) > 1 else None
        b0 = buffer[0] if buffer else None
        if self.hybrid:
            if s0 and b0 is not None and gold[s0] == b0 and self._done(s0, arcs):
                return "left_arc"
            if s1 is not None and s0 and gold[s0] == s1 and self._done(s0, arcs):
                return "right_arc"
            if s0 and b0 is not None and s0 < b0 and place[b0] < place[s0]:
                return "swap"   # eager: see the module doc
        else:
            if s1 and gold[s1] == s0 and self._done(s1, arcs):
                return "left_arc"
            if s1 is not None and gold[s0] == s1 and self._done(s0, arcs):
                return "right_arc"
            if (s1 and s1 < s0 and place[s0] < place[s1]
                    and (b0 is None or comp[s0] != comp[b0])):
                return "swap"
        return "shift" if buffer else None


def components(heads, children):
    """The maximal projective component of each position (the position of
    its top node): the arcs arc-standard builds on the sentence order,
    attaching a word once it has all its gold children."""
    n = len(heads) - 1
    got = [0] * (n + 1)
    top = list(range(n + 1))
    stack, buffer = [0], list(range(n, 0, -1))
    while True:
        if len(stack) > 1:
            s1, s0 = stack[-2], stack[-1]
            if s1 and heads[s1] == s0 and got[s1] == children[s1]:
                stack.pop(-2)
                got[s0] += 1
                top[s1] = s0
                continue
            if heads[s0] == s1 and got[s0] == children[s0]:
                stack.pop()
                got[s1] += 1
                top[s0] = s1
                continue
        if not buffer:
            break
        stack.append(buffer.pop())

    def find(x):
        while top[x] != x:
            x = top[x]
        return x

    return [find(x) for x in range(n + 1)]

"""The LR-spine transition system (seed 000 section 6.1) and its oracle.

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
final configuration holds only its tree and an empty buffer.

A configuration is passed as for every other system: ``stack`` holds the
roots of the stack trees (bottom first), ``buffer`` the remaining positions,
``arcs[d]`` the head built for ``d`` or -1.  The spines follow from ``arcs``
(:func:`spines`).

The oracle (method ``spine_table``, projective gold trees) follows seed 000
section 6.2: the buffer is collapsed into the right stack of maximal gold
fragments (each may take dependents only at its root), then a table over
(stack trees absorbed, fragments absorbed) keeps, per spine pair of the tree
built around the top, the most gold edges.  A combination attaches to the
spine node that is the gold head when there is one, else to the deepest
node.  The two reductions of section 6.3 keep the table small: spine nodes
that can get no gold dependent from what remains are dropped, and a spine
pair is dropped when another with the same root, no fewer spine nodes on
either side and at least as many gold edges is present.
"""
from ..registry import register_method, register_system
from ..system import TransitionSystem


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
    strategies = ("none",)
    needs_arcs = True
    description = ("LR-spine: shift; left_arc_K (K-th node of the top's left spine heads the "
                   "second root); right_arc_K (K-th node of the second's right spine heads the "
                   "top root)")

    def is_final(self, stack, buffer, arcs):
        return not buffer and len(stack) == 1

    def legal(self, stack, buffer, arcs):
        if self.is_final(stack, buffer, arcs):
            return []
        out = ["shift"] if buffer else []
        if len(stack) >= 2:
            lo, hi = child_bounds(arcs)
            if stack[-2] != 0:
                out += [f"left_arc_{k}" for k in range(1, len(spines(stack[-1], arcs, lo, hi)[0]) + 1)]
            out += [f"right_arc_{k}" for k in range(1, len(spines(stack[-2], arcs, lo, hi)[1]) + 1)]
        return out

    def apply(self, stack, buffer, arcs, t):
        stack, buffer, arcs = tuple(stack), tuple(buffer), tuple(arcs)
        if t == "shift":
            if not buffer:
                raise ValueError("transition shift is not legal: the buffer is empty")
            return stack + buffer[:1], buffer[1:], arcs, None
        kind, _, k = t.rpartition("_")
        if kind not in ("left_arc", "right_arc") or not k.isdigit():
            raise ValueError(f"unknown transition {t!r} for lr_spine: expected shift, "
                             f"left_arc_K or right_arc_K (K = 1, 2, ...)")
        k = int(k)
        if len(stack) < 2:
            raise ValueError(f"transition {t} is not legal: the stack has fewer than two trees")
        s1, s0 = stack[-2], stack[-1]
        if kind == "left_arc":
            spine = spines(s0, arcs)[0]
            if s1 == 0 or not 1 <= k <= len(spine):
                raise ValueError(f"transition {t} is not legal in configuration "
                                 f"stack={list(stack)} buffer={list(buffer)}")
            head, dep, rest = spine[k - 1], s1, stack[:-2] + (s0,)
        else:
            spine = spines(s1, arcs)[1]
            if not 1 <= k <= len(spine):
                raise ValueError(f"transition {t} is not legal in configuration "
                                 f"stack={list(stack)} buffer={list(buffer)}")
            head, dep, rest = spine[k - 1], s0, stack[:-1]
        arcs = list(arcs)
        arcs[dep] = head
        return rest, buffer, tuple(arcs), (head, dep)

    def successors(self, stack, buffer, arcs):
        return [(t,) + self.apply(stack, buffer, arcs, t) for t in self.legal(stack, buffer, arcs)]

    def search_key(self, stack, buffer, arcs):
        lo, hi = child_bounds(arcs)
        return stack, buffer, tuple(spines(s, arcs, lo, hi) for s in stack)

    def validate(self, stack, buffer, arcs, n):
        try:
            stack = tuple(int(x) for x in stack)
            buffer = tuple(int(x) for x in buffer)
        except (TypeError, ValueError):
            raise ValueError("stack and buffer must be sequences of integer positions") from None
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
        try:
            arcs = tuple(int(x) for x in arcs)
        except (TypeError, ValueError):
            raise ValueError("arcs must be a sequence of integer heads (-1 for none)") from None
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


SYSTEM = register_system(LRSpine())


# -- the oracle -----------------------------------------------------------------

def _prune(spine, keep):
    """The root and the spine nodes for which ``keep`` holds (section 6.3, rule 1)."""
    return (spine[0],) + tuple(x for x in spine[1:] if keep(x))


def future_gold(stack, start, arcs, heads):
    """Most gold edges a computation from the configuration can still add."""
    n = len(heads) - 1
    lo, hi = child_bounds(arcs)
    roots = set(stack)
    # right stack: buffer nodes whose gold head is outside the buffer or that
    # have a gold dependent among the stack roots or the earlier fragment roots
    fragment_roots, marked = [], set()
    for s in stack:
        if heads[s] >= start:
            marked.add(heads[s])
    for b in range(start, n + 1):
        if heads[b] < start or b in marked:
            fragment_roots.append(b)
            if heads[b] >= start:
                marked.add(heads[b])
    left = [spines(s, arcs, lo, hi) for s in reversed(stack)]   # left[0] = the top tree
    right = fragment_roots
    k, q = len(left) - 1, len(right)
    # a spine node can still get a gold dependent from the left while some
    # stack root not yet absorbed is its gold child; from the right, likewise
    # with the fragment roots
    last_left, last_right = {}, {}
    for i in range(1, k + 1):
        last_left[heads[left[i][0][0]]] = i
    for j, r in enumerate(right):
        last_right[heads[r]] = j

    def shape(ls, rs, i, j):
        """The spine pair in cell (i, j), useless spine nodes dropped."""
        return (_prune(ls, lambda x: last_left.get(x, 0) > i),
                _prune(rs, lambda x: last_right.get(x, -1) >= j))

    def add(cell, key, value):
        if cell.get(key, -1) < value:
            cell[key] = value

    def reduce(cell):
        """Drop dominated spine pairs (section 6.3, rule 2)."""
        items = sorted(cell.items(), key=lambda kv: -kv[1])
        kept = []
        for (ls, rs), v in items:
            sl, sr = set(ls), set(rs)
            if any(ls[0] == l2[0] and sl <= s2l and sr <= s2r and v <= v2
                   for (l2, r2), v2, s2l, s2r in kept):
                continue
            kept.append(((ls, rs), v, sl, sr))
        return {key: v for key, v, _, _ in kept}

    def attach(spine, dep):
        """Index (1-based) of the spine node to attach ``dep`` to, and the gain."""
        for i, x in enumerate(spine):
            if heads[dep] == x:
                return i + 1, 1
        return len(spine), 0

    table = {(0, 0): {shape(*left[0], 0, 0): 0}}
    for d in range(k + q + 1):
        for i in range(max(0, d - q), min(d, k) + 1):
            j = d - i
            cell = table.pop((i, j), None)
            if not cell:
                continue
            cell = reduce(cell)
            if d == k + q:
                return max((v for (ls, _), v in cell.items() if ls[0] == 0), default=None) \
                    + (n + 1 - start) - q
            if i < k:
                tb_ls, tb_rs = left[i + 1]
                nxt = table.setdefault((i + 1, j), {})
                for (ls, rs), v in cell.items():
                    if tb_ls[0] != 0:       # left_arc: tb's root under ls
                        kk, g = attach(ls, tb_ls[0])
                        add(nxt, shape(ls[:kk] + tb_ls, rs, i + 1, j), v + g)
                    kk, g = attach(tb_rs, ls[0])   # right_arc: our root under tb's right spine
                    add(nxt, shape(tb_ls, tb_rs[:kk] + rs, i + 1, j), v + g)
            if j < q:
                c = right[j]
                nxt = table.setdefault((i, j + 1), {})
                for (ls, rs), v in cell.items():
                    if ls[0] != 0:          # left_arc: our root under c
                        add(nxt, shape((c,) + ls, (c,), i, j + 1), v + (heads[ls[0]] == c))
                    kk, g = attach(rs, c)   # right_arc: c under our right spine
                    add(nxt, shape(ls, rs[:kk] + (c,), i, j + 1), v + g)
    raise AssertionError("unreachable")


def scores(stack, buffer, heads, arcs, strategy):
    """sigma of every legal LR-spine transition (projective gold trees)."""
    out = {}
    n = len(heads) - 1
    for t, s2, b2, a2, edge in SYSTEM.successors(tuple(stack), tuple(buffer), tuple(arcs)):
        gain = 0 if edge is None else int(heads[edge[1]] == edge[0])
        out[t] = gain + future_gold(s2, b2[0] if b2 else n + 1, a2, heads)
    return out


register_method("lr_spine", "spine_table", scores, strategies=("none",), projective_only=True,
                rank=20)

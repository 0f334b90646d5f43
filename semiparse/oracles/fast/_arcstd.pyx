# cython: language_level=3
"""Arc-standard oracle scores for projective gold trees, in C.

Shared pieces of the fast arc-standard methods:

- the *critical* buffer nodes (seed 002 section 5), which are exactly the
  roots of seed 000's right stack: a buffer node whose gold head is not in
  the buffer or which has a gold dependent on the stack or among the critical
  nodes before it.  Every other buffer node can be given its gold head inside
  its own buffer fragment, so it is dropped and credited once;
- seed 000's Algorithm 1 over the stack followed by the critical nodes: a
  table over (stack nodes absorbed, critical nodes absorbed) holding, for each
  possible root of the tree built so far around the stack top, the most gold
  edges; O(l_L * l_R * (l_L + l_R)).

Transition names follow systems/arc_standard.toml: ``left_arc`` makes the top
the head of the second, ``right_arc`` the second the head of the top.
Strategies (codes): 0 none, 1 lbr, 2 strict_lbr, 3 rbl; they forbid, after
each transition, left or right children of some nodes exactly as the grammar
path does (``forbid`` tables of arc_standard.toml).
"""
from libc.stdlib cimport free, malloc

import numpy as np

cdef int NEG = -(1 << 28)

STRATEGY_CODES = {"none": 0, "lbr": 1, "strict_lbr": 2, "rbl": 3}


cdef class Work:
    """Scratch arrays for one gold tree of ``n`` words (reused across calls)."""
    cdef int n
    cdef int[::1] heads
    cdef int[::1] mark, xs, stack2, crit
    cdef unsigned char[::1] no_left, no_right
    cdef int[::1] tab

    def __init__(self, heads):
        n = len(heads) - 1
        self.n = n
        self.heads = np.asarray(heads, dtype=np.intc)
        self.mark = np.zeros(n + 2, dtype=np.intc)
        self.xs = np.zeros(n + 2, dtype=np.intc)
        self.stack2 = np.zeros(n + 2, dtype=np.intc)
        self.crit = np.zeros(n + 2, dtype=np.intc)
        self.no_left = np.zeros(n + 2, dtype=np.uint8)
        self.no_right = np.zeros(n + 2, dtype=np.uint8)
        # two anti-diagonals of (stack nodes absorbed) x (root position)
        self.tab = np.zeros(2 * (n + 2) * (n + 2), dtype=np.intc)


cdef int critical_nodes(int* heads, int n, int* stack, int ns, int bstart,
                        int* out, int* mark) noexcept nogil:
    """Write the critical buffer nodes (in order) to ``out``; return how many."""
    cdef int i, h, q = 0
    for i in range(ns):
        h = heads[stack[i]]
        if h >= bstart:
            mark[h] = 1
    for i in range(bstart, n + 1):
        if heads[i] < bstart or mark[i]:
            out[q] = i
            q += 1
            if heads[i] >= bstart:
                mark[heads[i]] = 1
    for i in range(ns):
        h = heads[stack[i]]
        if h >= bstart:
            mark[h] = 0
    for i in range(q):
        h = heads[out[i]]
        if h >= bstart:
            mark[h] = 0
    return q


cdef inline int gain(int* heads, unsigned char* no_left, unsigned char* no_right,
                     int h, int d) noexcept nogil:
    if d < h:
        if no_left[h]:
            return NEG
    elif no_right[h]:
        return NEG
    return 1 if heads[d] == h else 0


cdef int right_stack_value(Work w, int* stack, int ns, int bstart) noexcept nogil:
    """Most gold edges a computation from (stack, bstart..n) can add (Algorithm 1)."""
    cdef int* heads = &w.heads[0]
    cdef int* xs = &w.xs[0]
    cdef unsigned char* nl = &w.no_left[0]
    cdef unsigned char* nr = &w.no_right[0]
    cdef int n = w.n
    cdef int k = ns - 1
    cdef int q = critical_nodes(heads, n, stack, ns, bstart, &xs[ns], &w.mark[0])
    cdef int i, j, d, h, lo, hi, x, v, g, cur_i_lo, cur_i_hi
    cdef int W = k + q + 1
    cdef int* cur = &w.tab[0]
    cdef int* nxt = &w.tab[(n + 2) * (n + 2)]
    cdef int* tmp
    for i in range(ns):
        xs[i] = stack[i]
    # diagonal d = i + j; cell (i, j) spans xs[k - i .. k + j]
    cur[k] = 0          # cell (0, 0), root = the top
    for d in range(k + q):
        # reset the cells of diagonal d + 1
        for i in range(max(0, d + 1 - q), min(d + 1, k) + 1):
            j = d + 1 - i
            for h in range(k - i, k + j + 1):
                nxt[i * W + h] = NEG
        for i in range(max(0, d - q), min(d, k) + 1):
            j = d - i
            lo = k - i
            hi = k + j
            if i < k:
                x = xs[lo - 1]
                for h in range(lo, hi + 1):
                    v = cur[i * W + h]
                    if v <= NEG:
                        continue
                    if x != 0:
                        g = gain(heads, nl, nr, xs[h], x)
                        if g > NEG and v + g > nxt[(i + 1) * W + h]:
                            nxt[(i + 1) * W + h] = v + g
                    g = gain(heads, nl, nr, x, xs[h])
                    if g > NEG and v + g > nxt[(i + 1) * W + lo - 1]:
                        nxt[(i + 1) * W + lo - 1] = v + g
            if j < q:
                x = xs[hi + 1]
                for h in range(lo, hi + 1):
                    v = cur[i * W + h]
                    if v <= NEG:
                        continue
                    g = gain(heads, nl, nr, xs[h], x)
                    if g > NEG and v + g > nxt[i * W + h]:
                        nxt[i * W + h] = v + g
                    if xs[h] != 0:
                        g = gain(heads, nl, nr, x, xs[h])
                        if g > NEG and v + g > nxt[i * W + hi + 1]:
                            nxt[i * W + hi + 1] = v + g
        tmp = cur
        cur = nxt
        nxt = tmp
    v = cur[k * W + 0]
    if v <= NEG:
        return NEG
    return v + (n + 1 - bstart) - q


ctypedef int (*value_fn)(Work, int*, int, int) noexcept nogil


cdef dict scores_with(Work w, tuple stack, tuple buffer, int strategy, value_fn value):
    """sigma of every legal arc-standard transition, futures by ``value``."""
    cdef int n = w.n
    cdef int ns = len(stack)
    cdef int* st = &w.stack2[0]
    cdef int* heads = &w.heads[0]
    cdef unsigned char* nl = &w.no_left[0]
    cdef unsigned char* nr = &w.no_right[0]
    cdef int i, v, s0, s1
    cdef int bstart = buffer[0] if buffer else n + 1
    out = {}
    for i in range(ns):
        st[i] = stack[i]
    s0 = st[ns - 1]
    if bstart <= n:
        st[ns] = bstart
        if strategy == 1:
            nl[s0] = 1
        elif strategy == 2:
            for i in range(ns):
                nl[st[i]] = 1
        v = value(w, st, ns + 1, bstart + 1)
        for i in range(ns):
            nl[st[i]] = 0
        out["shift"] = v if v > NEG else float("-inf")
    if ns >= 2:
        s1 = st[ns - 2]
        if s1 != 0:
            st[ns - 2] = s0
            if strategy == 2:
                for i in range(ns - 2):
                    nl[st[i]] = 1
            elif strategy == 3:
                nr[s0] = 1
            v = value(w, st, ns - 1, bstart)
            for i in range(ns - 2):
                nl[st[i]] = 0
            nr[s0] = 0
            st[ns - 2] = s1
            out["left_arc"] = (v + (heads[s1] == s0)) if v > NEG else float("-inf")
        if strategy == 2:
            for i in range(ns - 1):
                nl[st[i]] = 1
        v = value(w, st, ns - 1, bstart)
        for i in range(ns - 1):
            nl[st[i]] = 0
        out["right_arc"] = (v + (heads[s0] == s1)) if v > NEG else float("-inf")
    return out


def right_stack_scores(Work w, tuple stack, tuple buffer, int strategy):
    """Oracle scores by seed 000's right stack and Algorithm 1."""
    return scores_with(w, stack, buffer, strategy, right_stack_value)


def critical(Work w, tuple stack, tuple buffer):
    """The critical buffer nodes of the configuration, in order (a list)."""
    cdef int ns = len(stack)
    cdef int i
    cdef int* st = &w.stack2[0]
    for i in range(ns):
        st[i] = stack[i]
    bstart = buffer[0] if buffer else w.n + 1
    q = critical_nodes(&w.heads[0], w.n, st, ns, bstart, &w.crit[0], &w.mark[0])
    return [w.crit[i] for i in range(q)]

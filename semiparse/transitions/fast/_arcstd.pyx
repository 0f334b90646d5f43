# cython: language_level=3, wraparound=False, cdivision=True
"""Arc-standard oracle scores for projective gold trees, in C.

Shared pieces of the fast arc-standard methods:

- the *critical* buffer nodes (Nederhof 2019, section 5), which are exactly
  the roots of the right stack of Goldberg et al. 2014: a buffer node whose
  gold head is not in the buffer or which has a gold dependent on the stack
  or among the critical nodes before it.  Every other buffer node can be
  given its gold head inside its own buffer fragment, so it is dropped and
  credited once;
- Algorithm 1 of Goldberg et al. 2014 over the stack followed by the critical
  nodes: a table over (stack nodes absorbed, critical nodes absorbed)
  holding, for each possible root of the tree built so far around the stack
  top, the most gold edges; O(l_L * l_R * (l_L + l_R)) (method ``right_stack``);
- the same table on a compressed string, restricted to a band of O(k + m)
  cells and pruned to the roots that can still matter (method ``linear``).

Transition names follow systems/arc_standard.toml: ``left_arc`` makes the top
the head of the second, ``right_arc`` the second the head of the top.
Strategies (codes): 0 none, 1 lbr, 2 strict_lbr, 3 rbl; they forbid, after
each transition, left or right children of some nodes exactly as the grammar
path does (``forbid`` tables of arc_standard.toml).
"""
from libc.math cimport INFINITY, NAN
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from semiparse.transitions.oracles._row_kernels cimport KernelGold, row_dict, row_fn, row_kernel
from semiparse.transitions.runtime._state cimport StateC
from semiparse.transitions.fast._checks cimport check_configuration, projective_gold
from semiparse.transitions.oracles._memo cimport MEMO_MISSING, Memo, memo_free, memo_get, memo_put

cdef int NEG = -(1 << 28)

STRATEGY_CODES = {"none": 0, "lbr": 1, "strict_lbr": 2, "rbl": 3}


# The C view of a ArcStandardGold: what the kernels read.
cdef struct ArcStdC:
    int n
    int* heads
    int* mark
    int* xs
    int* stack2
    int* crit
    int* tab
    int* posmap
    int* par
    int* lmin
    int* rmax
    int* nleft
    int* nright
    int* dlo
    int* dhi
    int* jlo
    int* jhi
    int* val
    int* touched
    int* stamp
    int* off
    int* cnt
    int* eroot
    int* evalue
    int* bonus
    int* flag
    unsigned char* no_left
    unsigned char* no_right
    Memo memo             # values of the configurations scored (ArcStandardBatchGold only)


cdef class ArcStandardGold(KernelGold):
    """Scratch arrays for one gold tree of ``n`` words (reused across calls),
    in one block allocated in C: a batch makes one per gold tree."""
    cdef ArcStdC c
    cdef int* block

    def __init__(self, heads):
        heads = projective_gold(heads)
        cdef int n = len(heads) - 1, i
        cdef Py_ssize_t a = n + 2, b = n + 3
        # the small arrays (zeroed), then the tables, which every call writes before it reads
        cdef Py_ssize_t small = (n + 1) + 5 * a + 7 * b + 12 * b
        cdef int* at
        free(self.block)
        memo_free(&self.c.memo)   # values of another tree's configurations
        self.block = at = <int*>malloc((small + 2 * a * a + 4 * b * b) * sizeof(int) + 2 * a)
        if at is NULL:
            raise MemoryError()
        memset(at, 0, small * sizeof(int))
        self.c.n = n
        self.c.heads = at
        for i in range(n + 1):
            at[i] = heads[i]
        at += n + 1
        self.c.mark, at = at, at + a
        self.c.xs, at = at, at + a
        self.c.stack2, at = at, at + a
        self.c.crit, at = at, at + a
        self.c.posmap, at = at, at + a
        self.c.val, at = at, at + b
        self.c.stamp, at = at, at + 2 * b
        self.c.off, at = at, at + 2 * b
        self.c.cnt, at = at, at + 2 * b
        for i in range(a):
            self.c.posmap[i] = -1
        for i in range(b):
            self.c.val[i] = NEG
        for i in range(2 * b):
            self.c.stamp[i] = -1
        self.c.par, at = at, at + b
        self.c.lmin, at = at, at + b
        self.c.rmax, at = at, at + b
        self.c.nleft, at = at, at + b
        self.c.nright, at = at, at + b
        self.c.dlo, at = at, at + b
        self.c.dhi, at = at, at + b
        self.c.jlo, at = at, at + b
        self.c.jhi, at = at, at + b
        self.c.touched, at = at, at + b
        self.c.bonus, at = at, at + b
        self.c.flag, at = at, at + b
        # two anti-diagonals of (stack nodes absorbed) x (root position)
        self.c.tab, at = at, at + 2 * a * a
        self.c.eroot, at = at, at + 2 * b * b
        self.c.evalue, at = at, at + 2 * b * b
        self.c.no_left = <unsigned char*>at
        self.c.no_right = self.c.no_left + a
        memset(self.c.no_left, 0, 2 * a)
        self.ptr = &self.c

    def __dealloc__(self):
        free(self.block)
        memo_free(&self.c.memo)


cdef class ArcStandardBatchGold(ArcStandardGold):
    """A :class:`ArcStandardGold` for one call of ``scores_batch``: it also remembers the
    value of each configuration it scores (strategy none), which is the
    value of the successor of the configuration before it when a batch
    follows a computation."""

    def __cinit__(self, heads):
        self.c.memo.on = 1

    @property
    def remembered(self):
        """How many configurations' values it holds."""
        return self.c.memo.used


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


cdef inline void improve(int* cell, int v, int g) noexcept nogil:
    """Raise the cell to v + g, unless g forbids the edge (NEG)."""
    if g > NEG and v + g > cell[0]:
        cell[0] = v + g


cdef int right_stack_value(ArcStdC* w, int* stack, int ns, int bstart) noexcept nogil:
    """Most gold edges a computation from (stack, bstart..n) can add (Algorithm 1)."""
    cdef int* heads = &w.heads[0]
    cdef int* xs = &w.xs[0]
    cdef unsigned char* nl = &w.no_left[0]
    cdef unsigned char* nr = &w.no_right[0]
    cdef int n = w.n
    cdef int k = ns - 1
    cdef int q = critical_nodes(heads, n, stack, ns, bstart, &xs[ns], &w.mark[0])
    cdef int i, j, d, h, lo, hi, x, v
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
                        improve(&nxt[(i + 1) * W + h], v, gain(heads, nl, nr, xs[h], x))
                    improve(&nxt[(i + 1) * W + lo - 1], v, gain(heads, nl, nr, x, xs[h]))
            if j < q:
                x = xs[hi + 1]
                for h in range(lo, hi + 1):
                    v = cur[i * W + h]
                    if v <= NEG:
                        continue
                    improve(&nxt[i * W + h], v, gain(heads, nl, nr, xs[h], x))
                    if xs[h] != 0:
                        improve(&nxt[i * W + hi + 1], v, gain(heads, nl, nr, x, xs[h]))
        tmp = cur
        cur = nxt
        nxt = tmp
    v = cur[k * W + 0]
    if v <= NEG:
        return NEG
    return v + (n + 1 - bstart) - q


cdef int compress(ArcStdC* w, int* stack, int ns, int bstart, int q0) noexcept nogil:
    """Append the compressed critical nodes to the string ``xs`` after the
    stack (``bonus``: a run's inner edges; ``posmap``: each kept node's
    position); return how many positions they take.  Linked nodes stay, runs
    of unlinked chained nodes merge, the rest goes."""
    cdef int* heads = w.heads
    cdef int* crit = w.crit
    cdef int* flag = w.flag
    cdef int* pos = w.posmap
    cdef int j, t, x, h, node, q = 0
    # flag[c]: 1 if critical node c has a gold edge to a stack node
    for j in range(q0):
        h = heads[crit[j]]
        flag[crit[j]] = 1 if h < bstart and h >= 0 and pos_is_stack(h, stack, ns) else 0
    for x in range(ns):
        h = heads[stack[x]]
        if h >= bstart:
            flag[h] = 1
    j = 0
    while j < q0:
        node = crit[j]
        if flag[node]:
            w.xs[ns + q] = node
            w.bonus[ns + q] = 0
            pos[node] = ns + q
            q += 1
            j += 1
        elif (j + 1 < q0 and heads[node] == crit[j + 1]) or (j > 0 and heads[crit[j - 1]] == node):
            t = j
            pos[node] = ns + q
            j += 1
            while j < q0 and not flag[crit[j]] and heads[crit[j - 1]] == crit[j]:
                pos[crit[j]] = ns + q
                j += 1
            w.xs[ns + q] = crit[j - 1]
            w.bonus[ns + q] = j - 1 - t
            q += 1
        else:
            j += 1
    for j in range(q0):
        flag[crit[j]] = 0
    return q


cdef void links(ArcStdC* w, int k, int q) noexcept nogil:
    """For each position x of the string (``posmap`` set for all of them):
    its gold head's position ``par``, its leftmost and rightmost gold
    dependents and how many on each side; for each right position j, the
    range ``dlo..dhi`` of stack positions it links to (-1: none)."""
    cdef int* par = w.par
    cdef int* dlo = w.dlo
    cdef int* dhi = w.dhi
    cdef int N = k + 1 + q, x, p, j
    for x in range(N):
        p = w.heads[w.xs[x]]
        par[x] = w.posmap[p] if p >= 0 else -1
        w.lmin[x] = N
        w.rmax[x] = -1
        w.nleft[x] = 0
        w.nright[x] = 0
    for j in range(q):
        dlo[j] = N
        dhi[j] = -1
    for x in range(N):
        p = par[x]
        if p < 0:
            continue
        if x < p:
            w.nleft[p] += 1
            if x < w.lmin[p]:
                w.lmin[p] = x
        else:
            w.nright[p] += 1
            if x > w.rmax[p]:
                w.rmax[p] = x
        if x <= k < p:
            j = p - k - 1
            dlo[j] = min(dlo[j], x)
            dhi[j] = max(dhi[j], x)
        elif p <= k < x:
            j = x - k - 1
            dlo[j] = min(dlo[j], p)
            dhi[j] = max(dhi[j], p)


cdef void band(ArcStdC* w, int k, int q) noexcept nogil:
    """The cells of each row i: right positions ``jlo[i]..jhi[i]``, those
    whose links come within one of the next stack node; a run (no link of
    its own) links, in effect, to the gap between its neighbours' ranges."""
    cdef int* dlo = w.dlo
    cdef int* dhi = w.dhi
    cdef int i, j, l, t, a = 0, b = 0
    t = -1
    for j in range(q - 1, -1, -1):
        if dhi[j] < 0:
            dlo[j] = t
        else:
            t = dhi[j]
    t = k + 1
    for j in range(q):
        if dhi[j] < 0:
            dhi[j] = t
        else:
            t = dlo[j]
    for i in range(k + 1):
        l = k - 1 - i
        while a < q and dlo[a] > l + 1:
            a += 1
        while b < q and dhi[b] >= l - 1:
            b += 1
        w.jlo[i] = max(0, a - 1)
        w.jhi[i] = min(q, b + 1)


cdef inline void offer(int* val, int* touched, int* nt, int* best, int h, int g) noexcept nogil:
    """Offer the value g for root h of the cell being built: keep the larger,
    listing h in ``touched`` the first time."""
    if g > val[h]:
        if val[h] == NEG:
            touched[nt[0]] = h
            nt[0] += 1
        val[h] = g
        if g > best[0]:
            best[0] = g


cdef inline void absorb(ArcStdC* w, int src, int x, int root, int* nt, int* best) noexcept nogil:
    """Offer the roots of the cell that absorbs position x (left or right)
    into the roots of the stored cell ``src``: x under the old root, or the
    old root under x with the inner edges of x's run (``bonus``: 0 on the
    stack); the root token is never a dependent."""
    cdef int* par = w.par
    cdef int e, h, v
    for e in range(w.off[src], w.off[src] + w.cnt[src]):
        h = w.eroot[e]
        v = w.evalue[e]
        if x != root:
            offer(w.val, w.touched, nt, best, h, v + (1 if par[x] == h else 0))
        if h != root:
            offer(w.val, w.touched, nt, best, x, v + (1 if par[h] == x else 0) + w.bonus[x])


cdef inline int keep_roots(ArcStdC* w, int nt, int best, int lo, int hi, int root,
                           int start) noexcept nogil:
    """Store at ``start`` the offered roots of the cell spanning lo..hi that
    can still matter, resetting ``val``; return how many.  Roots with no gold
    edge leaving the span are interchangeable (the best is kept); a root
    whose value plus its leaving edges cannot beat ``best`` is dropped."""
    cdef int* par = w.par
    cdef int t, h, v, o, dead = -1, fill = 0
    for t in range(nt):
        h = w.touched[t]
        v = w.val[h]
        w.val[h] = NEG
        o = 0
        if par[h] >= 0 and (par[h] < lo or par[h] > hi):
            o += 1
        if w.lmin[h] < lo:
            o += w.nleft[h]
        if w.rmax[h] > hi:
            o += w.nright[h]
        if h != root:
            if o == 0:
                if dead >= 0:
                    if w.evalue[dead] < v:
                        w.eroot[dead] = h
                        w.evalue[dead] = v
                    continue
            elif v + o <= best:
                continue
        w.eroot[start + fill] = h
        w.evalue[start + fill] = v
        if o == 0 and h != root:
            dead = start + fill
        fill += 1
    return fill


cdef int banded_rows(ArcStdC* w, int k, int q, int root) noexcept nogil:
    """The value of the whole string for the root token (``root``: its
    position, -1 if not on the stack), filling rows i = 0..k of the band
    with two row buffers (cells j = 0..q each); NEG if none."""
    cdef int n = w.n
    cdef int cap = (n + 3) * (n + 3)
    cdef int* stamp = w.stamp
    cdef int i, j, e, t, nt, best, last, base, fill, prv = 0, cur = n + 3
    cdef int result = NEG
    for j in range(2 * (n + 3)):
        stamp[j] = -1
    for i in range(k + 1):
        base = 0 if cur == 0 else cap
        fill = 0
        # the cells of row i: j in [jlo[i], jhi[i]], and q (all of them in the last row)
        j = 0 if i == k else w.jlo[i]
        last = q if i == k else w.jhi[i]
        while j <= q:
            if j > last:
                j = q
            nt = 0
            best = NEG
            if i == 0 and j == 0:
                w.val[k] = best = 0
                w.touched[nt] = k
                nt += 1
            if i > 0 and stamp[prv + j] == i - 1:      # extend to the left by xs[k - i]
                absorb(w, prv + j, k - i, root, &nt, &best)
            if j > 0 and stamp[cur + j - 1] == i:      # extend to the right by xs[k + j]
                absorb(w, cur + j - 1, k + j, root, &nt, &best)
            if nt == 0:
                j += 1
                continue
            w.off[cur + j] = base + fill
            t = keep_roots(w, nt, best, k - i, k + j, root, base + fill)
            fill += t
            w.cnt[cur + j] = t
            stamp[cur + j] = i
            if i == k and j == q:
                for e in range(w.off[cur + j], w.off[cur + j] + t):
                    if w.eroot[e] == root:
                        result = w.evalue[e]
            j += 1
        t = prv
        prv = cur
        cur = t
    return result


cdef int linear_value(ArcStdC* w, int* stack, int ns, int bstart) noexcept nogil:
    """Most gold edges a computation from (stack, bstart..n) can add: Algorithm 1
    on a compressed string, restricted to a band of cells and to the roots
    that can still matter (see docs/fast-oracles.md).

    String: the stack (x = 0..k), then the critical nodes, where a critical
    node with no gold edge to a stack node is dropped if it has no gold edge
    to another critical node either (it is never worth anything), and a
    maximal run of such nodes along a chain (each critical node's critical
    gold head is the next critical node) becomes one position whose
    absorption as a root is worth its run's inner edges (:c:func:`compress`).
    Gold edges between the stack and the critical nodes are nested, so
    position j of the right part links to stack nodes in [lo_j, hi_j] with
    both bounds decreasing in j (:c:func:`links`).  Cell (i, j) -- i stack
    nodes below the top and j right positions absorbed -- is visited only if
    j is within one position of the range of positions whose links come
    within one of the next stack node a_l (l = k-1-i) (:c:func:`band`).  The
    ranges overlap only at their ends: O(k + q) cells
    (:c:func:`banded_rows`).
    """
    cdef int k = ns - 1
    cdef int q0 = critical_nodes(w.heads, w.n, stack, ns, bstart, w.crit, w.mark)
    cdef int x, j, q, result
    for x in range(ns):
        w.xs[x] = stack[x]
        w.bonus[x] = 0
    q = compress(w, stack, ns, bstart, q0)
    for x in range(ns):
        w.posmap[stack[x]] = x
    links(w, k, q)
    band(w, k, q)
    for j in range(q0):
        w.posmap[w.crit[j]] = -1
    for x in range(ns):
        w.posmap[stack[x]] = -1
    result = banded_rows(w, k, q, 0 if stack[0] == 0 else -1)
    if result <= NEG:
        return NEG
    return result + (w.n + 1 - bstart) - q0


cdef inline bint pos_is_stack(int x, int* stack, int ns) noexcept nogil:
    """Whether position x is on the stack (binary search: stacks are increasing)."""
    cdef int lo = 0, hi = ns - 1, mid
    while lo <= hi:
        mid = (lo + hi) >> 1
        if stack[mid] == x:
            return True
        if stack[mid] < x:
            lo = mid + 1
        else:
            hi = mid - 1
    return False


ctypedef int (*value_fn)(ArcStdC*, int*, int, int) noexcept nogil


cdef inline double _sigma(int v, int gain) noexcept nogil:
    return v + gain if v > NEG else -INFINITY


cdef inline int future(ArcStdC* w, value_fn value, int* stack, int ns, int bstart,
                       int strategy) noexcept nogil:
    """``value`` of the configuration, or the value remembered for it."""
    cdef int v = memo_get(&w.memo, stack, ns, bstart) if strategy == 0 else MEMO_MISSING
    return v if v != MEMO_MISSING else value(w, stack, ns, bstart)


cdef void remember(ArcStdC* w, const int* stack, int ns, int bstart, const double* out) noexcept nogil:
    """Remember the configuration's value, the best sigma of its row (a final
    configuration has no row: nothing)."""
    cdef double best = -INFINITY
    cdef int t
    cdef bint legal = False
    for t in range(3):
        if out[t] == out[t]:
            legal = True
            if out[t] > best:
                best = out[t]
    if legal:
        memo_put(&w.memo, stack, ns, bstart, <int>best if best > -INFINITY else NEG)


cdef inline int future_without_left(ArcStdC* w, value_fn value, int* st, int ns, int bstart,
                                    int strategy, int below) noexcept nogil:
    """``future`` of the successor (st[:ns], bstart), where strict_lbr
    forbids left children to st[0..below); every such mark (and lbr's, made
    by the caller among them) is cleared again after."""
    cdef int i, v
    if strategy == 2:
        for i in range(below):
            w.no_left[st[i]] = 1
    v = future(w, value, st, ns, bstart, strategy)
    for i in range(below):
        w.no_left[st[i]] = 0
    return v


cdef void scores_row(ArcStdC* w, const int* stack, int ns, int bstart, int strategy,
                     value_fn value, double* out) noexcept nogil:
    """sigma of shift, left_arc, right_arc into out[0..2] (NaN: not legal),
    futures by ``value`` (or remembered, under strategy none)."""
    cdef int* st = w.stack2
    cdef int i, v, s0, s1
    out[0] = out[1] = out[2] = NAN
    for i in range(ns):
        st[i] = stack[i]
    s0 = st[ns - 1]
    if bstart <= w.n:
        st[ns] = bstart
        if strategy == 1:
            w.no_left[s0] = 1
        v = future_without_left(w, value, st, ns + 1, bstart + 1, strategy, ns)
        out[0] = _sigma(v, 0)
    if ns >= 2:
        s1 = st[ns - 2]
        if s1 != 0:
            st[ns - 2] = s0
            if strategy == 3:
                w.no_right[s0] = 1
            v = future_without_left(w, value, st, ns - 1, bstart, strategy, ns - 2)
            w.no_right[s0] = 0
            st[ns - 2] = s1
            out[1] = _sigma(v, w.heads[s1] == s0)
        v = future_without_left(w, value, st, ns - 1, bstart, strategy, ns - 1)
        out[2] = _sigma(v, w.heads[s0] == s1)
    if strategy == 0 and w.memo.on:
        remember(w, stack, ns, bstart, out)


cdef void linear_row(void* w, const StateC* state, const int* stack, int ns, int bstart,
                     const int* arcs, int strategy, double* out) noexcept nogil:
    scores_row(<ArcStdC*>w, stack, ns, bstart, strategy, linear_value, out)


cdef void right_stack_row(void* w, const StateC* state, const int* stack, int ns, int bstart,
                          const int* arcs, int strategy, double* out) noexcept nogil:
    scores_row(<ArcStdC*>w, stack, ns, bstart, strategy, right_stack_value, out)


COLUMNS = ("shift", "left_arc", "right_arc")
LINEAR_ROWS = row_kernel(linear_row, COLUMNS, ArcStandardBatchGold, {"none": 0})
RIGHT_STACK_ROWS = row_kernel(right_stack_row, COLUMNS, ArcStandardGold,
                              {k: STRATEGY_CODES[k] for k in ("none", "lbr", "strict_lbr")})


cdef dict scores_with(ArcStandardGold w, tuple stack, tuple buffer, int strategy, row_fn row,
                      tuple strategies):
    """``{transition: sigma}`` of the legal transitions, by the kernel ``row``
    (for the strategy codes ``strategies``)."""
    if w is None or w.ptr is NULL:
        raise ValueError("the kernel needs a ArcStandardGold made from the gold heads")
    check_configuration(stack, buffer, w.c.n)
    if strategy not in strategies:
        raise ValueError(f"strategy code {strategy}: this kernel takes {strategies}")
    cdef int ns = len(stack), i
    cdef int[::1] st = np.asarray(stack, dtype=np.intc)
    cdef double out[3]
    row(w.ptr, NULL, &st[0], ns, buffer[0] if buffer else w.c.n + 1, NULL, strategy, out)
    return row_dict(COLUMNS, out)


def right_stack_scores(ArcStandardGold w, tuple stack, tuple buffer, int strategy):
    """Oracle scores by the right stack and Algorithm 1 of Goldberg et al. 2014."""
    return scores_with(w, stack, buffer, strategy, right_stack_row,
                       tuple(RIGHT_STACK_ROWS.strategy_codes.values()))


def linear_scores(ArcStandardGold w, tuple stack, tuple buffer, int strategy):
    """Oracle scores by the banded, pruned Algorithm 1 (strategy none)."""
    return scores_with(w, stack, buffer, strategy, linear_row, (0,))

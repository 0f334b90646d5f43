# cython: language_level=3, wraparound=False, cdivision=True
"""The LR-spine oracle of Goldberg et al. 2014, sections 6.2-6.3, in C.

:func:`scores` takes a validated configuration and returns sigma of every
legal transition.  It loads the configuration into the shared C state,
whose moves (``_lr_spine_moves.pxd``) say which transitions apply and which
edge each adds, reads the spines of the stack trees off it once, derives
each successor from them (shift pushes the buffer front as a one-node
tree; left_arc_K makes the second root the
leftmost child of the K-th node of the top's left spine, so the new top's
left spine is that spine up to K followed by the second tree's left spine,
its right spine unchanged; right_arc_K is the mirror image), finds the
successor's right stack of gold fragments and runs the table on C arrays.
Every buffer lives in a :class:`SpineGold` made once per gold tree.

The table: cells (i stack trees absorbed below the top, j fragment roots
absorbed) are filled row by row; a cell holds spine pairs (left spine,
right spine, root first) with the most gold edges of a tree built around
the top that has them.  Spines live in a per-row pool of ints; see
lr_spine.py for the algorithm.  :func:`solve` fills it by branch and bound:
first with only the best pair per cell (a lower bound), and, unless that
meets an upper bound, once more without the pairs that cannot beat it.
"""
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from semiparse.transitions.runtime._lr_spine_moves cimport (SPINE_LEFT, SPINE_RIGHT, SPINE_SHIFT, spine_arc,
                                                    spine_code, spine_legal)
from semiparse.transitions.runtime._state cimport (StateC, add_arc, push_buffer_front, push_stack,
                                           state_clear, state_free, state_new)
from semiparse.transitions.fast._checks cimport projective_gold
from semiparse.transitions.fast._spine_rows cimport Entry, Row, add, attach, row_free, row_init, row_reserve


# -- per-gold-tree scratch -----------------------------------------------------------

cdef list _LEFT_NAMES = []
cdef list _RIGHT_NAMES = []


cdef inline object _name(list names, str prefix, int k):
    """The interned name ``prefix + str(k)`` (k >= 1)."""
    while len(names) < k:
        names.append(f"{prefix}{len(names) + 1}")
    return names[k - 1]


cdef int* _ints(Py_ssize_t count, int zero) except NULL:
    cdef int* p = <int*>(calloc(count, sizeof(int)) if zero else malloc(count * sizeof(int)))
    if p == NULL:
        raise MemoryError()
    return p


cdef class SpineGold:
    """The gold heads of one tree and every scratch buffer of the oracle,
    allocated once (the oracle is called many times per gold tree)."""
    cdef int n1                    # n + 1 positions
    cdef int* H                    # gold heads (H[0] = -1)
    cdef StateC* state             # the configuration
    cdef int* roots                # the stack, bottom first
    cdef int* pool                 # spines of the stack trees (2 n1)
    cdef int** SL                  # stack tree j (0 = top): left spine, its length,
    cdef int* NSL                  # right spine, its length
    cdef int** SR
    cdef int* NSR
    cdef int** TL                  # the trees of one table, 0 = the top
    cdef int* NTL
    cdef int** TR
    cdef int* NTR
    cdef int* top                  # the spliced spine of a successor's new top tree
    cdef int* rights               # fragment roots of the right stack
    cdef int* mark                 # marked[x] == stamp: x has a gold dependent to its left
    cdef int stamp
    cdef int* last_left            # section 6.3 pruning (see add), 0 / -1 between tables
    cdef int* last_right
    cdef int* live_l               # live_l[x] == live: x can still take a left dependent
    cdef int* live_r               # (it is on a left spine of a tree or a fragment root)
    cdef int live
    cdef int* rest_l               # gold edges the stack roots below tree i / the fragment
    cdef int* rest_r               # roots from j on can still get at most (see solve)
    cdef int* cnt_l                # roots still to absorb with gold head x (see table),
    cdef int* cnt_r                # 0 between tables
    cdef int* rtree                # the tree whose right spine x is on (if live_r[x] == live)
    cdef int* served               # served[t] == live: a possible root has its gold head
    cdef int* dep_mark             #   on tree t's right spine; dep_mark[c] == live: a
                                   #   possible root has gold head c (see absorb_bound)
    cdef int bstart                # the buffer start of the configuration of the table
    cdef int* cstart               # where each cell of the two live rows starts, its size
    cdef int* ccount
    cdef Row rows[2]

    def __cinit__(self, heads):
        heads = projective_gold(heads)
        cdef int d, n1 = len(heads)
        self.n1 = n1
        self.H = _ints(n1, 0)
        for d in range(n1):
            self.H[d] = heads[d]
        self.state = state_new(n1 - 1)
        if self.state is NULL:
            raise MemoryError()
        self.roots = _ints(n1, 0)
        self.pool = _ints(2 * n1, 0)
        self.NSL = _ints(n1 + 1, 0)
        self.NSR = _ints(n1 + 1, 0)
        self.NTL = _ints(n1 + 1, 0)
        self.NTR = _ints(n1 + 1, 0)
        self.top = _ints(n1, 0)
        self.rights = _ints(n1, 0)
        self.mark = _ints(n1, 1)
        self.stamp = 0
        self.last_left = _ints(n1, 1)
        self.last_right = _ints(n1, 0)
        for d in range(n1):
            self.last_right[d] = -1
        self.live_l = _ints(n1, 1)
        self.live_r = _ints(n1, 1)
        self.live = 0
        self.rest_l = _ints(n1 + 2, 0)
        self.rest_r = _ints(n1 + 2, 0)
        self.cnt_l = _ints(n1, 1)
        self.cnt_r = _ints(n1, 1)
        self.rtree = _ints(n1, 1)
        self.served = _ints(n1 + 1, 1)
        self.dep_mark = _ints(n1, 1)
        self.cstart = _ints(2 * (n1 + 1), 0)
        self.ccount = _ints(2 * (n1 + 1), 0)
        self.SL = <int**>malloc((n1 + 1) * sizeof(int*))
        self.SR = <int**>malloc((n1 + 1) * sizeof(int*))
        self.TL = <int**>malloc((n1 + 1) * sizeof(int*))
        self.TR = <int**>malloc((n1 + 1) * sizeof(int*))
        if self.SL == NULL or self.SR == NULL or self.TL == NULL or self.TR == NULL \
                or row_init(&self.rows[0]) < 0 or row_init(&self.rows[1]) < 0:
            raise MemoryError()

    def __dealloc__(self):
        free(self.H)
        state_free(self.state)
        free(self.roots)
        free(self.pool)
        free(self.NSL)
        free(self.NSR)
        free(self.NTL)
        free(self.NTR)
        free(self.top)
        free(self.rights)
        free(self.mark)
        free(self.last_left)
        free(self.last_right)
        free(self.live_l)
        free(self.live_r)
        free(self.rest_l)
        free(self.rest_r)
        free(self.cnt_l)
        free(self.cnt_r)
        free(self.rtree)
        free(self.served)
        free(self.dep_mark)
        free(self.cstart)
        free(self.ccount)
        free(self.SL)
        free(self.SR)
        free(self.TL)
        free(self.TR)
        row_free(&self.rows[0])
        row_free(&self.rows[1])


# -- the table ------------------------------------------------------------------------

cdef void mark_roots(SpineGold w, int k, int q) noexcept:
    """Set the section 6.3 pruning arrays for the trees ``w.TL/TR[1..k]`` and the
    fragment roots ``w.rights[0..q-1]``: ``last_left[x]`` = the deepest stack
    tree whose root x is the gold head of, ``last_right[x]`` = the last
    fragment root x is the gold head of (see :func:`add`)."""
    cdef int t, x
    for t in range(1, k + 1):
        x = w.H[w.TL[t][0]]
        if x >= 0:                   # the root 0 has no head
            w.last_left[x] = t
    for t in range(q):
        w.last_right[w.H[w.rights[t]]] = t


cdef void unmark_roots(SpineGold w, int k, int q) noexcept:
    """Undo :func:`mark_roots` (the arrays are 0 / -1 between tables)."""
    cdef int t, x
    for t in range(1, k + 1):
        x = w.H[w.TL[t][0]]
        if x >= 0:
            w.last_left[x] = 0
    for t in range(q):
        w.last_right[w.H[w.rights[t]]] = -1


cdef inline int gainable(SpineGold w, int d) noexcept:
    """1 if the gold head of ``d`` can still take it as a dependent (on the
    side where ``d`` lies), per the marks of :func:`solve`."""
    cdef int h = w.H[d]
    if h < 0:
        return 0
    if h > d:
        return w.live_l[h] == w.live
    return w.live_r[h] == w.live


cdef inline int gainable_here(SpineGold w, int d, int edge, int bstart) noexcept:
    """:func:`gainable` for the root ``d`` of a tree that covers the positions
    ``edge..bstart-1`` (and maybe fragment roots): 0 if its gold head is inside."""
    cdef int h = w.H[d]
    if edge <= h < bstart:
        return 0
    return gainable(w, d)


cdef int table(SpineGold w, int k, int q, int floor) except -2:
    """Most gold edges of a computation that joins the trees ``w.TL/TR[0..k]``
    (0 = the top, then down the stack) and the fragment roots
    ``w.rights[0..q-1]`` into one tree rooted in 0 (-1 if none does).  With
    ``floor`` > 0 the pairs that cannot reach ``floor`` gold edges are left
    out: the result is exact if it is at least ``floor``, else -1.

    The bound of a pair in cell (i, j): its value, plus the roots still to
    absorb and its own root whose gold heads are alive (:func:`solve`), less
    those whose gold head is a node before the buffer inside its tree but
    not on its spine on their side (nodes never come back to a spine).  It
    only decreases along a computation, so leaving out the pairs below the
    floor leaves out exactly them and the pairs they dominate.

    :func:`mark_roots` must have been called for the trees and fragments,
    and :func:`solve`'s marks made.  The value depends on the top tree only
    through its spines as pushed into the first cell, without the nodes that
    can get no gold dependent."""
    cdef int* H = w.H
    cdef int t, h, best
    cdef bint bound = floor > 0
    if bound:                      # cnt_l[x]: the stack roots below tree i with gold head x
        for t in range(1, k + 1):
            h = H[w.TL[t][0]]
            if h >= 0:
                w.cnt_l[h] += 1
    try:
        best = _table(w, k, q, floor, bound)
    finally:
        if bound:                  # back to zeros (cnt_r is cleared row by row)
            for t in range(1, k + 1):
                h = H[w.TL[t][0]]
                if h >= 0:
                    w.cnt_l[h] = 0
            for t in range(q):
                w.cnt_r[H[w.rights[t]]] = 0
    return best


cdef int _table(SpineGold w, int k, int q, int floor, bint bound) except -2:
    """The body of :func:`table`; ``bound``: leave out the pairs below ``floor``."""
    cdef int* H = w.H
    cdef int* last_left = w.last_left
    cdef int* last_right = w.last_right
    cdef int* rights = w.rights
    cdef int* start = w.cstart
    cdef int* count = w.ccount
    cdef int* hl = w.cnt_l
    cdef int* hr = w.cnt_r
    cdef int bstart = w.bstart
    cdef int i, j, s, t, kk, c, h, first, up, left, ne, ni, need
    cdef int g = 0, edge = 0, need_l = 0
    cdef int no_need = -0x3fffffff, best = -1
    cdef Row* prev
    cdef Row* cur
    cdef Entry* e
    cdef int one[1]
    cdef int* ls
    cdef int* rs
    cdef int* tls = NULL
    cdef int* trs = NULL
    cdef int ntls = 0, ntrs = 0
    need = no_need
    for i in range(k + 1):
        cur = &w.rows[i % 2]
        prev = &w.rows[(i + 1) % 2]
        cur.nents = 0
        cur.npool = 0
        if i > 0:
            tls = w.TL[i]
            ntls = w.NTL[i]
            trs = w.TR[i]
            ntrs = w.NTR[i]
        if bound:
            # the tree built so far covers edge..bstart-1 (and fragment roots)
            edge = w.TL[i][w.NTL[i] - 1]
            if i > 0:
                h = H[tls[0]]
                if h >= 0:
                    hl[h] -= 1
            need_l = 0                    # stack roots still to absorb with a gold head inside
            for t in range(i + 1, k + 1):
                h = H[w.TL[t][0]]
                if edge <= h < bstart and gainable(w, w.TL[t][0]):
                    need_l += 1
            for t in range(q):           # cnt_r[x]: fragment roots from j on with gold head x
                hr[H[rights[t]]] += 1
        for j in range(q + 1):
            up = ((i + 1) % 2) * (q + 1) + j      # cell (i - 1, j) in prev
            left = (i % 2) * (q + 1) + j - 1      # cell (i, j - 1) in cur
            if bound:
                if j > 0:
                    hr[H[rights[j - 1]]] -= 1
                # need: what value plus roots-with-head-on-the-spines must reach
                need = floor - w.rest_l[i] - w.rest_r[j] + need_l
                for t in range(j, q):
                    h = H[rights[t]]
                    if edge <= h < bstart and gainable(w, rights[t]):
                        need += 1
            # room for every pair this cell may get, so that cur's entries
            # and pool (cell (i, j - 1) is read while adding) do not move
            ne = 1
            ni = w.NTL[0] + w.NTR[0]
            if i > 0:
                for s in range(start[up], start[up] + count[up]):
                    e = &prev.ents[s]
                    ne += 2
                    ni += 2 * (e.nls + e.nrs + ntls + ntrs)
            if j > 0:
                for s in range(start[left], start[left] + count[left]):
                    e = &cur.ents[s]
                    ne += 2
                    ni += 2 * (e.nls + e.nrs + 2)
            if row_reserve(cur, ne, ni) < 0:
                raise MemoryError()
            first = cur.nents
            if i == 0 and j == 0:
                add(cur, first, last_left, last_right, 0, 0, w.TL[0], w.NTL[0],
                    NULL, 0, w.TR[0], w.NTR[0], NULL, 0, 0, no_need, hl, hr, bstart)
            if i > 0:                         # absorb stack tree i from the left
                for s in range(start[up], start[up] + count[up]):
                    e = &prev.ents[s]
                    ls = &prev.pool[e.ls]
                    rs = &prev.pool[e.rs]
                    if tls[0] != 0:           # left_arc: its root under our left spine
                        kk = attach(H, ls, e.nls, tls[0], &g)
                        add(cur, first, last_left, last_right, i, j, ls, kk,
                            tls, ntls, rs, e.nrs, NULL, 0, e.value + g,
                            need - gainable_here(w, ls[0], edge, bstart) if bound else no_need,
                            hl, hr, bstart)
                    kk = attach(H, trs, ntrs, ls[0], &g)   # right_arc: ours under its
                    add(cur, first, last_left, last_right, i, j, tls, ntls,
                        NULL, 0, trs, kk, rs, e.nrs, e.value + g,
                        need - gainable_here(w, tls[0], edge, bstart) if bound else no_need,
                        hl, hr, bstart)
            if j > 0:                         # absorb fragment root j from the right
                c = rights[j - 1]
                one[0] = c
                for s in range(start[left], start[left] + count[left]):
                    e = &cur.ents[s]
                    ls = &cur.pool[e.ls]
                    rs = &cur.pool[e.rs]
                    if ls[0] != 0:            # left_arc: our root under c
                        add(cur, first, last_left, last_right, i, j, one, 1,
                            ls, e.nls, one, 1, NULL, 0, e.value + (1 if H[ls[0]] == c else 0),
                            need - gainable_here(w, c, edge, bstart) if bound else no_need,
                            hl, hr, bstart)
                    kk = attach(H, rs, e.nrs, c, &g)       # right_arc: c under our spine
                    add(cur, first, last_left, last_right, i, j, ls, e.nls,
                        NULL, 0, rs, kk, one, 1, e.value + g,
                        need - gainable_here(w, ls[0], edge, bstart) if bound else no_need,
                        hl, hr, bstart)
            start[left + 1] = first
            count[left + 1] = cur.nents - first
        if bound:
            for t in range(q):
                hr[H[rights[t]]] = 0
    for s in range(start[(k % 2) * (q + 1) + q],
                   start[(k % 2) * (q + 1) + q] + count[(k % 2) * (q + 1) + q]):
        e = &w.rows[k % 2].ents[s]
        if w.rows[k % 2].pool[e.ls] == 0 and e.value > best:
            best = e.value
    return best


cdef int greedy(SpineGold w, int k, int q, int favored) except -2:
    """The gold edges of one computation (a lower bound of :func:`table`):
    from the top, absorb one stack tree or fragment root at a time, the way
    that adds a gold edge if there is one, else (and among those) the move
    ``favored`` (0, 1: fragment by right_arc, by left_arc; 2, 3: stack tree
    by left_arc, by right_arc), else the last of them.  On the tables of
    recorded training configurations, favoring 3 met the upper bound on 84%
    of them (61% when preferring fragments), and favoring 2 on 9% more."""
    cdef int* H = w.H
    cdef int i = 0, j = 0, g = 0, s, kk, c, pick, ni
    cdef int kinds[4]
    cdef Row* cur = &w.rows[0]
    cdef Row* nxt
    cdef Entry* e
    cdef int* ls
    cdef int* rs
    cdef int* tls
    cdef int* trs
    cdef int one[1]
    cdef int no_need = -0x3fffffff
    cur.nents = 0
    cur.npool = 0
    if row_reserve(cur, 1, w.NTL[0] + w.NTR[0]) < 0:
        raise MemoryError()
    add(cur, 0, w.last_left, w.last_right, 0, 0, w.TL[0], w.NTL[0], NULL, 0,
        w.TR[0], w.NTR[0], NULL, 0, 0, no_need, NULL, NULL, 0)
    e = &cur.ents[0]
    while i < k or j < q:
        nxt = &w.rows[1] if cur == &w.rows[0] else &w.rows[0]
        nxt.nents = 0
        nxt.npool = 0
        ls = &cur.pool[e.ls]
        rs = &cur.pool[e.rs]
        ni = 4 * (e.nls + e.nrs + 2)
        if i < k:
            ni += 4 * (w.NTL[i + 1] + w.NTR[i + 1])
        if row_reserve(nxt, 4, ni) < 0:
            raise MemoryError()
        # candidates, each alone in its cell: kinds 0, 1 fragment, 2, 3 stack tree
        if j < q:
            c = w.rights[j]
            one[0] = c
            kk = attach(H, rs, e.nrs, c, &g)
            kinds[nxt.nents] = 0
            add(nxt, nxt.nents, w.last_left, w.last_right, i, j + 1, ls, e.nls,
                NULL, 0, rs, kk, one, 1, e.value + g, no_need, NULL, NULL, 0)
            if ls[0] != 0:
                kinds[nxt.nents] = 1
                add(nxt, nxt.nents, w.last_left, w.last_right, i, j + 1, one, 1,
                    ls, e.nls, one, 1, NULL, 0, e.value + (1 if H[ls[0]] == c else 0),
                    no_need, NULL, NULL, 0)
        if i < k:
            tls = w.TL[i + 1]
            trs = w.TR[i + 1]
            if tls[0] != 0:
                kk = attach(H, ls, e.nls, tls[0], &g)
                kinds[nxt.nents] = 2
                add(nxt, nxt.nents, w.last_left, w.last_right, i + 1, j, ls, kk,
                    tls, w.NTL[i + 1], rs, e.nrs, NULL, 0, e.value + g, no_need, NULL, NULL, 0)
            kk = attach(H, trs, w.NTR[i + 1], ls[0], &g)
            kinds[nxt.nents] = 3
            add(nxt, nxt.nents, w.last_left, w.last_right, i + 1, j, tls, w.NTL[i + 1],
                NULL, 0, trs, kk, rs, e.nrs, e.value + g, no_need, NULL, NULL, 0)
        pick = 0                         # the most gold edges, then as said
        for s in range(1, nxt.nents):
            if nxt.ents[s].value > nxt.ents[pick].value or (
                    nxt.ents[s].value == nxt.ents[pick].value and kinds[pick] != favored):
                pick = s
        if kinds[pick] < 2:
            j += 1
        else:
            i += 1
        cur = nxt
        e = &cur.ents[pick]
    return e.value if cur.pool[e.ls] == 0 else -1


cdef int absorb_bound(SpineGold w, int k, int q) noexcept:
    """Another upper bound of :func:`table`: each absorption adds one edge,
    gold only if the absorbed root's gold head is in the tree built so far,
    alive on its side, or the root of that tree has its gold head on the
    absorbed tree's right spine (stack trees) or is the absorbed fragment
    root.  The root of the tree built so far is the top root, a stack root
    absorbed before or a fragment root (before, for fragments).  Needs the
    marks of :func:`solve`."""
    cdef int* H = w.H
    cdef int live = w.live
    cdef int t, u, d, h, r, total = 0
    for t in range(k + 1):
        w.served[t] = 0
        for u in range(w.NTR[t]):
            w.rtree[w.TR[t][u]] = t
    for t in range(q):
        w.rtree[w.rights[t]] = -1
    # possible roots with their gold head on a right spine to their left
    for t in range(k + q + 1):
        d = w.TL[t][0] if t <= k else w.rights[t - k - 1]
        h = H[d]
        if 0 <= h < d and w.live_r[h] == live:
            u = w.rtree[h]
            if u > t or (u >= 1 and t > k):   # tree u absorbed after d could be the root
                w.served[u] = live
    for t in range(1, k + 1):
        r = w.TL[t][0]
        if (r != 0 and H[r] > r and w.live_l[H[r]] == live) or w.served[t] == live:
            total += 1
    for t in range(k + 1):                   # fragment roots that are gold heads of stack roots
        h = H[w.TL[t][0]]
        if h >= w.bstart:
            w.dep_mark[h] = live
    for t in range(q):
        d = w.rights[t]
        h = H[d]
        if (h < d and w.live_r[h] == live) or w.dep_mark[d] == live:
            total += 1
        if h > d:
            w.dep_mark[h] = live
    return total


cdef int solve(SpineGold w, int k, int q) except -2:
    """The value of :func:`table` for the trees ``w.TL/TR[0..k]`` and fragment
    roots ``w.rights[0..q-1]`` (marked by :func:`mark_roots`), by branch and
    bound.

    Upper bounds: each absorption makes one node a dependent (the top root,
    the stack roots other than 0 and the fragment roots each get one head),
    so a computation gets at most one gold edge for each of them whose gold
    head can still take it: a node can take a left (right) dependent only
    while it is on a left (right) spine or a fragment root, and nodes never
    come back to a spine.  And at most one for each absorption that can add
    a gold edge (:func:`absorb_bound`).  Lower bound: :func:`greedy`.  When
    they differ, the table is filled with floor ub, ub - 1, ... (each pass
    keeps only the pairs that can reach the floor, see :func:`table`) until
    one reaches its floor; the value is that, or the lower bound."""
    cdef int t, u, x, lb, ub
    if w.live >= 0x3fffffff:             # every array stamped with live
        for t in range(w.n1):
            w.live_l[t] = 0
            w.live_r[t] = 0
            w.served[t] = 0
            w.dep_mark[t] = 0
        w.served[w.n1] = 0
        w.live = 0
    w.live += 1
    for t in range(k + 1):
        for u in range(w.NTL[t]):
            w.live_l[w.TL[t][u]] = w.live
        for u in range(w.NTR[t]):
            w.live_r[w.TR[t][u]] = w.live
    for t in range(q):
        x = w.rights[t]
        w.live_l[x] = w.live
        w.live_r[x] = w.live
    w.rest_l[k] = 0
    for t in range(k - 1, -1, -1):
        w.rest_l[t] = w.rest_l[t + 1] + gainable(w, w.TL[t + 1][0])
    w.rest_r[q] = 0
    for t in range(q - 1, -1, -1):
        w.rest_r[t] = w.rest_r[t + 1] + gainable(w, w.rights[t])
    ub = min(w.rest_l[0] + w.rest_r[0] + gainable(w, w.TL[0][0]), absorb_bound(w, k, q))
    lb = greedy(w, k, q, 3)
    if lb >= ub:
        return lb
    lb = max(lb, greedy(w, k, q, 2))
    if lb >= ub:
        return lb
    # a value above lb: the highest v in lb + 1..ub that the table reaches
    # when it keeps only the pairs that can reach v (a high floor leaves out
    # most pairs)
    while ub > lb:
        x = table(w, k, q, ub)
        if x >= ub:
            return x
        ub -= 1
    return lb


cdef int fragments(SpineGold w, int nroots, int extra, int bstart) noexcept:
    """Fill ``w.rights`` with the right stack of the buffer ``bstart..n`` for the
    stack roots ``w.roots[0..nroots-1]`` and ``extra`` (if >= 0); returns its size.

    A buffer node is a fragment root when its gold head is outside the buffer
    or it is the gold head of a stack root or of an earlier fragment root;
    every other buffer node gets its gold head inside its fragment."""
    cdef int* H = w.H
    cdef int* mark = w.mark
    cdef int t, b, h, q = 0
    if w.stamp >= 0x3fffffff:
        for t in range(w.n1):
            mark[t] = 0
        w.stamp = 0
    w.stamp += 1
    cdef int stamp = w.stamp
    w.bstart = bstart
    for t in range(nroots):
        h = H[w.roots[t]]
        if h >= bstart:
            mark[h] = stamp
    if extra >= 0 and H[extra] >= bstart:
        mark[H[extra]] = stamp
    for b in range(bstart, w.n1):
        h = H[b]
        if h < bstart or mark[b] == stamp:
            w.rights[q] = b
            q += 1
            if h >= bstart:
                mark[h] = stamp
    return q


cdef int load(SpineGold w, tuple stack, int bstart, tuple arcs) except -1:
    """Put the configuration into ``w.state`` (its ``l1`` / ``r1`` lead down
    the spines), after checking again what the C code relies on."""
    cdef StateC* s = w.state
    cdef int n1 = w.n1, k1 = len(stack), d, h, x, j
    if len(arcs) != n1 or k1 == 0 or not 0 <= bstart <= n1 or not all(
            type(x) is int for x in stack + arcs) or stack[0] != 0 or stack[k1 - 1] >= bstart:
        raise ValueError("lr_spine scores: not a configuration of this gold tree (the stack "
                         "ints increasing from the root 0, the buffer bstart..n after its top, "
                         "arcs an int per position)")
    state_clear(s)
    for d in range(n1):                  # increasing d: l1 the leftmost, r1 the rightmost child
        h = arcs[d]
        if not -1 <= h < n1:
            raise ValueError(f"lr_spine scores: arcs[{d}] = {h} is not a position")
        if h >= 0:
            add_arc(s, h, d, -1)
    h = n1
    for j in range(k1):                  # distinct headless roots: disjoint spines
        x = stack[k1 - 1 - j]
        if not 0 <= x < h or s.head[x] != -1:
            raise ValueError("lr_spine scores: the stack must be increasing headless positions")
        h = x
    for j in range(k1):
        push_stack(s, stack[j])
    for d in range(n1 - 1, bstart - 1, -1):
        push_buffer_front(s, d)
    return 0


cdef void read_spines(SpineGold w) noexcept:
    """``w.roots`` and the spines ``w.SL/SR[j]`` of the stack trees (j = 0 the
    top), in ``w.pool``."""
    cdef const StateC* s = w.state
    cdef int k1 = s.stack_len, j, x, count, side
    cdef int* p = w.pool
    for j in range(k1):
        w.roots[j] = s.stack[j]
    for j in range(k1):
        for side in range(2):
            x = s.stack[k1 - 1 - j]
            if side == 0:
                w.SL[j] = p
            else:
                w.SR[j] = p
            count = 0
            while x >= 0:
                p[count] = x
                count += 1
                x = s.l1[x] if side == 0 else s.r1[x]
            if side == 0:
                w.NSL[j] = count
            else:
                w.NSR[j] = count
            p += count


cdef int shift_value(SpineGold w, int bstart) except -2:
    """sigma of shift: the buffer front becomes the top tree."""
    cdef int k1 = w.state.stack_len, j, q
    cdef int single[1]
    single[0] = bstart
    w.TL[0] = single
    w.NTL[0] = 1
    w.TR[0] = single
    w.NTR[0] = 1
    for j in range(k1):
        w.TL[j + 1] = w.SL[j]
        w.NTL[j + 1] = w.NSL[j]
        w.TR[j + 1] = w.SR[j]
        w.NTR[j + 1] = w.NSR[j]
    q = fragments(w, k1, bstart, bstart + 1)
    mark_roots(w, k1, q)
    try:
        return solve(w, k1, q) + w.n1 - (bstart + 1) - q
    finally:
        unmark_roots(w, k1, q)


cdef int arc_values(SpineGold w, int side, int bstart, dict out) except -1:
    """sigma of every legal ``left_arc_K`` (side SPINE_LEFT) or ``right_arc_K``
    (SPINE_RIGHT) into ``out``.  The new top tree has the head tree's root
    (the top's for left_arc, the second's for right_arc); on that side its
    spine is the head tree's up to the K-th node followed by the dependent
    tree's, on the other the head tree's own.

    The table sees the new top tree only through its spines without the
    nodes that can get no gold dependent (:func:`add`, first cell): a K
    whose extra spine node is such a node has the table value of K - 1."""
    cdef const StateC* s = w.state
    cdef bint left = side == SPINE_LEFT
    cdef int k1 = s.stack_len, j, q, K, t, head, dep, v = 0
    cdef int ht = 0 if left else 1       # the head tree (0 = the top), and the dependent's
    cdef int dt = 1 - ht
    cdef int* tail = w.SL[dt] if left else w.SR[dt]
    cdef int ntail = w.NSL[dt] if left else w.NSR[dt]
    cdef list names = _LEFT_NAMES if left else _RIGHT_NAMES
    if not spine_legal(s, spine_code(side, 1)):
        return 0
    for j in range(2, k1):               # the trees below the second stay as they are
        w.TL[j - 1] = w.SL[j]
        w.NTL[j - 1] = w.NSL[j]
        w.TR[j - 1] = w.SR[j]
        w.NTR[j - 1] = w.NSR[j]
    if left:
        w.TL[0] = w.top
        w.TR[0] = w.SR[ht]
        w.NTR[0] = w.NSR[ht]
    else:
        w.TL[0] = w.SL[ht]
        w.NTL[0] = w.NSL[ht]
        w.TR[0] = w.top
    q = fragments(w, k1 - 2, s.stack[k1 - 1 - ht], bstart)
    mark_roots(w, k1 - 2, q)
    try:
        K = 1
        t = spine_code(side, K)
        while spine_legal(s, t):
            spine_arc(s, t, &head, &dep)
            w.top[K - 1] = head          # top[:K] is the head tree's spine up to K
            if K == 1 or (w.last_left[head] > 0 if left else w.last_right[head] >= 0):
                memcpy(w.top + K, tail, ntail * sizeof(int))
                if left:
                    w.NTL[0] = K + ntail
                else:
                    w.NTR[0] = K + ntail
                v = solve(w, k1 - 2, q) + w.n1 - bstart - q
            out[_name(names, "left_arc_" if left else "right_arc_", K)] = \
                v + (1 if w.H[dep] == head else 0)
            K += 1
            t = spine_code(side, K)
    finally:
        unmark_roots(w, k1 - 2, q)
    return 0


def scores(SpineGold w not None, tuple stack not None, int bstart, tuple arcs not None):
    """sigma of every legal transition from the configuration (validated:
    stack bottom first, the buffer ``bstart..n``, ``arcs`` the heads built;
    what the C code relies on is checked again, a ValueError otherwise)."""
    cdef dict out = {}
    load(w, stack, bstart, arcs)
    read_spines(w)
    if spine_legal(w.state, SPINE_SHIFT):
        out["shift"] = shift_value(w, bstart)
    arc_values(w, SPINE_LEFT, bstart, out)
    arc_values(w, SPINE_RIGHT, bstart, out)
    return out


def table_value(SpineGold w not None, list trees not None, list right not None, int n_free,
                bint bound=True):
    """The table alone, for a configuration given as Python values: ``trees``
    the ``(left_spine, right_spine)`` of each stack tree, the top first,
    ``right`` the fragment roots in order, ``n_free`` the buffer nodes that are
    not fragment roots; ``bound=False`` fills the whole table once, without
    the bounds of :func:`solve`.  (The reference path of the tests:
    successors built in Python, one plain table each.)"""
    cdef int k = len(trees) - 1
    cdef int q = len(right)
    cdef int t, u, total = 0
    cdef int* block
    cdef int* p
    if k < 0 or k >= w.n1 or q > w.n1 or not 0 <= n_free <= w.n1 - q:
        raise ValueError("table_value: more trees, fragment roots or free nodes than positions")
    for tree in trees:
        if not (isinstance(tree, tuple) and len(tree) == 2):
            raise ValueError(f"table_value: a tree is a (left_spine, right_spine) pair, got "
                             f"{tree!r:.60}")
        for spine in tree:
            if not all(type(x) is int and 0 <= x < w.n1 for x in spine):
                raise ValueError(f"table_value: spines hold positions below {w.n1}, got "
                                 f"{spine!r:.60}")
            total += len(spine)
    if not all(type(x) is int and 0 <= x < w.n1 for x in right):
        raise ValueError(f"table_value: fragment roots are positions below {w.n1}, got "
                         f"{right!r:.60}")
    block = <int*>malloc((total + 1) * sizeof(int))
    if block == NULL:
        raise MemoryError()
    try:
        p = block
        for t in range(k + 1):
            left_spine, right_spine = trees[t]
            w.TL[t] = p
            w.NTL[t] = len(left_spine)
            for u in range(w.NTL[t]):
                p[u] = left_spine[u]
            p += w.NTL[t]
            w.TR[t] = p
            w.NTR[t] = len(right_spine)
            for u in range(w.NTR[t]):
                p[u] = right_spine[u]
            p += w.NTR[t]
        for t in range(q):
            w.rights[t] = right[t]
        w.bstart = w.n1 - n_free - q
        mark_roots(w, k, q)
        try:
            return (solve(w, k, q) if bound else table(w, k, q, -1)) + n_free
        finally:
            unmark_roots(w, k, q)
    finally:
        free(block)

# cython: language_level=3
"""The LR-spine oracle table of seed 000 section 6.2-6.3, in C.

Cells (i stack trees absorbed below the top, j fragment roots absorbed) are
filled row by row; a cell holds spine pairs (left spine, right spine, root
first) with the most gold edges of a tree built around the top that has
them.  Spines live in a per-row pool of ints; see lr_spine.py for the
algorithm.

:func:`accepts` is the C acceptance test of ``LRSpine.validate``.
"""
from libc.stdlib cimport free, malloc, realloc

import numpy as np


cdef struct Entry:
    int ls, nls, rs, nrs, value


cdef struct Row:
    Entry* ents
    int nents, cap_ents
    int* pool
    int npool, cap_pool


cdef int row_init(Row* r) noexcept:
    r.cap_ents = 64
    r.cap_pool = 512
    r.ents = <Entry*>malloc(r.cap_ents * sizeof(Entry))
    r.pool = <int*>malloc(r.cap_pool * sizeof(int))
    r.nents = 0
    r.npool = 0
    return 0 if r.ents != NULL and r.pool != NULL else -1


cdef void row_free(Row* r) noexcept:
    free(r.ents)
    free(r.pool)


cdef int row_reserve(Row* r, int ents, int ints) noexcept:
    cdef Entry* e
    cdef int* p
    while r.nents + ents > r.cap_ents:
        e = <Entry*>realloc(r.ents, 2 * r.cap_ents * sizeof(Entry))
        if e == NULL:
            return -1
        r.ents = e
        r.cap_ents *= 2
    while r.npool + ints > r.cap_pool:
        p = <int*>realloc(r.pool, 2 * r.cap_pool * sizeof(int))
        if p == NULL:
            return -1
        r.pool = p
        r.cap_pool *= 2
    return 0


cdef inline int attach(int* heads, int* spine, int n, int dep, int* gain) noexcept:
    """1-based index of the spine node that is dep's gold head, else n."""
    cdef int t
    for t in range(n):
        if heads[dep] == spine[t]:
            gain[0] = 1
            return t + 1
    gain[0] = 0
    return n


cdef int push(Row* tmp, int* heads, int* last_left, int* last_right, int i, int j,
              int* a, int na, int* b, int nb, int* c, int nc, int* d, int nd,
              int value) noexcept:
    """Add the pair (a + b, c + d) to ``tmp`` with useless spine nodes dropped
    (section 6.3, first rule: a node other than the root stays on the left
    spine only if a stack root still to absorb is its gold dependent, on the
    right spine only if a fragment root still to absorb is)."""
    cdef int t, x, first
    if row_reserve(tmp, 1, na + nb + nc + nd) < 0:
        return -1
    cdef Entry* e = &tmp.ents[tmp.nents]
    cdef int* p = tmp.pool
    e.value = value
    e.ls = tmp.npool
    first = 1
    for t in range(na + nb):
        x = a[t] if t < na else b[t - na]
        if first or last_left[x] > i:
            p[tmp.npool] = x
            tmp.npool += 1
        first = 0
    e.nls = tmp.npool - e.ls
    e.rs = tmp.npool
    first = 1
    for t in range(nc + nd):
        x = c[t] if t < nc else d[t - nc]
        if first or last_right[x] >= j:
            p[tmp.npool] = x
            tmp.npool += 1
        first = 0
    e.nrs = tmp.npool - e.rs
    tmp.nents += 1
    return 0


cdef bint subset(int* a, int na, int* b, int nb) noexcept:
    cdef int s, t
    for s in range(na):
        for t in range(nb):
            if a[s] == b[t]:
                break
        else:
            return False
    return True


cdef int keep_best(Row* tmp, Row* out, int* order) noexcept:
    """Copy to ``out`` the pairs of ``tmp`` not dominated (section 6.3, second
    rule: same root, no fewer spine nodes on either side, at least as many
    gold edges); returns how many."""
    cdef int s, t, u, kept = 0, first = out.nents
    cdef Entry* e
    cdef Entry* f
    cdef bint dominated
    for s in range(tmp.nents):
        order[s] = s
    # by decreasing value (insertion sort: cells are small)
    for s in range(1, tmp.nents):
        u = order[s]
        t = s - 1
        while t >= 0 and tmp.ents[order[t]].value < tmp.ents[u].value:
            order[t + 1] = order[t]
            t -= 1
        order[t + 1] = u
    for s in range(tmp.nents):
        e = &tmp.ents[order[s]]
        dominated = False
        for t in range(first, out.nents):
            f = &out.ents[t]
            if out.pool[f.ls] == tmp.pool[e.ls] and \
                    subset(&tmp.pool[e.ls], e.nls, &out.pool[f.ls], f.nls) and \
                    subset(&tmp.pool[e.rs], e.nrs, &out.pool[f.rs], f.nrs):
                dominated = True
                break
        if dominated:
            continue
        if row_reserve(out, 1, e.nls + e.nrs) < 0:
            return -1
        f = &out.ents[out.nents]
        f.value = e.value
        f.ls = out.npool
        f.nls = e.nls
        for t in range(e.nls):
            out.pool[out.npool] = tmp.pool[e.ls + t]
            out.npool += 1
        f.rs = out.npool
        f.nrs = e.nrs
        for t in range(e.nrs):
            out.pool[out.npool] = tmp.pool[e.rs + t]
            out.npool += 1
        out.nents += 1
        kept += 1
    return kept


def future_gold(list left, list right, int[::1] heads, int n_free):
    """Most gold edges a computation can still add.

    left: ``(left_spine, right_spine)`` of each stack tree, the top first;
    right: the fragment roots in order; n_free: buffer nodes that are not
    fragment roots (each gets its gold head inside its fragment).
    """
    cdef int k = len(left) - 1
    cdef int q = len(right)
    cdef int n1 = heads.shape[0]
    cdef int i, j, t, s, g, kk, x, best, cur_i
    cdef int[::1] last_left = np.zeros(n1, dtype=np.intc)
    cdef int[::1] last_right = np.full(n1, -1, dtype=np.intc)
    cdef int[::1] rights = np.asarray(right, dtype=np.intc) if q else np.zeros(1, dtype=np.intc)
    cdef int[::1] lens = np.zeros(2 * (k + 1), dtype=np.intc)
    cdef int[::1] offs = np.zeros(2 * (k + 1), dtype=np.intc)
    spines = []
    for t in range(k + 1):
        left_spine, right_spine = left[t]
        offs[2 * t] = len(spines)
        lens[2 * t] = len(left_spine)
        spines.extend(left_spine)
        offs[2 * t + 1] = len(spines)
        lens[2 * t + 1] = len(right_spine)
        spines.extend(right_spine)
    cdef int[::1] sp = np.asarray(spines, dtype=np.intc)
    cdef int* H = &heads[0]
    for t in range(1, k + 1):
        x = H[sp[offs[2 * t]]]
        if x >= 0:                   # the root 0 has no head
            last_left[x] = t
    for t in range(q):
        last_right[H[rights[t]]] = t
    cdef Row rows[2]
    cdef Row tmp
    cdef int* order = NULL
    cdef int* start = <int*>malloc(2 * (q + 1) * sizeof(int))
    cdef int* count = <int*>malloc(2 * (q + 1) * sizeof(int))
    cdef int cap_order = 64
    order = <int*>malloc(cap_order * sizeof(int))
    if row_init(&rows[0]) < 0 or row_init(&rows[1]) < 0 or row_init(&tmp) < 0 \
            or start == NULL or count == NULL or order == NULL:
        raise MemoryError()
    cdef Row* prev
    cdef Row* cur
    cdef Entry* e
    cdef int c
    cdef int one[1]
    cdef int* ls
    cdef int* rs
    cdef int* tls
    cdef int* trs
    cdef int ntls, ntrs
    best = -1
    try:
        for i in range(k + 1):
            cur = &rows[i % 2]
            prev = &rows[(i + 1) % 2]
            cur.nents = 0
            cur.npool = 0
            for j in range(q + 1):
                tmp.nents = 0
                tmp.npool = 0
                if i == 0 and j == 0:
                    t = offs[0]
                    if push(&tmp, H, &last_left[0], &last_right[0], 0, 0, &sp[t], lens[0],
                            NULL, 0, &sp[offs[1]], lens[1], NULL, 0, 0) < 0:
                        raise MemoryError()
                if i > 0:                         # absorb stack tree i from the left
                    tls = &sp[offs[2 * i]]
                    ntls = lens[2 * i]
                    trs = &sp[offs[2 * i + 1]]
                    ntrs = lens[2 * i + 1]
                    for s in range(start[((i + 1) % 2) * (q + 1) + j],
                                   start[((i + 1) % 2) * (q + 1) + j]
                                   + count[((i + 1) % 2) * (q + 1) + j]):
                        e = &prev.ents[s]
                        ls = &prev.pool[e.ls]
                        rs = &prev.pool[e.rs]
                        if tls[0] != 0:           # left_arc: its root under our left spine
                            kk = attach(H, ls, e.nls, tls[0], &g)
                            if push(&tmp, H, &last_left[0], &last_right[0], i, j, ls, kk,
                                    tls, ntls, rs, e.nrs, NULL, 0, e.value + g) < 0:
                                raise MemoryError()
                        kk = attach(H, trs, ntrs, ls[0], &g)   # right_arc: ours under its
                        if push(&tmp, H, &last_left[0], &last_right[0], i, j, tls, ntls,
                                NULL, 0, trs, kk, rs, e.nrs, e.value + g) < 0:
                            raise MemoryError()
                if j > 0:                         # absorb fragment root j from the right
                    c = rights[j - 1]
                    one[0] = c
                    for s in range(start[(i % 2) * (q + 1) + j - 1],
                                   start[(i % 2) * (q + 1) + j - 1]
                                   + count[(i % 2) * (q + 1) + j - 1]):
                        e = &cur.ents[s]
                        ls = &cur.pool[e.ls]
                        rs = &cur.pool[e.rs]
                        if ls[0] != 0:            # left_arc: our root under c
                            if push(&tmp, H, &last_left[0], &last_right[0], i, j, one, 1,
                                    ls, e.nls, one, 1, NULL, 0,
                                    e.value + (1 if H[ls[0]] == c else 0)) < 0:
                                raise MemoryError()
                        kk = attach(H, rs, e.nrs, c, &g)       # right_arc: c under our spine
                        if push(&tmp, H, &last_left[0], &last_right[0], i, j, ls, e.nls,
                                NULL, 0, rs, kk, one, 1, e.value + g) < 0:
                            raise MemoryError()
                if tmp.nents > cap_order:
                    free(order)
                    cap_order = 2 * tmp.nents
                    order = <int*>malloc(cap_order * sizeof(int))
                    if order == NULL:
                        raise MemoryError()
                start[(i % 2) * (q + 1) + j] = cur.nents
                t = keep_best(&tmp, cur, order)
                if t < 0:
                    raise MemoryError()
                count[(i % 2) * (q + 1) + j] = t
            if i == k:
                for s in range(start[(i % 2) * (q + 1) + q],
                               start[(i % 2) * (q + 1) + q] + count[(i % 2) * (q + 1) + q]):
                    e = &cur.ents[s]
                    if cur.pool[e.ls] == 0 and e.value > best:
                        best = e.value
    finally:
        row_free(&rows[0])
        row_free(&rows[1])
        row_free(&tmp)
        free(order)
        free(start)
        free(count)
    return best + n_free


# -- configurations ----------------------------------------------------------------

cdef int* _scratch = NULL
cdef Py_ssize_t _scratch_cap = 0


cpdef bint accepts(tuple stack, tuple buffer, tuple arcs, Py_ssize_t n) except -1:
    """Whether ``(stack, buffer, arcs)`` is an LR-spine configuration of an
    ``n``-word sentence, as ``LRSpine.validate_slowly`` decides, for exact ints
    (anything else answers False): the stack increasing from the root 0, the
    buffer the positions after the top up to n, stack roots and buffer nodes
    headless, every other position headed by an earlier position that is not
    in the buffer, no cycle, and the stack trees covering consecutive
    positions in stack order."""
    global _scratch, _scratch_cap
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, d, x, h, steps, prev = -1, bstart
    cdef object item
    cdef int* p
    cdef int* heads
    cdef int* owner
    if k == 0 or n < 0 or len(arcs) != n + 1:
        return False
    for i in range(k):
        item = stack[i]
        if type(item) is not int:
            return False
        x = item
        if (i == 0 and x != 0) or x <= prev or x > n:
            return False
        prev = x
    bstart = n - m + 1
    for i in range(m):
        item = buffer[i]
        if type(item) is not int:
            return False
        x = item
        if x != bstart + i:
            return False
    if bstart <= prev:
        return False
    if 2 * (n + 1) > _scratch_cap:
        p = <int*>realloc(_scratch, 2 * (n + 1) * sizeof(int))
        if p == NULL:
            raise MemoryError()
        _scratch = p
        _scratch_cap = 2 * (n + 1)
    heads = _scratch
    owner = _scratch + n + 1             # stack index of the tree of each position, -1 unknown
    for d in range(n + 1):
        owner[d] = -1
    for i in range(k):
        owner[<Py_ssize_t>stack[i]] = i
    for d in range(n + 1):
        item = arcs[d]
        if type(item) is not int:
            return False
        h = item
        # stack roots and buffer nodes have no head, every other position has one
        if (h >= 0) == (owner[d] >= 0 or d >= bstart):
            return False
        if h >= bstart or h == d or h < -1:
            return False
        heads[d] = <int>h
    # every position before the buffer reaches a stack root (all others are headed)
    for d in range(bstart):
        x = d
        steps = 0
        while owner[x] < 0:
            x = heads[x]
            steps += 1
            if steps > n:
                return False            # a cycle
        i = owner[x]
        x = d
        while owner[x] < 0:
            owner[x] = <int>i
            x = heads[x]
    # the stack trees cover consecutive positions in stack order
    for d in range(1, bstart):
        if owner[d] != owner[d - 1] and owner[d] != owner[d - 1] + 1:
            return False
    return True

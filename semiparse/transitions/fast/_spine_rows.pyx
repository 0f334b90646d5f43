# cython: language_level=3, wraparound=False, cdivision=True
"""The rows of the LR-spine oracle's table (see ``_spine_rows.pxd``)."""
from libc.stdlib cimport free, malloc, realloc


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


cdef void add(Row* r, int first, int* last_left, int* last_right, int i, int j,
              int* a, int na, int* b, int nb, int* c, int nc, int* d, int nd,
              int value, int need, int* hl, int* hr, int bstart) noexcept:
    """Add the pair (a + b, c + d) with ``value`` (na, nc >= 1) to the cell of
    ``r`` that starts at entry ``first``, room reserved, unless ``value`` plus
    the number of roots still to absorb whose gold head is on its spines
    (``hl[x]`` stack roots and ``hr[x]`` fragment roots for a node x before
    ``bstart``) is below ``need`` (see :func:`table`).

    Section 6.3: spine nodes other than the root that can get no gold
    dependent are dropped (a node stays on the left spine only if a stack
    root still to absorb is its gold dependent, on the right spine only if a
    fragment root still to absorb is); the pair is not added if an entry of
    the cell dominates it (same root, spines that are supersets, at least as
    many gold edges), and the entries it dominates that have fewer gold
    edges leave.  The cell stays sorted by decreasing value, ties in the order of
    arrival: the same entries in the same order as collecting all the pairs,
    sorting them stably and keeping each pair that no kept one dominates."""
    cdef int* p = r.pool
    cdef Entry* E = r.ents
    cdef Entry* f
    cdef int base = r.npool, n = r.npool, t, x, nls, rbase, nrs, root, s, u, pos
    p[n] = a[0]
    n += 1
    for t in range(1, na):
        x = a[t]
        if last_left[x] > i:
            p[n] = x
            n += 1
    for t in range(nb):
        x = b[t]
        if last_left[x] > i:
            p[n] = x
            n += 1
    nls = n - base
    rbase = n
    p[n] = c[0]
    n += 1
    for t in range(1, nc):
        x = c[t]
        if last_right[x] >= j:
            p[n] = x
            n += 1
    for t in range(nd):
        x = d[t]
        if last_right[x] >= j:
            p[n] = x
            n += 1
    nrs = n - rbase
    if need > value:
        u = value
        for t in range(base, n):
            x = p[t]
            if x < bstart:
                u += hl[x] if t < rbase else hr[x]
        if u < need:
            return
    root = p[base]
    s = first
    while s < r.nents and E[s].value >= value:
        f = &E[s]
        if p[f.ls] == root and subset(p + base, nls, p + f.ls, f.nls) \
                and subset(p + rbase, nrs, p + f.rs, f.nrs):
            return                       # dominated: its pool ints are not kept
        s += 1
    pos = u = s
    while s < r.nents:                   # entries with fewer gold edges: drop the dominated
        f = &E[s]
        if not (p[f.ls] == root and subset(p + f.ls, f.nls, p + base, nls)
                and subset(p + f.rs, f.nrs, p + rbase, nrs)):
            if u != s:
                E[u] = E[s]
            u += 1
        s += 1
    s = u
    while s > pos:
        E[s] = E[s - 1]
        s -= 1
    E[pos].ls = base
    E[pos].nls = nls
    E[pos].rs = rbase
    E[pos].nrs = nrs
    E[pos].value = value
    r.nents = u + 1
    r.npool = n

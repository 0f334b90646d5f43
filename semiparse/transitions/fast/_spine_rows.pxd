"""The rows of the LR-spine oracle's table (``_lrspine.pyx``): each a
pool of spine ints and the entries (spine pairs with their gold edges) of
its cells, and the one way an entry is added (:c:func:`add`, with the
reductions of Goldberg et al. 2014, section 6.3)."""


cdef struct Entry:
    int ls, nls, rs, nrs, value


cdef struct Row:
    Entry* ents
    int nents, cap_ents
    int* pool
    int npool, cap_pool


cdef int row_init(Row* r) noexcept
cdef void row_free(Row* r) noexcept
cdef int row_reserve(Row* r, int ents, int ints) noexcept
cdef void add(Row* r, int first, int* last_left, int* last_right, int i, int j,
              int* a, int na, int* b, int nb, int* c, int nc, int* d, int nd,
              int value, int need, int* hl, int* hr, int bstart) noexcept


cdef inline int attach(int* heads, int* spine, int n, int dep, int* gain) noexcept:
    """1-based index of the spine node that is dep's gold head, else n."""
    cdef int t
    for t in range(n):
        if heads[dep] == spine[t]:
            gain[0] = 1
            return t + 1
    gain[0] = 0
    return n


cdef inline bint subset(int* a, int na, int* b, int nb) noexcept:
    cdef int s, t
    for s in range(na):
        for t in range(nb):
            if a[s] == b[t]:
                break
        else:
            return False
    return True

# cython: language_level=3, wraparound=False, cdivision=True
"""The outside pass over a filled max-plus or log chart: edge max-marginals
and posteriors (:func:`edge_marginals`, :func:`edge_marginals_batch`).

Over a filled max-plus or log (plain or scaled) chart, from the largest spans
down, each item hands its adjoint to the two factors of every term of its sum
(``share`` and ``back_rows``, in ``semiparse/chart/_adjoint.pxd``).  In a log chart the adjoint is the item's posterior (the share of the total
through it): a term t of an item y receives post(y) * t / y.  In a max-plus
chart it is the item's max-marginal (the best score of a tree through it):
the term receives mm(y) - y + t.  Both are the outside pass of the semiring
with the inside value folded in, so every adjoint is a probability or a
tree score and never overflows.  Left/right items get adjoints from two
directions (as a row by start and as a row by end), kept in the by-start
and by-end arrays and combined when the item's own cell is reached.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart._adjoint cimport OV, back_rows, share
from semiparse.chart._inside cimport KERNEL_MAXPLUS, check_kernel, fill, log_inside
from semiparse.chart._layout cimport (Chart, CompiledRules, Rules, at, chart_alloc, chart_free,
                                      chart_layout, check_input)
from semiparse.chart._logsum cimport Scaled
from semiparse.chart._maxplus cimport MaxPlus
from semiparse.chart._plain cimport Plain
from semiparse.chart._values cimport v_one


cdef inline double adj_zero(OV tag) noexcept nogil:
    if OV is MaxPlus:
        return -INFINITY
    else:
        return 0.0


cdef inline double adj_plus(OV tag, double a, double b) noexcept nogil:
    if OV is MaxPlus:
        return a if a >= b else b
    else:
        return a + b


cdef void outside(OV tag, Chart* ch, Chart* ad, const Rules* g, OV total,
                  double* edges) noexcept nogil:
    """Fill ``edges[h * N + d]`` with the posterior (log) or max-marginal
    (max-plus) of the edge h -> d, from a filled chart ``ch`` whose value is
    ``total`` (not zero); ``ad`` holds the adjoints, in the same layout."""
    cdef int N = ch.N, nl = ch.nl, nr = ch.nr
    cdef size_t NN = <size_t> N * N, x, n_all = (2 * nl + 2 * nr + 2 * nl * nr) * NN
    cdef const OV* Lf = <const OV*> ch.Lf
    cdef const OV* Lb = <const OV*> ch.Lb
    cdef const OV* Rf = <const OV*> ch.Rf
    cdef const OV* Rb = <const OV*> ch.Rb
    cdef const OV* IL = <const OV*> ch.IL
    cdef const OV* IR = <const OV*> ch.IR
    cdef const OV* W = <const OV*> ch.W
    cdef double* gLf = <double*> ad.Lf
    cdef double* gLb = <double*> ad.Lb
    cdef double* gRf = <double*> ad.Rf
    cdef double* gRb = <double*> ad.Rb
    cdef double* gIL = <double*> ad.IL
    cdef double* gIR = <double*> ad.IR
    cdef double* all_adj = <double*> ad.Lf
    cdef double zero = adj_zero(tag), adj, e, c, base
    cdef OV one = v_one(tag), y, edge
    cdef int span, i, j, q, b, c1, b2, c2, bd, cd

    for x in range(n_all):
        all_adj[x] = zero
    for x in range(NN):
        edges[x] = zero
    if OV is MaxPlus:
        share(total, one, total.s, &c, &base)
    else:
        share(total, one, 1.0, &c, &base)
    for q in range(g.nroot):
        b, c1 = g.root[2 * q], g.root[2 * q + 1]
        back_rows(Lf + at(b, 0, 0, N, NN), Rf + at(c1, 0, N - 1, N, NN), c, base,
                  gLf + at(b, 0, 0, N, NN), gRf + at(c1, 0, N - 1, N, NN), 1)

    for span in range(N - 1, 0, -1):
        for i in range(N - span):
            j = i + span
            # right items: R[c2][i][j] = sum_d IR[bd][c][i][d] * R[cd][d][j]
            for c2 in range(nr):
                gRf[at(c2, i, j, N, NN)] = adj_plus(tag, gRf[at(c2, i, j, N, NN)],
                                                    gRb[at(c2, j, i, N, NN)])
            for q in range(g.nrc):
                c2, c1, bd, cd = g.rc[4 * q], g.rc[4 * q + 1], g.rc[4 * q + 2], g.rc[4 * q + 3]
                if share(Rf[at(c2, i, j, N, NN)], one, gRf[at(c2, i, j, N, NN)], &c, &base):
                    back_rows(IR + at(bd * nr + c1, i, i, N, NN) + 1,
                              Rb + at(cd, j, i, N, NN) + 1, c, base,
                              gIR + at(bd * nr + c1, i, i, N, NN) + 1,
                              gRb + at(cd, j, i, N, NN) + 1, j - i)
            # left items: L[b2][i][j] = sum_d L[bd][i][d] * IL[b][cd][j][d]
            for b2 in range(nl):
                gLf[at(b2, i, j, N, NN)] = adj_plus(tag, gLf[at(b2, i, j, N, NN)],
                                                    gLb[at(b2, j, i, N, NN)])
            for q in range(g.nlc):
                b2, bd, b, cd = g.lc[4 * q], g.lc[4 * q + 1], g.lc[4 * q + 2], g.lc[4 * q + 3]
                if share(Lf[at(b2, i, j, N, NN)], one, gLf[at(b2, i, j, N, NN)], &c, &base):
                    back_rows(Lf + at(bd, i, i, N, NN), IL + at(b * nr + cd, j, i, N, NN),
                              c, base, gLf + at(bd, i, i, N, NN),
                              gIL + at(b * nr + cd, j, i, N, NN), j - i)
            # attachments: sum_k R[c][i][k] * L[b][k+1][j], times the edge; the
            # two attachments of a pair share that sum, so they hand down together
            for q in range(g.npairs):
                b, c1 = g.pairs[4 * q], g.pairs[4 * q + 1]
                adj = zero
                if g.pairs[4 * q + 2]:  # head j, child i
                    e = gIL[at(b * nr + c1, j, i, N, NN)]
                    if e != zero:
                        edges[j * N + i] = adj_plus(tag, edges[j * N + i], e)
                        adj = adj_plus(tag, adj, e)
                        y, edge = IL[at(b * nr + c1, j, i, N, NN)], W[j * N + i]
                if g.pairs[4 * q + 3]:  # head i, child j
                    e = gIR[at(b * nr + c1, i, j, N, NN)]
                    if e != zero:
                        edges[i * N + j] = adj_plus(tag, edges[i * N + j], e)
                        adj = adj_plus(tag, adj, e)
                        y, edge = IR[at(b * nr + c1, i, j, N, NN)], W[i * N + j]
                if adj != zero and share(y, edge, adj, &c, &base):
                    back_rows(Rf + at(c1, i, i, N, NN), Lb + at(b, j, i, N, NN) + 1, c, base,
                              gRf + at(c1, i, i, N, NN), gLb + at(b, j, i, N, NN) + 1, j - i)


cdef double marginals_one(int kernel, Chart* ch, Chart* ad, const Rules* g, const int* pl,
                          const int* pr, const double* w, double* edges) noexcept nogil:
    """The inside value of one input, and its edge posteriors or
    max-marginals written to ``edges`` when it has a tree (charts allocated)."""
    cdef MaxPlus mp
    cdef Plain pv
    cdef Scaled sl
    cdef double total
    cdef bint plain
    if kernel != KERNEL_MAXPLUS:
        total = log_inside(kernel, ch, g, pl, pr, w, &plain, &pv, &sl)
        if total > -INFINITY:
            if plain:
                outside(pv, ch, ad, g, pv, edges)
            else:
                outside(sl, ch, ad, g, sl, edges)
    else:
        mp = fill(mp, ch, g, pl, pr, w, 0)
        total = mp.s
        if total > -INFINITY:
            outside(mp, ch, ad, g, mp, edges)
    return total


def edge_marginals(str kernel, CompiledRules rules not None, const int[::1] pl not None,
                   const int[::1] pr not None, const double[:, ::1] w not None):
    """``(value, edges)``: the inside value of the whole input and the N x N
    array of edge posteriors (``kernel="log"``) or edge max-marginals
    (``"maxplus"``: the best score of a tree containing the edge, -inf if
    none); ``edges`` is None when the input has no tree.  ``"logplain"`` and
    ``"logscaled"`` are the two paths of ``"log"`` alone (see :func:`inside`;
    ``logplain`` gives NaN and None where it is not exact).  Runs without the
    GIL, so calls on several threads run in parallel."""
    cdef int N = w.shape[0]
    cdef Chart ch, ad
    cdef double total
    cdef int kernel_kind = check_kernel(kernel)
    check_input(rules, pl, pr, w)
    edges_array = np.empty((N, N))
    cdef double[:, ::1] edges = edges_array
    if chart_alloc(&ch, sizeof(MaxPlus) if kernel_kind == KERNEL_MAXPLUS else sizeof(Scaled), N,
                   rules.n_left, rules.n_right) < 0:
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    if chart_alloc(&ad, sizeof(double), N, rules.n_left, rules.n_right) < 0:
        chart_free(&ch)
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    with nogil:
        total = marginals_one(kernel_kind, &ch, &ad, &rules.g, &pl[0], &pr[0], &w[0, 0], &edges[0, 0])
    chart_free(&ch)
    chart_free(&ad)
    return total, (edges_array if total > -INFINITY else None)


def edge_marginals_batch(str kernel, CompiledRules rules not None, list items not None):
    """:func:`edge_marginals` of each ``(pl, pr, w)`` in ``items`` (contiguous
    int32, int32 and float64 arrays), as a list.  The GIL is released once for
    all the items rather than once per item, so that threads running batches
    do not wait for each other between items."""
    cdef int kernel_kind = check_kernel(kernel)
    cdef Py_ssize_t n = len(items), x
    cdef const int[::1] pl
    cdef const int[::1] pr
    cdef const double[:, ::1] w
    cdef double[:, ::1] edges
    cdef const int** pls = <const int**> malloc(max(n, 1) * sizeof(void*))
    cdef const int** prs = <const int**> malloc(max(n, 1) * sizeof(void*))
    cdef const double** ws = <const double**> malloc(max(n, 1) * sizeof(void*))
    cdef double** outs = <double**> malloc(max(n, 1) * sizeof(void*))
    cdef int* sizes = <int*> malloc(max(n, 1) * sizeof(int))
    cdef double* totals = <double*> malloc(max(n, 1) * sizeof(double))
    cdef Chart ch, ad
    cdef size_t value_size = sizeof(MaxPlus) if kernel_kind == KERNEL_MAXPLUS else sizeof(Scaled)
    cdef int largest = 0
    arrays = []  # the results, and the inputs whose buffers the pointers address
    try:
        if not (pls and prs and ws and outs and sizes and totals):
            raise MemoryError("no memory for the batch's pointers")
        for x in range(n):
            pl, pr, w = items[x]
            check_input(rules, pl, pr, w)
            out = np.empty((w.shape[0], w.shape[0]))
            edges = out
            arrays.append((items[x], out))
            pls[x], prs[x], ws[x], outs[x] = &pl[0], &pr[0], &w[0, 0], &edges[0, 0]
            sizes[x] = w.shape[0]
            largest = max(largest, sizes[x])
        # one pair of charts for the whole batch, laid out anew for each input:
        # a fresh allocation per input costs page faults that threads contend for
        if n and (chart_alloc(&ch, value_size, largest, rules.n_left, rules.n_right) < 0
                  or chart_alloc(&ad, sizeof(double), largest, rules.n_left, rules.n_right) < 0):
            chart_free(&ch)
            raise MemoryError(f"chart for {largest} positions does not fit in memory")
        with nogil:
            for x in range(n):
                chart_layout(&ch, value_size, sizes[x], rules.n_left, rules.n_right)
                chart_layout(&ad, sizeof(double), sizes[x], rules.n_left, rules.n_right)
                totals[x] = marginals_one(kernel_kind, &ch, &ad, &rules.g, pls[x], prs[x], ws[x],
                                          outs[x])
        if n:
            chart_free(&ch)
            chart_free(&ad)
        return [(totals[x], arrays[x][1] if totals[x] > -INFINITY else None)
                for x in range(n)]
    finally:
        free(pls)
        free(prs)
        free(ws)
        free(outs)
        free(sizes)
        free(totals)


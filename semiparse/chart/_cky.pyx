# cython: language_level=3, wraparound=False, cdivision=True
"""Split bilexical CKY (Nederhof 2019, Table 2) in C, fused over numeric semirings.

One chart algorithm, specialized at compile time for each value type below;
the semiring operations are inline functions chosen by ``if V is ...``
branches, so the inner loops are plain C arithmetic.

Chart layout (``N`` = number of input positions), chosen so that every inner
loop walks two contiguous rows:

- ``Lf[B][i][j]`` / ``Lb[B][j][i]``: left items by start / by end;
- ``Rf[C][i][j]`` / ``Rb[C][j][i]``: right items by start / by end;
- ``IL[B][C][j][i]``: left attachment of child i to head j (by end);
- ``IR[B][C][i][j]``: right attachment of child j to head i (by start).

Log values are first tried as :data:`Plain` probabilities, each dependent's
edge weights divided by the largest and all rescaled as the entries drift
(see :mod:`semiparse.chart._plain`): a sum of products is then a plain dot
product.  When an entry leaves the range where that is exact, the chart is filled again with :data:`Scaled` numbers (see
:mod:`semiparse.chart._logsum`), which have the range of the log semiring and still
sum products without an exp or log per term.  An outside pass over max-plus
and log charts gives edge max-marginals and posteriors (:func:`edge_marginals`).

Exact counts use :data:`CountMod` / :data:`MaxCountMod` modulo a prime below
2**31 (products fit in 64 bits); the Python side combines several primes by
the Chinese remainder theorem when the double-precision count is too large to
be exact.
"""
from libc.math cimport INFINITY, NAN, exp, fabs, log, log1p
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart.grouping import grouped_tables

from semiparse.chart._logsum cimport Scaled, from_log, scaled_dot, scaled_plus, scaled_times, to_log
from semiparse.chart._adjoint cimport OV, back_rows, share
from semiparse.chart._maxplus cimport MaxPlus, max_dot, maxplus_dot
from semiparse.chart._plain cimport (Plain, drifted, in_range, plain_dot, plain_rescale_weights,
                               plain_weights, recentring, track)


cdef inline size_t at(size_t item, int i, int j, int N, size_t NN) noexcept nogil:
    """The index of entry (i, j) of chart item ``item`` in its array: the
    items (states, or pairs of states for the attachment items) one after
    another, each an N x N square stored row by row (NN = N * N)."""
    return item * NN + <size_t> i * N + j


cdef inline int trace_cap(int N) noexcept nogil:
    """A bound on the items of one derivation over N positions (8 per
    position, and 8 more): the depth of the backtrace's stack, and the number
    of uniforms a sampled backtrace may draw (at most one per item)."""
    return 8 * N + 8


def uniforms_needed(int N):
    """How many uniforms :func:`best_tree` needs to sample a tree over N
    positions (:c:func:`trace_cap`)."""
    return trace_cap(N)


ctypedef struct CountF:
    double c

ctypedef struct CountMod:
    uint64_t c

ctypedef struct MaxCountF:
    double s
    double c

ctypedef struct MaxCountMod:
    double s
    uint64_t c

ctypedef struct MaxLogCount:  # best score and the log of its count: no overflow at any length
    double s
    double c

ctypedef fused V:
    MaxPlus
    Plain
    Scaled
    CountF
    CountMod
    MaxCountF
    MaxCountMod
    MaxLogCount


cdef inline V v_zero(V tag) noexcept nogil:
    if V is Scaled:
        tag.m, tag.e = 0.0, -INFINITY
    elif V is Plain:
        tag.p = 0.0
    elif V is MaxPlus:
        tag.s = -INFINITY
    elif V is CountF or V is CountMod:
        tag.c = 0
    elif V is MaxLogCount:
        tag.s = -INFINITY
        tag.c = -INFINITY
    else:
        tag.s = -INFINITY
        tag.c = 0
    return tag


cdef inline V v_one(V tag) noexcept nogil:
    if V is Scaled:
        tag.m, tag.e = 1.0, 0.0
    elif V is Plain:
        tag.p = 1.0
    elif V is MaxPlus:
        tag.s = 0.0
    elif V is CountF or V is CountMod:
        tag.c = 1
    elif V is MaxLogCount:
        tag.s = 0.0
        tag.c = 0.0
    else:
        tag.s = 0.0
        tag.c = 1
    return tag


cdef inline V v_edge(V tag, double score) noexcept nogil:
    """The value of an edge with this score (-inf: forbidden, i.e. zero); a
    plain chart takes its weights from `plain_weights`, scaled per dependent."""
    if score == -INFINITY:
        return v_zero(tag)
    if V is Scaled:
        tag = from_log(score)
    elif V is Plain:
        tag.p = exp(score)
    elif V is MaxPlus:
        tag.s = score
    elif V is CountF or V is CountMod:
        tag.c = 1
    elif V is MaxLogCount:
        tag.s = score
        tag.c = 0.0
    else:
        tag.s = score
        tag.c = 1
    return tag


cdef inline double log_add(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)) without overflow (-inf is log 0)."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a >= b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef inline V v_plus(V a, V b, uint64_t p) noexcept nogil:
    if V is MaxPlus:
        if b.s > a.s:
            a.s = b.s
        return a
    elif V is Scaled:
        return scaled_plus(a, b)
    elif V is Plain:
        a.p = a.p + b.p
        return a
    elif V is MaxLogCount:
        if a.s > b.s:
            return a
        if b.s > a.s:
            return b
        a.c = log_add(a.c, b.c)
        return a
    elif V is CountF:
        a.c = a.c + b.c
        return a
    elif V is CountMod:
        a.c = a.c + b.c
        if a.c >= p:
            a.c -= p
        return a
    else:
        if a.s > b.s:
            return a
        if b.s > a.s:
            return b
        a.c = a.c + b.c
        if V is MaxCountMod:
            if a.c >= p:
                a.c -= p
        return a


cdef inline V v_times(V a, V b, uint64_t p) noexcept nogil:
    if V is Scaled:
        a = scaled_times(a, b)
    elif V is Plain:
        a.p = a.p * b.p
    elif V is MaxPlus:
        a.s = a.s + b.s
    elif V is CountF:
        a.c = a.c * b.c
    elif V is CountMod:
        a.c = (a.c * b.c) % p
    else:
        if a.s == -INFINITY or b.s == -INFINITY:
            return v_zero(a)
        a.s = a.s + b.s
        if V is MaxCountF:
            a.c = a.c * b.c
        elif V is MaxLogCount:
            a.c = a.c + b.c
        else:
            a.c = (a.c * b.c) % p
    return a


cdef int chart_alloc(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil:
    cdef char* p = <char*> malloc(chart_bytes(size, N, nl, nr))
    ch.block = p
    if p == NULL:
        return -1
    chart_layout(ch, size, N, nl, nr)
    return 0


cdef inline void arrays_layout(Chart* ch, size_t size, int N, int nl, int nr, int lf, int lb,
                               int rf, int rb, int il, int ir) noexcept nogil:
    """Point the chart's arrays into ch.block, one after another: Lf, Lb, Rf,
    Rb, IL and IR of ``lf`` ... ``ir`` rows, then W, each row N x N entries
    of ``size`` bytes."""
    cdef size_t square = <size_t> N * N * size
    cdef char* p = <char*> ch.block
    ch.N, ch.nl, ch.nr = N, nl, nr
    ch.Lf = p
    ch.Lb = p + lf * square
    ch.Rf = p + (lf + lb) * square
    ch.Rb = p + (lf + lb + rf) * square
    ch.IL = p + (lf + lb + rf + rb) * square
    ch.IR = p + (lf + lb + rf + rb + il) * square
    ch.W = p + (lf + lb + rf + rb + il + ir) * square


cdef void chart_layout(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil:
    """Lay out the chart of N positions in ch.block (chart_bytes long at least)."""
    arrays_layout(ch, size, N, nl, nr, nl, nl, nr, nr, nl * nr, nl * nr)


cdef void chart_free(Chart* ch) noexcept nogil:
    free(ch.block)


cdef bint plain_rescale(Chart* ch, const Rules* g, int width, double shift) noexcept nogil:
    """Multiply a Plain chart's weights by exp(shift), and its entries of
    widths 1..width by exp(shift) to the power of their width, as if the
    weights had been so from the start; False when an entry or a weight
    leaves the range where the chart is exact."""
    cdef int N = ch.N, nl = ch.nl, nr = ch.nr, s, i, j, b, c, q
    cdef size_t NN = <size_t> N * N
    cdef Plain* Lf = <Plain*> ch.Lf
    cdef Plain* Lb = <Plain*> ch.Lb
    cdef Plain* Rf = <Plain*> ch.Rf
    cdef Plain* Rb = <Plain*> ch.Rb
    cdef Plain* IL = <Plain*> ch.IL
    cdef Plain* IR = <Plain*> ch.IR
    cdef double f, lo = INFINITY, hi = 0.0
    for s in range(1, width + 1):
        f = exp(shift * s)
        for i in range(N - s):
            j = i + s
            for b in range(nl):
                Lf[at(b, i, j, N, NN)].p *= f
                Lb[at(b, j, i, N, NN)].p *= f
                track(Lf[at(b, i, j, N, NN)].p, &lo, &hi)
            for c in range(nr):
                Rf[at(c, i, j, N, NN)].p *= f
                Rb[at(c, j, i, N, NN)].p *= f
                track(Rf[at(c, i, j, N, NN)].p, &lo, &hi)
            for q in range(g.npairs):  # (b, c) pairs are distinct
                b, c = g.pairs[4 * q], g.pairs[4 * q + 1]
                if g.pairs[4 * q + 2]:
                    IL[at(b * nr + c, j, i, N, NN)].p *= f
                    track(IL[at(b * nr + c, j, i, N, NN)].p, &lo, &hi)
                if g.pairs[4 * q + 3]:
                    IR[at(b * nr + c, i, j, N, NN)].p *= f
                    track(IR[at(b * nr + c, i, j, N, NN)].p, &lo, &hi)
    ch.log_scale -= shift * (N - 1)
    return in_range(lo, hi) and plain_rescale_weights(<Plain*> ch.W, N, exp(shift))


cdef inline V v_dot(V tag, const V* a, const V* b, int n, uint64_t p) noexcept nogil:
    """sum_x a[x] * b[x] over x < n: the inner loop of every chart item (the
    log and max-plus charts have their own, vectorized)."""
    cdef V acc
    cdef int x
    if V is Scaled:
        return scaled_dot(a, b, n)
    elif V is Plain:
        return plain_dot(a, b, n)
    elif V is MaxPlus:
        return maxplus_dot(a, b, n)
    else:
        acc = v_zero(tag)
        for x in range(n):
            acc = v_plus(acc, v_times(a[x], b[x], p), p)
        return acc


cdef inline void v_track(V x, double* lo, double* hi) noexcept nogil:
    """Widen (lo, hi) to a Plain entry's value (other charts track nothing)."""
    if V is Plain:
        track(x.p, lo, hi)


cdef inline void start_items(V tag, Chart* ch, int i) noexcept nogil:
    """The one-position items of position i: ``one`` in its start states
    (``ch.pl``, ``ch.pr``), ``zero`` elsewhere."""
    cdef int N = ch.N, b, c
    cdef size_t NN = <size_t> N * N
    cdef V* Lf = <V*> ch.Lf
    cdef V* Lb = <V*> ch.Lb
    cdef V* Rf = <V*> ch.Rf
    cdef V* Rb = <V*> ch.Rb
    cdef V zero = v_zero(tag), one = v_one(tag)
    for b in range(ch.nl):
        Lf[at(b, i, i, N, NN)] = Lb[at(b, i, i, N, NN)] = zero
    for c in range(ch.nr):
        Rf[at(c, i, i, N, NN)] = Rb[at(c, i, i, N, NN)] = zero
    Lf[at(ch.pl[i], i, i, N, NN)] = Lb[at(ch.pl[i], i, i, N, NN)] = one
    Rf[at(ch.pr[i], i, i, N, NN)] = Rb[at(ch.pr[i], i, i, N, NN)] = one


cdef bint fill_start(V tag, Chart* ch, const int* pl, const int* pr, const double* w) noexcept nogil:
    """The edge values ``W`` and the one-position items (:c:func:`start_items`);
    False when a Plain chart's weights leave its exact range."""
    cdef int N = ch.N, i
    cdef size_t NN = <size_t> N * N, x
    cdef V* W = <V*> ch.W
    ch.pl, ch.pr = pl, pr
    if V is Plain:
        ch.log_scale = plain_weights(w, W, N)
        if ch.log_scale != ch.log_scale:
            return False
    else:
        ch.log_scale = 0.0
        for x in range(NN):
            W[x] = v_edge(tag, w[x])
    for i in range(N):
        start_items(tag, ch, i)
    return True


cdef inline void fill_attachments(V tag, Chart* ch, const Rules* g, int i, int j, uint64_t p,
                                  double* lo, double* hi) noexcept nogil:
    """The attachment items over i..j: sum_k R[c][i][k] * L[b][k+1][j] for
    each pair (b, c), times the edge j -> i (IL) or i -> j (IR); zero where
    j cannot be in left state b or i in right state c."""
    cdef int N = ch.N, nl = ch.nl, nr = ch.nr, q, b, c
    cdef size_t NN = <size_t> N * N
    cdef const V* Rf = <const V*> ch.Rf
    cdef const V* Lb = <const V*> ch.Lb
    cdef const V* W = <const V*> ch.W
    cdef V* IL = <V*> ch.IL
    cdef V* IR = <V*> ch.IR
    cdef V acc
    cdef const unsigned char* left_ok = g.lreach + ch.pl[j] * nl
    cdef const unsigned char* right_ok = g.rreach + ch.pr[i] * nr
    for q in range(g.npairs):
        b = g.pairs[4 * q]
        c = g.pairs[4 * q + 1]
        if left_ok[b] and right_ok[c]:
            acc = v_dot(tag, Rf + at(c, i, i, N, NN), Lb + at(b, j, i + 1, N, NN), j - i, p)
        else:
            acc = v_zero(tag)
        if g.pairs[4 * q + 2]:
            IL[at(b * nr + c, j, i, N, NN)] = v_times(acc, W[j * N + i], p)
            v_track(IL[at(b * nr + c, j, i, N, NN)], lo, hi)
        if g.pairs[4 * q + 3]:
            IR[at(b * nr + c, i, j, N, NN)] = v_times(acc, W[i * N + j], p)
            v_track(IR[at(b * nr + c, i, j, N, NN)], lo, hi)


cdef inline void clear_items(V tag, V* by_start, int n, int i, int j, int N, size_t NN) noexcept nogil:
    """Set the (i, j) entries of the n left or right items to zero, before
    their combinations add into them."""
    cdef int s
    for s in range(n):
        by_start[at(s, i, j, N, NN)] = v_zero(tag)


cdef inline void copy_by_end(V* by_start, V* by_end, int n, int i, int j, int N, size_t NN,
                             double* lo, double* hi) noexcept nogil:
    """Copy the (i, j) entries of the n left or right items, once summed, to
    their by-end array, tracking their range."""
    cdef int s
    for s in range(n):
        by_end[at(s, j, i, N, NN)] = by_start[at(s, i, j, N, NN)]
        v_track(by_start[at(s, i, j, N, NN)], lo, hi)


cdef inline void fill_left(V tag, Chart* ch, const Rules* g, int i, int j, uint64_t p,
                           double* lo, double* hi) noexcept nogil:
    """The left items over i..j: L[b2][i][j] += sum_d L[bd][i][d] * IL[b][cd][j][d]
    (for the states b that j can be in)."""
    cdef int N = ch.N, nr = ch.nr, q, b2
    cdef size_t NN = <size_t> N * N
    cdef V* Lf = <V*> ch.Lf
    cdef const V* IL = <const V*> ch.IL
    cdef const unsigned char* ok = g.lreach + ch.pl[j] * ch.nl
    clear_items(tag, Lf, ch.nl, i, j, N, NN)
    for q in range(g.nlc):
        if not ok[g.lc[4 * q + 2]]:
            continue
        b2 = g.lc[4 * q]
        Lf[at(b2, i, j, N, NN)] = v_plus(Lf[at(b2, i, j, N, NN)], v_dot(
            tag, Lf + at(g.lc[4 * q + 1], i, i, N, NN),
            IL + at(g.lc[4 * q + 2] * nr + g.lc[4 * q + 3], j, i, N, NN), j - i, p), p)
    copy_by_end(Lf, <V*> ch.Lb, ch.nl, i, j, N, NN, lo, hi)


cdef inline void fill_right(V tag, Chart* ch, const Rules* g, int i, int j, uint64_t p,
                            double* lo, double* hi) noexcept nogil:
    """The right items over i..j: R[c2][i][j] += sum_d IR[bd][c][i][d] * R[cd][d][j]
    (for the states c that i can be in)."""
    cdef int N = ch.N, nr = ch.nr, q, c2
    cdef size_t NN = <size_t> N * N
    cdef V* Rf = <V*> ch.Rf
    cdef const V* IR = <const V*> ch.IR
    cdef const V* Rb = <const V*> ch.Rb
    cdef const unsigned char* ok = g.rreach + ch.pr[i] * nr
    clear_items(tag, Rf, nr, i, j, N, NN)
    for q in range(g.nrc):
        if not ok[g.rc[4 * q + 1]]:
            continue
        c2 = g.rc[4 * q]
        Rf[at(c2, i, j, N, NN)] = v_plus(Rf[at(c2, i, j, N, NN)], v_dot(
            tag, IR + at(g.rc[4 * q + 2] * nr + g.rc[4 * q + 1], i, i + 1, N, NN),
            Rb + at(g.rc[4 * q + 3], j, i + 1, N, NN), j - i, p), p)
    copy_by_end(Rf, <V*> ch.Rb, nr, i, j, N, NN, lo, hi)


cdef inline V root_value(V tag, Chart* ch, const Rules* g, int last, uint64_t p,
                         bint head_last=False) noexcept nogil:
    """The value of the input 0..last headed by position h (0, or ``last``
    with ``head_last``): sum over start rules (B, C) of L[B][0][h] *
    R[C][h][last]."""
    cdef int N = ch.N, q, h = last if head_last else 0
    cdef size_t NN = <size_t> N * N
    cdef const V* Lf = <const V*> ch.Lf
    cdef const V* Rf = <const V*> ch.Rf
    cdef V acc = v_zero(tag)
    for q in range(g.nroot):
        acc = v_plus(acc, v_times(Lf[at(g.root[2 * q], 0, h, N, NN)],
                                  Rf[at(g.root[2 * q + 1], h, last, N, NN)], p), p)
    return acc


cdef V fill(V tag, Chart* ch, const Rules* g, const int* pl, const int* pr,
            const double* w, uint64_t p) noexcept nogil:
    """Fill the chart bottom-up and return the value of the whole input.

    A Plain chart holds scaled values (``ch.log_scale``), rescales them when
    a width's entries drift toward the limits of the range where they are
    exact, and returns NaN as soon as they leave it."""
    cdef int N = ch.N, span, i, j
    cdef double lo = INFINITY, hi = 0.0
    cdef V nan = v_zero(tag)   # a Plain chart's value out of its exact range: NaN
    # Only entries that are read are initialized: the diagonal here, each
    # L/R item when its span is reached; attachment items are always written
    # before they are read.
    if V is Plain:
        nan.p = NAN
    if not fill_start(tag, ch, pl, pr, w):
        return nan
    for span in range(1, N):
        if V is Plain:
            lo, hi = INFINITY, 0.0
        for i in range(N - span):
            j = i + span
            fill_attachments(tag, ch, g, i, j, p, &lo, &hi)
            fill_left(tag, ch, g, i, j, p, &lo, &hi)
            fill_right(tag, ch, g, i, j, p, &lo, &hi)
        if V is Plain:
            if not in_range(lo, hi) or (drifted(lo, hi) and not plain_rescale(
                    ch, g, span, recentring(lo, hi, span))):
                return nan
    return root_value(tag, ch, g, ch.N - 1, p)


cdef void maxplus_layout(Chart* ch, const Rules* g, int N) noexcept nogil:
    """Lay out the max-plus column chart of N positions in ch.block
    (:c:func:`maxplus_bytes` long at least): as :c:func:`chart_layout`, with
    each array's virtual rows after its own, and of the attachment items
    only the rows that the blocks read."""
    cdef const int* v = g.nvirtual
    arrays_layout(ch, sizeof(double), N, g.nl, g.nr, g.nl + v[0], g.nl + v[1], g.nr + v[2],
                  g.nr + v[3], v[4], v[5])


cdef inline void virtual_entries(const Rules* g, int k, double* rows, int n_real, int i, int j,
                                 int N, size_t NN) noexcept nogil:
    """Entry (i, j) of the virtual rows of chart array k (0: L by start, 1: L
    by end, 2: R by start, 3: R by end), whose real rows ``rows`` holds:
    the maximum of their members' entries."""
    cdef int v, x
    cdef double m
    cdef const int* starts = g.vstarts[k]
    cdef const int* members = g.vmembers[k]
    for v in range(g.nvirtual[k]):
        m = -INFINITY
        for x in range(starts[v], starts[v + 1]):
            if rows[at(members[x], i, j, N, NN)] > m:
                m = rows[at(members[x], i, j, N, NN)]
        rows[at(n_real + v, i, j, N, NN)] = m


cdef inline void put(double* entry, double v, bint first) noexcept nogil:
    """Write v to an entry (the first value that goes there) or keep the larger."""
    if first or v > entry[0]:
        entry[0] = v


cdef inline void blocks_attach(Chart* ch, const Rules* g, int i, int j) noexcept nogil:
    """The attachment items over i..j that the blocks read: each attachment
    block's dot product of a row of R (by start, at i) and a row of L (by
    end, at j), plus the weight of the edge j -> i (IL) or i -> j (IR)."""
    cdef int N = ch.N, k
    cdef size_t NN = <size_t> N * N
    cdef const int* a
    cdef const double* Rf = <const double*> ch.Rf
    cdef const double* Lb = <const double*> ch.Lb
    cdef const double* W = <const double*> ch.W
    cdef double* IL = <double*> ch.IL
    cdef double* IR = <double*> ch.IR
    cdef const unsigned char* left_ok = g.att_left + ch.pl[j] * g.natt
    cdef const unsigned char* right_ok = g.att_right + ch.pr[i] * g.natt
    cdef double v = 0
    for k in range(g.natt):
        a = g.att + 6 * k
        if k and a[0] == g.att[6 * k - 6] and a[1] == g.att[6 * k - 5]:
            pass   # the block of the row before, which goes to other rows too
        elif left_ok[k] and right_ok[k]:
            v = max_dot(Rf + at(a[1], i, i, N, NN), Lb + at(a[0], j, i + 1, N, NN), j - i)
        else:
            v = -INFINITY
        if a[2] >= 0:
            put(IL + at(a[2], j, i, N, NN), v + W[j * N + i], a[4])
        if a[3] >= 0:
            put(IR + at(a[3], i, j, N, NN), v + W[i * N + j], a[5])


cdef inline void block_items(const Rules* g, double* fwd, double* back, int n, int virtual,
                             const int* rows, int count, const unsigned char* ok,
                             const double* first, const double* second, int s, int i, int j,
                             int N, size_t NN) noexcept nogil:
    """The left (or right) items over i..j, ``fwd`` (by start), from the
    blocks ``rows`` (``(target, A, B)``, ``count`` of them, ``ok[k]``: block
    k may apply): the best of the dot products of row A of ``first`` (at i)
    and row B of ``second`` (at j) over split points from s on; then their
    by-end copies ``back`` and the virtual rows of both (``virtual``, the
    index of fwd's in ``g.nvirtual``)."""
    cdef int k, target
    cdef double v
    for k in range(n):
        fwd[at(k, i, j, N, NN)] = -INFINITY
    for k in range(count):
        if not ok[k]:
            continue
        target = rows[3 * k]
        v = max_dot(first + at(rows[3 * k + 1], i, s, N, NN),
                    second + at(rows[3 * k + 2], j, s, N, NN), j - i)
        if v > fwd[at(target, i, j, N, NN)]:
            fwd[at(target, i, j, N, NN)] = v
    for k in range(n):
        back[at(k, j, i, N, NN)] = fwd[at(k, i, j, N, NN)]
    virtual_entries(g, virtual, fwd, n, i, j, N, NN)
    virtual_entries(g, virtual + 1, back, n, j, i, N, NN)


cdef double maxplus_columns(Chart* ch, const Rules* g, int N, int kept, bint head_last) noexcept nogil:
    """The max-plus value of positions 0..N-1 in a chart laid out by
    :c:func:`maxplus_layout` for ch.N >= N positions, filled column by
    column (the spans ending at j, for j from ``kept`` to N - 1, each column
    from its shortest span up): every item of a span lies inside it, so the
    spans that end before ``kept`` are left as an earlier fill made them,
    which must have had the same first ``kept`` positions (start states and
    edge weights).  The caller sets ch.pl, ch.pr and the weights ch.W
    (row-major, stride ch.N) of every pair that has a position from ``kept``
    on.  The whole input is headed by position 0, or with ``head_last`` by
    position N - 1 (a mirrored grammar over a reversed string,
    :attr:`semiparse.grammar.Grammar.mirrored`).  The combinations are taken
    in blocks (:mod:`semiparse.chart.grouping`)."""
    cdef MaxPlus tag
    cdef int i, j, S = ch.N
    cdef size_t SS = <size_t> S * S
    cdef double* Lf = <double*> ch.Lf
    cdef double* Lb = <double*> ch.Lb
    cdef double* Rf = <double*> ch.Rf
    cdef double* Rb = <double*> ch.Rb
    cdef double* IL = <double*> ch.IL
    cdef double* IR = <double*> ch.IR
    for j in range(kept, N):
        start_items(tag, ch, j)
        virtual_entries(g, 0, Lf, ch.nl, j, j, S, SS)
        virtual_entries(g, 1, Lb, ch.nl, j, j, S, SS)
        virtual_entries(g, 2, Rf, ch.nr, j, j, S, SS)
        virtual_entries(g, 3, Rb, ch.nr, j, j, S, SS)
        for i in range(j - 1, -1, -1):
            blocks_attach(ch, g, i, j)
            # L[B2][i][j] from L[Bd][i][d] + IL[B, Cd][j][d], d = i .. j - 1
            block_items(g, Lf, Lb, ch.nl, 0, g.lb, g.nlb, g.lb_ok + ch.pl[j] * g.nlb, Lf, IL,
                        i, i, j, S, SS)
            # R[C2][i][j] from IR[Bd, C][i][d] + R[Cd][d][j], d = i + 1 .. j (R by end)
            block_items(g, Rf, Rb, ch.nr, 2, g.rb, g.nrb, g.rb_ok + ch.pr[i] * g.nrb, IR, Rb,
                        i + 1, i, j, S, SS)
    return root_value(tag, ch, g, N - 1, 0, head_last).s


# --- backtrace -----------------------------------------------------------------
# Over a max-plus chart (first best derivation), or a chart of best scores with
# their counts (a best derivation sampled in proportion to counts): counts as
# doubles while the total count fits one, else as logs.  In a log chart each
# choice weighs its alternatives relative to a reference log count (that of
# the item being expanded), so weights stay in [0, 1] however many
# derivations there are.  In a max-plus chart every finite entry stands for
# at least one derivation, so each alternative weighs 1.

ctypedef fused BV:
    MaxPlus
    MaxCountF
    MaxLogCount

# Mass drawn in a choice, as a share of its total: keeps the cumulative walk
# of `pick` inside the total despite rounding (a bias below 1e-12).
cdef double SHRINK = 1.0 - 1e-12


cdef inline double weight(BV x, BV y, double ref) noexcept nogil:
    """Number of derivations of the product x * y (relative to exp(ref) in a
    log chart)."""
    if BV is MaxPlus:
        return 1.0 if x.s > -INFINITY and y.s > -INFINITY else 0.0
    elif BV is MaxCountF:
        return x.c * y.c
    else:
        if x.c == -INFINITY or y.c == -INFINITY:
            return 0.0
        return exp((x.c + y.c) - ref)


cdef inline double log_count(BV x) noexcept nogil:
    """The reference for `weight` (only a log chart needs one)."""
    if BV is MaxLogCount:
        return x.c
    else:
        return 0.0

cdef enum:
    ITEM_L, ITEM_R, ITEM_IL, ITEM_IR


cdef inline bint pick(double s, double c, double target, double* r, bint sample) noexcept nogil:
    """Decide whether this decomposition (score s, count c) is the one taken.

    First mode: the first that reaches the target score.  Sample mode: walk
    the cumulative count among those reaching it; ``r`` holds the remaining
    mass (u times their total count).
    """
    if s != target or c <= 0:
        return False
    if not sample:
        return True
    if r[0] < c:
        return True
    r[0] -= c
    return False


cdef double mass(const BV* a, const BV* b, int n, double extra,
                 double target, double ref) noexcept nogil:
    """Total weight of the n products a[x] * b[x] (* extra score) reaching target."""
    cdef int x
    cdef double t = 0
    for x in range(n):
        if (a[x].s + b[x].s) + extra == target:
            t += weight(a[x], b[x], ref)
    return t


cdef inline void push(int* stack, int* top, int kind, int a, int b, int i, int j) noexcept nogil:
    cdef int* f = stack + 5 * top[0]
    f[0], f[1], f[2], f[3], f[4] = kind, a, b, i, j
    top[0] += 1


cdef inline int split_point(const BV* row1, const BV* row2, int lo, int hi, double extra,
                            double target, double ref, double* r, bint sample) noexcept nogil:
    """The first x in lo..hi-1 whose term row1[x] * row2[x] (* extra score)
    `pick` takes; -1 if none."""
    cdef int x
    for x in range(lo, hi):
        if pick((row1[x].s + row2[x].s) + extra, weight(row1[x], row2[x], ref), target, r, sample):
            return x
    return -1


cdef bint trace_root(BV tag, Chart* ch, const Rules* g, double u, bint sample, int* stack,
                     int* top) noexcept nogil:
    """Push the right item of a best start rule: the best of L[B][0][0] *
    R[C][0][N-1] over start rules (B, C), weighed relative to the largest
    log count among them; False if there is none."""
    cdef int N = ch.N, q
    cdef size_t NN = <size_t> N * N
    cdef const BV* Lf = <const BV*> ch.Lf
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef double best_s = -INFINITY, ref = -INFINITY, best_c = 0, r
    cdef BV x, y
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if x.s > -INFINITY and y.s > -INFINITY and x.s + y.s >= best_s:
            if x.s + y.s > best_s:
                best_s, ref = x.s + y.s, -INFINITY
            if log_count(x) + log_count(y) > ref:
                ref = log_count(x) + log_count(y)
    if best_s == -INFINITY:
        return False
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if x.s + y.s == best_s:
            best_c += weight(x, y, ref)
    r = u * best_c * SHRINK
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if pick(x.s + y.s, weight(x, y, ref), best_s, &r, sample):
            push(stack, top, ITEM_R, g.root[2 * q + 1], 0, 0, N - 1)
            break
    return True


cdef bint trace_attachment(BV tag, Chart* ch, int kind, int a, int b, int i, int j, double u,
                           bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the attachment item (ITEM_IL or ITEM_IR) of
    the pair (a, b) over i..j: sum_k R[b][i][k] * L[a][k+1][j], times the
    (fixed) edge; False if no term reaches its value."""
    cdef int N = ch.N, k
    cdef size_t NN = <size_t> N * N
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef const BV* Lb = <const BV*> ch.Lb
    cdef const BV* W = <const BV*> ch.W
    cdef const BV* row1 = Rf + at(b, i, 0, N, NN)
    cdef const BV* row2 = Lb + at(a, j, 1, N, NN)
    cdef BV x
    cdef double extra, target, ref, r = 0
    if kind == ITEM_IL:
        x = (<const BV*> ch.IL)[at(a * ch.nr + b, j, i, N, NN)]
        extra = W[j * N + i].s
    else:
        x = (<const BV*> ch.IR)[at(a * ch.nr + b, i, j, N, NN)]
        extra = W[i * N + j].s
    target, ref = x.s, log_count(x)
    if sample:
        r = u * mass(row1 + i, row2 + i, j - i, extra, target, ref) * SHRINK
    k = split_point(row1, row2, i, j, extra, target, ref, &r, sample)
    if k < 0:
        return False
    push(stack, top, ITEM_R, b, 0, i, k)
    push(stack, top, ITEM_L, a, 0, k + 1, j)
    return True


cdef bint trace_left(BV tag, Chart* ch, const Rules* g, int a, int i, int j, double u,
                     bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the left item a over i..j:
    sum_d L[bd][i][d] * IL[b][cd][j][d] over its combinations; False if no
    term reaches its value."""
    cdef int N = ch.N, nr = ch.nr, q, d, bd, b, cd
    cdef size_t NN = <size_t> N * N
    cdef const BV* Lf = <const BV*> ch.Lf
    cdef const BV* IL = <const BV*> ch.IL
    cdef BV x = Lf[at(a, i, j, N, NN)]
    cdef double target = x.s, ref = log_count(x), r = 0
    if sample:
        for q in range(g.nlc):
            if g.lc[4 * q] == a:
                r += mass(Lf + at(g.lc[4 * q + 1], i, i, N, NN),
                          IL + at(g.lc[4 * q + 2] * nr + g.lc[4 * q + 3], j, i, N, NN),
                          j - i, 0, target, ref)
        r *= u * SHRINK
    for q in range(g.nlc):
        if g.lc[4 * q] != a:
            continue
        bd, b, cd = g.lc[4 * q + 1], g.lc[4 * q + 2], g.lc[4 * q + 3]
        d = split_point(Lf + at(bd, i, 0, N, NN), IL + at(b * nr + cd, j, 0, N, NN), i, j, 0,
                        target, ref, &r, sample)
        if d >= 0:
            push(stack, top, ITEM_L, bd, 0, i, d)
            push(stack, top, ITEM_IL, b, cd, d, j)
            return True
    return False


cdef bint trace_right(BV tag, Chart* ch, const Rules* g, int a, int i, int j, double u,
                      bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the right item a over i..j:
    sum_d IR[bd][c][i][d] * R[cd][d][j] over its combinations; False if no
    term reaches its value."""
    cdef int N = ch.N, nr = ch.nr, q, d, bd, b, cd
    cdef size_t NN = <size_t> N * N
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef const BV* Rb = <const BV*> ch.Rb
    cdef const BV* IR = <const BV*> ch.IR
    cdef BV x = Rf[at(a, i, j, N, NN)]
    cdef double target = x.s, ref = log_count(x), r = 0
    if sample:
        for q in range(g.nrc):
            if g.rc[4 * q] == a:
                r += mass(IR + at(g.rc[4 * q + 2] * nr + g.rc[4 * q + 1], i, i, N, NN) + 1,
                          Rb + at(g.rc[4 * q + 3], j, i + 1, N, NN), j - i, 0, target, ref)
        r *= u * SHRINK
    for q in range(g.nrc):
        if g.rc[4 * q] != a:
            continue
        b, bd, cd = g.rc[4 * q + 1], g.rc[4 * q + 2], g.rc[4 * q + 3]
        d = split_point(IR + at(bd * nr + b, i, 0, N, NN), Rb + at(cd, j, 0, N, NN), i + 1, j + 1,
                        0, target, ref, &r, sample)
        if d >= 0:
            push(stack, top, ITEM_IR, bd, b, i, d)
            push(stack, top, ITEM_R, cd, 0, d, j)
            return True
    return False


cdef int backtrace(BV tag, Chart* ch, const Rules* g, int* heads, const double* u,
                   bint sample) noexcept nogil:
    """Write a best tree (first or sampled) into heads; -1 if there is none.
    Each item taken from the stack pushes the two it splits into; a sampled
    backtrace draws one uniform per choice."""
    cdef int cap = trace_cap(ch.N)
    cdef int* stack = <int*> malloc(5 * cap * sizeof(int))
    cdef int top = 0, n_u = 1, kind, a, b, i, j
    cdef bint found = True
    if stack == NULL:
        return -1
    if not trace_root(tag, ch, g, u[0], sample, stack, &top):
        free(stack)
        return -1
    heads[0] = -1
    while top > 0:
        top -= 1
        kind, a, b, i, j = stack[5 * top], stack[5 * top + 1], stack[5 * top + 2], \
            stack[5 * top + 3], stack[5 * top + 4]
        if i == j and (kind == ITEM_L or kind == ITEM_R):
            continue
        if top + 2 >= cap:
            break
        if kind == ITEM_IL:
            heads[i] = j
        elif kind == ITEM_IR:
            heads[j] = i
        if kind == ITEM_IL or kind == ITEM_IR:
            found = trace_attachment(tag, ch, kind, a, b, i, j, u[n_u], sample, stack, &top)
        elif kind == ITEM_L:
            found = trace_left(tag, ch, g, a, i, j, u[n_u], sample, stack, &top)
        else:
            found = trace_right(tag, ch, g, a, i, j, u[n_u], sample, stack, &top)
        if sample:
            n_u += 1
        if not found:
            break
    free(stack)
    return 0 if top == 0 and found else -1


# --- outside pass -----------------------------------------------------------------
# Over a filled max-plus or log (plain or scaled) chart, from the largest spans
# down, each item hands its adjoint to the two factors of every term of its sum
# (`share` and `back_rows`, in semiparse/chart/_adjoint.pxd).
# In a log chart the adjoint is the item's posterior (the share of the total
# through it): a term t of an item y receives post(y) * t / y.  In a max-plus
# chart it is the item's max-marginal (the best score of a tree through it):
# the term receives mm(y) - y + t.  Both are the outside pass of the semiring
# with the inside value folded in, so every adjoint is a probability or a
# tree score and never overflows.  Left/right items get adjoints from two
# directions (as a row by start and as a row by end), kept in the by-start
# and by-end arrays and combined when the item's own cell is reached.

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


# --- Python entry points ----------------------------------------------------

def reachable(combos, int to, int frm, int n):
    """``out[s, t]``: a head that starts in state s can reach state t by the
    combinations ``combos`` (each row takes the head from column ``frm`` to
    column ``to``): the reflexive, transitive closure, by a search from each
    state (time n times the steps, where squaring the matrix took n**3 per
    round: minutes for a grammar of a thousand states)."""
    cdef Py_ssize_t s, x, y
    steps = [set() for _ in range(n)]
    for row in np.asarray(combos).tolist():
        if 0 <= row[frm] < n and 0 <= row[to] < n:
            steps[row[frm]].add(row[to])
    succ = [sorted(t) for t in steps]
    out = np.zeros((n, n), dtype=np.uint8)
    cdef unsigned char[:, ::1] o = out
    for s in range(n):
        o[s, s] = 1
        todo = [s]
        while todo:
            x = todo.pop()
            for y in succ[x]:
                if not o[s, y]:
                    o[s, y] = 1
                    todo.append(y)
    return out


cdef class CompiledRules:
    """A grammar's integer tables held as C pointers, built once per grammar."""

    def __cinit__(self, tables):
        cdef const int[:, ::1] lc = tables.left_combos
        cdef const int[:, ::1] rc = tables.right_combos
        cdef const int[:, ::1] pairs = tables.pairs
        cdef const int[:, ::1] root = tables.root
        self.n_left, self.n_right = tables.n_left, tables.n_right
        left_reach = reachable(tables.left_combos, 0, 2, self.n_left)
        right_reach = reachable(tables.right_combos, 0, 1, self.n_right)
        cdef const unsigned char[:, ::1] lreach = left_reach
        cdef const unsigned char[:, ::1] rreach = right_reach
        self.arrays = (tables.left_combos, tables.right_combos, tables.pairs, tables.root,
                       left_reach, right_reach)
        # the kernels index the chart with these states unchecked
        L, R = self.n_left, self.n_right
        for name, table, limits in (("left_combos", lc, (L, L, L, R)),
                                    ("right_combos", rc, (R, R, L, R)),
                                    ("pairs", pairs, (L, R, 2, 2)), ("root", root, (L, R))):
            if table.shape[0] and (table.shape[1] != len(limits) or not all(
                    0 <= x < limit for row in np.asarray(table).tolist()
                    for x, limit in zip(row, limits))):
                raise ValueError(f"grammar tables: {name} must have {len(limits)} columns of "
                                 f"states below {limits} (left states {L}, right states {R})")
        self.g.nlc, self.g.nrc = lc.shape[0], rc.shape[0]
        self.g.npairs, self.g.nroot = pairs.shape[0], root.shape[0]
        self.g.lc = &lc[0, 0] if self.g.nlc else NULL
        self.g.rc = &rc[0, 0] if self.g.nrc else NULL
        self.g.pairs = &pairs[0, 0] if self.g.npairs else NULL
        self.g.root = &root[0, 0] if self.g.nroot else NULL
        self.g.lreach = &lreach[0, 0] if self.n_left else NULL
        self.g.rreach = &rreach[0, 0] if self.n_right else NULL
        self.g.nl, self.g.nr = L, R
        self.tables, self.grouped = tables, False

    def group(self):
        """Build the blocks of the max-plus column chart (:c:func:`maxplus_columns`,
        :func:`semiparse.chart.grouping.grouped_tables`) if not yet built:
        only the grammar oracle needs them, and a large generated grammar's
        tables take a while to group."""
        if not self.grouped:
            self.use_blocks(grouped_tables(self.tables, self.arrays[4], self.arrays[5]))
            self.grouped = True

    cdef use_blocks(self, grouped):
        """Point the max-plus column chart's fields at ``grouped``."""
        cdef const int[:, ::1] lb = grouped["left"]
        cdef const int[:, ::1] rb = grouped["right"]
        cdef const int[:, ::1] att = grouped["attach"]
        cdef const unsigned char[:, ::1] lb_ok = grouped["left_ok"]
        cdef const unsigned char[:, ::1] rb_ok = grouped["right_ok"]
        cdef const unsigned char[:, ::1] att_left = grouped["attach_left"]
        cdef const unsigned char[:, ::1] att_right = grouped["attach_right"]
        cdef const int[::1] starts, members
        cdef int k
        self.arrays += (grouped,)
        self.g.nlb, self.g.nrb, self.g.natt = lb.shape[0], rb.shape[0], att.shape[0]
        self.g.lb = &lb[0, 0] if self.g.nlb else NULL
        self.g.rb = &rb[0, 0] if self.g.nrb else NULL
        self.g.att = &att[0, 0] if self.g.natt else NULL
        self.g.lb_ok = &lb_ok[0, 0] if lb_ok.shape[0] and self.g.nlb else NULL
        self.g.rb_ok = &rb_ok[0, 0] if rb_ok.shape[0] and self.g.nrb else NULL
        self.g.att_left = &att_left[0, 0] if att_left.shape[0] and self.g.natt else NULL
        self.g.att_right = &att_right[0, 0] if att_right.shape[0] and self.g.natt else NULL
        for k in range(4):
            starts, members = grouped["virtual"][k]
            self.g.nvirtual[k] = starts.shape[0] - 1
            self.g.vstarts[k] = &starts[0]
            self.g.vmembers[k] = &members[0] if members.shape[0] else NULL
        self.g.nvirtual[4], self.g.nvirtual[5] = grouped["attach_rows"]

    def first_order(self):
        """Whether these are the rules of first-order projective trees (the
        grammar ``projective``): one left and one right state, and the
        single combination of each kind, so that the chart is Eisner's."""
        g = self.g
        return (self.n_left == 1 and self.n_right == 1 and g.nlc == 1 and g.nrc == 1
                and g.npairs == 1 and g.nroot == 1
                and [g.lc[x] for x in range(4)] == [0, 0, 0, 0]
                and [g.rc[x] for x in range(4)] == [0, 0, 0, 0]
                and [g.pairs[x] for x in range(4)] == [0, 0, 1, 1]
                and [g.root[x] for x in range(2)] == [0, 0])


cdef int check_input(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                     const double[:, ::1] w) except -1:
    """ValueError unless ``pl``, ``pr`` (the left and right start states of
    the positions) and ``w`` describe an input of N >= 1 positions for these
    rules: the kernels index the chart with them unchecked."""
    cdef Py_ssize_t N
    if pl is None or pr is None or w is None:
        raise ValueError("kernel input: start states and weights must be arrays, got None")
    N = w.shape[0]
    if N < 1 or w.shape[1] != N or pl.shape[0] != N or pr.shape[0] != N:
        raise ValueError(f"kernel input: weights of shape ({w.shape[0]}, {w.shape[1]}) and "
                         f"{pl.shape[0]} and {pr.shape[0]} start states: expected (N, N) "
                         f"weights and N start states of each side, N >= 1")
    return check_states(rules, pl, pr, N)


cdef int check_states(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                      Py_ssize_t N) except -1:
    """ValueError unless the start states of the N positions are states of these rules."""
    cdef Py_ssize_t i
    for i in range(N):
        if not (0 <= pl[i] < rules.n_left and 0 <= pr[i] < rules.n_right):
            raise ValueError(f"kernel input: position {i} starts in states ({pl[i]}, {pr[i]}): "
                             f"expected left states below {rules.n_left}, right states below "
                             f"{rules.n_right}")
    return 0


cdef uint64_t check_prime(str kernel, object p) except 0:
    """The modulus of a counting kernel modulo p: 2 <= p < 2**32, so that a
    product of two residues fits in 64 bits."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 2 <= p < 2 ** 32:
        raise ValueError(f"kernel {kernel!r} counts modulo p: expected an int 2 <= p < 2**32, "
                         f"got {p!r}")
    return p


cdef V run(V tag, CompiledRules rules, const int[::1] pl, const int[::1] pr,
           const double[:, ::1] w, uint64_t p) except *:
    cdef int N = w.shape[0]
    cdef Chart ch
    cdef V value
    if chart_alloc(&ch, sizeof(V), N, rules.n_left, rules.n_right) < 0:
        chart_free(&ch)
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    with nogil:
        value = fill(tag, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], p)
    chart_free(&ch)
    return value


cdef enum:
    KERNEL_MAXPLUS
    KERNEL_LOG        # plain probabilities, scaled numbers where they are not exact
    KERNEL_LOGPLAIN   # plain probabilities only (NaN where they are not exact)
    KERNEL_LOGSCALED  # scaled numbers only


cdef double log_inside(int kernel, Chart* ch, const Rules* g, const int* pl, const int* pr,
                       const double* w, bint* plain, Plain* pv, Scaled* sl) noexcept nogil:
    """log Z from a chart of plain probabilities (value in ``pv``) or of
    scaled numbers (value in ``sl``), as the log kernel ``kernel`` says;
    ``ch`` (room for Scaled values) keeps the chart that gave the value, and
    ``plain[0]`` says which it is."""
    plain[0] = kernel != KERNEL_LOGSCALED
    if plain[0]:
        chart_layout(ch, sizeof(Plain), ch.N, ch.nl, ch.nr)
        pv[0] = fill(pv[0], ch, g, pl, pr, w, 0)
        if pv.p == pv.p:
            return log(pv.p) + ch.log_scale if pv.p > 0.0 else -INFINITY
        if kernel == KERNEL_LOGPLAIN:
            return NAN
        plain[0] = False
    chart_layout(ch, sizeof(Scaled), ch.N, ch.nl, ch.nr)
    sl[0] = fill(sl[0], ch, g, pl, pr, w, 0)
    return to_log(sl[0])


cdef double run_log(int kernel, CompiledRules rules, const int[::1] pl, const int[::1] pr,
                    const double[:, ::1] w) except *:
    cdef int N = w.shape[0]
    cdef Chart ch
    cdef double value
    cdef Plain pv
    cdef Scaled sl
    cdef bint plain
    if chart_alloc(&ch, sizeof(Scaled), N, rules.n_left, rules.n_right) < 0:
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    with nogil:
        value = log_inside(kernel, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], &plain, &pv, &sl)
    chart_free(&ch)
    return value


def inside(str kernel, CompiledRules rules not None, const int[::1] pl not None,
           const int[::1] pr not None, const double[:, ::1] w not None, p=0):
    """Value of the whole input in a numeric kernel.

    kernel: ``maxplus``, ``log``, ``countf`` (double), ``countmod`` (mod p),
    ``maxcountf`` (score, double count), ``maxcountmod`` (score, count mod p).
    For tests and benchmarks, ``logplain`` and ``logscaled`` are the two paths
    of ``log`` alone: plain probabilities (NaN where they are not exact) and
    scaled numbers.
    """
    cdef MaxPlus mp
    cdef CountF cf
    cdef CountMod cm
    cdef MaxCountF mcf
    cdef MaxCountMod mcm
    cdef uint64_t prime = 0
    check_input(rules, pl, pr, w)
    if kernel.endswith("mod"):
        prime = check_prime(kernel, p)
    if kernel == "maxplus":
        return run(mp, rules, pl, pr, w, 0).s
    if kernel.startswith("log"):
        return run_log(check_kernel(kernel), rules, pl, pr, w)
    if kernel == "countf":
        return run(cf, rules, pl, pr, w, 0).c
    if kernel == "countmod":
        return run(cm, rules, pl, pr, w, prime).c
    if kernel == "maxcountf":
        mcf = run(mcf, rules, pl, pr, w, 0)
        return (mcf.s, mcf.c)
    if kernel == "maxcountmod":
        mcm = run(mcm, rules, pl, pr, w, prime)
        return (mcm.s, mcm.c)
    raise ValueError(f"unknown kernel {kernel!r}")


def maxplus_by_columns(CompiledRules rules not None, list inputs not None, bint head_last=False):
    """The max-plus values of ``inputs`` (``(pl, pr, w)`` each, as for
    :func:`inside`) filled one after another in one column chart
    (:c:func:`maxplus_columns`, the grammar oracle's), each keeping the
    columns over the prefix it shares with the input before (the same start
    states and weights there); with ``head_last`` the inputs are headed by
    their last position.  The column chart against :func:`inside`, for
    tests."""
    cdef Py_ssize_t S = 1, N, kept, prev = 0, a, b
    cdef const int[::1] pl, pr
    cdef const double[:, ::1] w
    cdef Chart ch
    cdef double* W
    cdef int* states
    rules.group()
    for pl, pr, w in inputs:
        check_input(rules, pl, pr, w)
        S = max(S, w.shape[0])
    ch.block = malloc(maxplus_bytes(&rules.g, S) + 2 * S * sizeof(int))
    if ch.block is NULL:
        raise MemoryError()
    maxplus_layout(&ch, &rules.g, S)
    states = <int*> (<char*> ch.block + maxplus_bytes(&rules.g, S))
    ch.pl, ch.pr = states, states + S
    W = <double*> ch.W
    values = []
    try:
        for pl, pr, w in inputs:
            N, kept = w.shape[0], 0
            while kept < min(N, prev) and states[kept] == pl[kept] and states[S + kept] == pr[kept]:
                b = 0
                while b <= kept and W[kept * S + b] == w[kept, b] and W[b * S + kept] == w[b, kept]:
                    b += 1
                if b <= kept:
                    break
                kept += 1
            for a in range(N):
                states[a], states[S + a] = pl[a], pr[a]
                for b in range(N):
                    W[a * S + b] = w[a, b]
            values.append(maxplus_columns(&ch, &rules.g, N, kept, head_last))
            prev = N
    finally:
        free(ch.block)
    return values


def maxplus_gathered(CompiledRules rules not None, const int[::1] term_left not None,
                     const int[::1] term_right not None, const double[:, ::1] delta not None,
                     list nodes not None, list terms not None, list fixed not None,
                     list cut not None, const unsigned char[:, ::1] forbid=None):
    """The max-plus value of a string whose positions are the sentence nodes
    ``nodes`` (-1: a virtual node, the last row and column of ``delta``) with
    terminal ids ``terms``: the weights are ``w[a, b] = delta[nodes[a],
    nodes[b]]``, then for each ``(h, d)`` of ``fixed`` (string positions)
    ``d`` takes no head but ``h``, at weight 0, and for each ``(a, side)`` of
    ``cut`` position ``a`` takes no dependent on that side (0: left, 1:
    right); last, each edge ``(a, b)`` with ``forbid[a, b]`` nonzero (an
    N x N uint8 matrix, e.g. a boolean one's ``view(np.uint8)``) is -inf.
    The input of the grammar oracle, built in C instead of by numpy
    indexing, and the chart filled without the GIL."""
    cdef Py_ssize_t N = len(nodes), D = delta.shape[0], a, b, x
    cdef int t
    cdef int[::1] pl, pr
    cdef double[:, ::1] w
    cdef Py_ssize_t[::1] at_node
    cdef MaxPlus mp
    if N < 1 or len(terms) != N or D < 1 or delta.shape[1] != D:
        raise ValueError(f"maxplus_gathered: {N} nodes, {len(terms)} terminals and a "
                         f"({delta.shape[0]}, {delta.shape[1]}) delta: expected N >= 1 of each "
                         f"and a square delta")
    pl, pr = np.empty(N, dtype=np.intc), np.empty(N, dtype=np.intc)
    at_node = np.empty(N, dtype=np.intp)
    for a in range(N):
        t, x = terms[a], nodes[a]
        if not (0 <= t < term_left.shape[0] and t < term_right.shape[0]):
            raise ValueError(f"maxplus_gathered: terminal id {t} out of range")
        if not -1 <= x < D - 1:
            raise ValueError(f"maxplus_gathered: node {x} out of range -1..{D - 2}")
        pl[a], pr[a], at_node[a] = term_left[t], term_right[t], x if x >= 0 else D - 1
    check_states(rules, pl, pr, N)
    w = np.empty((N, N))
    for a in range(N):
        for b in range(N):
            w[a, b] = delta[at_node[a], at_node[b]]
    for h, d in fixed:
        if not (0 <= h < N and 0 <= d < N):
            raise ValueError(f"maxplus_gathered: fixed edge ({h}, {d}) out of range")
        for a in range(N):
            w[a, d] = -INFINITY
        w[h, d] = 0.0
    for a, side in cut:
        if not 0 <= a < N:
            raise ValueError(f"maxplus_gathered: position {a} out of range")
        for b in (range(a) if side == 0 else range(a + 1, N)):
            w[a, b] = -INFINITY
    if forbid is not None:
        if forbid.shape[0] != N or forbid.shape[1] != N:
            raise ValueError(f"maxplus_gathered: a ({forbid.shape[0]}, {forbid.shape[1]}) forbid "
                             f"mask for {N} nodes")
        for a in range(N):
            for b in range(N):
                if forbid[a, b]:
                    w[a, b] = -INFINITY
    return run(mp, rules, pl, pr, w, 0).s


def best_tree(CompiledRules rules not None, const int[::1] pl not None,
              const int[::1] pr not None, const double[:, ::1] w not None,
              const double[::1] uniforms=None, bint log_counts=False):
    """``(score, heads)`` of a best tree; ``heads`` is None when there is none.

    Without ``uniforms`` the first best derivation in chart order is returned
    (the one the generic Viterbi semiring keeps), from a max-plus chart; with
    ``uniforms`` (at least :func:`uniforms_needed` numbers in [0, 1)) a best tree is
    drawn from a chart of best scores and their counts with probability
    proportional to derivation counts, i.e. uniformly among best derivations:
    counts are doubles while the total fits one, else logs (any length;
    ``log_counts`` takes logs at once, so tests can compare both ways).
    """
    cdef int N = w.shape[0], status
    cdef Chart ch
    cdef MaxPlus mp, mp_value
    cdef MaxCountF mc, mc_value
    cdef MaxLogCount ml
    cdef double score
    cdef int[::1] heads = np.full(N, -1, dtype=np.intc)
    cdef bint sample = uniforms is not None
    cdef const double* u
    cdef double[::1] zeros
    check_input(rules, pl, pr, w)
    if not sample:
        zeros = np.zeros(trace_cap(N))
        u = &zeros[0]
    else:
        if uniforms.shape[0] < trace_cap(N) or not all(0.0 <= x < 1.0 for x in uniforms):
            raise ValueError(f"best_tree needs {trace_cap(N)} uniforms (8 * N + 8) in [0, 1)")
        u = &uniforms[0]
    if chart_alloc(&ch, sizeof(MaxCountF) if sample else sizeof(MaxPlus),  # MaxLogCount: same size
                   N, rules.n_left, rules.n_right) < 0:
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    with nogil:
        if sample:
            mc_value = fill(mc, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
            score = mc_value.s
            if score == -INFINITY:
                status = -1
            elif mc_value.c < INFINITY and not log_counts:
                status = backtrace(mc, &ch, &rules.g, &heads[0], u, True)
            else:  # too many best trees for a double: count again in logs
                fill(ml, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
                status = backtrace(ml, &ch, &rules.g, &heads[0], u, True)
        else:
            mp_value = fill(mp, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
            score = mp_value.s
            status = backtrace(mp, &ch, &rules.g, &heads[0], u, False) if score > -INFINITY else -1
    chart_free(&ch)
    if status < 0:
        return score, None
    return score, np.asarray(heads)


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


def largest_score(const double[:, ::1] w not None):
    """The largest absolute value among the scores above -inf (0.0 if there
    is none), in one pass without the GIL."""
    cdef Py_ssize_t i, m = w.shape[0] * w.shape[1]
    cdef const double* p = &w[0, 0] if m else NULL
    cdef double x, big = 0.0
    with nogil:
        for i in range(m):
            x = p[i]
            if x > -INFINITY and fabs(x) > big:
                big = fabs(x)
    return big


cdef double shift_core(const double* w, Py_ssize_t stride, Py_ssize_t N, double* out,
                       double* shifts, Py_ssize_t* bad) noexcept nogil:
    """The work of :func:`shift_columns` on the N x N scores at ``w`` (rows
    ``stride`` apart) into the contiguous ``out`` and ``shifts``; returns the
    total and sets ``bad[0], bad[1]`` (else -1) to the first overflow."""
    cdef Py_ssize_t h, d
    cdef double x, t, total = 0.0, carry = 0.0
    bad[0] = bad[1] = -1
    for d in range(N):
        shifts[d] = -INFINITY
    for h in range(N):
        for d in range(1, N):
            if h != d and w[h * stride + d] > shifts[d]:
                shifts[d] = w[h * stride + d]
    for d in range(N):
        if shifts[d] == -INFINITY:
            shifts[d] = 0.0
        if d > 0:  # Neumaier's compensated sum
            t = total + shifts[d]
            if fabs(total) >= fabs(shifts[d]):
                carry += (total - t) + shifts[d]
            else:
                carry += (shifts[d] - t) + total
            total = t
    total = total + carry
    if total - total != 0.0:  # a partial sum or the total left the range
        total = INFINITY
    for h in range(N):
        out[h * N] = -INFINITY
        for d in range(1, N):
            x = w[h * stride + d]
            if h == d or x == -INFINITY:
                out[h * N + d] = -INFINITY
            else:
                out[h * N + d] = x - shifts[d]
                if out[h * N + d] == -INFINITY and bad[0] < 0:
                    bad[0], bad[1] = h, d
    return total


def shift_columns(const double[:, ::1] w not None):
    """``(shifted, shifts, total, overflow)`` for checked N x N scores (finite
    or -inf): ``shifts[d]`` the largest finite score of an edge into ``d``
    from another position (0.0 if none), ``shifted = w - shifts[d]`` in each
    column ``d``, and -inf for the entries no derivation reads (edges into
    the root, position 0, and self-loops).  Every derivation attaches each
    position but the root exactly once, so the shift lowers every tree's
    score by the same ``total``, the sum of ``shifts[1:]`` (compensated;
    inf when a partial sum leaves the range of a double), and leaves the
    distribution over trees, and which trees are best, unchanged.
    ``overflow``: ``(h, d)`` of the first finite score whose difference from
    its column's largest overflows to -inf, else None.  Without the GIL."""
    cdef Py_ssize_t N = w.shape[0]
    cdef Py_ssize_t bad[2]
    cdef double total
    if w.shape[1] != N:
        raise ValueError(f"shift_columns: expected square scores, got shape "
                         f"({w.shape[0]}, {w.shape[1]})")
    shifted_array, shifts_array = np.empty((N, N)), np.zeros(N)
    cdef double[:, ::1] out = shifted_array
    cdef double[::1] shifts = shifts_array
    bad[0] = bad[1] = -1
    if N:
        with nogil:
            total = shift_core(&w[0, 0], N, N, &out[0, 0], &shifts[0], bad)
    else:
        total = 0.0
    return shifted_array, shifts_array, total, (None if bad[0] < 0 else (bad[0], bad[1]))


cdef int check_kernel(str kernel) except -1:
    """The marginals kernel named ``kernel`` (ValueError unless max-plus or
    one of the log kernels of :func:`inside`)."""
    if kernel == "maxplus":
        return KERNEL_MAXPLUS
    if kernel == "log":
        return KERNEL_LOG
    if kernel == "logplain":
        return KERNEL_LOGPLAIN
    if kernel == "logscaled":
        return KERNEL_LOGSCALED
    raise ValueError(f"unknown kernel {kernel!r}: expected 'log' or 'maxplus'")


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


cdef extern from "float.h":
    const double DBL_EPSILON

# The most rounding a log-space result may carry (semiparse.chart.shift reads
# it from here, so that the kernels and the Python checks share one value).
cdef double ROUNDING_LIMIT_C = 1e-6
ROUNDING_LIMIT = ROUNDING_LIMIT_C

cdef extern from *:
    """
    /* The sums of products run in AVX2 registers where the processor has
       them (a second copy chosen at load time; the same operations in the
       same order per lane, so the same results to the bit). */
    #if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
    #define SEMIPARSE_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define SEMIPARSE_VECTOR_CLONES
    #endif

    /* out[i] = sum_{x < count} a[x * sa + i] * b[x * sb + i] for i < n, the
       sums of eight spans at a time held in registers over x */
    SEMIPARSE_VECTOR_CLONES static void semiparse_sum_rows(double *restrict out, const double *a, ptrdiff_t sa,
                                          const double *b, ptrdiff_t sb, int count, int n) {
        int i = 0, x, j;
        for (; i + 8 <= n; i += 8) {
            double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            const double *p = a + i, *q = b + i;
            for (x = 0; x < count; x++, p += sa, q += sb)
                for (j = 0; j < 8; j++)
                    acc[j] += p[j] * q[j];
            for (j = 0; j < 8; j++)
                out[i + j] = acc[j];
        }
        for (; i < n; i++) {
            double t = 0.0;
            const double *p = a + i, *q = b + i;
            for (x = 0; x < count; x++, p += sa, q += sb)
                t += *p * *q;
            out[i] = t;
        }
    }

    /* out[i] (+)= sum_{x < c(i)} a[x * sa + i] * b[x * sb + i] for i < n,
       c(i) = count + i (up) or count - i; blocks of eight spans sum in
       registers up to the largest c of the block, so the terms past a
       span's own c must be 0 (the callers' zero entries) */
    SEMIPARSE_VECTOR_CLONES static void semiparse_gather(double *restrict out, int add, const double *a, ptrdiff_t sa,
                                        const double *b, ptrdiff_t sb, int n, int count, int up) {
        int i = 0, x, j, c;
        for (; i + 8 <= n; i += 8) {
            double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            const double *p = a + i, *q = b + i;
            c = up ? count + i + 7 : count - i;
            for (x = 0; x < c; x++, p += sa, q += sb)
                for (j = 0; j < 8; j++)
                    acc[j] += p[j] * q[j];
            for (j = 0; j < 8; j++)
                out[i + j] = add ? out[i + j] + acc[j] : acc[j];
        }
        for (; i < n; i++) {
            double acc = 0.0;
            const double *p = a + i, *q = b + i;
            c = up ? count + i : count - i;
            for (x = 0; x < c; x++, p += sa, q += sb)
                acc += *p * *q;
            out[i] = add ? out[i] + acc : acc;
        }
    }

    /* First-order projective trees (the grammar "projective": one left and
       one right state, every position starting in them) by Eisner's
       algorithm over plain probabilities, the charts stored by width:
       x[k * N + i] is the item over i..i+k, so each width's sums run over
       contiguous rows of all its spans at once (vector instructions, no
       per-span loop of its own).  cr / cl: complete items headed at i /
       at i+k; ir / il: the edge i -> i+k / i+k -> i with what lies
       between.  The same sums of products as the split-grammar kernel (the
       exact path while every nonzero entry lies in [1e-100, 1e100]), in
       another order; it does not rescale: NaN tells the caller to take
       that kernel, which does.  The outside pass differentiates Z in
       reverse, the adjoints scaled by 1/Z, so that an edge's posterior is
       its adjoint times its entry.  w: the N x N shifted scores (at most
       0, -inf forbidding), work: room for 10 N x N doubles; edges (or
       NULL): the N x N posteriors.  Returns log Z (-inf: no tree). */
    static double semiparse_eisner(const double *w, int N, double *work, double *edges) {
        size_t NN = (size_t) N * N;
        double *wr = work, *wl = work + NN, *cr = work + 2 * NN, *cl = work + 3 * NN,
               *ir = work + 4 * NN, *il = work + 5 * NN, *gcr = work + 6 * NN,
               *gcl = work + 7 * NN, *gir = work + 8 * NN, *gil = work + 9 * NN;
        double lo = HUGE_VAL, hi = 0.0, z;
        int k, x, i, n;
        for (k = 0; k < N; k++)
            for (i = 0; i + k < N; i++) {
                double a = w[(size_t) i * N + i + k], b = w[(size_t) (i + k) * N + i];
                if ((a > -HUGE_VAL && a < -230.25) || (b > -HUGE_VAL && b < -230.25))
                    return NAN;  /* a weight below 1e-100 */
                wr[(size_t) k * N + i] = a > -HUGE_VAL ? exp(a) : 0.0;
                wl[(size_t) k * N + i] = b > -HUGE_VAL ? exp(b) : 0.0;
            }
        for (i = 0; i < N; i++)
            cr[i] = cl[i] = 1.0;
        for (k = 1; k < N; k++) {
            n = N - k;
            double *restrict s = ir + (size_t) k * N;
            double *restrict t = il + (size_t) k * N;
            double *restrict r = cr + (size_t) k * N;
            double *restrict l = cl + (size_t) k * N;
            /* sum_x R[i][i+x] L[i+x+1][i+k] */
            semiparse_sum_rows(s, cr, N, cl + (size_t) (k - 1) * N + 1, 1 - N, k, n);
            for (i = 0; i < n; i++) {
                t[i] = s[i] * wl[(size_t) k * N + i];
                s[i] = s[i] * wr[(size_t) k * N + i];
            }
            /* R[i][i+k] = sum_{x=1..k} IR[i][i+x] R[i+x][i+k] */
            semiparse_sum_rows(r, ir + N, N, cr + (size_t) (k - 1) * N + 1, 1 - N, k, n);
            /* L[i][i+k] = sum_{x<k} L[i][i+x] IL[i+k][i+x] */
            semiparse_sum_rows(l, cl, N, il + (size_t) k * N, 1 - N, k, n);
            for (i = 0; i < n; i++) {
                double v;
                v = s[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
                v = t[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
                v = r[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
                v = l[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
            }
            if (lo < 1e-100 || hi > 1e100)
                return NAN;  /* beyond the exact range: the rescaling kernel */
        }
        z = cr[(size_t) (N - 1) * N];
        if (z == 0.0)
            return -HUGE_VAL;
        if (edges == NULL)
            return log(z);
        /* The outside pass gathers: each item's adjoint is summed, in
           registers, over the wider items it is part of (whose adjoints
           are final), width by width from the widest.  The sums run over
           whole blocks of spans, so every entry outside a width's spans
           must be 0: those of the inside charts, of the weights (read where
           a product's other factor is 0) and of the adjoints. */
        double *arrays[10] = {wr, wl, cr, cl, ir, il, gcr, gcl, gir, gil};
        for (x = 0; x < 10; x++)
            for (k = 1; k < N; k++)
                memset(arrays[x] + (size_t) k * N + (N - k), 0, (size_t) k * sizeof(double));
        memset(ir, 0, (size_t) N * sizeof(double));  /* width 0: no edge */
        memset(il, 0, (size_t) N * sizeof(double));
        for (x = N - 1; x >= 1; x--) {
            n = N - x;
            double *restrict r = gcr + (size_t) x * N, *restrict l = gcl + (size_t) x * N;
            double *restrict s = gir + (size_t) x * N, *restrict t = gil + (size_t) x * N;
            /* R[i][i+x]: left factor of the attachments over i..i+k, right
               factor of R[i'][i+x] = IR[i'][i] R[i][i+x] */
            semiparse_gather(r, 0, gir + (size_t) (x + 1) * N, N, cl + x + 1, N, n, n - 1, 0);
            semiparse_gather(r, 1, gcr + (size_t) (x + 1) * N - 1, N - 1, ir + N - 1, N - 1, n, 0, 1);
            if (x == N - 1)
                r[0] += 1.0 / z;
            /* L[i][i+x]: left factor of L[i][i+k] = L[i][i+x] IL[i+k][i+x],
               right factor of the attachments over i'..i+x */
            semiparse_gather(l, 0, gcl + (size_t) (x + 1) * N, N, il + N + x, N, n, n - 1, 0);
            semiparse_gather(l, 1, gir + (size_t) (x + 1) * N - 1, N - 1, cr - 1, N - 1, n, 0, 1);
            /* IR[i][i+x] in R[i][i+k] = IR[i][i+x] R[i+x][i+k] (k = x: R
               of width 0, 1); IL[i+x][i] in L[i'][i+x] = L[i'][i] IL[i+x][i] */
            semiparse_gather(s, 0, gcr + (size_t) x * N, N, cr + x, N, n, n, 0);
            semiparse_gather(t, 0, gcl + (size_t) x * N, N - 1, cl, N - 1, n, 1, 1);
            /* the edges' posteriors; s becomes the adjoint of the
               attachments' sum (gir's width x is not read again) */
            for (i = 0; i < n; i++) {
                edges[(size_t) i * N + i + x] = s[i] * ir[(size_t) x * N + i];
                edges[(size_t) (i + x) * N + i] = t[i] * il[(size_t) x * N + i];
                s[i] = s[i] * wr[(size_t) x * N + i] + t[i] * wl[(size_t) x * N + i];
            }
        }
        for (i = 0; i < N; i++)
            edges[(size_t) i * N + i] = 0.0;
        for (size_t q = 0; q < NN; q++)
            if (!(edges[q] <= 2.0))  /* inf or NaN: the adjoints left their range */
                return NAN;
        return log(z);
    }

    /* whether one of the m x m scores at w (rows stride apart) is NaN or
       +inf: independent flags per lane, so the compiler vectorizes it */
    static int semiparse_any_nan_or_inf(const double *w, Py_ssize_t stride, Py_ssize_t m) {
        int bad = 0;
        for (Py_ssize_t h = 0; h < m; h++) {
            const double *row = w + h * stride;
            for (Py_ssize_t d = 0; d < m; d++)
                bad |= !(row[d] < HUGE_VAL);
        }
        return bad;
    }

    /* the largest absolute value of the finite entries among n scores at
       most 0 (shifted scores), 0.0 if none: four running maxima */
    static double semiparse_largest_below_zero(const double *x, Py_ssize_t n) {
        double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, t;
        Py_ssize_t k = 0;
        for (; k + 3 < n; k += 4) {
            t = x[k] > -HUGE_VAL ? -x[k] : 0.0;         m0 = t > m0 ? t : m0;
            t = x[k + 1] > -HUGE_VAL ? -x[k + 1] : 0.0; m1 = t > m1 ? t : m1;
            t = x[k + 2] > -HUGE_VAL ? -x[k + 2] : 0.0; m2 = t > m2 ? t : m2;
            t = x[k + 3] > -HUGE_VAL ? -x[k + 3] : 0.0; m3 = t > m3 ? t : m3;
        }
        for (; k < n; k++) {
            t = x[k] > -HUGE_VAL ? -x[k] : 0.0;
            m0 = t > m0 ? t : m0;
        }
        m0 = m1 > m0 ? m1 : m0;
        m2 = m3 > m2 ? m3 : m2;
        return m2 > m0 ? m2 : m0;
    }
    """
    double eisner "semiparse_eisner"(const double* w, int N, double* work, double* edges) nogil
    bint any_nan_or_inf "semiparse_any_nan_or_inf"(const double* w, Py_ssize_t stride,
                                                   Py_ssize_t m) nogil
    double largest_below_zero "semiparse_largest_below_zero"(const double* x,
                                                             Py_ssize_t n) nogil


def log_partition_batch(CompiledRules rules not None, const double[:, :, ::1] w not None,
                        list codes not None, const int[::1] sizes not None,
                        Py_ssize_t start, Py_ssize_t stop, double[:, :, ::1] edges=None,
                        bint use_eisner=True):
    """The log partition, and with ``edges`` the edge posteriors, of the
    items ``start..stop-1`` of a padded batch of scores ``w[b, h, d]``, item
    ``b`` reading ``w[b, :sizes[b], :sizes[b]]`` and the start states
    ``codes[b] = (pl, pr)``: in one call without the GIL, the checks and the
    shift of :func:`semiparse.chart.shift.shifted` included, so that an
    ordinary batch needs no Python per item.

    Returns ``(totals, offsets, fast)``, arrays over the whole batch written
    at ``start..stop-1``: the log kernel's value of the shifted scores, the
    shift's total (:attr:`semiparse.chart.shift.Shift.total`) and whether
    the item took this path.  An item whose scores are NaN or +inf, whose
    shift overflows, whose shift's total is not finite or whose shifted
    scores are large enough for rounding to matter (``eps * n * largest >
    ROUNDING_LIMIT``, where :func:`semiparse.chart.shift.shift_errors` would compute
    the errors) is left alone (``fast`` False) for the caller's checked
    path; so is every item when the kernel is not the log kernel.
    ``edges[b, :n, :n]`` gets the posteriors of a fast item with a tree
    (the rest of ``edges[b]`` is not written).

    For first-order projective rules (:meth:`CompiledRules.first_order`)
    an item first tries Eisner's algorithm over plain probabilities stored
    by width (``semiparse_eisner``: each width's sums run over all its spans
    at once), and takes the split-grammar log kernel where that leaves its
    exact range; ``use_eisner=False`` always takes the latter (for tests)."""
    cdef Py_ssize_t B = w.shape[0], N = w.shape[1], b, x, h, d, m, largest = 1
    cdef Py_ssize_t bad[2]
    cdef bint marg = edges is not None
    cdef double v, big, total
    cdef const int[::1] pl
    cdef const int[::1] pr
    if w.shape[2] != N or sizes.shape[0] != B or len(codes) != B or not 0 <= start <= stop <= B:
        raise ValueError(f"log_partition_batch: scores of shape ({B}, {N}, {w.shape[2]}), "
                         f"{sizes.shape[0]} sizes, {len(codes)} codes, items {start}..{stop}")
    if marg and (edges.shape[0] != B or edges.shape[1] != N or edges.shape[2] != N):
        raise ValueError("log_partition_batch: edges must have the scores' shape")
    totals_array, offsets_array = np.zeros(B), np.zeros(B)
    fast_array = np.zeros(B, dtype=np.uint8)
    cdef double[::1] totals = totals_array
    cdef double[::1] offsets = offsets_array
    cdef unsigned char[::1] fast = fast_array
    if start == stop or N == 0:
        return totals_array, offsets_array, fast_array.astype(bool)
    cdef const int** pls = <const int**> malloc(B * sizeof(void*))
    cdef const int** prs = <const int**> malloc(B * sizeof(void*))
    cdef Chart ch, ad
    cdef double* scratch = NULL
    cdef double* shifts = NULL
    cdef double* out = NULL
    cdef double* work = NULL
    cdef bint plain, first_order = rules.first_order() and use_eisner
    cdef Plain pv
    cdef Scaled sl
    ch.block = NULL
    ad.block = NULL
    try:
        if pls == NULL or prs == NULL:
            raise MemoryError("no memory for the batch's pointers")
        for b in range(start, stop):
            m = sizes[b]
            pl, pr = codes[b]
            if not 1 <= m <= N or pl.shape[0] != m or pr.shape[0] != m:
                raise ValueError(f"log_partition_batch: item {b} of {m} positions with "
                                 f"{pl.shape[0]} and {pr.shape[0]} start states for scores "
                                 f"of size {N}")
            check_states(rules, pl, pr, m)
            pls[b], prs[b] = &pl[0], &pr[0]
            largest = max(largest, m)
        scratch = <double*> malloc(largest * largest * sizeof(double))
        out = <double*> malloc(largest * largest * sizeof(double))
        shifts = <double*> malloc(largest * sizeof(double))
        if first_order:
            work = <double*> malloc(10 * largest * largest * sizeof(double))
        if (scratch == NULL or out == NULL or shifts == NULL or (first_order and work == NULL)
                or chart_alloc(&ch, sizeof(Scaled), largest, rules.n_left, rules.n_right) < 0
                or (marg and chart_alloc(&ad, sizeof(double), largest, rules.n_left,
                                         rules.n_right) < 0)):
            raise MemoryError(f"chart for {largest} positions does not fit in memory")
        with nogil:
            for b in range(start, stop):
                m = sizes[b]
                fast[b] = 0
                if any_nan_or_inf(&w[b, 0, 0], N, m):  # the checked path names them
                    continue
                total = shift_core(&w[b, 0, 0], N, m, scratch, shifts, bad)
                if bad[0] >= 0 or total == INFINITY:
                    continue
                # shifted scores are at most 0: the largest of largest_score
                big = largest_below_zero(scratch, m * m)
                if DBL_EPSILON * m * big > ROUNDING_LIMIT_C:  # shift_errors would compute the errors
                    continue
                fast[b] = 1
                offsets[b] = total
                if first_order:
                    totals[b] = eisner(scratch, m, work, out if marg else NULL)
                    if totals[b] == totals[b]:  # else beyond its range: the split kernel
                        if marg and totals[b] > -INFINITY:
                            for h in range(m):
                                for d in range(m):
                                    edges[b, h, d] = out[h * m + d]
                        continue
                chart_layout(&ch, sizeof(Scaled), m, rules.n_left, rules.n_right)
                if marg:
                    chart_layout(&ad, sizeof(double), m, rules.n_left, rules.n_right)
                    totals[b] = marginals_one(KERNEL_LOG, &ch, &ad, &rules.g, pls[b], prs[b],
                                              scratch, out)
                    if totals[b] > -INFINITY:
                        for h in range(m):
                            for d in range(m):
                                edges[b, h, d] = out[h * m + d]
                else:
                    totals[b] = log_inside(KERNEL_LOG, &ch, &rules.g, pls[b], prs[b], scratch,
                                           &plain, &pv, &sl)
        return totals_array, offsets_array, fast_array.astype(bool)
    finally:
        free(pls)
        free(prs)
        free(scratch)
        free(out)
        free(shifts)
        free(work)
        if ch.block != NULL:
            chart_free(&ch)
        if ad.block != NULL:
            chart_free(&ad)

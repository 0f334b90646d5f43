# cython: language_level=3, wraparound=False, cdivision=True
"""Split bilexical CKY (Nederhof 2019, Table 2) in C, fused over numeric semirings:
the inside pass.

One chart algorithm, specialized at compile time for each value type of
:mod:`semiparse.chart._values`, over the layout of
:mod:`semiparse.chart._layout`.

Log values are first tried as :data:`Plain` probabilities, each dependent's
edge weights divided by the largest and all rescaled as the entries drift
(see :mod:`semiparse.chart._plain`): a sum of products is then a plain dot
product.  When an entry leaves the range where that is exact, the chart is filled again with :data:`Scaled` numbers (see
:mod:`semiparse.chart._logsum`), which have the range of the log semiring and still
sum products without an exp or log per term.  The outside pass
(:mod:`semiparse.chart._outside`) gives edge max-marginals and posteriors
from a max-plus or log chart.
"""
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdint cimport uint64_t

from semiparse.chart._layout cimport (Chart, CompiledRules, Rules, at, chart_alloc, chart_free,
                                      chart_layout, check_input, check_prime)
from semiparse.chart._logsum cimport Scaled, to_log
from semiparse.chart._maxplus cimport MaxPlus
from semiparse.chart._plain cimport (Plain, drifted, in_range, plain_rescale_weights,
                                     plain_weights, recentring, track)
from semiparse.chart._values cimport (CountF, CountMod, MaxCountF, MaxCountMod, V, v_dot, v_edge,
                                      v_plus, v_times, v_track, v_zero)


cdef inline bint plain_rescale(Chart* ch, const Rules* g, int width, double shift) noexcept nogil:
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


cdef inline bint fill_start(V tag, Chart* ch, const int* pl, const int* pr, const double* w) noexcept nogil:
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


# cython: language_level=3, wraparound=False, cdivision=True
"""First-order Eisner algorithm: the speed floors for the engine.

Hand-specialized projective parsers (the root may take several children),
used by ``semiparse bench engine`` as the baselines that the generic grammar
engine with ``projective.grammar`` is measured against: max-plus inside, and
log-space inside-outside for edge marginals; and the log partition's own
first-order path (``semiparse/chart/eisner_src.c``, the C Eisner over plain
probabilities stored by width that ``log_partition_batch`` takes for the
projective grammar), which :func:`eisner_by_width` runs alone.  Same chart layout idea as
:mod:`semiparse.chart._layout`: rows by start and by end so the inner loops are
contiguous.
"""
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdlib cimport free, malloc
import numpy as np

cdef extern from "semiparse/chart/eisner_src.h":
    double semiparse_eisner(const double* w, int N, double* work, double* edges) nogil

from semiparse.chart.cky cimport (Plain, Scaled, back_rows, drifted, from_log, in_range, max_dot,
                                  plain_dot, plain_rescale_weights, plain_weights, recentring,
                                  scaled, scaled_dot, scaled_times, share, to_log, track)


def eisner_best_score(const double[:, ::1] w):
    """Best total score of a projective tree over positions 0..N-1 rooted at 0."""
    cdef int N = w.shape[0], span, s, t
    cdef size_t NN = <size_t> N * N, x
    cdef double best
    # complete left (head t) / right (head s), each by start and by end;
    # incomplete left / right by end / start
    cdef double* buf = <double*> malloc(6 * NN * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double* CLf = buf
    cdef double* CLb = buf + NN
    cdef double* CRf = buf + 2 * NN
    cdef double* CRb = buf + 3 * NN
    cdef double* ILb = buf + 4 * NN
    cdef double* IRf = buf + 5 * NN
    with nogil:
        for x in range(6 * NN):
            buf[x] = -INFINITY
        for s in range(N):
            CLf[s * N + s] = CLb[s * N + s] = CRf[s * N + s] = CRb[s * N + s] = 0.0
        for span in range(1, N):
            for s in range(N - span):
                t = s + span
                best = max_dot(CRf + s * N + s, CLb + t * N + s + 1, span)
                ILb[t * N + s] = best + w[t, s]
                IRf[s * N + t] = best + w[s, t]
                CLf[s * N + t] = CLb[t * N + s] = max_dot(CLf + s * N + s, ILb + t * N + s, span)
                CRf[s * N + t] = CRb[t * N + s] = max_dot(IRf + s * N + s + 1,
                                                          CRb + t * N + s + 1, span)
        best = CRf[N - 1]
    free(buf)
    return best


cdef inline void rescale(Plain* x, double f, double* lo, double* hi) noexcept nogil:
    x.p *= f
    track(x.p, lo, hi)


ctypedef fused FV:
    Plain
    Scaled


cdef inline FV fv_dot(const FV* a, const FV* b, int n) noexcept nogil:
    """sum_x a[x] * b[x] over x < n, in plain probabilities or scaled numbers."""
    if FV is Plain:
        return plain_dot(a, b, n)
    else:
        return scaled_dot(a, b, n)


cdef inline FV fv_times(FV a, FV b) noexcept nogil:
    if FV is Plain:
        a.p = a.p * b.p
        return a
    else:
        return scaled_times(a, b)


cdef double inside_outside(FV tag, const double* w, int N, FV* buf, double* grad,
                           double* post) noexcept nogil:
    """log Z and the posteriors (into ``post``, zeroed) over plain
    probabilities or scaled numbers; NaN from a plain pass whose entries leave
    the range where it is exact."""
    cdef int span, s, t
    cdef size_t NN = <size_t> N * N, x
    cdef int r
    cdef double a, c, f, shift, base = 0.0, log_scale = 0.0, lo = INFINITY, hi = 0.0
    cdef FV acc, one
    # edges, complete left (head t) / right (head s) by start and by end,
    # incomplete left / right by end / start; then their posteriors
    cdef FV* W = buf
    cdef FV* CLf = buf + NN
    cdef FV* CLb = buf + 2 * NN
    cdef FV* CRf = buf + 3 * NN
    cdef FV* CRb = buf + 4 * NN
    cdef FV* ILb = buf + 5 * NN
    cdef FV* IRf = buf + 6 * NN
    cdef double* gCLf = grad
    cdef double* gCLb = grad + NN
    cdef double* gCRf = grad + 2 * NN
    cdef double* gCRb = grad + 3 * NN
    cdef double* gILb = grad + 4 * NN
    cdef double* gIRf = grad + 5 * NN
    if FV is Plain:
        log_scale = plain_weights(w, W, N)
        if log_scale != log_scale:
            return NAN
        one.p = 1.0
    else:
        for x in range(NN):
            W[x] = from_log(w[x])
        one = scaled(1.0, 0.0)
    for s in range(N):
        CLf[s * N + s] = CLb[s * N + s] = CRf[s * N + s] = CRb[s * N + s] = one
    for x in range(6 * NN):
        grad[x] = 0.0
    for span in range(1, N):
        for s in range(N - span):
            t = s + span
            acc = fv_dot(CRf + s * N + s, CLb + t * N + s + 1, span)
            ILb[t * N + s] = fv_times(acc, W[t * N + s])
            IRf[s * N + t] = fv_times(acc, W[s * N + t])
            CLf[s * N + t] = CLb[t * N + s] = fv_dot(CLf + s * N + s, ILb + t * N + s, span)
            CRf[s * N + t] = CRb[t * N + s] = fv_dot(IRf + s * N + s + 1, CRb + t * N + s + 1, span)
            if FV is Plain:
                track(ILb[t * N + s].p, &lo, &hi)
                track(IRf[s * N + t].p, &lo, &hi)
                track(CLf[s * N + t].p, &lo, &hi)
                track(CRf[s * N + t].p, &lo, &hi)
        if FV is Plain:
            if not in_range(lo, hi):
                return NAN
            if drifted(lo, hi):  # bring this width's middle back to 1
                shift = recentring(lo, hi, span)
                lo, hi = INFINITY, 0.0
                for r in range(1, span + 1):
                    f = exp(shift * r)
                    for s in range(N - r):
                        t = s + r
                        rescale(CLf + s * N + t, f, &lo, &hi)
                        rescale(CLb + t * N + s, f, &lo, &hi)
                        rescale(CRf + s * N + t, f, &lo, &hi)
                        rescale(CRb + t * N + s, f, &lo, &hi)
                        rescale(ILb + t * N + s, f, &lo, &hi)
                        rescale(IRf + s * N + t, f, &lo, &hi)
                log_scale -= shift * (N - 1)
                if not (in_range(lo, hi) and plain_rescale_weights(W, N, exp(shift))):
                    return NAN
            lo, hi = INFINITY, 0.0
    # each item y hands post(y) * term / y to both factors of each term
    gCRf[N - 1] = 1.0
    for span in range(N - 1, 0, -1):
        for s in range(N - span):
            t = s + span
            if share(CRf[s * N + t], one, gCRf[s * N + t] + gCRb[t * N + s], &c, &base):
                back_rows(IRf + s * N + s + 1, CRb + t * N + s + 1, c, base,
                          gIRf + s * N + s + 1, gCRb + t * N + s + 1, span)
            if share(CLf[s * N + t], one, gCLf[s * N + t] + gCLb[t * N + s], &c, &base):
                back_rows(CLf + s * N + s, ILb + t * N + s, c, base,
                          gCLf + s * N + s, gILb + t * N + s, span)
            post[t * N + s] = gILb[t * N + s]
            post[s * N + t] = gIRf[s * N + t]
            # both attachments share their sum (an attachment over its edge)
            a = post[t * N + s] + post[s * N + t]
            if share(IRf[s * N + t], W[s * N + t], a, &c, &base):
                back_rows(CRf + s * N + s, CLb + t * N + s + 1, c, base,
                          gCRf + s * N + s, gCLb + t * N + s + 1, span)
    if FV is Plain:
        return log(CRf[N - 1].p) + log_scale
    else:
        return to_log(CRf[N - 1])


def eisner_marginals(const double[:, ::1] w):
    """``(log Z, posteriors)`` over the projective trees rooted at 0, p(tree)
    proportional to exp(sum of w[h, d] over its edges); ``posteriors[h, d]``
    is p(h -> d).  Inside over plain probabilities when they stay exact, else
    over scaled numbers (the engine's two paths, see :mod:`semiparse.chart._plain`),
    then the outside pass as posteriors handed from each item to the terms of
    its sum.  Scores must be finite."""
    cdef int N = w.shape[0]
    cdef double log_z
    cdef Plain pv
    cdef Scaled sl
    post_array = np.zeros((N, N))
    cdef double[:, ::1] post = post_array
    cdef Scaled* buf = <Scaled*> malloc(7 * <size_t> N * N * sizeof(Scaled))
    cdef double* grad = <double*> malloc(6 * <size_t> N * N * sizeof(double))
    if buf == NULL or grad == NULL:
        free(buf)
        free(grad)
        raise MemoryError()
    with nogil:
        log_z = inside_outside(pv, &w[0, 0], N, <Plain*> buf, grad, &post[0, 0])
        if log_z != log_z:
            log_z = inside_outside(sl, &w[0, 0], N, buf, grad, &post[0, 0])
    free(buf)
    free(grad)
    return log_z, post_array


def eisner_by_width(const double[:, ::1] w):
    """``(log Z, posteriors)`` as :func:`eisner_marginals`, by the C Eisner
    of the log partition's first-order path (``eisner_src.c``): the scores
    shifted per dependent (each column's best edge to 0), its sums of
    products, the shift added back.  NaN where its plain numbers leave
    their exact range (the kernel then takes the rescaling path).  Scores
    must be finite."""
    cdef int N = w.shape[0], h, d
    cdef double total = 0.0, top, log_z
    shifted_array = np.empty((N, N))
    post_array = np.zeros((N, N))
    cdef double[:, ::1] shifted = shifted_array
    cdef double[:, ::1] post = post_array
    cdef double* work = <double*> malloc(10 * <size_t> N * N * sizeof(double))
    if work == NULL:
        raise MemoryError()
    with nogil:
        for d in range(N):
            top = -INFINITY
            for h in range(N):
                if h != d and d != 0 and w[h, d] > top:
                    top = w[h, d]
            if d == 0:
                top = 0.0
            total += top
            for h in range(N):
                shifted[h, d] = w[h, d] - top if h != d and d != 0 else -INFINITY
        log_z = semiparse_eisner(&shifted[0, 0], N, work, &post[0, 0])
    free(work)
    return log_z + total, post_array

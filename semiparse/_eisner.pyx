# cython: language_level=3
"""First-order Eisner algorithm: the speed floors for the engine.

Hand-specialized projective parsers (the root may take several children),
used by ``semiparse bench engine`` as the baselines that the generic grammar
engine with ``projective.grammar`` is measured against: max-plus inside, and
log-space inside-outside for edge marginals.  Same chart layout idea as
:mod:`semiparse._cky`: rows by start and by end so the inner loops are
contiguous.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse._logsum cimport (Scaled, from_log, scaled, scaled_dot, scaled_times, to_log,
                                unscale)


def eisner_best_score(const double[:, ::1] w):
    """Best total score of a projective tree over positions 0..N-1 rooted at 0."""
    cdef int N = w.shape[0], span, s, t, r
    cdef size_t NN = <size_t> N * N, x
    cdef double best, v
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
                best = -INFINITY
                for r in range(s, t):
                    v = CRf[s * N + r] + CLb[t * N + r + 1]
                    if v > best:
                        best = v
                ILb[t * N + s] = best + w[t, s]
                IRf[s * N + t] = best + w[s, t]
                best = -INFINITY
                for r in range(s, t):
                    v = CLf[s * N + r] + ILb[t * N + r]
                    if v > best:
                        best = v
                CLf[s * N + t] = CLb[t * N + s] = best
                best = -INFINITY
                for r in range(s + 1, t + 1):
                    v = IRf[s * N + r] + CRb[t * N + r]
                    if v > best:
                        best = v
                CRf[s * N + t] = CRb[t * N + s] = best
        best = CRf[N - 1]
    free(buf)
    return best


def eisner_marginals(const double[:, ::1] w):
    """``(log Z, posteriors)`` over the projective trees rooted at 0, p(tree)
    proportional to exp(sum of w[h, d] over its edges); ``posteriors[h, d]``
    is p(h -> d).  Inside over scaled numbers (see :mod:`semiparse._logsum`),
    then the outside pass as posteriors handed from each item to the terms of
    its sum.  Scores must be finite."""
    cdef int N = w.shape[0], span, s, t, r
    cdef size_t NN = <size_t> N * N, x
    cdef double a, c, base, p
    cdef Scaled acc
    post_array = np.zeros((N, N))
    cdef double[:, ::1] post = post_array
    # inside: edges, complete left (head t) / right (head s) by start and by
    # end, incomplete left / right by end / start; then their posteriors
    cdef Scaled* buf = <Scaled*> malloc(7 * NN * sizeof(Scaled))
    cdef double* grad = <double*> malloc(6 * NN * sizeof(double))
    if buf == NULL or grad == NULL:
        free(buf)
        free(grad)
        raise MemoryError()
    cdef Scaled* W = buf
    cdef Scaled* CLf = buf + NN
    cdef Scaled* CLb = buf + 2 * NN
    cdef Scaled* CRf = buf + 3 * NN
    cdef Scaled* CRb = buf + 4 * NN
    cdef Scaled* ILb = buf + 5 * NN
    cdef Scaled* IRf = buf + 6 * NN
    cdef double* gCLf = grad
    cdef double* gCLb = grad + NN
    cdef double* gCRf = grad + 2 * NN
    cdef double* gCRb = grad + 3 * NN
    cdef double* gILb = grad + 4 * NN
    cdef double* gIRf = grad + 5 * NN
    with nogil:
        for s in range(N):
            for t in range(N):
                W[s * N + t] = from_log(w[s, t])
            CLf[s * N + s] = CLb[s * N + s] = CRf[s * N + s] = CRb[s * N + s] = scaled(1.0, 0.0)
        for x in range(6 * NN):
            grad[x] = 0.0
        for span in range(1, N):
            for s in range(N - span):
                t = s + span
                acc = scaled_dot(CRf + s * N + s, CLb + t * N + s + 1, span)
                ILb[t * N + s] = scaled_times(acc, W[t * N + s])
                IRf[s * N + t] = scaled_times(acc, W[s * N + t])
                CLf[s * N + t] = CLb[t * N + s] = scaled_dot(CLf + s * N + s, ILb + t * N + s, span)
                CRf[s * N + t] = CRb[t * N + s] = scaled_dot(IRf + s * N + s + 1,
                                                             CRb + t * N + s + 1, span)
        # each item y hands post(y) * term / y to both factors of each term
        gCRf[N - 1] = 1.0
        for span in range(N - 1, 0, -1):
            for s in range(N - span):
                t = s + span
                a = gCRf[s * N + t] + gCRb[t * N + s]
                c, base = a / CRf[s * N + t].m, CRf[s * N + t].e
                for r in range(s + 1, t + 1):
                    p = c * (IRf[s * N + r].m * CRb[t * N + r].m) * \
                        unscale(base - (IRf[s * N + r].e + CRb[t * N + r].e))
                    gIRf[s * N + r] += p
                    gCRb[t * N + r] += p
                a = gCLf[s * N + t] + gCLb[t * N + s]
                c, base = a / CLf[s * N + t].m, CLf[s * N + t].e
                for r in range(s, t):
                    p = c * (CLf[s * N + r].m * ILb[t * N + r].m) * \
                        unscale(base - (CLf[s * N + r].e + ILb[t * N + r].e))
                    gCLf[s * N + r] += p
                    gILb[t * N + r] += p
                post[t, s] = gILb[t * N + s]
                post[s, t] = gIRf[s * N + t]
                # both attachments share their sum (an attachment over its edge)
                a = post[t, s] + post[s, t]
                c = a * W[s * N + t].m / IRf[s * N + t].m
                base = IRf[s * N + t].e - W[s * N + t].e
                for r in range(s, t):
                    p = c * (CRf[s * N + r].m * CLb[t * N + r + 1].m) * \
                        unscale(base - (CRf[s * N + r].e + CLb[t * N + r + 1].e))
                    gCRf[s * N + r] += p
                    gCLb[t * N + r + 1] += p
        a = to_log(CRf[N - 1])
    free(buf)
    free(grad)
    return a, post_array

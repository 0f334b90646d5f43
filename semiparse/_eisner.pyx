# cython: language_level=3
"""First-order Eisner algorithm: the speed floors for the engine.

Hand-specialized projective parsers (the root may take several children),
used by ``semiparse bench engine`` as the baselines that the generic grammar
engine with ``projective.grammar`` is measured against: max-plus inside, and
log-space inside-outside for edge marginals.  Same chart layout idea as
:mod:`semiparse._cky`: rows by start and by end so the inner loops are
contiguous.
"""
from libc.math cimport INFINITY, exp
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse._logsum cimport log_dot


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
    is p(h -> d).  Inside in log space, then the outside pass as posteriors
    handed from each item to the terms of its sum (one exp per term).
    Scores must be finite."""
    cdef int N = w.shape[0], span, s, t, r
    cdef size_t NN = <size_t> N * N, x
    cdef double acc, a, y, p
    post_array = np.zeros((N, N))
    cdef double[:, ::1] post = post_array
    # inside: complete left (head t) / right (head s) by start and by end,
    # incomplete left / right by end / start; then the same for posteriors
    cdef double* buf = <double*> malloc(12 * NN * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double* CLf = buf
    cdef double* CLb = buf + NN
    cdef double* CRf = buf + 2 * NN
    cdef double* CRb = buf + 3 * NN
    cdef double* ILb = buf + 4 * NN
    cdef double* IRf = buf + 5 * NN
    cdef double* gCLf = buf + 6 * NN
    cdef double* gCLb = buf + 7 * NN
    cdef double* gCRf = buf + 8 * NN
    cdef double* gCRb = buf + 9 * NN
    cdef double* gILb = buf + 10 * NN
    cdef double* gIRf = buf + 11 * NN
    with nogil:
        for x in range(6 * NN):
            buf[x] = -INFINITY
        for x in range(6 * NN, 12 * NN):
            buf[x] = 0.0
        for s in range(N):
            CLf[s * N + s] = CLb[s * N + s] = CRf[s * N + s] = CRb[s * N + s] = 0.0
        for span in range(1, N):
            for s in range(N - span):
                t = s + span
                acc = log_dot(CRf + s * N + s, CLb + t * N + s + 1, span)
                ILb[t * N + s] = acc + w[t, s]
                IRf[s * N + t] = acc + w[s, t]
                CLf[s * N + t] = CLb[t * N + s] = log_dot(CLf + s * N + s, ILb + t * N + s, span)
                CRf[s * N + t] = CRb[t * N + s] = log_dot(IRf + s * N + s + 1,
                                                          CRb + t * N + s + 1, span)
        gCRf[N - 1] = 1.0
        for span in range(N - 1, 0, -1):
            for s in range(N - span):
                t = s + span
                a = gCRf[s * N + t] + gCRb[t * N + s]
                y = CRf[s * N + t]
                for r in range(s + 1, t + 1):
                    p = a * exp(IRf[s * N + r] + CRb[t * N + r] - y)
                    gIRf[s * N + r] += p
                    gCRb[t * N + r] += p
                a = gCLf[s * N + t] + gCLb[t * N + s]
                y = CLf[s * N + t]
                for r in range(s, t):
                    p = a * exp(CLf[s * N + r] + ILb[t * N + r] - y)
                    gCLf[s * N + r] += p
                    gILb[t * N + r] += p
                post[t, s] = gILb[t * N + s]
                post[s, t] = gIRf[s * N + t]
                # both attachments share their sum: one exp per term for the two
                a = post[t, s] + post[s, t]
                y = IRf[s * N + t] - w[s, t]
                for r in range(s, t):
                    p = a * exp(CRf[s * N + r] + CLb[t * N + r + 1] - y)
                    gCRf[s * N + r] += p
                    gCLb[t * N + r + 1] += p
        acc = CRf[N - 1]
    free(buf)
    return acc, post_array

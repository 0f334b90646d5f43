# cython: language_level=3
"""First-order Eisner algorithm, max-plus only: the speed floor for the engine.

A hand-specialized projective parser (the root may take several children),
used by ``semiparse bench engine`` as the baseline that the generic grammar
engine with ``projective.grammar`` is measured against.  Same chart layout
idea as :mod:`semiparse._cky`: rows by start and by end so the inner loops
are contiguous.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc


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

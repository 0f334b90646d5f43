# cython: language_level=3
"""Log-space sums shared by the compiled charts (inline, ``noexcept nogil``)."""
from libc.math cimport INFINITY, exp, log


cdef inline double log_dot(const double* a, const double* b, int n) noexcept nogil:
    """log sum_k exp(a[k] + b[k]): the largest term first, then one exp per
    term and one log, instead of a log1p and an exp per term."""
    cdef int k
    cdef double top = -INFINITY, total = 0.0
    for k in range(n):
        if a[k] + b[k] > top:
            top = a[k] + b[k]
    if top == -INFINITY:
        return top
    for k in range(n):
        total += exp((a[k] + b[k]) - top)
    return top + log(total)

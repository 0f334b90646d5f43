# cython: language_level=3, wraparound=False, cdivision=True
"""The scores before a chart reads them: their largest absolute value
(:func:`largest_score`) and their shift per dependent (:func:`shift_columns`),
in one pass each without the GIL, for :mod:`semiparse.chart.score_shift`; the
bound on a log-space result's rounding (:data:`ROUNDING_LIMIT`).  The
guards of the log partition batch over a batch's scores (NaN or +inf, the
largest shifted score) are C, in ``scores_src.c``."""
from libc.math cimport INFINITY, fabs
import numpy as np

ROUNDING_LIMIT = rounding_limit()


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


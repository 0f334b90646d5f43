# cython: language_level=3
"""The scores' shift per dependent in C (``_scores.pyx``), for the log
partition batch, and the bound on rounding that the kernels and the Python
checks share."""


cdef inline double rounding_limit() noexcept nogil:
    """The most rounding a log-space result may carry (``ROUNDING_LIMIT``,
    which :mod:`semiparse.chart.score_shift` reads, so that the kernels and the
    Python checks share one value)."""
    return 1e-6


cdef double shift_core(const double* w, Py_ssize_t stride, Py_ssize_t N, double* out,
                       double* shifts, Py_ssize_t* bad) noexcept nogil

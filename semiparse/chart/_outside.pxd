# cython: language_level=3
"""The outside pass (``_outside.pyx``): the inside value of one input and its
edge posteriors or max-marginals, for the log partition batch."""
from semiparse.chart._layout cimport Chart, Rules


cdef double marginals_one(int kernel, Chart* ch, Chart* ad, const Rules* g, const int* pl,
                          const int* pr, const double* w, double* edges) noexcept nogil

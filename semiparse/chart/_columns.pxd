# cython: language_level=3
"""The grammar oracle's max-plus column chart (``_columns.pyx``), for compiled
code that fills many max-plus charts without the GIL: a chart laid out in
one reusable block (:c:func:`maxplus_layout`, :c:func:`maxplus_bytes` long)
and filled column by column (:c:func:`maxplus_columns`)."""
from semiparse.chart._layout cimport Chart, Rules


cdef inline size_t maxplus_bytes(const Rules* g, int N) noexcept nogil:
    """The size of a max-plus column chart of N positions (:c:func:`maxplus_layout`)."""
    return (2 * g.nl + 2 * g.nr + 1 + g.nvirtual[0] + g.nvirtual[1] + g.nvirtual[2]
            + g.nvirtual[3] + g.nvirtual[4] + g.nvirtual[5]) * (<size_t> N * N) * sizeof(double)


cdef void maxplus_layout(Chart* ch, const Rules* g, int N) noexcept nogil
cdef double maxplus_columns(Chart* ch, const Rules* g, int N, int kept, bint head_last) noexcept nogil

# cython: language_level=3, wraparound=False, cdivision=True
"""C oracle kernels for batches (see ``_rows.pxd``)."""
from libc.math cimport INFINITY

from semiparse.transitions.runtime._state cimport state_free


cdef class KernelGold:
    """Base of the kernels' per-gold-tree data: ``ptr`` is set by the subclass."""

    def __cinit__(self):
        self.ptr = NULL
        self.state = NULL

    def __dealloc__(self):
        state_free(self.state)


cdef class RowKernel:
    """A C kernel, the transition names of its output columns, the type of
    its per-gold-tree data (called with the gold heads) and the codes of the
    strategies it supports."""

    def __repr__(self):
        return f"<RowKernel {', '.join(self.columns)}>"


cdef RowKernel row_kernel(row_fn fn, tuple columns, object gold_type, dict strategy_codes=None):
    cdef RowKernel k = RowKernel.__new__(RowKernel)
    k.fn = fn
    k.columns = columns
    k.gold_type = gold_type
    k.strategy_codes = strategy_codes or {"none": 0}
    return k


cdef dict row_dict(tuple columns, const double* row):
    """``{name: sigma}`` of a kernel's output row, without the transitions that
    do not apply (NaN); finite values as ints."""
    out = {}
    cdef Py_ssize_t i
    cdef double v
    for i in range(len(columns)):
        v = row[i]
        if v == v:
            out[columns[i]] = int(v) if v > -INFINITY else v
    return out

# cython: language_level=3
"""Oracle kernels that score one configuration in C without the GIL, for
``Oracle.scores_batch`` and the fast methods' single calls.

A kernel writes sigma of each of its ``columns`` (transition names) for the
configuration (stack bottom first, buffer ``bstart..n``, ``arcs`` the heads
built so far; ``state``, the same configuration as a :c:type:`StateC`, for a
kernel whose buffer need not be a suffix of the sentence: NULL where the
caller has none) into ``out``, NaN where it has no value; which transitions
apply is the machine's to say (``_configuration.pyx``), not the kernel's.  Its
per-gold-tree data is a :class:`KernelGold` whose ``ptr`` points at the C
struct the kernel reads (and whose scratch arrays it writes: one thread per
work); ``strategy`` is the code of the oracle's strategy in the kernel's
``strategy_codes`` (the strategies it supports).
"""
from semiparse.transitions.runtime._state cimport StateC

ctypedef void (*row_fn)(void* work, const StateC* state, const int* stack, int ns, int bstart,
                        const int* arcs, int strategy, double* out) noexcept nogil


cdef class KernelGold:
    cdef void* ptr
    cdef StateC* state      # scratch for one configuration given as tuples (kernel_scores)


cdef class RowKernel:
    cdef row_fn fn
    cdef readonly tuple columns
    cdef readonly object gold_type
    cdef readonly dict strategy_codes


cdef RowKernel row_kernel(row_fn fn, tuple columns, object gold_type, dict strategy_codes=*)


cdef dict row_dict(tuple columns, const double* row)

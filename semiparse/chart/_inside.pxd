# cython: language_level=3
"""The inside pass (``_inside.pyx``): the chart filled bottom-up in each value
type of :c:type:`semiparse.chart._values.V`, for the other passes (the
outside pass, the backtrace, the max-plus column chart) and the log
partition batch; the one-position items and the value of the whole input
are inline, as the column chart fills its own items around them."""
from libc.stdint cimport uint64_t

from semiparse.chart._layout cimport Chart, CompiledRules, Rules, at
from semiparse.chart._logsum cimport Scaled
from semiparse.chart._plain cimport Plain
from semiparse.chart._values cimport V, v_one, v_plus, v_times, v_zero


cdef enum:
    KERNEL_MAXPLUS
    KERNEL_LOG        # plain probabilities, scaled numbers where they are not exact
    KERNEL_LOGPLAIN   # plain probabilities only (NaN where they are not exact)
    KERNEL_LOGSCALED  # scaled numbers only


cdef inline void start_items(V tag, Chart* ch, int i) noexcept nogil:
    """The one-position items of position i: ``one`` in its start states
    (``ch.pl``, ``ch.pr``), ``zero`` elsewhere."""
    cdef int N = ch.N, b, c
    cdef size_t NN = <size_t> N * N
    cdef V* Lf = <V*> ch.Lf
    cdef V* Lb = <V*> ch.Lb
    cdef V* Rf = <V*> ch.Rf
    cdef V* Rb = <V*> ch.Rb
    cdef V zero = v_zero(tag), one = v_one(tag)
    for b in range(ch.nl):
        Lf[at(b, i, i, N, NN)] = Lb[at(b, i, i, N, NN)] = zero
    for c in range(ch.nr):
        Rf[at(c, i, i, N, NN)] = Rb[at(c, i, i, N, NN)] = zero
    Lf[at(ch.pl[i], i, i, N, NN)] = Lb[at(ch.pl[i], i, i, N, NN)] = one
    Rf[at(ch.pr[i], i, i, N, NN)] = Rb[at(ch.pr[i], i, i, N, NN)] = one


cdef inline V root_value(V tag, Chart* ch, const Rules* g, int last, uint64_t p,
                         bint head_last=False) noexcept nogil:
    """The value of the input 0..last headed by position h (0, or ``last``
    with ``head_last``): sum over start rules (B, C) of L[B][0][h] *
    R[C][h][last]."""
    cdef int N = ch.N, q, h = last if head_last else 0
    cdef size_t NN = <size_t> N * N
    cdef const V* Lf = <const V*> ch.Lf
    cdef const V* Rf = <const V*> ch.Rf
    cdef V acc = v_zero(tag)
    for q in range(g.nroot):
        acc = v_plus(acc, v_times(Lf[at(g.root[2 * q], 0, h, N, NN)],
                                  Rf[at(g.root[2 * q + 1], h, last, N, NN)], p), p)
    return acc


cdef V fill(V tag, Chart* ch, const Rules* g, const int* pl, const int* pr,
            const double* w, uint64_t p) noexcept nogil
cdef V run(V tag, CompiledRules rules, const int[::1] pl, const int[::1] pr,
           const double[:, ::1] w, uint64_t p) except *
cdef double log_inside(int kernel, Chart* ch, const Rules* g, const int* pl, const int* pr,
                       const double* w, bint* plain, Plain* pv, Scaled* sl) noexcept nogil
cdef int check_kernel(str kernel) except -1

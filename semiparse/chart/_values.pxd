# cython: language_level=3
"""The chart's value types and their semiring operations (inline, ``noexcept
nogil``), shared by every pass over a chart: one chart routine is
specialized at compile time for each type of the fused :c:type:`V`, the
operations chosen by ``if V is ...`` branches, so the inner loops are plain
C arithmetic.

Log values are :data:`Plain` probabilities (:mod:`semiparse.chart._plain`)
or :data:`Scaled` numbers (:mod:`semiparse.chart._logsum`); exact counts use
:data:`CountMod` / :data:`MaxCountMod` modulo a prime below 2**31 (products
fit in 64 bits), and the Python side combines several primes by the Chinese
remainder theorem when the double-precision count is too large to be exact.
"""
from libc.math cimport INFINITY, exp, log1p
from libc.stdint cimport uint64_t

from semiparse.chart._logsum cimport Scaled, from_log, scaled_dot, scaled_plus, scaled_times
from semiparse.chart._maxplus cimport MaxPlus, maxplus_dot
from semiparse.chart._plain cimport Plain, plain_dot, track


ctypedef struct CountF:
    double c

ctypedef struct CountMod:
    uint64_t c

ctypedef struct MaxCountF:
    double s
    double c

ctypedef struct MaxCountMod:
    double s
    uint64_t c

ctypedef struct MaxLogCount:  # best score and the log of its count: no overflow at any length
    double s
    double c

ctypedef fused V:
    MaxPlus
    Plain
    Scaled
    CountF
    CountMod
    MaxCountF
    MaxCountMod
    MaxLogCount


cdef inline V v_zero(V tag) noexcept nogil:
    if V is Scaled:
        tag.m, tag.e = 0.0, -INFINITY
    elif V is Plain:
        tag.p = 0.0
    elif V is MaxPlus:
        tag.s = -INFINITY
    elif V is CountF or V is CountMod:
        tag.c = 0
    elif V is MaxLogCount:
        tag.s = -INFINITY
        tag.c = -INFINITY
    else:
        tag.s = -INFINITY
        tag.c = 0
    return tag


cdef inline V v_one(V tag) noexcept nogil:
    if V is Scaled:
        tag.m, tag.e = 1.0, 0.0
    elif V is Plain:
        tag.p = 1.0
    elif V is MaxPlus:
        tag.s = 0.0
    elif V is CountF or V is CountMod:
        tag.c = 1
    elif V is MaxLogCount:
        tag.s = 0.0
        tag.c = 0.0
    else:
        tag.s = 0.0
        tag.c = 1
    return tag


cdef inline V v_edge(V tag, double score) noexcept nogil:
    """The value of an edge with this score (-inf: forbidden, i.e. zero); a
    plain chart takes its weights from `plain_weights`, scaled per dependent."""
    if score == -INFINITY:
        return v_zero(tag)
    if V is Scaled:
        tag = from_log(score)
    elif V is Plain:
        tag.p = exp(score)
    elif V is MaxPlus:
        tag.s = score
    elif V is CountF or V is CountMod:
        tag.c = 1
    elif V is MaxLogCount:
        tag.s = score
        tag.c = 0.0
    else:
        tag.s = score
        tag.c = 1
    return tag


cdef inline double log_add(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b)) without overflow (-inf is log 0)."""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a >= b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef inline V v_plus(V a, V b, uint64_t p) noexcept nogil:
    if V is MaxPlus:
        if b.s > a.s:
            a.s = b.s
        return a
    elif V is Scaled:
        return scaled_plus(a, b)
    elif V is Plain:
        a.p = a.p + b.p
        return a
    elif V is MaxLogCount:
        if a.s > b.s:
            return a
        if b.s > a.s:
            return b
        a.c = log_add(a.c, b.c)
        return a
    elif V is CountF:
        a.c = a.c + b.c
        return a
    elif V is CountMod:
        a.c = a.c + b.c
        if a.c >= p:
            a.c -= p
        return a
    else:
        if a.s > b.s:
            return a
        if b.s > a.s:
            return b
        a.c = a.c + b.c
        if V is MaxCountMod:
            if a.c >= p:
                a.c -= p
        return a


cdef inline V v_times(V a, V b, uint64_t p) noexcept nogil:
    if V is Scaled:
        a = scaled_times(a, b)
    elif V is Plain:
        a.p = a.p * b.p
    elif V is MaxPlus:
        a.s = a.s + b.s
    elif V is CountF:
        a.c = a.c * b.c
    elif V is CountMod:
        a.c = (a.c * b.c) % p
    else:
        if a.s == -INFINITY or b.s == -INFINITY:
            return v_zero(a)
        a.s = a.s + b.s
        if V is MaxCountF:
            a.c = a.c * b.c
        elif V is MaxLogCount:
            a.c = a.c + b.c
        else:
            a.c = (a.c * b.c) % p
    return a


cdef inline V v_dot(V tag, const V* a, const V* b, int n, uint64_t p) noexcept nogil:
    """sum_x a[x] * b[x] over x < n: the inner loop of every chart item (the
    log and max-plus charts have their own, vectorized)."""
    cdef V acc
    cdef int x
    if V is Scaled:
        return scaled_dot(a, b, n)
    elif V is Plain:
        return plain_dot(a, b, n)
    elif V is MaxPlus:
        return maxplus_dot(a, b, n)
    else:
        acc = v_zero(tag)
        for x in range(n):
            acc = v_plus(acc, v_times(a[x], b[x], p), p)
        return acc


cdef inline void v_track(V x, double* lo, double* hi) noexcept nogil:
    """Widen (lo, hi) to a Plain entry's value (other charts track nothing)."""
    if V is Plain:
        track(x.p, lo, hi)


# cython: language_level=3
"""The outside pass's hand-down of adjoints, shared by the compiled charts
(inline, ``noexcept nogil``).

An item's value is a sum of products ``a[k] * b[k]`` (times an edge for an
attachment); its adjoint is handed to both factors of every term in
proportion to the term's share of the item.  Adjoints are probabilities for
log charts (plain or scaled) and best tree scores for max-plus charts, so
they never overflow.
"""
from libc.math cimport INFINITY

from semiparse.chart._logsum cimport Scaled, unscale
from semiparse.chart._maxplus cimport MaxPlus
from semiparse.chart._plain cimport Plain, plain_back


ctypedef fused OV:
    MaxPlus
    Plain
    Scaled


cdef inline bint share(OV y, OV x, double adj, double* c, double* base) noexcept nogil:
    """The arguments of `back_rows` for an item y with adjoint adj whose terms
    are products times x (an edge, or one); False when there is nothing to
    hand down."""
    if OV is MaxPlus:
        if adj == -INFINITY or y.s == -INFINITY:
            return False
        c[0], base[0] = adj, (adj - y.s) + x.s
    elif OV is Plain:
        if adj == 0.0 or y.p == 0.0:
            return False
        c[0] = adj * x.p / y.p
    else:
        if adj == 0.0 or y.m == 0.0:
            return False
        c[0], base[0] = adj * x.m / y.m, y.e - x.e
    return True


cdef inline void back_rows(const OV* a, const OV* b, double c, double base,
                           double* ga, double* gb, int n) noexcept nogil:
    """Hand an item's adjoint (as prepared by `share`) to the factors of its
    terms a[k] * b[k]."""
    cdef int k
    cdef double t
    if OV is Plain:
        plain_back(a, b, c, ga, gb, n)
    elif OV is MaxPlus:
        for k in range(n):
            t = (a[k].s + b[k].s) + base
            if t > ga[k]:
                ga[k] = t
            if t > gb[k]:
                gb[k] = t
    else:
        for k in range(n):
            t = c * (a[k].m * b[k].m) * unscale(base - (a[k].e + b[k].e))
            ga[k] += t
            gb[k] += t

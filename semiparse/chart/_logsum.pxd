# cython: language_level=3
"""Scaled numbers for log-space sums without a logarithm per term, shared by
the compiled charts (inline, ``noexcept nogil``).

A nonnegative number is held as ``m * 2 ** (64 * e)`` with the mantissa
``m`` in [1, 2 ** 64) and ``e`` an integer stored in a double (zero: m = 0,
e = -inf), so its range is that of the log semiring while sums and products
are plain multiply-adds: a sum aligns its terms on a common exponent with
a power of two (built from bits, or looked up in a table), instead of an exp
and a log1p per term.
Terms more than 2 ** -800 below the largest are dropped (they are below the
precision of the sum).
"""
from libc.math cimport INFINITY, exp, floor, fma, log
from libc.stdint cimport uint64_t


ctypedef struct Scaled:
    double m
    double e

cdef union Bits:
    double d
    uint64_t u


cdef inline double unscale(double d) noexcept nogil:
    """2 ** (-64 d) for an integer d > -16 held in a double; 0 from d = 16 on
    (without a branch, so that loops over terms can use vector instructions)."""
    cdef Bits x
    cdef double c = d if d < 16.0 else 16.0
    x.u = (<uint64_t> (1023 - 64 * <int> c)) << 52
    return x.d if d < 16.0 else 0.0


cdef inline Scaled scaled(double m, double e) noexcept nogil:
    """m * 2 ** (64 e) (m >= 0 finite) with m brought into [1, 2 ** 64)."""
    cdef Scaled x
    if m == 0.0:
        x.m, x.e = 0.0, -INFINITY
        return x
    while m >= 18446744073709551616.0:
        m *= 5.421010862427522e-20
        e += 1
    while m < 1.0:
        m *= 18446744073709551616.0
        e -= 1
    x.m, x.e = m, e
    return x


cdef inline Scaled from_log(double s) noexcept nogil:
    """exp(s) (s finite or -inf) as a scaled number.

    The remainder ``s - e * 64 log 2`` is one fused multiply-add, rounded once
    to the precision of a number below 45: so the mantissa has the relative
    precision of a double however large ``|s|`` is, and two scores that
    differ by 1 keep that difference (with a rounded product, both would
    take an error of the size of the last digit of ``s``: about 0.1 at 1e15)."""
    cdef double e, r
    if s == -INFINITY:
        return scaled(0.0, 0.0)
    e = floor(s / 44.3614195558365)  # 64 log 2
    r = fma(-e, 44.3614195558365, s)
    # the quotient's rounding may put e one off, and r just outside [0, 64 log 2):
    # scaled() takes any finite mantissa (the bounds only keep exp finite)
    return scaled(exp(min(max(r, -44.3614195558365), 88.722839111673)), e)


cdef inline double to_log(Scaled x) noexcept nogil:
    if x.m == 0.0:
        return -INFINITY
    return log(x.m) + x.e * 44.3614195558365


cdef inline Scaled scaled_times(Scaled a, Scaled b) noexcept nogil:
    return scaled(a.m * b.m, a.e + b.e)


cdef inline Scaled scaled_plus(Scaled a, Scaled b) noexcept nogil:
    if b.m == 0.0:
        return a
    if a.m == 0.0:
        return b
    if a.e >= b.e:
        return scaled(a.m + b.m * unscale(a.e - b.e), a.e)
    return scaled(b.m + a.m * unscale(b.e - a.e), b.e)


cdef extern from *:
    """
    #include <math.h>
    /* 2 ** (64 (t - 16)) for t = 1 .. 29; 0 at t = 0 (a term 2 ** -1024 or
       less below the reference: below the precision of the sum) and NaN at
       t = 30 (2 ** 896 or more above it: beyond a double).  Not const, so
       that compilers keep the look-up rather than turn it into branches. */
    static double semiparse_scale_steps[31] = {
        0.0, 0x1p-960, 0x1p-896, 0x1p-832, 0x1p-768, 0x1p-704, 0x1p-640, 0x1p-576, 0x1p-512,
        0x1p-448, 0x1p-384, 0x1p-320, 0x1p-256, 0x1p-192, 0x1p-128, 0x1p-64, 0x1p0, 0x1p64,
        0x1p128, 0x1p192, 0x1p256, 0x1p320, 0x1p384, 0x1p448, 0x1p512, 0x1p576, 0x1p640,
        0x1p704, 0x1p768, 0x1p832, NAN};

    /* a[0] * b[0] for (mantissa, exponent) pairs as a multiple of
       2 ** (64 ref): the exponent difference clamped in integers (cmov) and
       one table look-up; a zero term (exponent -inf) converts to the
       smallest integer, so lands on 0. */
    static inline double semiparse_near_term(const double *a, const double *b, double ref) {
        long long t = (long long) ((a[1] + b[1]) - ref) + 16;
        t = t < 0 ? 0 : t;
        t = t > 30 ? 30 : t;
        return (a[0] * b[0]) * semiparse_scale_steps[t];
    }

    /* sum_k a[k] * b[k] as a multiple of 2 ** (64 ref); two running sums so
       that consecutive terms do not wait for each other. */
    static inline double semiparse_near_sum(const double *a, const double *b, int n, double ref) {
        double s0 = 0.0, s1 = 0.0;
        int k = 0;
        for (; k + 1 < n; k += 2) {
            s0 += semiparse_near_term(a + 2 * k, b + 2 * k, ref);
            s1 += semiparse_near_term(a + 2 * k + 2, b + 2 * k + 2, ref);
        }
        if (k < n)
            s0 += semiparse_near_term(a + 2 * k, b + 2 * k, ref);
        return s0 + s1;
    }
    """
    double near_sum "semiparse_near_sum"(const double* a, const double* b, int n, double ref) nogil


cdef inline double term(const Scaled* a, const Scaled* b, int k, double top) noexcept nogil:
    return (a[k].m * b[k].m) * unscale(top - (a[k].e + b[k].e))


cdef inline Scaled top_dot(const Scaled* a, const Scaled* b, int n) noexcept nogil:
    """sum_k a[k] * b[k]: the largest exponent first, then the mantissas
    aligned on it.  Two running maxima and four running sums, so that
    consecutive terms do not wait for each other."""
    cdef int k = 0
    cdef double top0 = -INFINITY, top1 = -INFINITY, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while k + 1 < n:
        if a[k].e + b[k].e > top0:
            top0 = a[k].e + b[k].e
        if a[k + 1].e + b[k + 1].e > top1:
            top1 = a[k + 1].e + b[k + 1].e
        k += 2
    if k < n and a[k].e + b[k].e > top0:
        top0 = a[k].e + b[k].e
    if top1 > top0:
        top0 = top1
    if top0 == -INFINITY:
        return scaled(0.0, 0.0)
    k = 0
    while k + 3 < n:
        s0 += term(a, b, k, top0)
        s1 += term(a, b, k + 1, top0)
        s2 += term(a, b, k + 2, top0)
        s3 += term(a, b, k + 3, top0)
        k += 4
    while k < n:
        s0 += term(a, b, k, top0)
        k += 1
    return scaled((s0 + s1) + (s2 + s3), top0)


cdef inline Scaled scaled_dot(const Scaled* a, const Scaled* b, int n) noexcept nogil:
    """sum_k a[k] * b[k] (no exp or log per term) in one pass: the terms are
    aligned on the exponent of the first, middle or last term, whichever is
    largest, which the exponents of neighbouring chart items rarely exceed by
    14 or more (then, or when those three terms are zero, :func:`top_dot`
    aligns on the largest exponent in a second pass)."""
    cdef double ref, s0
    if n <= 0:
        return scaled(0.0, 0.0)
    ref = max(a[0].e + b[0].e, a[n - 1].e + b[n - 1].e, a[n // 2].e + b[n // 2].e)
    if ref == -INFINITY:
        return top_dot(a, b, n)
    s0 = near_sum(<const double*> a, <const double*> b, n, ref)
    if s0 != s0:  # some term too far above ref
        return top_dot(a, b, n)
    return scaled(s0, ref)

# cython: language_level=3
"""Probabilities in plain doubles for the log charts' fast path, shared by
the compiled charts (inline, ``noexcept nogil``).

Every derivation of a split bilexical grammar attaches each position but the
root exactly once, so dividing the weights of the edges into each dependent
by the largest of them changes every tree's weight by the same factor
exp(sum of those maxima): the log partition is the log of the chart's value
plus that sum, and the posteriors are unchanged.  The scaled weights lie in
(0, 1]; the chart then holds plain doubles, and a sum of products costs a
multiply-add per term, as max-plus costs an add and a max.

The path is exact only while nothing underflows or overflows.  It is taken
when every nonzero weight is at least 1e-100 and every nonzero
chart entry lies in [1e-100, 1e150]: then a product of two
entries is in [1e-200, 1e300], an attachment (a sum of such products times a
weight) is at least 1e-300, above the smallest normal double (2.2e-308), and
a sum of fewer than 1e8 products stays below the largest double, so every
value keeps the relative precision of a sum of products of positive numbers.
Otherwise the caller computes again over scaled numbers
(:mod:`semiparse._logsum`), which have the range of the log semiring.
"""
from libc.math cimport INFINITY, NAN, exp


ctypedef struct Plain:
    double p

cdef extern from *:
    """
    /* the fast path's range: weights down to exp(-230.25) >= 1e-100, chart
       entries in [1e-100, 1e150] */
    static const double semiparse_plain_weight_log_low = -230.25;
    static const double semiparse_plain_low = 1e-100;
    static const double semiparse_plain_high = 1e150;
    """
    const double WEIGHT_LOG_LOW "semiparse_plain_weight_log_low"
    const double LOW "semiparse_plain_low"
    const double HIGH "semiparse_plain_high"


cdef inline bint out_of_range(double x) noexcept nogil:
    """Whether a chart entry leaves the fast path's range (0 stays in it)."""
    return x != 0.0 and (x < LOW or x > HIGH)


cdef inline double plain_weights(const double* w, Plain* W, int N) noexcept nogil:
    """W[h * N + d] = exp(w[h * N + d] - max_h w[h * N + d]); returns the sum
    of those maxima over the dependents d >= 1 (columns without a finite
    score count 0), or NaN when some finite weight falls below 1e-100 or
    the sum is not finite."""
    cdef int h, d
    cdef double top, x, total = 0.0
    for d in range(N):
        top = -INFINITY
        for h in range(N):
            if w[h * N + d] > top:
                top = w[h * N + d]
        if top == -INFINITY:
            top = 0.0
        for h in range(N):
            x = w[h * N + d] - top
            if x < WEIGHT_LOG_LOW and x > -INFINITY:
                return NAN
            W[h * N + d].p = exp(x)
        if d > 0:
            total += top
    if total - total != 0.0:  # inf or NaN
        return NAN
    return total


cdef extern from *:
    """
    /* sum_k a[k] * b[k]; four running sums so that consecutive terms do not
       wait for each other. */
    static inline double semiparse_plain_dot(const double *a, const double *b, int n) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int k = 0;
        for (; k + 3 < n; k += 4) {
            s0 += a[k] * b[k];
            s1 += a[k + 1] * b[k + 1];
            s2 += a[k + 2] * b[k + 2];
            s3 += a[k + 3] * b[k + 3];
        }
        for (; k < n; k++)
            s0 += a[k] * b[k];
        return (s0 + s1) + (s2 + s3);
    }

    /* ga[k] += c * a[k] * b[k] and gb[k] += the same: an item's adjoint
       handed to both factors of each term (the arrays do not overlap, which
       lets the compiler use vector instructions) */
    static inline void semiparse_plain_back(const double *restrict a, const double *restrict b,
                                            double c, double *restrict ga,
                                            double *restrict gb, int n) {
        for (int k = 0; k < n; k++) {
            double t = c * (a[k] * b[k]);
            ga[k] += t;
            gb[k] += t;
        }
    }
    """
    double plain_dot_c "semiparse_plain_dot"(const double* a, const double* b, int n) nogil
    void plain_back_c "semiparse_plain_back"(const double* a, const double* b, double c,
                                             double* ga, double* gb, int n) nogil


cdef inline Plain plain_dot(const Plain* a, const Plain* b, int n) noexcept nogil:
    cdef Plain x
    x.p = plain_dot_c(<const double*> a, <const double*> b, n)
    return x


cdef inline void plain_back(const Plain* a, const Plain* b, double c, double* ga, double* gb,
                            int n) noexcept nogil:
    plain_back_c(<const double*> a, <const double*> b, c, ga, gb, n)

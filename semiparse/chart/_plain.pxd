# cython: language_level=3
"""Probabilities in plain doubles for the log charts' fast path, shared by
the compiled charts (inline, ``noexcept nogil``).

Every derivation of a split bilexical grammar attaches each position but the
root exactly once, and an item covering a span attaches a fixed set of
positions (as many as the span's width).  So the weights of the edges into
each dependent can be divided by the largest of them, and every weight then
multiplied by one more factor, without changing the posteriors: each tree's
weight, and each item's, changes by a factor known from the positions it
covers, and the log partition is the log of the chart's value plus the log
of the factors (``Chart.log_scale``).  The chart holds plain doubles, and a
sum of products costs a multiply-add per term, as max-plus costs an add and
a max.

Entries still drift with the width of their span (by a few powers of ten per
word when the scores are peaked: the edges a tree can use are below their
column's largest).  After each width the chart checks the range of that
width's entries.  When they come within 1e40 of the range's limits below
while their middle (the geometric mean of the smallest and the largest)
is off 1 by 1e20 or more, it multiplies every weight by one factor chosen
to bring that middle back to 1, and every entry already filled by that
factor to the power of its width (a pass over the entries filled so far;
a few per input at most on random scores).

The path is exact only while nothing underflows or overflows.  It goes on
while every nonzero weight lies in [1e-100, 1e100] and every nonzero entry
in [:data:`LOW`, :data:`HIGH`] = [1e-100, 1e100]: then a product of two
entries is in [1e-200, 1e200], an attachment (a sum of such products times a
weight) is in [1e-300, n * 1e300], above the smallest normal double
(2.2e-308) and below the largest for fewer than 1e8 positions, so every
value keeps the relative precision of a sum of products of positive numbers.
(An entry of the width being filled is only ever multiplied by an entry of
width 0, which is 0 or 1, so checking a width once it is filled is enough.)
Otherwise the caller computes again over scaled numbers
(:mod:`semiparse.chart._logsum`), which have the range of the log semiring.
"""
from libc.math cimport INFINITY, NAN, exp, log


ctypedef struct Plain:
    double p

cdef extern from *:
    """
    /* the fast path's range: weights and chart entries in [1e-100, 1e100]
       (so a finite score at most 230.25 below its column's largest), and
       the range of a width's entries, and of the product of its smallest
       and largest (the square of their geometric mean), beyond which the
       chart rescales */
    static const double semiparse_plain_weight_log_low = -230.25;
    static const double semiparse_plain_low = 1e-100;
    static const double semiparse_plain_high = 1e100;
    static const double semiparse_plain_near_low = 1e-60;
    static const double semiparse_plain_near_high = 1e60;
    static const double semiparse_plain_drift_low = 1e-40;
    static const double semiparse_plain_drift_high = 1e40;

    /* lo, hi: the smallest nonzero and the largest of the values seen */
    static inline void semiparse_plain_track(double x, double *lo, double *hi) {
        double y = x != 0.0 ? x : HUGE_VAL;
        *lo = y < *lo ? y : *lo;
        *hi = x > *hi ? x : *hi;
    }
    """
    const double WEIGHT_LOG_LOW "semiparse_plain_weight_log_low"
    const double LOW "semiparse_plain_low"
    const double HIGH "semiparse_plain_high"
    const double NEAR_LOW "semiparse_plain_near_low"
    const double NEAR_HIGH "semiparse_plain_near_high"
    const double DRIFT_LOW "semiparse_plain_drift_low"
    const double DRIFT_HIGH "semiparse_plain_drift_high"
    void track "semiparse_plain_track"(double x, double* lo, double* hi) nogil


cdef inline bint in_range(double lo, double hi) noexcept nogil:
    """Whether values tracked into (lo, hi) are in the fast path's range."""
    return lo >= LOW and hi <= HIGH


cdef inline bint drifted(double lo, double hi) noexcept nogil:
    """Whether the entries of one width, tracked into (lo, hi), near the
    range's limits with their middle far enough from 1 that moving it back
    to 1 moves them away (none: lo = inf, hi = 0, no drift)."""
    return (hi > 0.0 and (lo < NEAR_LOW or hi > NEAR_HIGH)
            and (lo * hi < DRIFT_LOW or lo * hi > DRIFT_HIGH))


cdef inline double recentring(double lo, double hi, int width) noexcept nogil:
    """The log of the factor per position that brings the middle of entries
    of this width, tracked into (lo, hi), to 1."""
    return -log(lo * hi) / (2 * width)


cdef inline bint plain_rescale_weights(Plain* W, int N, double factor) noexcept nogil:
    """Multiply the N x N weights by factor; False when a nonzero weight
    leaves the range."""
    cdef size_t x
    cdef double lo = INFINITY, hi = 0.0
    for x in range(<size_t> N * N):
        W[x].p *= factor
        track(W[x].p, &lo, &hi)
    return in_range(lo, hi)


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

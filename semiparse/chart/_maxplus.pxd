# cython: language_level=3
"""Max-plus values and their dot product, shared by the compiled charts
(inline, ``noexcept nogil``)."""


ctypedef struct MaxPlus:
    double s


cdef extern from *:
    """
    /* max_k (a[k] + b[k]) (-inf for n = 0); four running maxima so that
       consecutive terms do not wait for each other (the maximum does not
       depend on the order, so the value is the one of a single pass) */
    static inline double semiparse_max_dot(const double *a, const double *b, int n) {
        double m0 = -HUGE_VAL, m1 = -HUGE_VAL, m2 = -HUGE_VAL, m3 = -HUGE_VAL, t;
        int k = 0;
        for (; k + 3 < n; k += 4) {
            t = a[k] + b[k];         m0 = t > m0 ? t : m0;
            t = a[k + 1] + b[k + 1]; m1 = t > m1 ? t : m1;
            t = a[k + 2] + b[k + 2]; m2 = t > m2 ? t : m2;
            t = a[k + 3] + b[k + 3]; m3 = t > m3 ? t : m3;
        }
        for (; k < n; k++) {
            t = a[k] + b[k];
            m0 = t > m0 ? t : m0;
        }
        m0 = m1 > m0 ? m1 : m0;
        m2 = m3 > m2 ? m3 : m2;
        return m2 > m0 ? m2 : m0;
    }
    """
    double max_dot "semiparse_max_dot"(const double* a, const double* b, int n) nogil


cdef inline MaxPlus maxplus_dot(const MaxPlus* a, const MaxPlus* b, int n) noexcept nogil:
    cdef MaxPlus x
    x.s = max_dot(<const double*> a, <const double*> b, n)
    return x

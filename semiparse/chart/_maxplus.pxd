# cython: language_level=3
"""Max-plus values and their dot product, shared by the compiled charts
(inline, ``noexcept nogil``)."""


ctypedef struct MaxPlus:
    double s


cdef extern from *:
    """
    /* max_k (a[k] + b[k]) (-inf for n = 0); several running maxima so that
       consecutive terms do not wait for each other (the maximum does not
       depend on the order, so the value is the one of a single pass): two
       SSE2 registers of two where the machine has them (every x86-64), else
       four scalars.  The terms are never NaN (weights are finite or -inf). */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline double semiparse_max_dot(const double *a, const double *b, int n) {
        __m128d m0 = _mm_set1_pd(-HUGE_VAL), m1 = m0;
        double m, t;
        int k = 0;
        for (; k + 3 < n; k += 4) {
            m0 = _mm_max_pd(m0, _mm_add_pd(_mm_loadu_pd(a + k), _mm_loadu_pd(b + k)));
            m1 = _mm_max_pd(m1, _mm_add_pd(_mm_loadu_pd(a + k + 2), _mm_loadu_pd(b + k + 2)));
        }
        m0 = _mm_max_pd(m0, m1);
        m0 = _mm_max_pd(m0, _mm_unpackhi_pd(m0, m0));
        m = _mm_cvtsd_f64(m0);
        for (; k < n; k++) {
            t = a[k] + b[k];
            m = t > m ? t : m;
        }
        return m;
    }
    #else
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
    #endif
    """
    double max_dot "semiparse_max_dot"(const double* a, const double* b, int n) nogil


cdef inline MaxPlus maxplus_dot(const MaxPlus* a, const MaxPlus* b, int n) noexcept nogil:
    cdef MaxPlus x
    x.s = max_dot(<const double*> a, <const double*> b, n)
    return x

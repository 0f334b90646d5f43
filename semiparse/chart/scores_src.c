/* Guards over a batch's scores before the log partition batch reads them
   (semiparse/chart/_partition.pyx): loops written so that the compiler
   vectorizes them.  Compiled into each extension that declares its
   functions with cdef extern from "semiparse/chart/scores_src.h" (setup.py). */
#include <math.h>
#include <stddef.h>

#include "scores_src.h"

/* whether one of the m x m scores at w (rows stride apart) is NaN or
   +inf: independent flags per lane, so the compiler vectorizes it */
int semiparse_any_nan_or_inf(const double *w, ptrdiff_t stride, ptrdiff_t m) {
    int bad = 0;
    for (ptrdiff_t h = 0; h < m; h++) {
        const double *row = w + h * stride;
        for (ptrdiff_t d = 0; d < m; d++)
            bad |= !(row[d] < HUGE_VAL);
    }
    return bad;
}

/* the largest absolute value of the finite entries among n scores at
   most 0 (shifted scores), 0.0 if none: four running maxima */
double semiparse_largest_below_zero(const double *x, ptrdiff_t n) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, t;
    ptrdiff_t k = 0;
    for (; k + 3 < n; k += 4) {
        t = x[k] > -HUGE_VAL ? -x[k] : 0.0;         m0 = t > m0 ? t : m0;
        t = x[k + 1] > -HUGE_VAL ? -x[k + 1] : 0.0; m1 = t > m1 ? t : m1;
        t = x[k + 2] > -HUGE_VAL ? -x[k + 2] : 0.0; m2 = t > m2 ? t : m2;
        t = x[k + 3] > -HUGE_VAL ? -x[k + 3] : 0.0; m3 = t > m3 ? t : m3;
    }
    for (; k < n; k++) {
        t = x[k] > -HUGE_VAL ? -x[k] : 0.0;
        m0 = t > m0 ? t : m0;
    }
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

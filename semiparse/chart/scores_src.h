/* Guards over scores (scores_src.c). */
#ifndef SEMIPARSE_SCORES_SRC_H
#define SEMIPARSE_SCORES_SRC_H

#include <stddef.h>

/* whether one of the m x m scores at w (rows stride apart) is NaN or +inf */
int semiparse_any_nan_or_inf(const double *w, ptrdiff_t stride, ptrdiff_t m);

/* the largest absolute value of the finite entries among n scores at most
   0, 0.0 if none */
double semiparse_largest_below_zero(const double *x, ptrdiff_t n);

#endif

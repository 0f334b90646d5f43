/* Eisner's algorithm for first-order projective trees over plain
   probabilities, the charts stored by width (the log partition batch's fast
   path for the grammar "projective", semiparse/chart/_partition.pyx), and
   the sums of products it runs on.  A plain C file so that any extension
   can use it: a .pyx that declares its functions with
   cdef extern from "semiparse/chart/eisner_src.h" gets this file compiled in
   (setup.py). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "eisner_src.h"

/* The sums of products run in AVX2 registers where the processor has
   them (a second copy chosen at load time; the same operations in the
   same order per lane, so the same results to the bit).  Each copy starts
   on a 64-byte boundary, so that the speed of their short inner loops does
   not depend on where the linker happens to place them (up to 10% apart at
   20 words). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define SEMIPARSE_VECTOR_CLONES __attribute__((target_clones("avx2", "default"), aligned(64)))
#else
#define SEMIPARSE_VECTOR_CLONES
#endif

/* out[i] = sum_{x < count} a[x * sa + i] * b[x * sb + i] for i < n, the
   sums of eight spans at a time held in registers over x */
SEMIPARSE_VECTOR_CLONES static void semiparse_sum_rows(double *restrict out, const double *a, ptrdiff_t sa,
                                      const double *b, ptrdiff_t sb, int count, int n) {
    int i = 0, x, j;
    for (; i + 8 <= n; i += 8) {
        double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        const double *p = a + i, *q = b + i;
        for (x = 0; x < count; x++, p += sa, q += sb)
            for (j = 0; j < 8; j++)
                acc[j] += p[j] * q[j];
        for (j = 0; j < 8; j++)
            out[i + j] = acc[j];
    }
    for (; i < n; i++) {
        double t = 0.0;
        const double *p = a + i, *q = b + i;
        for (x = 0; x < count; x++, p += sa, q += sb)
            t += *p * *q;
        out[i] = t;
    }
}

/* out[i] (+)= sum_{x < c(i)} a[x * sa + i] * b[x * sb + i] for i < n,
   c(i) = count + i (up) or count - i; blocks of eight spans sum in
   registers up to the largest c of the block, so the terms past a
   span's own c must be 0 (the callers' zero entries) */
SEMIPARSE_VECTOR_CLONES static void semiparse_gather(double *restrict out, int add, const double *a, ptrdiff_t sa,
                                    const double *b, ptrdiff_t sb, int n, int count, int up) {
    int i = 0, x, j, c;
    for (; i + 8 <= n; i += 8) {
        double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        const double *p = a + i, *q = b + i;
        c = up ? count + i + 7 : count - i;
        for (x = 0; x < c; x++, p += sa, q += sb)
            for (j = 0; j < 8; j++)
                acc[j] += p[j] * q[j];
        for (j = 0; j < 8; j++)
            out[i + j] = add ? out[i + j] + acc[j] : acc[j];
    }
    for (; i < n; i++) {
        double acc = 0.0;
        const double *p = a + i, *q = b + i;
        c = up ? count + i : count - i;
        for (x = 0; x < c; x++, p += sa, q += sb)
            acc += *p * *q;
        out[i] = add ? out[i] + acc : acc;
    }
}

/* First-order projective trees (the grammar "projective": one left and
   one right state, every position starting in them) by Eisner's
   algorithm over plain probabilities, the charts stored by width:
   x[k * N + i] is the item over i..i+k, so each width's sums run over
   contiguous rows of all its spans at once (vector instructions, no
   per-span loop of its own).  cr / cl: complete items headed at i /
   at i+k; ir / il: the edge i -> i+k / i+k -> i with what lies
   between.  The same sums of products as the split-grammar kernel (the
   exact path while every nonzero entry lies in [1e-100, 1e100]), in
   another order; it does not rescale: NaN tells the caller to take
   that kernel, which does.  The outside pass differentiates Z in
   reverse, the adjoints scaled by 1/Z, so that an edge's posterior is
   its adjoint times its entry.  w: the N x N shifted scores (at most
   0, -inf forbidding), work: room for 10 N x N doubles; edges (or
   NULL): the N x N posteriors.  Returns log Z (-inf: no tree). */
double semiparse_eisner(const double *w, int N, double *work, double *edges) {
    size_t NN = (size_t) N * N;
    double *wr = work, *wl = work + NN, *cr = work + 2 * NN, *cl = work + 3 * NN,
           *ir = work + 4 * NN, *il = work + 5 * NN, *gcr = work + 6 * NN,
           *gcl = work + 7 * NN, *gir = work + 8 * NN, *gil = work + 9 * NN;
    double lo = HUGE_VAL, hi = 0.0, z;
    int k, x, i, n;
    for (k = 0; k < N; k++)
        for (i = 0; i + k < N; i++) {
            double a = w[(size_t) i * N + i + k], b = w[(size_t) (i + k) * N + i];
            if ((a > -HUGE_VAL && a < -230.25) || (b > -HUGE_VAL && b < -230.25))
                return NAN;  /* a weight below 1e-100 */
            wr[(size_t) k * N + i] = a > -HUGE_VAL ? exp(a) : 0.0;
            wl[(size_t) k * N + i] = b > -HUGE_VAL ? exp(b) : 0.0;
        }
    for (i = 0; i < N; i++)
        cr[i] = cl[i] = 1.0;
    for (k = 1; k < N; k++) {
        n = N - k;
        double *restrict s = ir + (size_t) k * N;
        double *restrict t = il + (size_t) k * N;
        double *restrict r = cr + (size_t) k * N;
        double *restrict l = cl + (size_t) k * N;
        /* sum_x R[i][i+x] L[i+x+1][i+k] */
        semiparse_sum_rows(s, cr, N, cl + (size_t) (k - 1) * N + 1, 1 - N, k, n);
        for (i = 0; i < n; i++) {
            t[i] = s[i] * wl[(size_t) k * N + i];
            s[i] = s[i] * wr[(size_t) k * N + i];
        }
        /* R[i][i+k] = sum_{x=1..k} IR[i][i+x] R[i+x][i+k] */
        semiparse_sum_rows(r, ir + N, N, cr + (size_t) (k - 1) * N + 1, 1 - N, k, n);
        /* L[i][i+k] = sum_{x<k} L[i][i+x] IL[i+k][i+x] */
        semiparse_sum_rows(l, cl, N, il + (size_t) k * N, 1 - N, k, n);
        for (i = 0; i < n; i++) {
            double v;
            v = s[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
            v = t[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
            v = r[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
            v = l[i]; if (v != 0.0) { lo = v < lo ? v : lo; hi = v > hi ? v : hi; }
        }
        if (lo < 1e-100 || hi > 1e100)
            return NAN;  /* beyond the exact range: the rescaling kernel */
    }
    z = cr[(size_t) (N - 1) * N];
    if (z == 0.0)
        return -HUGE_VAL;
    if (edges == NULL)
        return log(z);
    /* The outside pass gathers: each item's adjoint is summed, in
       registers, over the wider items it is part of (whose adjoints
       are final), width by width from the widest.  The sums run over
       whole blocks of spans, so every entry outside a width's spans
       must be 0: those of the inside charts, of the weights (read where
       a product's other factor is 0) and of the adjoints. */
    double *arrays[10] = {wr, wl, cr, cl, ir, il, gcr, gcl, gir, gil};
    for (x = 0; x < 10; x++)
        for (k = 1; k < N; k++)
            memset(arrays[x] + (size_t) k * N + (N - k), 0, (size_t) k * sizeof(double));
    memset(ir, 0, (size_t) N * sizeof(double));  /* width 0: no edge */
    memset(il, 0, (size_t) N * sizeof(double));
    for (x = N - 1; x >= 1; x--) {
        n = N - x;
        double *restrict r = gcr + (size_t) x * N, *restrict l = gcl + (size_t) x * N;
        double *restrict s = gir + (size_t) x * N, *restrict t = gil + (size_t) x * N;
        /* R[i][i+x]: left factor of the attachments over i..i+k, right
           factor of R[i'][i+x] = IR[i'][i] R[i][i+x] */
        semiparse_gather(r, 0, gir + (size_t) (x + 1) * N, N, cl + x + 1, N, n, n - 1, 0);
        semiparse_gather(r, 1, gcr + (size_t) (x + 1) * N - 1, N - 1, ir + N - 1, N - 1, n, 0, 1);
        if (x == N - 1)
            r[0] += 1.0 / z;
        /* L[i][i+x]: left factor of L[i][i+k] = L[i][i+x] IL[i+k][i+x],
           right factor of the attachments over i'..i+x */
        semiparse_gather(l, 0, gcl + (size_t) (x + 1) * N, N, il + N + x, N, n, n - 1, 0);
        semiparse_gather(l, 1, gir + (size_t) (x + 1) * N - 1, N - 1, cr - 1, N - 1, n, 0, 1);
        /* IR[i][i+x] in R[i][i+k] = IR[i][i+x] R[i+x][i+k] (k = x: R
           of width 0, 1); IL[i+x][i] in L[i'][i+x] = L[i'][i] IL[i+x][i] */
        semiparse_gather(s, 0, gcr + (size_t) x * N, N, cr + x, N, n, n, 0);
        semiparse_gather(t, 0, gcl + (size_t) x * N, N - 1, cl, N - 1, n, 1, 1);
        /* the edges' posteriors; s becomes the adjoint of the
           attachments' sum (gir's width x is not read again) */
        for (i = 0; i < n; i++) {
            edges[(size_t) i * N + i + x] = s[i] * ir[(size_t) x * N + i];
            edges[(size_t) (i + x) * N + i] = t[i] * il[(size_t) x * N + i];
            s[i] = s[i] * wr[(size_t) x * N + i] + t[i] * wl[(size_t) x * N + i];
        }
    }
    for (i = 0; i < N; i++)
        edges[(size_t) i * N + i] = 0.0;
    for (size_t q = 0; q < NN; q++)
        if (!(edges[q] <= 2.0))  /* inf or NaN: the adjoints left their range */
            return NAN;
    return log(z);
}

/* Eisner's algorithm over plain probabilities stored by width
   (eisner_src.c). */
#ifndef SEMIPARSE_EISNER_SRC_H
#define SEMIPARSE_EISNER_SRC_H

/* log Z of first-order projective trees over the N x N shifted scores w (at
   most 0, -inf forbidding), and with edges (else NULL) the N x N edge
   posteriors; work: room for 10 N x N doubles.  -inf: no tree; NaN: an
   entry left [1e-100, 1e100], where the rescaling split-grammar kernel
   must take over. */
double semiparse_eisner(const double *w, int N, double *work, double *edges);

#endif

"""The engine: split bilexical CKY over a semiring.

``engine`` parses a string with a split grammar (checked inputs, batches,
exact counting, the generic Python engine for any semiring); ``_cky`` holds
the Cython kernels and the ``.pxd`` files their row primitives (max-plus,
scaled and plain log-sum-exp, the outside pass's adjoint rows).
"""

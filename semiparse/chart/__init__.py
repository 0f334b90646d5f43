"""The engine: split bilexical CKY over a semiring.

``engine`` parses a string with a split grammar (checked inputs, batches,
exact counting, the generic Python engine for any semiring); the Cython
kernels are split by pass (``_inside``, ``_outside``, ``_backtrace``,
``_columns``, ``_scores``, ``_partition``, over ``_values`` and ``_layout``),
their Python entry points named in ``kernels`` and their C interface in
``cky.pxd``, with the ``.pxd`` files of their row primitives (max-plus,
scaled and plain log-sum-exp, the outside pass's adjoint rows).
"""

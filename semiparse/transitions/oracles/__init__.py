"""Dynamic oracles of the dependency systems: the oracle interface
(``protocol``), ``oracle`` (``Oracle``: methods, strategies, batches), the
gold trees (``gold``), the methods of each system (``methods``), the grammar
method (``grammar_method``, in C ``_grammar_rows``), the exhaustive search
(``exhaustive``, ``_exhaustive``, with its memo ``_memo.pxd``), the derived
static oracle (``static``), viability, and the interface of C row kernels
(``_row_kernels``)."""

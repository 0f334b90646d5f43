"""The chart kernels' Python entry points (Cython, one module per pass), for
the code that calls them: import them from here, not from the private
modules behind them.

- :func:`inside`: the value of the whole input in a numeric kernel
  (``_inside``);
- :func:`edge_marginals`, :func:`edge_marginals_batch`: edge posteriors and
  max-marginals, the outside pass (``_outside``);
- :func:`best_tree`, :func:`uniforms_needed`: a best tree, first or drawn
  uniformly among the best (``_backtrace``);
- :func:`maxplus_by_columns`, :func:`maxplus_gathered`: the grammar oracle's
  max-plus charts (``_columns``);
- :func:`log_partition_batch`: log Z and posteriors of a padded batch in one
  call (``_partition``);
- :func:`largest_score`, :func:`shift_columns`, :data:`ROUNDING_LIMIT`: the
  scores' shift per dependent and the rounding bound (``_scores``);
- :class:`CompiledRules`, :func:`reachable`: a grammar's tables for the
  kernels (``_layout``).
"""
from semiparse.chart._backtrace import best_tree, uniforms_needed
from semiparse.chart._columns import maxplus_by_columns, maxplus_gathered
from semiparse.chart._inside import inside
from semiparse.chart._layout import CompiledRules, reachable
from semiparse.chart._outside import edge_marginals, edge_marginals_batch
from semiparse.chart._partition import log_partition_batch
from semiparse.chart._scores import ROUNDING_LIMIT, largest_score, shift_columns

__all__ = [
    "CompiledRules", "ROUNDING_LIMIT", "best_tree", "edge_marginals", "edge_marginals_batch",
    "inside", "largest_score", "log_partition_batch", "maxplus_by_columns", "maxplus_gathered",
    "reachable", "shift_columns", "uniforms_needed",
]

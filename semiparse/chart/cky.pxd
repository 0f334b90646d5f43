# cython: language_level=3
"""The chart's C interface for compiled code outside ``semiparse.chart``
(``cimport`` from here, not from the private modules behind it).

- a grammar's rules as C tables (:c:type:`Rules`, held by
  :class:`CompiledRules`) and a chart in one allocation (:c:type:`Chart`,
  :c:func:`chart_bytes`, :c:func:`chart_layout`): ``_layout.pxd``;
- the grammar oracle's max-plus column chart, filled many times without the
  GIL in one reusable block (:c:func:`maxplus_bytes`,
  :c:func:`maxplus_layout`, :c:func:`maxplus_columns`): ``_columns.pxd``;
- the row primitives that the hand-written Eisner floors share with the
  chart (inline): plain probabilities (``_plain.pxd``), scaled log numbers
  (``_logsum.pxd``), max-plus rows (``_maxplus.pxd``) and the outside
  pass's hand-down (``_adjoint.pxd``).
"""
from semiparse.chart._adjoint cimport back_rows, share
from semiparse.chart._columns cimport maxplus_bytes, maxplus_columns, maxplus_layout
from semiparse.chart._layout cimport Chart, CompiledRules, Rules, chart_bytes, chart_layout
from semiparse.chart._logsum cimport Scaled, from_log, scaled, scaled_dot, scaled_times, to_log
from semiparse.chart._maxplus cimport MaxPlus, max_dot
from semiparse.chart._plain cimport (Plain, drifted, in_range, plain_dot, plain_rescale_weights,
                                     plain_weights, recentring, track)

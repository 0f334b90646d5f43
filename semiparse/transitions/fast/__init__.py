"""Fast exact oracles, registered with :mod:`semiparse.transitions.registry` on import.

| system | method | gold trees | strategies | cost per call |
|---|---|---|---|---|
| arc_standard | ``linear`` | projective | none | O(k + m) cells, few roots each |
| arc_standard | ``right_stack`` | projective | none, lbr, strict_lbr | O(l_L l_R (l_L + l_R)) |
| arc_standard | ``cubic_critical`` | any | all | O((k + m')^3) |
| arc_eager, arc_hybrid | ``cost`` | projective | none | O(n) |
| lr_spine | ``spine_table`` | projective | none | see docs/fast-oracles.md |

``linear``, ``right_stack`` and ``cost`` also score configurations in C
without the GIL (their ``rows`` kernels), for ``Oracle.scores_batch``.

See docs/fast-oracles.md for the algorithms and measured speed.
"""
from semiparse.transitions.registry import register_method
from semiparse.transitions.fast import _arcstd, _costs, arc_standard, costs

register_method("arc_standard", "linear", arc_standard.linear, strategies=("none",),
                projective_only=True, rank=10, rows=_arcstd.LINEAR_ROWS)
register_method("arc_standard", "right_stack", arc_standard.right_stack,
                strategies=("none", "lbr", "strict_lbr"), projective_only=True, rank=20,
                rows=_arcstd.RIGHT_STACK_ROWS)
register_method("arc_standard", "cubic_critical", arc_standard.cubic_critical,
                strategies=("none", "lbr", "strict_lbr", "rbl"), projective_only=False, rank=50)
register_method("arc_eager", "cost", costs.arc_eager, strategies=("none",),
                projective_only=True, rank=10, rows=_costs.EAGER_ROWS)
register_method("arc_hybrid", "cost", costs.arc_hybrid, strategies=("none",),
                projective_only=True, rank=10, rows=_costs.HYBRID_ROWS)
from semiparse.transitions.fast import lr_spine  # noqa: E402  registers the lr_spine system and its oracle

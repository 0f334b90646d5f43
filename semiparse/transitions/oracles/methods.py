"""The oracle methods of each system: the shipped fast kernels
(:mod:`semiparse.transitions.fast`), registered here, and those users
register (:func:`~semiparse.transitions.systems.registry.register_method`).

| system | method | gold trees | strategies | cost per call |
|---|---|---|---|---|
| arc_standard | ``linear`` | projective | none | O(k + m) cells, few roots each |
| arc_standard | ``right_stack`` | projective | none, lbr, strict_lbr | O(l_L l_R (l_L + l_R)) |
| arc_standard | ``cubic_critical`` | any | all | O((k + m')^3) |
| arc_eager, arc_hybrid | ``cost`` | projective | none | O(n) |
| lr_spine | ``spine_table`` | projective | none | see docs/fast-oracles.md |

``linear``, ``right_stack`` and ``cost`` also score configurations in C
without the GIL (their ``rows`` kernels), for ``Oracle.scores_batch``.
"""
from semiparse.transitions.fast import _arcstd, _costs, arc_standard, costs, lr_spine
from semiparse.transitions.systems.registry import register_method, registered_methods

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
register_method("lr_spine", "spine_table", lr_spine.scores, strategies=("none",),
                projective_only=True, rank=20)


def methods(system):
    """Registered methods of ``system`` (a name), lowest rank first."""
    return sorted(registered_methods(system).values(), key=lambda m: (m.rank, m.name))


def system_methods(system):
    """The oracle methods of a system object, lowest rank first: those
    registered under its ``method_key`` and its ``own_methods``."""
    found = {m.name: m for m in methods(system.method_key)} if system.method_key else {}
    found.update(system.own_methods)
    return sorted(found.values(), key=lambda m: (m.rank, m.name))

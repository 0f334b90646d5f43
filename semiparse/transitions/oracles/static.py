"""The static oracle, derived from the dynamic one.

The canonical computation of a gold tree takes, in each configuration, the
first optimal transition (per :func:`semiparse.oracle`) in the order the
system declares: ``static_order`` (a system file's optional top-level key,
e.g. ``static_order = ["left_arc", "right_arc", "reduce", "shift"]``; LR-spine
declares ``left_arc_K``, ``right_arc_K``, ``shift``), by default the order of
its transitions.  A name ``X_K`` in the order stands for the family
``X_1, X_2, ...``, taken by increasing K.  See docs/oracles.md for where this
equals the usual hand-written static oracles.
"""
import re

_FAMILY = re.compile(r"^(.*)_(\d+)$")


def static_rank(system):
    """A sort key over the transition names of ``system``: declared order first."""
    order = getattr(system, "static_order", None) or system.transitions
    position = {name: i for i, name in enumerate(order)}

    def rank(name):
        if name in position:
            return position[name], 0
        m = _FAMILY.match(name)
        if m and f"{m.group(1)}_K" in position:
            return position[f"{m.group(1)}_K"], int(m.group(2))
        raise ValueError(f"transition {name!r} is not in the static order of {system.name}: "
                         f"{', '.join(order)}")

    return rank


def static_choice(rank, optimal):
    """The first of the optimal transition names by ``rank`` (None if there is none)."""
    return min(optimal, key=rank) if optimal else None

"""Cost-based arc-eager and arc-hybrid oracles (method ``cost``), see :mod:`._costs`.

The kernels give the values; which transitions apply is decided by the
shipped definitions' rules, run by their compiled machines, as in
``Oracle.scores_batch``."""
import functools

import numpy as np

from semiparse.transitions.runtime._configuration import kernel_scores
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.fast import _costs
from semiparse.transitions.fast.arc_standard import _Cache

_work = _Cache(_costs.CostsGold)


@functools.cache
def _columns(system, kernel):
    """The machine of the shipped ``system`` and its code of each kernel
    column, looked up once (not on every call)."""
    machine = machine_for(system)
    return machine, np.array([machine.code(t) for t in kernel.columns], dtype=np.intc)


def _scores(system, kernel, stack, buffer, heads, arcs):
    machine, columns = _columns(system, kernel)
    return kernel_scores(machine, kernel, _work.get(heads), columns, len(heads) - 1,
                         tuple(stack), tuple(buffer), None if arcs is None else tuple(arcs))


def arc_eager(stack, buffer, heads, arcs, strategy):
    """sigma of each legal arc-eager transition (projective gold trees)."""
    return _scores("arc_eager", _costs.EAGER_ROWS, stack, buffer, heads, arcs)


def arc_hybrid(stack, buffer, heads, arcs, strategy):
    """sigma of each legal arc-hybrid transition (projective gold trees)."""
    return _scores("arc_hybrid", _costs.HYBRID_ROWS, stack, buffer, heads, arcs)

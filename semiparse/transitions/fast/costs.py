"""Cost-based arc-eager and arc-hybrid oracles (method ``cost``), see :mod:`._costs`."""
import functools

from semiparse.transitions.system import load_system
from semiparse.transitions.fast import _costs
from semiparse.transitions.fast.arc_standard import _Cache

_work = _Cache(_costs.Work)


def arc_eager(stack, buffer, heads, arcs, strategy):
    """sigma of each legal arc-eager transition (projective gold trees): the
    kernel's values of the transitions systems/arc_eager.toml allows."""
    sigma = _costs.eager_scores(_work.get(heads), tuple(stack), tuple(buffer), tuple(arcs))
    return {t: sigma[t] for t in _arc_eager().legal(stack, buffer, arcs)}


@functools.cache
def _arc_eager():
    """The shipped arc-eager definition, looked up once (not on every call)."""
    return load_system("arc_eager")


def arc_hybrid(stack, buffer, heads, arcs, strategy):
    """sigma of each legal arc-hybrid transition (projective gold trees)."""
    return _costs.hybrid_scores(_work.get(heads), tuple(stack), tuple(buffer))

"""Thread pools kept between calls, one per size.

``scores_batch`` runs its rows on threads at every step of a training loop,
where a few hundred microseconds of work would otherwise pay for starting
and joining new threads each time.  A forked child starts with no pools (the
parent's threads do not exist in it)."""
import os
from concurrent.futures import ThreadPoolExecutor

_pools = {}


def pool(n):
    """The shared pool of ``n`` threads (made on first use).  Its tasks must
    not wait on tasks of the same pool."""
    found = _pools.get(n)
    if found is None:
        found = _pools[n] = ThreadPoolExecutor(n, thread_name_prefix=f"semiparse-{n}")
    return found


os.register_at_fork(after_in_child=_pools.clear)

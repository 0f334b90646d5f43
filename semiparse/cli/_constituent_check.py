"""``semiparse check top_down|in_order``: the walk check
(:mod:`semiparse.cli._walk_check`) on the constituent gold trees of
:mod:`semiparse.testing.constituent_checking`."""
from semiparse.cli._walk_check import SKIPPED_LIMIT, run as run_walks  # noqa: F401
from semiparse.testing import constituent_checking


def run(system, examples=200, max_n=7, seed=0, ptb=None, max_states=constituent_checking.MAX_STATES):
    """Check the oracle of ``system`` as ``semiparse check`` does, printing its
    lines; 0 if it agrees with the exhaustive search, else 1 (see
    :func:`semiparse.cli._walk_check.run`)."""
    return run_walks(system, constituent_checking, examples, max_n, seed, ptb, max_states)

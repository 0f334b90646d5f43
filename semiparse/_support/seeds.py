"""Random generators from the seeds users give.

``random.Random(n)`` seeds with ``abs(n)``, so ``--seed -1`` would repeat
the run of ``--seed 1``.  :func:`seeded` keeps every seed >= 0 as Python
seeds it (recorded runs stay the same) and gives a negative seed a
generator of its own.
"""
import operator
import random


def seeded(seed):
    """A ``random.Random`` for ``seed`` (an integer, numpy's too, or None
    for a fresh one)."""
    if seed is not None:
        seed = operator.index(seed)
    if seed is None or seed >= 0:
        return random.Random(seed)
    return random.Random(f"negative seed {seed}")

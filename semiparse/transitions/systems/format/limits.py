"""Sizes every part of the transition machinery agrees on."""

# The most words a configuration takes: every size the C state computes
# (10 * (n + 1) ints) stays far inside an int.
MAX_WORDS = 2 ** 24


def max_steps(n):
    """The most transitions a computation over ``n`` words takes before it
    is taken for a loop: a system whose moves can undo each other (a shift
    and an unshift) may pass the loader's check (``transitions/systems/format/loops.py``
    proves termination or searches short sentences for a cycle) and then
    loop on longer ones.  Terminating systems take a few transitions per
    word (quadratically many where words are moved back and forth), far
    below this bound."""
    return 4 * (n + 2) ** 2


def loop_error(system, n):
    """The ValueError of a computation over ``n`` words that reached
    :func:`max_steps` transitions in ``system`` (its name)."""
    return ValueError(f"{system}: {max_steps(n)} transitions on a sentence of {n} words without "
                      f"reaching a final configuration: the system's moves can loop (semiparse "
                      f"check on its file shows a configuration that repeats)")

# cython: language_level=3
"""Checks at the Python entry points of the fast oracle kernels, which index
their tables with the positions they are given unchecked."""
from semiparse.transitions.runtime._validation cimport stack_and_buffer_top


cdef inline int check_configuration(tuple stack, tuple buffer, int n) except -1:
    """ValueError unless ``stack`` (exact ints increasing from the root 0) and
    ``buffer`` (the positions after the stack top up to ``n``) form a
    configuration of an ``n``-word sentence."""
    if stack is None or buffer is None or stack_and_buffer_top(stack, buffer, n, 0) < 0:
        raise ValueError(f"not a configuration of this {n}-word gold tree: expected a stack of "
                         f"ints increasing from the root 0 and a buffer of the positions after "
                         f"its top up to {n}, got stack {stack!r:.60} and buffer {buffer!r:.60}")
    return 0


cdef inline object projective_gold(heads):
    """``heads`` as a tuple of ints, or ValueError unless it is a projective
    tree of at most 2**24 words: the kernels index their tables with the
    heads, and are exact for projective gold trees only."""
    from semiparse.heads import check_tree, no_crossing

    heads = check_tree(heads)
    if len(heads) > 2 ** 24:
        raise ValueError(f"gold tree of {len(heads) - 1} words: the kernels take at most 2**24")
    if not no_crossing(heads):
        raise ValueError("this oracle kernel needs a projective gold tree")
    return heads

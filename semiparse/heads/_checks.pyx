# cython: language_level=3, wraparound=False, cdivision=True
"""The tree checks of :mod:`semiparse.heads` in C (see ``_checks.pxd``)."""
from libc.stdlib cimport free, malloc

import operator
from collections.abc import Sequence

import numpy as np


cdef bint reaches_root(const int* heads, int m, int* seen) noexcept nogil:
    """Whether every word's head is a position and its head chain reaches 0
    (any number of words may be attached to 0); ``seen`` has room for m ints."""
    cdef int d, x
    for d in range(1, m):
        if heads[d] < 0 or heads[d] >= m:
            return False
    for d in range(m):
        seen[d] = 0
    seen[0] = -1
    for d in range(1, m):  # seen[x]: the walk that first reached x
        x = d
        while seen[x] == 0:
            seen[x] = d
            x = heads[x]
        if seen[x] == d:  # this walk closed a loop
            return False
    return True


cdef bint projective(const int* heads, int m, int* work) noexcept nogil:
    """Whether a tree (checked by :func:`reaches_root`) has no crossing edges;
    ``work`` has room for 3 * m ints.

    One sweep over the positions with a stack of the right ends of the open
    edges, innermost on top: an edge starting at ``left`` must end inside
    the innermost open one.  The edges starting at ``left`` come longest
    first: the one to its head (when to the right), then its right
    dependents from the farthest (kept in a linked list).  A right dependent
    beyond the head makes the tree non-projective (the head's way up to the
    root crosses that edge), and the sweep rejects it at once."""
    cdef int* stack = work
    cdef int* first_right = work + m
    cdef int* next_right = work + 2 * m
    cdef int d, h, left, top = 0
    for d in range(m):
        first_right[d] = -1
    for d in range(1, m):  # ascending: each new one goes in front
        h = heads[d]
        if h < d:
            next_right[d] = first_right[h]
            first_right[h] = d
    stack[0] = m
    for left in range(m):
        while stack[top] <= left:
            top -= 1
        h = heads[left]
        if h > left:
            if h > stack[top]:
                return False
            top += 1
            stack[top] = h
        d = first_right[left]
        while d != -1:
            if d > stack[top]:
                return False
            top += 1
            stack[top] = d
            d = next_right[d]
    return True


cdef Py_ssize_t _length(heads) except -1:
    """The number of heads, or ValueError for what is not a sequence."""
    if not isinstance(heads, (list, tuple, range, np.ndarray, Sequence)) \
            or isinstance(heads, (str, bytes)):
        raise ValueError(f"heads must be a sequence of integer heads, got "
                         f"{type(heads).__name__}")
    m = len(heads)
    if m > 2 ** 30:
        raise ValueError(f"heads: {m} positions is more than the C checks take (2**30)")
    return m


cpdef object exact_index(x):
    """``x`` as a Python int if it is an integer (numpy's too), else TypeError:
    bools, floats and strings are not read as numbers (``int()`` would take
    ``True`` or ``0.5`` for positions)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{type(x).__name__} is not an integer")
    return operator.index(x)


cdef int* _copy(heads, int m) except NULL:
    """``heads`` (a sequence of m integers) in a new C array of 4 * m ints,
    the rest for scratch; a head that does not fit in an int becomes
    ``-2``, which no check takes for a position.  ValueError for an element
    that is not an integer (a float, a bool, a string, None: ``int()`` would
    silently read ``True`` or ``0.5`` as positions)."""
    cdef int* a = <int*>malloc(4 * max(m, 1) * sizeof(int))
    cdef int i
    if a is NULL:
        raise MemoryError()
    try:
        for i in range(m):
            x = heads[i]
            if type(x) is not int:
                try:
                    x = exact_index(x)
                except TypeError:
                    raise ValueError(f"heads must be a sequence of integer heads: element {i} "
                                     f"is {x!r:.60} ({type(x).__name__})") from None
            try:
                a[i] = x
            except OverflowError:
                a[i] = -2
    except BaseException:
        free(a)
        raise
    return a


def is_tree(heads):
    """Quick check: every word's head chain reaches 0 (any number of words
    may be attached to 0).  ``heads`` a sequence of integers with ``heads[0]
    == -1`` (ValueError otherwise); see :func:`semiparse.heads.tree_problems`
    for what is wrong when it is not a tree."""
    cdef int m = _length(heads)
    cdef int* a = _copy(heads, m)
    try:
        return reaches_root(a, m, a + m)
    finally:
        free(a)


def no_crossing(heads):
    """Whether a tree (``heads[0] == -1``, every word's head chain reaching
    0) is projective, in O(n); ValueError for a sequence that is not such a
    tree (the sweep indexes its arrays with the heads)."""
    cdef int m = _length(heads)
    cdef int* a = _copy(heads, m)
    try:
        if m == 0 or a[0] != -1 or not reaches_root(a, m, a + m):
            raise ValueError(f"no_crossing needs a tree: heads[0] == -1 and every word's head "
                             f"chain reaching 0, got {[a[i] for i in range(min(m, 12))]}"
                             f"{' ...' if m > 12 else ''}")
        return projective(a, m, a + m)
    finally:
        free(a)

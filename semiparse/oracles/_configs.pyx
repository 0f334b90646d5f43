"""C-level acceptance test for the configurations of stack/buffer systems.

Every oracle call validates the configuration it is given.  :func:`accepts`
answers that in one pass over exact Python ints without allocating; the
Python validator (``RewriteSystem.validate``) takes over when it says no, to
normalize unusual inputs (numpy integers) or to say what is wrong.
"""


cdef Py_ssize_t stack_and_buffer_top(tuple stack, tuple buffer, Py_ssize_t n) except -3:
    """The stack top if ``stack`` (positions bottom first, increasing, the root
    0 at the bottom) and ``buffer`` (the consecutive positions from some start
    after the top up to ``n``) fit an ``n``-word sentence, else -1.  Elements
    must be exact ints (anything else answers -1)."""
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, x, prev = -1
    cdef object item
    if k == 0:
        return -1
    for i in range(k):
        item = stack[i]
        if type(item) is not int:
            return -1
        x = item
        if (i == 0 and x != 0) or x <= prev or x > n:
            return -1
        prev = x
    for i in range(m):
        item = buffer[i]
        if type(item) is not int:
            return -1
        x = item
        if x != n - m + 1 + i:
            return -1
    if m and n - m + 1 <= prev:
        return -1
    return prev


cpdef bint accepts(tuple stack, tuple buffer, object arcs, Py_ssize_t n, bint headed_below):
    """Whether ``(stack, buffer, arcs)`` is a configuration of an ``n``-word sentence.

    stack and buffer as :func:`stack_and_buffer_top` requires.  arcs: None,
    or a tuple of ``n + 1`` heads, each -1 or another position, the root and
    buffer nodes headless; a headed stack node is headed by the node just
    below it (``headed_below``) or none is headed.  Elements must be exact
    ints (anything else answers False).
    """
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, h
    cdef object item
    if stack_and_buffer_top(stack, buffer, n) < 0:
        return False
    if arcs is None:
        return True
    if type(arcs) is not tuple or len(<tuple>arcs) != n + 1:
        return False
    for i in range(n + 1):
        item = (<tuple>arcs)[i]
        if type(item) is not int:
            return False
        h = item
        if h < -1 or h > n or h == i or (i == 0 and h != -1):
            return False
        if h >= 0 and i > n - m:  # a buffer node
            return False
    for i in range(1, k):
        h = (<tuple>arcs)[<Py_ssize_t>stack[i]]
        if h >= 0 and (not headed_below or h != <Py_ssize_t>stack[i - 1]):
            return False
    return True

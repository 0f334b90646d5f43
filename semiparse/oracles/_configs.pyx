"""C-level acceptance test for the configurations of stack/buffer systems.

Every oracle call validates the configuration it is given.  :func:`accepts`
answers that in one pass over exact Python ints without allocating; the
Python validator (``RewriteSystem.validate``) takes over when it says no, to
normalize unusual inputs (numpy integers) or to say what is wrong.
"""


cpdef bint accepts(tuple stack, tuple buffer, object arcs, Py_ssize_t n, bint headed_below):
    """Whether ``(stack, buffer, arcs)`` is a configuration of an ``n``-word sentence.

    stack: positions bottom first, increasing, the root 0 at the bottom.
    buffer: the consecutive positions from some start after the stack top up
    to ``n``.  arcs: None, or a tuple of ``n + 1`` heads, each -1 or another
    position, the root and buffer nodes headless; a headed stack node is
    headed by the node just below it (``headed_below``) or none is headed.
    Elements must be exact ints (anything else answers False).
    """
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, x, h, prev = -1
    cdef object item
    if k == 0:
        return False
    for i in range(k):
        item = stack[i]
        if type(item) is not int:
            return False
        x = item
        if (i == 0 and x != 0) or x <= prev or x > n:
            return False
        prev = x
    for i in range(m):
        item = buffer[i]
        if type(item) is not int:
            return False
        x = item
        if x != n - m + 1 + i:
            return False
    if m and n - m + 1 <= prev:
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

# cython: language_level=3, wraparound=False, cdivision=True
"""C-level acceptance test for the configurations of stack/buffer systems.

Every oracle call validates the configuration it is given.  :func:`accepts`
answers that in a few passes over exact Python ints (in a reused scratch
array); the Python validator (``RewriteSystem.validate``) takes over when it says no, to
normalize unusual inputs (numpy integers) or to say what is wrong.
"""
from libc.stdlib cimport realloc


cdef inline Py_ssize_t _rank(Py_ssize_t x, Py_ssize_t n, int root) noexcept:
    """x's place in sentence order: the root after the last word when it
    starts at the end of the buffer (``root`` 1), else first."""
    return n + 1 if x == 0 and root == 1 else x


cdef Py_ssize_t stack_and_buffer_top(tuple stack, tuple buffer, Py_ssize_t n, int root) except -3:
    """The rank (see :func:`_rank`) of the stack top (0 for an empty stack) if
    ``stack`` (positions bottom first, in sentence order) and ``buffer`` (the
    consecutive positions from some start after the top up to the end) fit an
    ``n``-word sentence, else -1.  ``root``: 0 the root 0 is at the stack
    bottom, 1 it is the last position (end of the buffer), 2 it is in neither.
    Elements must be exact ints (anything else answers -1)."""
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, x, prev = 0, last
    cdef object item
    if root == 0 and k == 0:
        return -1
    for i in range(k):
        item = stack[i]
        if type(item) is not int:
            return -1
        x = item
        if x < 0 or x > n or (x == 0 and root == 2):
            return -1
        x = _rank(x, n, root)
        if (root == 0 and (i == 0) != (x == 0)) or (i and x <= prev):
            return -1
        prev = x
    last = n + 1 if root == 1 else n
    for i in range(m):
        item = buffer[i]
        if type(item) is not int:
            return -1
        x = item
        if x < 0 or x > n or (x == 0 and root != 1) or _rank(x, n, root) != last - m + 1 + i:
            return -1
    if m and last - m + 1 <= prev:
        return -1
    return prev


cdef int* _scratch = NULL
cdef Py_ssize_t _scratch_cap = 0


cdef int* check_scratch(Py_ssize_t count) except NULL:
    """Room for ``count`` ints for one configuration check, kept between
    calls (valid until the next call; checks never nest)."""
    global _scratch, _scratch_cap
    cdef int* p
    if count > _scratch_cap:
        p = <int*>realloc(_scratch, count * sizeof(int))
        if p == NULL:
            raise MemoryError()
        _scratch, _scratch_cap = p, count
    return _scratch


cpdef bint accepts(tuple stack, tuple buffer, object arcs, Py_ssize_t n, bint headed_below,
                   bint popped_headed=True, int root=0) except -1:
    """Whether ``(stack, buffer, arcs)`` is a configuration of an ``n``-word sentence.

    stack and buffer as :func:`stack_and_buffer_top` requires (``root`` as there).  arcs: None,
    or a tuple of ``n + 1`` heads, each -1 or another position, the root and
    buffer nodes headless; a headed stack node is headed by the node just
    below it (``headed_below``) or none is headed; every position that left
    the stack and buffer is headed (``popped_headed``, true of the shipped
    systems); no cycle.  Elements must be exact ints (anything else answers
    False).
    """
    cdef Py_ssize_t k = len(stack), m = len(buffer), i, h, d, x
    cdef object item
    cdef int* heads
    cdef int* state
    if stack_and_buffer_top(stack, buffer, n, root) < 0:
        return False
    if arcs is None:
        return True
    if type(arcs) is not tuple or len(<tuple>arcs) != n + 1:
        return False
    heads = check_scratch(2 * (n + 1))
    state = heads + n + 1    # 0 unseen, 1 on the current path, 2 ends headless, 3 stack or buffer
    for i in range(n + 1):
        item = (<tuple>arcs)[i]
        if type(item) is not int:
            return False
        h = item
        if h < -1 or h > n or h == i or (i == 0 and h != -1):
            return False
        heads[i] = <int>h
        state[i] = 0
    for i in range(m):
        if heads[<Py_ssize_t>buffer[i]] >= 0:
            return False
        state[<Py_ssize_t>buffer[i]] = 3
    for i in range(k):
        state[<Py_ssize_t>stack[i]] = 3
        if heads[<Py_ssize_t>stack[i]] >= 0 and (
                i == 0 or not headed_below
                or heads[<Py_ssize_t>stack[i]] != <Py_ssize_t>stack[i - 1]):
            return False
    for d in range(1, n + 1):
        if state[d] == 0 and heads[d] < 0:
            if popped_headed:
                return False
            state[d] = 2
    # a stack node is headless or headed by the node below it, and buffer
    # nodes are headless: only the positions that left both can be on a cycle
    for d in range(n + 1):
        x = d
        while state[x] == 0:
            state[x] = 1
            x = heads[x]
            if x < 0:
                break
        if x >= 0 and state[x] == 1:
            return False
        x = d
        while x >= 0 and state[x] == 1:
            state[x] = 2
            x = heads[x]
    return True

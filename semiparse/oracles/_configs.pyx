"""C-level acceptance test for the configurations of stack/buffer systems.

Every oracle call validates the configuration it is given.  :func:`accepts`
answers that in a few passes over exact Python ints (in a reused scratch
array); the Python validator (``RewriteSystem.validate``) takes over when it says no, to
normalize unusual inputs (numpy integers) or to say what is wrong.
"""
from libc.stdlib cimport realloc


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
                   bint popped_headed=True) except -1:
    """Whether ``(stack, buffer, arcs)`` is a configuration of an ``n``-word sentence.

    stack and buffer as :func:`stack_and_buffer_top` requires.  arcs: None,
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
    if stack_and_buffer_top(stack, buffer, n) < 0:
        return False
    if arcs is None:
        return True
    if type(arcs) is not tuple or len(<tuple>arcs) != n + 1:
        return False
    heads = check_scratch(2 * (n + 1))
    state = heads + n + 1    # 0 unseen, 1 on the current path, 2 ends headless, 3 stack
    for i in range(n + 1):
        item = (<tuple>arcs)[i]
        if type(item) is not int:
            return False
        h = item
        if h < -1 or h > n or h == i or (i == 0 and h != -1):
            return False
        if h >= 0 and i > n - m:  # a buffer node
            return False
        heads[i] = <int>h
        state[i] = 0
    for i in range(k):
        state[<Py_ssize_t>stack[i]] = 3
        if i and heads[<Py_ssize_t>stack[i]] >= 0 and (
                not headed_below or heads[<Py_ssize_t>stack[i]] != <Py_ssize_t>stack[i - 1]):
            return False
    for d in range(n + 1 - m):
        if state[d] == 0 and heads[d] < 0:
            if popped_headed:
                return False
            state[d] = 2
    # stack nodes end at the root and buffer nodes are headless: only the
    # positions that left both can be on a cycle
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

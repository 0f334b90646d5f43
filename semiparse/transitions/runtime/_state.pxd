# cython: language_level=3
"""One parser configuration in C, shared by every compiled part of semiparse.

``StateC`` holds a configuration of a stack/buffer transition system over a
sentence of ``n`` words (positions ``0..n``, 0 the root): the stack (an int
array, bottom first), the buffer (an int array stored back to front, so that
the front is its last element and popping or pushing the front is O(1); it
need not be a contiguous suffix of the sentence), the arcs built so far with
their labels, and the per-node child bookkeeping the features read (leftmost /
rightmost two children, left / right valency, left / right label sets).  Each
array has room for ``n + 1`` entries, which suffices because a transition
never increases the number of nodes on the stack and the buffer together.

All functions but :func:`state_load` (which reads Python sequences) are
inline, ``noexcept nogil``; none checks bounds (callers test legality first).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.stdint cimport uint64_t


cdef struct StateC:
    int n              # words 1..n, 0 is the root
    int stack_len
    int buffer_len
    int* stack         # bottom first
    int* buffer        # back first: buffer[buffer_len - 1] is the front
    int* head          # head of each position, -1 if none
    int* label         # label of the arc into each position, -1 if none
    int* l1            # leftmost child
    int* l2            # second leftmost child
    int* r1            # rightmost child
    int* r2            # second rightmost child
    int* vl            # number of left children
    int* vr            # number of right children
    uint64_t* lsl      # bit set of left children's labels (label l sets bit l % 64)
    uint64_t* lsr      # bit set of right children's labels (likewise)


cdef inline size_t state_n_ints(int n) noexcept nogil:
    return <size_t>(10 * (n + 1))


cdef inline StateC* state_new(int n) noexcept nogil:
    """A configuration with an empty stack and buffer and no arcs (NULL if out of memory)."""
    cdef StateC* s = <StateC*>malloc(sizeof(StateC))
    cdef int* block = <int*>malloc(state_n_ints(n) * sizeof(int))
    cdef uint64_t* sets = <uint64_t*>malloc(2 * (n + 1) * sizeof(uint64_t))
    if s is NULL or block is NULL or sets is NULL:
        free(s)
        free(block)
        free(sets)
        return NULL
    s.n = n
    s.stack = block
    s.buffer = block + (n + 1)
    s.head = block + 2 * (n + 1)
    s.label = block + 3 * (n + 1)
    s.l1 = block + 4 * (n + 1)
    s.l2 = block + 5 * (n + 1)
    s.r1 = block + 6 * (n + 1)
    s.r2 = block + 7 * (n + 1)
    s.vl = block + 8 * (n + 1)
    s.vr = block + 9 * (n + 1)
    s.lsl = sets
    s.lsr = sets + (n + 1)
    state_clear(s)
    return s


cdef inline void state_clear(StateC* s) noexcept nogil:
    """Empty the stack and buffer, and remove every arc and child record."""
    cdef int i, width = s.n + 1
    for i in range(6 * width):     # head, label, l1, l2, r1, r2
        s.head[i] = -1
    for i in range(2 * width):     # vl, vr; lsl, lsr
        s.vl[i] = 0
        s.lsl[i] = 0
    s.stack_len = 0
    s.buffer_len = 0


cdef inline void state_free(StateC* s) noexcept nogil:
    if s is not NULL:
        free(s.stack)
        free(s.lsl)
        free(s)


cdef inline void state_copy(StateC* dst, const StateC* src) noexcept nogil:
    """Copy src into dst (both for the same n)."""
    memcpy(dst.stack, src.stack, state_n_ints(src.n) * sizeof(int))
    memcpy(dst.lsl, src.lsl, 2 * (src.n + 1) * sizeof(uint64_t))
    dst.stack_len = src.stack_len
    dst.buffer_len = src.buffer_len


cdef inline int stack_at(const StateC* s, int i) noexcept nogil:
    """The i-th stack node from the top (0 = top), or -1."""
    return s.stack[s.stack_len - 1 - i] if 0 <= i < s.stack_len else -1


cdef inline int buffer_at(const StateC* s, int i) noexcept nogil:
    """The i-th buffer node from the front (0 = front), or -1."""
    return s.buffer[s.buffer_len - 1 - i] if 0 <= i < s.buffer_len else -1


cdef inline void push_stack(StateC* s, int x) noexcept nogil:
    s.stack[s.stack_len] = x
    s.stack_len += 1


cdef inline int pop_stack(StateC* s) noexcept nogil:
    s.stack_len -= 1
    return s.stack[s.stack_len]


cdef inline void push_buffer_front(StateC* s, int x) noexcept nogil:
    s.buffer[s.buffer_len] = x
    s.buffer_len += 1


cdef inline int pop_buffer_front(StateC* s) noexcept nogil:
    s.buffer_len -= 1
    return s.buffer[s.buffer_len]


cdef inline void add_arc(StateC* s, int h, int d, int lab) noexcept nogil:
    """Record the arc h -> d with label lab and update h's child bookkeeping.

    The label sets are 64-bit: with more than 64 labels, labels l and l + 64
    share a bit, so the label-set features (Zhang and Nivre 2011) tell them
    apart no longer; the parse itself, which reads the labels, is unaffected."""
    s.head[d] = h
    s.label[d] = lab
    if d < h:
        s.vl[h] += 1
        s.lsl[h] |= (<uint64_t>1) << (lab & 63)
        if s.l1[h] == -1 or d < s.l1[h]:
            s.l2[h] = s.l1[h]
            s.l1[h] = d
        elif s.l2[h] == -1 or d < s.l2[h]:
            s.l2[h] = d
    else:
        s.vr[h] += 1
        s.lsr[h] |= (<uint64_t>1) << (lab & 63)
        if s.r1[h] == -1 or d > s.r1[h]:
            s.r2[h] = s.r1[h]
            s.r1[h] = d
        elif s.r2[h] == -1 or d > s.r2[h]:
            s.r2[h] = d


cdef inline int spine_at(const StateC* s, int root, bint left, int k) noexcept nogil:
    """The k-th node (1 = root) of root's left (or right) spine, or -1."""
    cdef int x = root
    while k > 1 and x >= 0:
        x = s.l1[x] if left else s.r1[x]
        k -= 1
    return x


cdef enum:
    # where the root (position 0) is in the initial configuration
    ROOT_STACK_BOTTOM = 0   # stack [0], buffer 1..n
    ROOT_BUFFER_END = 1     # stack [], buffer 1..n 0
    ROOT_NONE = 2           # stack [], buffer 1..n


cdef inline void state_init(StateC* s, int root) noexcept nogil:
    """The initial configuration for a root placement ROOT_* (nothing else changed)."""
    cdef int i
    s.stack_len = 0
    s.buffer_len = 0
    if root == ROOT_STACK_BOTTOM:
        push_stack(s, 0)
    elif root == ROOT_BUFFER_END:
        push_buffer_front(s, 0)
    for i in range(s.n, 0, -1):
        push_buffer_front(s, i)


cdef inline void state_init_standard(StateC* s) noexcept nogil:
    """The usual initial configuration: stack [0], buffer 1..n."""
    state_init(s, ROOT_STACK_BOTTOM)


cdef inline int state_load(StateC* s, stack, buffer, arcs) except -1:
    """Make s the configuration ``(stack, buffer, arcs)`` of Python ints
    (``arcs`` None: no arcs); ValueError if it does not fit s's n words."""
    cdef tuple st = tuple(stack), bu = tuple(buffer)
    cdef Py_ssize_t i, k = len(st), m = len(bu)
    cdef int n = s.n, x, d, h
    if k + m > n + 1 or (arcs is not None and len(arcs) != n + 1):
        raise ValueError(f"configuration stack={list(stack)} buffer={list(buffer)} does not "
                         f"fit a sentence of {n} words")
    for i in range(k + m):
        x = st[i] if i < k else bu[i - k]
        if not 0 <= x <= n:
            raise ValueError(f"position {x} out of range 0..{n}")
    state_clear(s)
    for i in range(k):
        push_stack(s, st[i])
    for i in range(m - 1, -1, -1):
        push_buffer_front(s, bu[i])
    if arcs is not None:
        for d in range(n + 1):
            h = arcs[d]
            if h >= 0:
                if h > n or h == d:
                    raise ValueError(f"arcs[{d}] = {h} is not a head in 0..{n} other than {d}")
                add_arc(s, h, d, -1)
    return 0

# cython: language_level=3, wraparound=False, cdivision=True
"""LR-spine's moves (``_lr_spine_moves.pxd``) for Python: transition names
and codes, the legal moves and their effect on a configuration of tuples,
and the C acceptance test of its configurations (:func:`accepts`), for the
class ``LRSpine`` and the compiled machine's names."""
from libc.stdlib cimport free, malloc

from semiparse.transitions.runtime._state cimport StateC, state_free, state_load, state_new
from semiparse.transitions.runtime._validation cimport check_scratch, stack_and_buffer_top

from semiparse.transitions.systems.format.limits import MAX_WORDS


def code_of(str name):
    """The code of a transition name, or None if it names no LR-spine move:
    K is written in ASCII digits without a leading zero (one name per move),
    at most MAX_WORDS + 1 (no spine is longer, and the code fits an int)."""
    if name == "shift":
        return SPINE_SHIFT
    kind, _, k = name.rpartition("_")
    if (kind in ("left_arc", "right_arc") and k.isascii() and k.isdigit() and k[0] != "0"
            and len(k) <= 9 and int(k) <= MAX_WORDS + 1):
        return (SPINE_LEFT if kind == "left_arc" else SPINE_RIGHT) + 4 * (int(k) - 1)
    return None


def name_of(code):
    """The transition name of a code, or None if no move has it."""
    if code == SPINE_SHIFT:
        return "shift"
    if code > 0 and (code & 3) in (SPINE_LEFT, SPINE_RIGHT):
        return f"{'left_arc' if (code & 3) == SPINE_LEFT else 'right_arc'}_{(code >> 2) + 1}"
    return None


cdef StateC* _loaded(stack, buffer, arcs) except NULL:
    """A new state holding the configuration (free it with state_free)."""
    cdef StateC* s = state_new(max(len(arcs) - 1, 0))
    if s is NULL:
        raise MemoryError()
    try:
        state_load(s, stack, buffer, arcs)
    except BaseException:
        state_free(s)
        raise
    return s


def legal(stack, buffer, arcs not None):
    """Names of the legal moves: shift, left_arc_K, right_arc_K (K increasing)."""
    cdef StateC* s = _loaded(stack, buffer, arcs)
    cdef int* codes = <int*>malloc((2 * s.n + 3) * sizeof(int))  # shift and two spines
    cdef int count, i
    try:
        if codes is NULL:
            raise MemoryError()
        count = spine_legal_codes(s, codes)
        return [name_of(codes[i]) for i in range(count)]
    finally:
        free(codes)
        state_free(s)


def apply(tuple stack not None, tuple buffer not None, tuple arcs not None, int code):
    """``(stack, buffer, arcs, edge)`` after the move ``code``, or None if it
    is not legal; ``edge`` is ``(head, dependent)`` or None."""
    cdef StateC* s = _loaded(stack, buffer, arcs)
    cdef int h, d, i
    try:
        if not spine_legal(s, code):
            return None
        edge = (h, d) if spine_arc(s, code, &h, &d) else None
        spine_apply(s, code, -1)
        return (tuple([s.stack[i] for i in range(s.stack_len)]),
                tuple([s.buffer[i] for i in range(s.buffer_len - 1, -1, -1)]),
                tuple([s.head[i] for i in range(s.n + 1)]), edge)
    finally:
        state_free(s)


cpdef bint accepts(tuple stack, tuple buffer, tuple arcs, Py_ssize_t n) except -1:
    """Whether ``(stack, buffer, arcs)`` is an LR-spine configuration of an
    ``n``-word sentence, as ``LRSpine.validate_slowly`` decides, for exact ints
    (anything else answers False): the stack increasing from the root 0, the
    buffer the positions after the top up to n, stack roots and buffer nodes
    headless, every other position headed by an earlier position that is not
    in the buffer, no cycle, and the stack trees covering consecutive
    positions in stack order."""
    cdef Py_ssize_t k, m, i, d, x, h, steps, bstart
    cdef object item
    cdef int* heads
    cdef int* owner
    if stack is None or buffer is None or arcs is None:
        return False
    k, m = len(stack), len(buffer)
    if n < 0 or len(arcs) != n + 1 or stack_and_buffer_top(stack, buffer, n, 0) < 0:
        return False
    bstart = n - m + 1
    heads = check_scratch(2 * (n + 1))
    owner = heads + n + 1             # stack index of the tree of each position, -1 unknown
    for d in range(n + 1):
        owner[d] = -1
    for i in range(k):
        owner[<Py_ssize_t>stack[i]] = i
    for d in range(n + 1):
        item = arcs[d]
        if type(item) is not int:
            return False
        h = item
        # stack roots and buffer nodes have no head, every other position has one
        if (h >= 0) == (owner[d] >= 0 or d >= bstart):
            return False
        if h >= bstart or h == d or h < -1:
            return False
        heads[d] = <int>h
    # every position before the buffer reaches a stack root (all others are headed)
    for d in range(bstart):
        x = d
        steps = 0
        while owner[x] < 0:
            x = heads[x]
            steps += 1
            if steps > n:
                return False            # a cycle
        i = owner[x]
        x = d
        while owner[x] < 0:
            owner[x] = <int>i
            x = heads[x]
    # the stack trees cover consecutive positions in stack order
    for d in range(1, bstart):
        if owner[d] != owner[d - 1] and owner[d] != owner[d - 1] + 1:
            return False
    return True

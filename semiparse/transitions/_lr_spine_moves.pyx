# cython: language_level=3, wraparound=False, cdivision=True
"""LR-spine's moves (``_lr_spine_moves.pxd``) for Python: transition names
and codes, and the legal moves and their effect on a configuration of
tuples, for the class ``LRSpine`` and the compiled machine's names."""
from libc.stdlib cimport free, malloc

from semiparse.transitions._state cimport StateC, state_free, state_load, state_new

from semiparse.transitions.limits import MAX_WORDS


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

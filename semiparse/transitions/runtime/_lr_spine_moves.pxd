# cython: language_level=3
"""LR-spine's moves (Goldberg et al. 2014, section 6.1), defined once on the
shared C state (``_state.pxd``): what the compiled machine runs for
LR-spine (``_machine.pxd``), the Python class ``LRSpine`` goes through, and
the oracle kernel (``fast/_lrspine.pyx``) enumerates.

A stack element is a tree, read through its spines: ``l1`` / ``r1`` of the
state lead from a node to its leftmost left / rightmost right child.

- ``shift`` (code 0): push the buffer front as a one-node tree;
- ``left_arc_K`` (code ``1 + 4 (K - 1)``): the K-th node (1 = the root) of the
  top tree's left spine heads the second tree's root, which is not the root 0;
- ``right_arc_K`` (code ``2 + 4 (K - 1)``): the K-th node of the second tree's
  right spine heads the top tree's root.

Every function is inline, ``noexcept nogil``; :func:`spine_arc` and
:func:`spine_apply` assume that :func:`spine_legal` holds.  No move applies
to a final configuration (an empty buffer and one tree), so legality needs
no separate test of finality.
"""
from semiparse.transitions.runtime._state cimport StateC, add_arc, pop_buffer_front, push_stack, spine_at

cdef enum:
    SPINE_SHIFT = 0
    SPINE_LEFT = 1      # the low two bits of a code: its side
    SPINE_RIGHT = 2


cdef inline int spine_code(int side, int k) noexcept nogil:
    """The code of ``left_arc_K`` (side SPINE_LEFT) or ``right_arc_K`` (SPINE_RIGHT)."""
    return side + 4 * (k - 1)


cdef inline int spine_max_code(int n) noexcept nogil:
    """One more than the largest code that can be legal for n words."""
    return 4 * (n + 2)


cdef inline bint spine_legal(const StateC* s, int t) noexcept nogil:
    cdef int L = s.stack_len, k = (t >> 2) + 1
    if t == SPINE_SHIFT:
        return s.buffer_len > 0
    if t < 0 or L < 2:
        return False
    if (t & 3) == SPINE_LEFT:
        return s.stack[L - 2] != 0 and spine_at(s, s.stack[L - 1], True, k) >= 0
    if (t & 3) == SPINE_RIGHT:
        return spine_at(s, s.stack[L - 2], False, k) >= 0
    return False


cdef inline int spine_legal_codes(const StateC* s, int* out) noexcept nogil:
    """Write the legal codes into out in the order shift, left_arc_K,
    right_arc_K (K increasing); their number."""
    cdef int count = 0, side, t
    if spine_legal(s, SPINE_SHIFT):
        out[count] = SPINE_SHIFT
        count += 1
    for side in range(SPINE_LEFT, SPINE_RIGHT + 1):
        t = side
        while spine_legal(s, t):
            out[count] = t
            count += 1
            t += 4
    return count


cdef inline bint spine_arc(const StateC* s, int t, int* h, int* d) noexcept nogil:
    """Set h, d to the edge of the legal move t; False for shift, which adds none."""
    cdef int L = s.stack_len
    if t == SPINE_SHIFT:
        return False
    if (t & 3) == SPINE_LEFT:
        h[0] = spine_at(s, s.stack[L - 1], True, (t >> 2) + 1)
        d[0] = s.stack[L - 2]
    else:
        h[0] = spine_at(s, s.stack[L - 2], False, (t >> 2) + 1)
        d[0] = s.stack[L - 1]
    return True


cdef inline void spine_apply(StateC* s, int t, int label) noexcept nogil:
    """Apply the legal move t; its edge gets label."""
    cdef int h, d
    if not spine_arc(s, t, &h, &d):
        push_stack(s, pop_buffer_front(s))
        return
    add_arc(s, h, d, label)
    if (t & 3) == SPINE_LEFT:      # the dependent is the second tree: the top moves down
        s.stack[s.stack_len - 2] = s.stack[s.stack_len - 1]
    s.stack_len -= 1

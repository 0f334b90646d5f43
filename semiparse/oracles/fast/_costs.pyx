# cython: language_level=3
"""Cost-based oracles of arc-eager and arc-hybrid in C (projective gold trees).

Both systems are arc-decomposable for projective gold trees (Goldberg and
Nivre 2013): the gold edges that can each still be built from a
configuration can all be built together.  So the most gold edges a
completion can add is G(c) = the number of gold edges h -> d still reachable
one by one, and sigma_t = G(c) - cost(t), where cost(t) counts the reachable
gold edges that t makes unreachable without building them (Goldberg 2013,
section 2.4, for arc-eager).  One O(n) pass gives G and every cost.

Conventions of systems/arc_eager.toml and systems/arc_hybrid.toml: root 0 at
the stack bottom, never a child; arc-eager stops when the buffer is empty
(headless stack nodes then get no edge); arc-hybrid ends with only the root.
"""
import numpy as np


cdef class Work:
    """The gold heads and a scratch stack-membership array for one gold tree."""
    cdef int n
    cdef int[::1] heads
    cdef unsigned char[::1] on_stack

    def __init__(self, heads):
        self.n = len(heads) - 1
        self.heads = np.asarray(heads, dtype=np.intc)
        self.on_stack = np.zeros(self.n + 2, dtype=np.uint8)


def eager_scores(Work w, tuple stack, tuple buffer, tuple arcs):
    """sigma of every legal arc-eager transition."""
    cdef int n = w.n
    cdef int* gold = &w.heads[0]
    cdef unsigned char* S = &w.on_stack[0]
    cdef int ns = len(stack)
    cdef int bstart = buffer[0] if buffer else n + 1
    cdef int i, d, h, s, b, total = 0
    cdef int b_kids_on_stack = 0, s_kids_in_buffer = 0
    cdef bint s_headed
    if bstart > n:
        return {}
    for i in range(ns):
        S[<int>stack[i]] = 1
    s = stack[ns - 1]
    b = bstart
    s_headed = arcs[s] >= 0
    # reachable gold edges h -> d: d has no head yet, both are still on the
    # stack or in the buffer, and not both on the stack
    for i in range(ns):
        d = stack[i]
        if d == 0 or arcs[d] >= 0:
            continue
        h = gold[d]
        if h >= bstart:
            total += 1
            if h == b:
                b_kids_on_stack += 1
    for d in range(bstart, n + 1):
        h = gold[d]
        if h >= bstart or S[h]:
            total += 1
        if h == s:
            s_kids_in_buffer += 1
    out = {}
    # shift: b can no longer get its head from the stack nor children from it
    out["shift"] = total - (1 if S[gold[b]] else 0) - b_kids_on_stack
    if s != 0 and not s_headed:
        # left_arc b -> s: s loses a reachable head other than b, and its
        # children in the buffer
        out["left_arc"] = total - (1 if gold[s] >= bstart and gold[s] != b else 0) \
            - s_kids_in_buffer
    # right_arc s -> b: b loses a reachable head other than s, and its
    # headless children on the stack
    out["right_arc"] = total - (1 if gold[b] != s and (S[gold[b]] or gold[b] > b) else 0) \
        - b_kids_on_stack
    if s_headed:
        # reduce: s loses its children in the buffer
        out["reduce"] = total - s_kids_in_buffer
    for i in range(ns):
        S[<int>stack[i]] = 0
    return out


def hybrid_scores(Work w, tuple stack, tuple buffer):
    """sigma of every legal arc-hybrid transition."""
    cdef int n = w.n
    cdef int* gold = &w.heads[0]
    cdef unsigned char* S = &w.on_stack[0]
    cdef int ns = len(stack)
    cdef int bstart = buffer[0] if buffer else n + 1
    cdef int i, d, h, s, s1 = -1, b = bstart, total = 0
    cdef int b_kids_on_stack = 0, s_kids_in_buffer = 0
    if bstart > n and ns == 1:
        return {}
    for i in range(ns):
        S[<int>stack[i]] = 1
    s = stack[ns - 1]
    if ns >= 2:
        s1 = stack[ns - 2]
    # reachable: d on the stack with its head in the buffer or just below it;
    # d in the buffer with its head on the stack or in the buffer
    for i in range(1, ns):
        d = stack[i]
        h = gold[d]
        if h >= bstart or h == stack[i - 1]:
            total += 1
        if h == b:
            b_kids_on_stack += 1
    for d in range(bstart, n + 1):
        h = gold[d]
        if h >= bstart or S[h]:
            total += 1
        if h == s:
            s_kids_in_buffer += 1
    out = {}
    if b <= n:
        # shift: b's head on the stack is reachable only if it is s; b's
        # children on the stack are lost
        out["shift"] = total - (1 if S[gold[b]] and gold[b] != s else 0) - b_kids_on_stack
        if s != 0:
            out["left_arc"] = total - s_kids_in_buffer - (
                1 if gold[s] != b and (gold[s] >= bstart or gold[s] == s1) else 0)
    if ns >= 2:
        out["right_arc"] = total - s_kids_in_buffer - (1 if gold[s] >= bstart else 0)
    for i in range(ns):
        S[<int>stack[i]] = 0
    return out

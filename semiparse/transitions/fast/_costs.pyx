# cython: language_level=3, wraparound=False, cdivision=True
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
The kernels compute costs only: which transitions apply is for those rules
to say, through the compiled machine (``_configuration.kernel_scores``,
``fill_rows``).
"""
from libc.math cimport NAN

import numpy as np

from semiparse.transitions.oracles._row_kernels cimport KernelGold, row_dict, row_kernel
from semiparse.transitions.runtime._state cimport StateC
from semiparse.transitions.fast._checks cimport check_configuration, projective_gold


cdef struct CostsC:
    int n
    int* heads
    unsigned char* on_stack


cdef class CostsGold(KernelGold):
    """The gold heads and a scratch stack-membership array for one gold tree."""
    cdef CostsC c
    cdef int[::1] heads
    cdef unsigned char[::1] on_stack

    def __init__(self, heads):
        heads = projective_gold(heads)
        self.c.n = len(heads) - 1
        self.heads = np.array(heads, dtype=np.intc)
        self.on_stack = np.zeros(self.c.n + 2, dtype=np.uint8)
        self.c.heads = &self.heads[0]
        self.c.on_stack = &self.on_stack[0]
        self.ptr = &self.c


EAGER = ("shift", "left_arc", "right_arc", "reduce")
HYBRID = ("shift", "left_arc", "right_arc")


cdef inline int buffer_edges(const int* gold, const unsigned char* on_stack, int n, int bstart,
                             int s, int* s_kids_in_buffer) noexcept nogil:
    """The reachable gold edges into buffer nodes (their head in the buffer or
    on the stack), in both systems; counts into ``s_kids_in_buffer`` those
    whose head is ``s``."""
    cdef int d, h, total = 0
    for d in range(bstart, n + 1):
        h = gold[d]
        if h >= bstart or on_stack[h]:
            total += 1
        if h == s:
            s_kids_in_buffer[0] += 1
    return total


cdef inline void mark_stack(unsigned char* on_stack, const int* stack, int ns,
                            unsigned char value) noexcept nogil:
    cdef int i
    for i in range(ns):
        on_stack[stack[i]] = value


cdef void eager_row(void* work, const StateC* state, const int* stack, int ns, int bstart,
                    const int* arcs, int strategy, double* out) noexcept nogil:
    """sigma of the arc-eager transitions (order EAGER) into out, whether they
    apply or not (the system's rules decide that); NaN for all without a
    buffer front (a final configuration)."""
    cdef CostsC* w = <CostsC*>work
    cdef int n = w.n
    cdef int* gold = w.heads
    cdef unsigned char* S = w.on_stack
    cdef int i, d, h, s, b, total = 0
    cdef int b_kids_on_stack = 0, s_kids_in_buffer = 0
    out[0] = out[1] = out[2] = out[3] = NAN
    if bstart > n:
        return
    mark_stack(S, stack, ns, 1)
    s = stack[ns - 1]
    b = bstart
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
    total += buffer_edges(gold, S, n, bstart, s, &s_kids_in_buffer)
    # shift: b can no longer get its head from the stack nor children from it
    out[0] = total - (1 if S[gold[b]] else 0) - b_kids_on_stack
    # left_arc b -> s: s loses a reachable head other than b, and its
    # children in the buffer
    out[1] = total - (1 if gold[s] >= bstart and gold[s] != b else 0) - s_kids_in_buffer
    # right_arc s -> b: b loses a reachable head other than s, and its
    # headless children on the stack
    out[2] = total - (1 if gold[b] != s and (S[gold[b]] or gold[b] > b) else 0) \
        - b_kids_on_stack
    # reduce: s loses its children in the buffer
    out[3] = total - s_kids_in_buffer
    mark_stack(S, stack, ns, 0)


cdef void hybrid_row(void* work, const StateC* state, const int* stack, int ns, int bstart,
                     const int* arcs, int strategy, double* out) noexcept nogil:
    """sigma of the arc-hybrid transitions (order HYBRID) into out, whether
    they apply or not (the system's rules decide that); NaN for shift and
    left_arc without a buffer front, whose values read it."""
    cdef CostsC* w = <CostsC*>work
    cdef int n = w.n
    cdef int* gold = w.heads
    cdef unsigned char* S = w.on_stack
    cdef int i, d, h, s, s1 = -1, b = bstart, total = 0
    cdef int b_kids_on_stack = 0, s_kids_in_buffer = 0
    out[0] = out[1] = NAN
    mark_stack(S, stack, ns, 1)
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
    total += buffer_edges(gold, S, n, bstart, s, &s_kids_in_buffer)
    if b <= n:
        # shift: b's head on the stack is reachable only if it is s; b's
        # children on the stack are lost
        out[0] = total - (1 if S[gold[b]] and gold[b] != s else 0) - b_kids_on_stack
        out[1] = total - s_kids_in_buffer - (
            1 if gold[s] != b and (gold[s] >= bstart or gold[s] == s1) else 0)
    out[2] = total - s_kids_in_buffer - (1 if gold[s] >= bstart else 0)
    mark_stack(S, stack, ns, 0)


EAGER_ROWS = row_kernel(eager_row, EAGER, CostsGold)
HYBRID_ROWS = row_kernel(hybrid_row, HYBRID, CostsGold)


cdef int check_work(CostsGold w) except -1:
    if w is None or w.ptr is NULL:
        raise ValueError("the kernel needs a CostsGold made from the gold heads")
    return 0


def eager_scores(CostsGold w, tuple stack, tuple buffer, tuple arcs):
    """sigma of every arc-eager transition (also those that do not apply)."""
    check_work(w)
    check_configuration(stack, buffer, w.c.n)
    if arcs is None or len(arcs) != w.c.n + 1 or not all(
            type(h) is int and -1 <= h <= w.c.n for h in arcs):
        raise ValueError(f"arcs must be {w.c.n + 1} ints, each -1 or a position, got "
                         f"{arcs!r:.60}")
    cdef int[::1] st = np.asarray(stack, dtype=np.intc)
    cdef int[::1] a = np.asarray(arcs, dtype=np.intc)
    cdef double out[4]
    eager_row(w.ptr, NULL, &st[0], len(stack), buffer[0] if buffer else w.c.n + 1, &a[0], 0, out)
    return row_dict(EAGER, out)


def hybrid_scores(CostsGold w, tuple stack, tuple buffer):
    """sigma of every arc-hybrid transition that has a value (also those that
    do not apply)."""
    check_work(w)
    check_configuration(stack, buffer, w.c.n)
    cdef int[::1] st = np.asarray(stack, dtype=np.intc)
    cdef double out[3]
    hybrid_row(w.ptr, NULL, &st[0], len(stack), buffer[0] if buffer else w.c.n + 1, NULL, 0, out)
    return row_dict(HYBRID, out)

# cython: language_level=3, wraparound=False, cdivision=True
"""The speed floor of ``semiparse bench train``: arc-standard's transitions
hand-written in C on the same ``StateC`` as the compiled rewrite machine.

:func:`run_paths` replays given transition sequences the way a training step
uses the transition system: the features of each configuration, the legal
mask over every class, then the step; once through the machine, once through
the hand-written moves below, so the two times differ only in the machine.
"""
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t, int64_t

from semiparse.transitions.runtime._state cimport (StateC, state_new, state_init_standard, state_free, add_arc,
                               push_stack, pop_buffer_front)
from semiparse.transitions.runtime._machine cimport Machine, MachineC, machine_legal, machine_apply
from semiparse.perceptron._features cimport extract


cdef inline bint _floor_legal(const StateC* s, int t) noexcept nogil:
    if s.buffer_len == 0 and s.stack_len == 1:
        return False
    if t == 0:
        return s.buffer_len > 0
    if t == 1:
        return s.stack_len >= 3
    if t == 2:
        return s.stack_len >= 2
    return False


cdef inline void _floor_apply(StateC* s, int t, int label) noexcept nogil:
    cdef int L = s.stack_len
    if t == 0:
        push_stack(s, pop_buffer_front(s))
    elif t == 1:
        add_arc(s, s.stack[L - 1], s.stack[L - 2], label)
        s.stack[L - 2] = s.stack[L - 1]
        s.stack_len -= 1
    else:
        add_arc(s, s.stack[L - 2], s.stack[L - 1], label)
        s.stack_len -= 1


def run_paths(Machine machine, sentences, paths, const int[:, ::1] templates,
              const int[::1] cls_move, bint floor, bint features=True):
    """Replay each sentence's moves (arc-standard codes; the floor knows no
    other system); returns a checksum over features, masks and arcs that the
    machine and the floor must share."""
    cdef const MachineC* m = &machine.c
    cdef int nt = templates.shape[0], width = templates.shape[1], C = cls_move.shape[0]
    cdef uint64_t* feats = <uint64_t*>malloc(max(nt, 1) * sizeof(uint64_t))
    cdef uint64_t check = 0
    cdef const int64_t[::1] words
    cdef const int64_t[::1] tags
    cdef const int[::1] moves
    cdef StateC* s
    cdef int i, c, k
    if machine.system_name != "arc_standard" or feats is NULL:
        free(feats)
        raise ValueError("the floor is arc-standard's: pass its machine")
    try:
        for sent, path in zip(sentences, paths):
            words, tags, moves = sent.words, sent.tags, path
            s = state_new(sent.n)
            if s is NULL:
                raise MemoryError()
            state_init_standard(s)
            with nogil:
                for i in range(moves.shape[0]):
                    if features and nt:
                        extract(s, &words[0], &tags[0], &templates[0, 0], nt, width, feats)
                        for k in range(nt):
                            check ^= feats[k]
                    for c in range(C):
                        if floor:
                            check += _floor_legal(s, cls_move[c])
                        else:
                            check += machine_legal(m, s, cls_move[c])
                    if floor:
                        _floor_apply(s, moves[i], 0)
                    else:
                        machine_apply(m, s, moves[i], 0)
                for k in range(s.n + 1):
                    check = check * 31 + <uint64_t>(s.head[k] + 1)
            state_free(s)
    finally:
        free(feats)
    return check

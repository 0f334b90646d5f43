# cython: language_level=3
"""Feature extraction over a :c:type:`StateC`: Zhang and Nivre (2011) style
templates given as data (see :mod:`semiparse.perceptron.features`).  Each template
is a row ``n_atoms, slot, attr, slot, attr, ...``; :func:`extract` hashes the
atom values of one configuration into one 64-bit key per template."""
from libc.stdint cimport uint64_t, int64_t
from semiparse.transitions.runtime._state cimport StateC, stack_at, buffer_at

cdef enum:
    # feature slots
    N_SLOTS = 18
    S0 = 0
    S1 = 1
    S2 = 2
    B0 = 3
    B1 = 4
    B2 = 5
    S0H = 6
    S0H2 = 7
    S0L = 8
    S0L2 = 9
    S0R = 10
    S0R2 = 11
    S1L = 12
    S1R = 13
    S1L2 = 14
    S1R2 = 15
    B0L = 16
    B0L2 = 17
    # attributes
    A_WORD = 0
    A_TAG = 1
    A_LABEL = 2
    A_VL = 3
    A_VR = 4
    A_LSETL = 5
    A_LSETR = 6
    A_DIST = 7     # distance from S0 to the slot, capped


cdef inline void _children(const StateC* s, int node, int* out, int left, int left2, int right,
                           int right2) noexcept nogil:
    """The slots of node's leftmost, second leftmost, rightmost and second
    rightmost children."""
    out[left] = s.l1[node]
    out[left2] = s.l2[node]
    out[right] = s.r1[node]
    out[right2] = s.r2[node]


cdef inline void feature_slots(const StateC* s, int* out) noexcept nogil:
    """The node in each slot (-1 if none)."""
    cdef int i
    for i in range(N_SLOTS):
        out[i] = -1
    for i in range(3):
        out[S0 + i] = stack_at(s, i)
        out[B0 + i] = buffer_at(s, i)
    if out[S0] >= 0:
        out[S0H] = s.head[out[S0]]
        if out[S0H] >= 0:
            out[S0H2] = s.head[out[S0H]]
        _children(s, out[S0], out, S0L, S0L2, S0R, S0R2)
    if out[S1] >= 0:
        _children(s, out[S1], out, S1L, S1L2, S1R, S1R2)
    if out[B0] >= 0:
        out[B0L] = s.l1[out[B0]]
        out[B0L2] = s.l2[out[B0]]


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept nogil:
    # splitmix64 finaliser over the running hash and the next value
    h ^= v + <uint64_t>0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2)
    h ^= h >> 30
    h *= <uint64_t>0xBF58476D1CE4E5B9ULL
    h ^= h >> 27
    h *= <uint64_t>0x94D049BB133111EBULL
    h ^= h >> 31
    return h


cdef inline int64_t _attr(const StateC* s, const int* slots, const int64_t* words,
                          const int64_t* tags, int slot, int attr) noexcept nogil:
    cdef int i = slots[slot]
    cdef int d
    if i < 0:
        return -1
    if attr == A_WORD:
        return words[i]
    if attr == A_TAG:
        return tags[i]
    if attr == A_LABEL:
        return s.label[i]
    if attr == A_VL:
        return s.vl[i]
    if attr == A_VR:
        return s.vr[i]
    if attr == A_LSETL:
        return <int64_t>s.lsl[i]
    if attr == A_LSETR:
        return <int64_t>s.lsr[i]
    # A_DIST
    if slots[S0] < 0:
        return -1
    d = i - slots[S0] if i > slots[S0] else slots[S0] - i
    return d if d < 5 else (5 if d < 10 else 10)


cdef inline void extract(const StateC* s, const int64_t* words, const int64_t* tags,
                         const int* templates, int n_templates, int width,
                         uint64_t* out) noexcept nogil:
    """Hash every template (rows of ``width`` ints: n_atoms, slot, attr, slot,
    attr, ...) into out."""
    cdef int slots[N_SLOTS]
    cdef int t, a
    cdef const int* row
    cdef uint64_t h
    feature_slots(s, slots)
    for t in range(n_templates):
        row = templates + t * width
        h = _mix(<uint64_t>0x1234567 + <uint64_t>t, <uint64_t>t)
        for a in range(row[0]):
            h = _mix(h, <uint64_t>(_attr(s, slots, words, tags, row[1 + 2 * a], row[2 + 2 * a]) + 2))
        out[t] = h | 1   # 0 marks an empty hash-table slot

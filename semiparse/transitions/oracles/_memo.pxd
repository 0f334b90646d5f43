# cython: language_level=3
"""Values of configurations remembered by an oracle kernel for one gold tree,
keyed by an int array and an int: arc-standard's by the stack and the buffer
start (its value depends on nothing else), the grammar kernel's by the
chart's input.  When the configurations of a batch follow a computation and
are scored from the last, a configuration's successor has been scored
already, and its value is the best of its row.

A hash map in C, without the GIL: open addressing over slots, the keys
one after another in a growing array.  Keys are compared in full,
so a hash collision costs a probe, never a wrong value; a failed allocation
turns the map off, since it only saves work.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcmp, memcpy

cdef enum:
    MEMO_MISSING = -(1 << 30)   # below any value a kernel returns


cdef struct Slot:
    uint64_t hash    # 0: empty
    int value
    int start        # where the key starts in Memo.keys
    int size
    int extra


cdef struct Memo:
    int on
    int cap          # slots, a power of 2 (0 until the first value)
    int used
    Slot* slots
    int* keys
    int keys_len
    int keys_cap


cdef inline uint64_t memo_hash(const int* key, int size, int extra) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t> <unsigned int> extra
    cdef int i
    for i in range(size):
        h = (h ^ <uint64_t> <unsigned int> key[i]) * 1099511628211ULL
    return h | 1


cdef inline Slot* memo_slot(const Memo* m, uint64_t h, const int* key, int size,
                            int extra) noexcept nogil:
    """The slot of the key, or the empty slot where it would go."""
    cdef int i = <int> (h & <uint64_t> (m.cap - 1))
    cdef Slot* s = &m.slots[i]
    while s.hash and not (s.hash == h and s.size == size and s.extra == extra
                          and memcmp(&m.keys[s.start], key, size * sizeof(int)) == 0):
        i = (i + 1) & (m.cap - 1)
        s = &m.slots[i]
    return s


cdef inline int memo_get(const Memo* m, const int* key, int size, int extra) noexcept nogil:
    """The value remembered for (key, extra), or MEMO_MISSING."""
    cdef Slot* s
    if m.cap == 0:
        return MEMO_MISSING
    s = memo_slot(m, memo_hash(key, size, extra), key, size, extra)
    return s.value if s.hash else MEMO_MISSING


cdef inline void memo_free(Memo* m) noexcept nogil:
    free(m.slots)
    free(m.keys)
    m.slots = NULL
    m.keys = NULL
    m.cap = m.used = m.keys_len = m.keys_cap = 0


cdef inline bint memo_grow(Memo* m) noexcept nogil:
    """Twice the slots (16 at first), the keys rehashed; False if out of memory."""
    cdef int cap = 16 if m.cap == 0 else 2 * m.cap, i, j
    cdef Slot* slots = <Slot*> calloc(cap, sizeof(Slot))
    if slots == NULL:
        return False
    for i in range(m.cap):
        if m.slots[i].hash:
            j = <int> (m.slots[i].hash & <uint64_t> (cap - 1))
            while slots[j].hash:
                j = (j + 1) & (cap - 1)
            slots[j] = m.slots[i]
    free(m.slots)
    m.slots, m.cap = slots, cap
    return True


cdef inline void memo_put(Memo* m, const int* key, int size, int extra, int value) noexcept nogil:
    """Remember ``value`` for (key, extra) if the map is on."""
    cdef uint64_t h
    cdef Slot* s
    cdef int* keys
    if not m.on:
        return
    if 2 * (m.used + 1) > m.cap and not memo_grow(m):
        memo_free(m)
        m.on = 0
        return
    if m.keys_len + size > m.keys_cap:
        keys = <int*> realloc(m.keys, (2 * m.keys_cap + size + 64) * sizeof(int))
        if keys == NULL:
            memo_free(m)
            m.on = 0
            return
        m.keys, m.keys_cap = keys, 2 * m.keys_cap + size + 64
    h = memo_hash(key, size, extra)
    s = memo_slot(m, h, key, size, extra)
    if not s.hash:
        memcpy(&m.keys[m.keys_len], key, size * sizeof(int))
        s.hash, s.start, s.size, s.extra = h, m.keys_len, size, extra
        m.keys_len += size
        m.used += 1
    s.value = value

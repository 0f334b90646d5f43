# cython: language_level=3
"""Values of configurations remembered within one batch, for a kernel whose
value of a configuration depends on its stack and buffer start alone (given
the gold tree), as arc-standard's does.  When the configurations of a batch
follow a computation, a configuration's successor has been scored already,
and its value is the best of its row.

A hash map in C, without the GIL: open addressing over slots, the stacks of
the keys one after another in a growing array.  Keys are compared in full,
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
    int start        # where the key's stack starts in Memo.keys
    int size
    int bstart


cdef struct Memo:
    int on
    int cap          # slots, a power of 2 (0 until the first value)
    int used
    Slot* slots
    int* keys
    int keys_len
    int keys_cap


cdef inline uint64_t memo_hash(const int* stack, int ns, int bstart) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t> <unsigned int> bstart
    cdef int i
    for i in range(ns):
        h = (h ^ <uint64_t> <unsigned int> stack[i]) * 1099511628211ULL
    return h | 1


cdef inline Slot* memo_slot(const Memo* m, uint64_t h, const int* stack, int ns,
                            int bstart) noexcept nogil:
    """The slot of the key, or the empty slot where it would go."""
    cdef int i = <int> (h & <uint64_t> (m.cap - 1))
    cdef Slot* s = &m.slots[i]
    while s.hash and not (s.hash == h and s.size == ns and s.bstart == bstart
                          and memcmp(&m.keys[s.start], stack, ns * sizeof(int)) == 0):
        i = (i + 1) & (m.cap - 1)
        s = &m.slots[i]
    return s


cdef inline int memo_get(const Memo* m, const int* stack, int ns, int bstart) noexcept nogil:
    """The value remembered for (stack, bstart), or MEMO_MISSING."""
    cdef Slot* s
    if m.cap == 0:
        return MEMO_MISSING
    s = memo_slot(m, memo_hash(stack, ns, bstart), stack, ns, bstart)
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


cdef inline void memo_put(Memo* m, const int* stack, int ns, int bstart, int value) noexcept nogil:
    """Remember ``value`` for (stack, bstart) if the map is on."""
    cdef uint64_t h
    cdef Slot* s
    cdef int* keys
    if not m.on:
        return
    if 2 * (m.used + 1) > m.cap and not memo_grow(m):
        memo_free(m)
        m.on = 0
        return
    if m.keys_len + ns > m.keys_cap:
        keys = <int*> realloc(m.keys, (2 * m.keys_cap + ns + 64) * sizeof(int))
        if keys == NULL:
            memo_free(m)
            m.on = 0
            return
        m.keys, m.keys_cap = keys, 2 * m.keys_cap + ns + 64
    h = memo_hash(stack, ns, bstart)
    s = memo_slot(m, h, stack, ns, bstart)
    if not s.hash:
        memcpy(&m.keys[m.keys_len], stack, ns * sizeof(int))
        s.hash, s.start, s.size, s.bstart = h, m.keys_len, ns, bstart
        m.keys_len += ns
        m.used += 1
    s.value = value

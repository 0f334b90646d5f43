# cython: language_level=3
"""The C search of ``_exhaustive.pyx``, shared with the bounded search
(``_search.pyx``) that extends it."""
from semiparse.transitions.runtime._state cimport StateC
from semiparse.transitions.runtime._machine cimport Machine, MachineC


cdef class CSearch:
    cdef Machine machine
    cdef const MachineC* m
    cdef int n, width, n_codes, depths
    cdef bint spine, key_heads, key_buffer_heads, key_all_heads, heads_known, masked
    cdef int* gold          # gold head of each position
    cdef StateC** states    # one state per depth
    cdef int* masks         # per depth: the strategy mask of each position
    cdef int* codes         # per depth: the legal moves, in the system's order
    cdef int* key           # scratch for the memo key
    cdef readonly dict memo

    cdef int _grow(self, int depths) except -1
    cdef int _load(self, StateC* s, stack, buffer, arcs) except -1
    cdef int _legal(self, int depth) noexcept
    cdef int _step(self, int depth, int t) except -2
    cdef bytes _key(self, int depth)
    cdef int _final_value(self, int depth) noexcept
    cdef int _best(self, int depth) except -3
    cdef int _loop(self, int depth) except -1

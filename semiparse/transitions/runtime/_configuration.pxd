# cython: language_level=3
from semiparse.transitions.runtime._state cimport StateC
from semiparse.transitions.runtime._machine cimport Machine


cdef class Configuration:
    cdef StateC* c
    cdef readonly Machine machine

    cdef int _start(self, Machine machine, int n) except -1
    cdef int _ready(self) except -1
    cdef int _move(self, move) except -2
    cpdef Configuration copy(self)

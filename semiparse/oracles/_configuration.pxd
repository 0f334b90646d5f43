# cython: language_level=3
from semiparse._state cimport StateC
from semiparse.oracles._machine cimport Machine


cdef class Configuration:
    cdef StateC* c
    cdef readonly Machine machine

    cdef int _start(self, Machine machine, int n) except -1
    cpdef Configuration copy(self)

# cython: language_level=3
"""Tree checks on C arrays of heads (``heads[0] == -1``), shared by
:mod:`semiparse.heads` and the CoNLL-U reader's C path."""

cdef bint reaches_root(const int* heads, int m, int* seen) noexcept nogil
cdef bint projective(const int* heads, int m, int* work) noexcept nogil

# cython: language_level=3
"""The split bilexical CKY's C interface (``_cky.pyx``), for compiled code
that fills many max-plus charts without the GIL (the grammar oracle's
kernel): a grammar's rules as C tables, a chart laid out in one reusable
block, and :c:func:`maxplus_columns`."""


cdef struct Chart:
    int N, nl, nr
    const int* pl      # the positions' left and right start states
    const int* pr
    double log_scale   # log Z = log(a Plain chart's value) + log_scale
    void* block        # one allocation holding every array below
    void* Lf
    void* Lb
    void* Rf
    void* Rb
    void* IL
    void* IR
    void* W


cdef struct Rules:
    int nlc, nrc, npairs, nroot
    const int* lc       # rows (B2, Bd, B, Cd)
    const int* rc       # rows (C2, C, Bd, Cd)
    const int* pairs    # rows (B, C, needs_left, needs_right)
    const int* root     # rows (B, C)
    # lreach[s * nl + b]: a head whose left start state is s can be in left
    # state b (rreach: the same on the right); items of other states stay
    # zero, so their combinations are skipped
    const unsigned char* lreach
    const unsigned char* rreach


cdef class CompiledRules:
    cdef Rules g
    cdef int n_left, n_right
    cdef object arrays  # keeps the numpy arrays behind the pointers alive


cdef inline size_t chart_bytes(size_t size, int N, int nl, int nr) noexcept nogil:
    return (2 * nl + 2 * nr + 2 * nl * nr + 1) * (<size_t> N * N) * size


cdef void chart_layout(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil

cdef double maxplus_columns(Chart* ch, const Rules* g, int N, int kept, bint head_last) noexcept nogil

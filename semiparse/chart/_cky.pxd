# cython: language_level=3
"""The split bilexical CKY's C interface (``_cky.pyx``), for compiled code
that fills many max-plus charts without the GIL (the grammar oracle's
kernel): a grammar's rules as C tables, a chart laid out in one reusable
block (:c:func:`maxplus_layout`), and :c:func:`maxplus_columns`."""


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
    # the max-plus column chart's blocks of combinations (chart/grouping.py):
    # rows (B2, A, B), (C2, A, B) and the attachments (Lb, Rf, il, ir,
    # il_first, ir_first) over the chart's rows and virtual rows, whether
    # each may apply at a head (and dependent) of each start state, and the
    # virtual rows of L by start, L by end, R by start, R by end (members
    # vmembers[k][vstarts[k][v]:vstarts[k][v + 1]]), and the rows of IL and
    # IR (only those the blocks read)
    int nl, nr, nlb, nrb, natt
    const int* lb
    const int* rb
    const int* att
    const unsigned char* lb_ok
    const unsigned char* rb_ok
    const unsigned char* att_left
    const unsigned char* att_right
    int nvirtual[6]
    const int* vstarts[4]
    const int* vmembers[4]

cdef class CompiledRules:
    cdef Rules g
    cdef int n_left, n_right
    cdef object arrays  # keeps the numpy arrays behind the pointers alive
    cdef object tables
    cdef bint grouped   # the max-plus column chart's fields are set (group())
    cdef use_blocks(self, grouped)


cdef inline size_t chart_bytes(size_t size, int N, int nl, int nr) noexcept nogil:
    return (2 * nl + 2 * nr + 2 * nl * nr + 1) * (<size_t> N * N) * size


cdef void chart_layout(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil


cdef inline size_t maxplus_bytes(const Rules* g, int N) noexcept nogil:
    """The size of a max-plus column chart of N positions (:c:func:`maxplus_layout`)."""
    return (2 * g.nl + 2 * g.nr + 1 + g.nvirtual[0] + g.nvirtual[1] + g.nvirtual[2]
            + g.nvirtual[3] + g.nvirtual[4] + g.nvirtual[5]) * (<size_t> N * N) * sizeof(double)


cdef void maxplus_layout(Chart* ch, const Rules* g, int N) noexcept nogil

cdef double maxplus_columns(Chart* ch, const Rules* g, int N, int kept, bint head_last) noexcept nogil

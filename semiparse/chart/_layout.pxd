# cython: language_level=3
"""The chart's and the rules' C layout (``_layout.pyx``), shared by every pass:
a grammar's rules as C tables (:c:type:`Rules`, held by
:class:`CompiledRules`), a chart of N positions in one allocation
(:c:type:`Chart`), the index of an entry (:c:func:`at`), and the checks of
a kernel's input that every Python entry point runs before the kernels
index the chart with it unchecked.

Chart layout (``N`` = number of input positions), chosen so that every inner
loop walks two contiguous rows:

- ``Lf[B][i][j]`` / ``Lb[B][j][i]``: left items by start / by end;
- ``Rf[C][i][j]`` / ``Rb[C][j][i]``: right items by start / by end;
- ``IL[B][C][j][i]``: left attachment of child i to head j (by end);
- ``IR[B][C][i][j]``: right attachment of child j to head i (by start).
"""
from libc.stdint cimport uint64_t


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
    """The size of a chart of N positions (:c:func:`chart_layout`) of values
    of ``size`` bytes."""
    return (2 * nl + 2 * nr + 2 * nl * nr + 1) * (<size_t> N * N) * size


cdef inline size_t at(size_t item, int i, int j, int N, size_t NN) noexcept nogil:
    """The index of entry (i, j) of chart item ``item`` in its array: the
    items (states, or pairs of states for the attachment items) one after
    another, each an N x N square stored row by row (NN = N * N)."""
    return item * NN + <size_t> i * N + j


cdef inline void arrays_layout(Chart* ch, size_t size, int N, int nl, int nr, int lf, int lb,
                               int rf, int rb, int il, int ir) noexcept nogil:
    """Point the chart's arrays into ch.block, one after another: Lf, Lb, Rf,
    Rb, IL and IR of ``lf`` ... ``ir`` rows, then W, each row N x N entries
    of ``size`` bytes."""
    cdef size_t square = <size_t> N * N * size
    cdef char* p = <char*> ch.block
    ch.N, ch.nl, ch.nr = N, nl, nr
    ch.Lf = p
    ch.Lb = p + lf * square
    ch.Rf = p + (lf + lb) * square
    ch.Rb = p + (lf + lb + rf) * square
    ch.IL = p + (lf + lb + rf + rb) * square
    ch.IR = p + (lf + lb + rf + rb + il) * square
    ch.W = p + (lf + lb + rf + rb + il + ir) * square


cdef int chart_alloc(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil
cdef void chart_layout(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil
cdef void chart_free(Chart* ch) noexcept nogil

cdef int check_input(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                     const double[:, ::1] w) except -1
cdef int check_states(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                      Py_ssize_t N) except -1
cdef uint64_t check_prime(str kernel, object p) except 0

# cython: language_level=3, wraparound=False, cdivision=True
"""The grammar oracle's max-plus column chart: the spans ending at each
position filled in turn, so that a chart keeps the columns of a prefix an
earlier input shared (:c:func:`maxplus_columns`), its combinations taken in
blocks (:mod:`semiparse.chart.grouping`) over virtual rows; and the grammar
oracle's input gathered in C for a whole max-plus chart
(:func:`maxplus_gathered`)."""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart._inside cimport root_value, run, start_items
from semiparse.chart._layout cimport (Chart, CompiledRules, Rules, arrays_layout, at,
                                      check_input, check_states)
from semiparse.chart._maxplus cimport MaxPlus, max_dot


cdef void maxplus_layout(Chart* ch, const Rules* g, int N) noexcept nogil:
    """Lay out the max-plus column chart of N positions in ch.block
    (:c:func:`maxplus_bytes` long at least): as :c:func:`chart_layout`, with
    each array's virtual rows after its own, and of the attachment items
    only the rows that the blocks read."""
    cdef const int* v = g.nvirtual
    arrays_layout(ch, sizeof(double), N, g.nl, g.nr, g.nl + v[0], g.nl + v[1], g.nr + v[2],
                  g.nr + v[3], v[4], v[5])


cdef inline void virtual_entries(const Rules* g, int k, double* rows, int n_real, int i, int j,
                                 int N, size_t NN) noexcept nogil:
    """Entry (i, j) of the virtual rows of chart array k (0: L by start, 1: L
    by end, 2: R by start, 3: R by end), whose real rows ``rows`` holds:
    the maximum of their members' entries."""
    cdef int v, x
    cdef double m
    cdef const int* starts = g.vstarts[k]
    cdef const int* members = g.vmembers[k]
    for v in range(g.nvirtual[k]):
        m = -INFINITY
        for x in range(starts[v], starts[v + 1]):
            if rows[at(members[x], i, j, N, NN)] > m:
                m = rows[at(members[x], i, j, N, NN)]
        rows[at(n_real + v, i, j, N, NN)] = m


cdef inline void put(double* entry, double v, bint first) noexcept nogil:
    """Write v to an entry (the first value that goes there) or keep the larger."""
    if first or v > entry[0]:
        entry[0] = v


cdef inline void blocks_attach(Chart* ch, const Rules* g, int i, int j) noexcept nogil:
    """The attachment items over i..j that the blocks read: each attachment
    block's dot product of a row of R (by start, at i) and a row of L (by
    end, at j), plus the weight of the edge j -> i (IL) or i -> j (IR)."""
    cdef int N = ch.N, k
    cdef size_t NN = <size_t> N * N
    cdef const int* a
    cdef const double* Rf = <const double*> ch.Rf
    cdef const double* Lb = <const double*> ch.Lb
    cdef const double* W = <const double*> ch.W
    cdef double* IL = <double*> ch.IL
    cdef double* IR = <double*> ch.IR
    cdef const unsigned char* left_ok = g.att_left + ch.pl[j] * g.natt
    cdef const unsigned char* right_ok = g.att_right + ch.pr[i] * g.natt
    cdef double v = 0
    for k in range(g.natt):
        a = g.att + 6 * k
        if k and a[0] == g.att[6 * k - 6] and a[1] == g.att[6 * k - 5]:
            pass   # the block of the row before, which goes to other rows too
        elif left_ok[k] and right_ok[k]:
            v = max_dot(Rf + at(a[1], i, i, N, NN), Lb + at(a[0], j, i + 1, N, NN), j - i)
        else:
            v = -INFINITY
        if a[2] >= 0:
            put(IL + at(a[2], j, i, N, NN), v + W[j * N + i], a[4])
        if a[3] >= 0:
            put(IR + at(a[3], i, j, N, NN), v + W[i * N + j], a[5])


cdef inline void block_items(const Rules* g, double* fwd, double* back, int n, int virtual,
                             const int* rows, int count, const unsigned char* ok,
                             const double* first, const double* second, int s, int i, int j,
                             int N, size_t NN) noexcept nogil:
    """The left (or right) items over i..j, ``fwd`` (by start), from the
    blocks ``rows`` (``(target, A, B)``, ``count`` of them, ``ok[k]``: block
    k may apply): the best of the dot products of row A of ``first`` (at i)
    and row B of ``second`` (at j) over split points from s on; then their
    by-end copies ``back`` and the virtual rows of both (``virtual``, the
    index of fwd's in ``g.nvirtual``)."""
    cdef int k, target
    cdef double v
    for k in range(n):
        fwd[at(k, i, j, N, NN)] = -INFINITY
    for k in range(count):
        if not ok[k]:
            continue
        target = rows[3 * k]
        v = max_dot(first + at(rows[3 * k + 1], i, s, N, NN),
                    second + at(rows[3 * k + 2], j, s, N, NN), j - i)
        if v > fwd[at(target, i, j, N, NN)]:
            fwd[at(target, i, j, N, NN)] = v
    for k in range(n):
        back[at(k, j, i, N, NN)] = fwd[at(k, i, j, N, NN)]
    virtual_entries(g, virtual, fwd, n, i, j, N, NN)
    virtual_entries(g, virtual + 1, back, n, j, i, N, NN)


cdef double maxplus_columns(Chart* ch, const Rules* g, int N, int kept, bint head_last) noexcept nogil:
    """The max-plus value of positions 0..N-1 in a chart laid out by
    :c:func:`maxplus_layout` for ch.N >= N positions, filled column by
    column (the spans ending at j, for j from ``kept`` to N - 1, each column
    from its shortest span up): every item of a span lies inside it, so the
    spans that end before ``kept`` are left as an earlier fill made them,
    which must have had the same first ``kept`` positions (start states and
    edge weights).  The caller sets ch.pl, ch.pr and the weights ch.W
    (row-major, stride ch.N) of every pair that has a position from ``kept``
    on.  The whole input is headed by position 0, or with ``head_last`` by
    position N - 1 (a mirrored grammar over a reversed string,
    :attr:`semiparse.grammar.Grammar.mirrored`).  The combinations are taken
    in blocks (:mod:`semiparse.chart.grouping`)."""
    cdef MaxPlus tag
    cdef int i, j, S = ch.N
    cdef size_t SS = <size_t> S * S
    cdef double* Lf = <double*> ch.Lf
    cdef double* Lb = <double*> ch.Lb
    cdef double* Rf = <double*> ch.Rf
    cdef double* Rb = <double*> ch.Rb
    cdef double* IL = <double*> ch.IL
    cdef double* IR = <double*> ch.IR
    for j in range(kept, N):
        start_items(tag, ch, j)
        virtual_entries(g, 0, Lf, ch.nl, j, j, S, SS)
        virtual_entries(g, 1, Lb, ch.nl, j, j, S, SS)
        virtual_entries(g, 2, Rf, ch.nr, j, j, S, SS)
        virtual_entries(g, 3, Rb, ch.nr, j, j, S, SS)
        for i in range(j - 1, -1, -1):
            blocks_attach(ch, g, i, j)
            # L[B2][i][j] from L[Bd][i][d] + IL[B, Cd][j][d], d = i .. j - 1
            block_items(g, Lf, Lb, ch.nl, 0, g.lb, g.nlb, g.lb_ok + ch.pl[j] * g.nlb, Lf, IL,
                        i, i, j, S, SS)
            # R[C2][i][j] from IR[Bd, C][i][d] + R[Cd][d][j], d = i + 1 .. j (R by end)
            block_items(g, Rf, Rb, ch.nr, 2, g.rb, g.nrb, g.rb_ok + ch.pr[i] * g.nrb, IR, Rb,
                        i + 1, i, j, S, SS)
    return root_value(tag, ch, g, N - 1, 0, head_last).s


def maxplus_by_columns(CompiledRules rules not None, list inputs not None, bint head_last=False):
    """The max-plus values of ``inputs`` (``(pl, pr, w)`` each, as for
    :func:`inside`) filled one after another in one column chart
    (:c:func:`maxplus_columns`, the grammar oracle's), each keeping the
    columns over the prefix it shares with the input before (the same start
    states and weights there); with ``head_last`` the inputs are headed by
    their last position.  The column chart against :func:`inside`, for
    tests."""
    cdef Py_ssize_t S = 1, N, kept, prev = 0, a, b
    cdef const int[::1] pl, pr
    cdef const double[:, ::1] w
    cdef Chart ch
    cdef double* W
    cdef int* states
    rules.group()
    for pl, pr, w in inputs:
        check_input(rules, pl, pr, w)
        S = max(S, w.shape[0])
    ch.block = malloc(maxplus_bytes(&rules.g, S) + 2 * S * sizeof(int))
    if ch.block is NULL:
        raise MemoryError()
    maxplus_layout(&ch, &rules.g, S)
    states = <int*> (<char*> ch.block + maxplus_bytes(&rules.g, S))
    ch.pl, ch.pr = states, states + S
    W = <double*> ch.W
    values = []
    try:
        for pl, pr, w in inputs:
            N, kept = w.shape[0], 0
            while kept < min(N, prev) and states[kept] == pl[kept] and states[S + kept] == pr[kept]:
                b = 0
                while b <= kept and W[kept * S + b] == w[kept, b] and W[b * S + kept] == w[b, kept]:
                    b += 1
                if b <= kept:
                    break
                kept += 1
            for a in range(N):
                states[a], states[S + a] = pl[a], pr[a]
                for b in range(N):
                    W[a * S + b] = w[a, b]
            values.append(maxplus_columns(&ch, &rules.g, N, kept, head_last))
            prev = N
    finally:
        free(ch.block)
    return values


def maxplus_gathered(CompiledRules rules not None, const int[::1] term_left not None,
                     const int[::1] term_right not None, const double[:, ::1] delta not None,
                     list nodes not None, list terms not None, list fixed not None,
                     list cut not None, const unsigned char[:, ::1] forbid=None):
    """The max-plus value of a string whose positions are the sentence nodes
    ``nodes`` (-1: a virtual node, the last row and column of ``delta``) with
    terminal ids ``terms``: the weights are ``w[a, b] = delta[nodes[a],
    nodes[b]]``, then for each ``(h, d)`` of ``fixed`` (string positions)
    ``d`` takes no head but ``h``, at weight 0, and for each ``(a, side)`` of
    ``cut`` position ``a`` takes no dependent on that side (0: left, 1:
    right); last, each edge ``(a, b)`` with ``forbid[a, b]`` nonzero (an
    N x N uint8 matrix, e.g. a boolean one's ``view(np.uint8)``) is -inf.
    The input of the grammar oracle, built in C instead of by numpy
    indexing, and the chart filled without the GIL."""
    cdef Py_ssize_t N = len(nodes), D = delta.shape[0], a, b, x
    cdef int t
    cdef int[::1] pl, pr
    cdef double[:, ::1] w
    cdef Py_ssize_t[::1] at_node
    cdef MaxPlus mp
    if N < 1 or len(terms) != N or D < 1 or delta.shape[1] != D:
        raise ValueError(f"maxplus_gathered: {N} nodes, {len(terms)} terminals and a "
                         f"({delta.shape[0]}, {delta.shape[1]}) delta: expected N >= 1 of each "
                         f"and a square delta")
    pl, pr = np.empty(N, dtype=np.intc), np.empty(N, dtype=np.intc)
    at_node = np.empty(N, dtype=np.intp)
    for a in range(N):
        t, x = terms[a], nodes[a]
        if not (0 <= t < term_left.shape[0] and t < term_right.shape[0]):
            raise ValueError(f"maxplus_gathered: terminal id {t} out of range")
        if not -1 <= x < D - 1:
            raise ValueError(f"maxplus_gathered: node {x} out of range -1..{D - 2}")
        pl[a], pr[a], at_node[a] = term_left[t], term_right[t], x if x >= 0 else D - 1
    check_states(rules, pl, pr, N)
    w = np.empty((N, N))
    for a in range(N):
        for b in range(N):
            w[a, b] = delta[at_node[a], at_node[b]]
    for h, d in fixed:
        if not (0 <= h < N and 0 <= d < N):
            raise ValueError(f"maxplus_gathered: fixed edge ({h}, {d}) out of range")
        for a in range(N):
            w[a, d] = -INFINITY
        w[h, d] = 0.0
    for a, side in cut:
        if not 0 <= a < N:
            raise ValueError(f"maxplus_gathered: position {a} out of range")
        for b in (range(a) if side == 0 else range(a + 1, N)):
            w[a, b] = -INFINITY
    if forbid is not None:
        if forbid.shape[0] != N or forbid.shape[1] != N:
            raise ValueError(f"maxplus_gathered: a ({forbid.shape[0]}, {forbid.shape[1]}) forbid "
                             f"mask for {N} nodes")
        for a in range(N):
            for b in range(N):
                if forbid[a, b]:
                    w[a, b] = -INFINITY
    return run(mp, rules, pl, pr, w, 0).s


# cython: language_level=3, wraparound=False, cdivision=True
"""The chart's and the rules' layout (see ``_layout.pxd``): a grammar's tables
compiled to C (:class:`CompiledRules`, with the states a head can reach,
:func:`reachable`), a chart's allocation and layout, and the checks of a
kernel's input."""
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart.grouping import grouped_tables


cdef int chart_alloc(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil:
    cdef char* p = <char*> malloc(chart_bytes(size, N, nl, nr))
    ch.block = p
    if p == NULL:
        return -1
    chart_layout(ch, size, N, nl, nr)
    return 0



cdef void chart_layout(Chart* ch, size_t size, int N, int nl, int nr) noexcept nogil:
    """Lay out the chart of N positions in ch.block (chart_bytes long at least)."""
    arrays_layout(ch, size, N, nl, nr, nl, nl, nr, nr, nl * nr, nl * nr)


cdef void chart_free(Chart* ch) noexcept nogil:
    free(ch.block)



def reachable(combos, int to, int frm, int n):
    """``out[s, t]``: a head that starts in state s can reach state t by the
    combinations ``combos`` (each row takes the head from column ``frm`` to
    column ``to``): the reflexive, transitive closure, by a search from each
    state (time n times the steps, where squaring the matrix took n**3 per
    round: minutes for a grammar of a thousand states)."""
    cdef Py_ssize_t s, x, y
    steps = [set() for _ in range(n)]
    for row in np.asarray(combos).tolist():
        if 0 <= row[frm] < n and 0 <= row[to] < n:
            steps[row[frm]].add(row[to])
    succ = [sorted(t) for t in steps]
    out = np.zeros((n, n), dtype=np.uint8)
    cdef unsigned char[:, ::1] o = out
    for s in range(n):
        o[s, s] = 1
        todo = [s]
        while todo:
            x = todo.pop()
            for y in succ[x]:
                if not o[s, y]:
                    o[s, y] = 1
                    todo.append(y)
    return out



cdef class CompiledRules:
    """A grammar's integer tables held as C pointers, built once per grammar."""

    def __cinit__(self, tables):
        cdef const int[:, ::1] lc = tables.left_combos
        cdef const int[:, ::1] rc = tables.right_combos
        cdef const int[:, ::1] pairs = tables.pairs
        cdef const int[:, ::1] root = tables.root
        self.n_left, self.n_right = tables.n_left, tables.n_right
        left_reach = reachable(tables.left_combos, 0, 2, self.n_left)
        right_reach = reachable(tables.right_combos, 0, 1, self.n_right)
        cdef const unsigned char[:, ::1] lreach = left_reach
        cdef const unsigned char[:, ::1] rreach = right_reach
        self.arrays = (tables.left_combos, tables.right_combos, tables.pairs, tables.root,
                       left_reach, right_reach)
        # the kernels index the chart with these states unchecked
        L, R = self.n_left, self.n_right
        for name, table, limits in (("left_combos", lc, (L, L, L, R)),
                                    ("right_combos", rc, (R, R, L, R)),
                                    ("pairs", pairs, (L, R, 2, 2)), ("root", root, (L, R))):
            if table.shape[0] and (table.shape[1] != len(limits) or not all(
                    0 <= x < limit for row in np.asarray(table).tolist()
                    for x, limit in zip(row, limits))):
                raise ValueError(f"grammar tables: {name} must have {len(limits)} columns of "
                                 f"states below {limits} (left states {L}, right states {R})")
        self.g.nlc, self.g.nrc = lc.shape[0], rc.shape[0]
        self.g.npairs, self.g.nroot = pairs.shape[0], root.shape[0]
        self.g.lc = &lc[0, 0] if self.g.nlc else NULL
        self.g.rc = &rc[0, 0] if self.g.nrc else NULL
        self.g.pairs = &pairs[0, 0] if self.g.npairs else NULL
        self.g.root = &root[0, 0] if self.g.nroot else NULL
        self.g.lreach = &lreach[0, 0] if self.n_left else NULL
        self.g.rreach = &rreach[0, 0] if self.n_right else NULL
        self.g.nl, self.g.nr = L, R
        self.tables, self.grouped = tables, False

    def group(self):
        """Build the blocks of the max-plus column chart (:c:func:`maxplus_columns`,
        :func:`semiparse.chart.grouping.grouped_tables`) if not yet built:
        only the grammar oracle needs them, and a large generated grammar's
        tables take a while to group."""
        if not self.grouped:
            self.use_blocks(grouped_tables(self.tables, self.arrays[4], self.arrays[5]))
            self.grouped = True

    cdef use_blocks(self, grouped):
        """Point the max-plus column chart's fields at ``grouped``."""
        cdef const int[:, ::1] lb = grouped["left"]
        cdef const int[:, ::1] rb = grouped["right"]
        cdef const int[:, ::1] att = grouped["attach"]
        cdef const unsigned char[:, ::1] lb_ok = grouped["left_ok"]
        cdef const unsigned char[:, ::1] rb_ok = grouped["right_ok"]
        cdef const unsigned char[:, ::1] att_left = grouped["attach_left"]
        cdef const unsigned char[:, ::1] att_right = grouped["attach_right"]
        cdef const int[::1] starts, members
        cdef int k
        self.arrays += (grouped,)
        self.g.nlb, self.g.nrb, self.g.natt = lb.shape[0], rb.shape[0], att.shape[0]
        self.g.lb = &lb[0, 0] if self.g.nlb else NULL
        self.g.rb = &rb[0, 0] if self.g.nrb else NULL
        self.g.att = &att[0, 0] if self.g.natt else NULL
        self.g.lb_ok = &lb_ok[0, 0] if lb_ok.shape[0] and self.g.nlb else NULL
        self.g.rb_ok = &rb_ok[0, 0] if rb_ok.shape[0] and self.g.nrb else NULL
        self.g.att_left = &att_left[0, 0] if att_left.shape[0] and self.g.natt else NULL
        self.g.att_right = &att_right[0, 0] if att_right.shape[0] and self.g.natt else NULL
        for k in range(4):
            starts, members = grouped["virtual"][k]
            self.g.nvirtual[k] = starts.shape[0] - 1
            self.g.vstarts[k] = &starts[0]
            self.g.vmembers[k] = &members[0] if members.shape[0] else NULL
        self.g.nvirtual[4], self.g.nvirtual[5] = grouped["attach_rows"]

    def first_order(self):
        """Whether these are the rules of first-order projective trees (the
        grammar ``projective``): one left and one right state, and the
        single combination of each kind, so that the chart is Eisner's."""
        g = self.g
        return (self.n_left == 1 and self.n_right == 1 and g.nlc == 1 and g.nrc == 1
                and g.npairs == 1 and g.nroot == 1
                and [g.lc[x] for x in range(4)] == [0, 0, 0, 0]
                and [g.rc[x] for x in range(4)] == [0, 0, 0, 0]
                and [g.pairs[x] for x in range(4)] == [0, 0, 1, 1]
                and [g.root[x] for x in range(2)] == [0, 0])



cdef int check_input(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                     const double[:, ::1] w) except -1:
    """ValueError unless ``pl``, ``pr`` (the left and right start states of
    the positions) and ``w`` describe an input of N >= 1 positions for these
    rules: the kernels index the chart with them unchecked."""
    cdef Py_ssize_t N
    if pl is None or pr is None or w is None:
        raise ValueError("kernel input: start states and weights must be arrays, got None")
    N = w.shape[0]
    if N < 1 or w.shape[1] != N or pl.shape[0] != N or pr.shape[0] != N:
        raise ValueError(f"kernel input: weights of shape ({w.shape[0]}, {w.shape[1]}) and "
                         f"{pl.shape[0]} and {pr.shape[0]} start states: expected (N, N) "
                         f"weights and N start states of each side, N >= 1")
    return check_states(rules, pl, pr, N)


cdef int check_states(CompiledRules rules, const int[::1] pl, const int[::1] pr,
                      Py_ssize_t N) except -1:
    """ValueError unless the start states of the N positions are states of these rules."""
    cdef Py_ssize_t i
    for i in range(N):
        if not (0 <= pl[i] < rules.n_left and 0 <= pr[i] < rules.n_right):
            raise ValueError(f"kernel input: position {i} starts in states ({pl[i]}, {pr[i]}): "
                             f"expected left states below {rules.n_left}, right states below "
                             f"{rules.n_right}")
    return 0


cdef uint64_t check_prime(str kernel, object p) except 0:
    """The modulus of a counting kernel modulo p: 2 <= p < 2**32, so that a
    product of two residues fits in 64 bits."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 2 <= p < 2 ** 32:
        raise ValueError(f"kernel {kernel!r} counts modulo p: expected an int 2 <= p < 2**32, "
                         f"got {p!r}")
    return p


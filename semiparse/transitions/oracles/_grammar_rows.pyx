# cython: language_level=3, wraparound=False, cdivision=True
"""The grammar oracle of a declared system in C (strategy ``none``).

For each transition t that applies to a configuration c (a
:c:type:`StateC`), sigma_t is computed as :func:`semiparse.transitions.
grammar_path.grammar_scores` computes it: the compiled machine makes t(c),
the completion string of t(c) is built (the prefix's virtual nodes, the root
with ``initial.root = "none"``, the stack bottom first, then the buffer, each
node's terminal by the system's completion rules), every edge built into a
node is fixed, and the completion grammar's max-plus chart
(``semiparse/chart/cky.pxd``) gives the most gold edges a computation from
t(c) can still add.  Everything runs without the GIL.

Three things make it cheaper than one parse per transition:

- **the critical buffer nodes** (Nederhof 2019, section 5): a buffer node
  whose gold head is in the buffer and whose gold subtree lies entirely in
  the buffer can be given its gold head by some best computation, so it is
  left out of the string and credited one edge, where its *fragment* (see
  :c:func:`mark_dropped`) has consecutive positions and nesting gold edges,
  as for every node of a projective gold tree.  This holds for arc-standard
  (whose ``cubic_critical`` method applies this reduction under its other
  strategies) and for the systems that treat the buffer as it does, not
  for every system (arc-swift's buffer
  front takes part in edges to stack nodes deep below the top), so a system
  declares it (``critical_buffer = true`` in ``[completion]``) and
  ``semiparse check`` tests the declaration against the exhaustive search
  like the grammar, on complete and partial, projective and non-projective
  gold trees;
- **a memo** of chart values by chart input (the nodes, their terminals and
  fixed heads) within one gold tree: when a batch scores the configurations
  of a computation from the last to the first, each one's value (the best
  of its row) is kept, and the successor a computation took costs no parse;
- **kept columns**: a work fills its chart column by column and keeps the
  columns over the prefix a string shares with the last one it filled, so
  only the spans that end after it are filled.  The successors of a
  configuration differ near the stack top: where the configuration's
  string has the longer stack part, the stack bottom comes first; where
  its buffer part is the longer (a system without ``critical_buffer``,
  early in a sentence), the string is reversed and parsed with the
  mirrored grammar, so that the buffer's end comes first.
"""
from libc.math cimport INFINITY, NAN
from libc.stdlib cimport free, malloc

import numpy as np

from semiparse.heads._checks import exact_index
from semiparse.chart.cky cimport (Chart, CompiledRules, Rules, maxplus_bytes, maxplus_columns,
                                  maxplus_layout)
from semiparse.chart.inputs import compiled
from semiparse.transitions.runtime._machine cimport (Machine, MachineC, machine_apply,
                                             machine_arc, machine_legal)
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.oracles._memo cimport MEMO_MISSING, Memo, memo_free, memo_get, memo_put
from semiparse.transitions.oracles._row_kernels cimport KernelGold, row_kernel
from semiparse.transitions.runtime._state cimport StateC, state_copy, state_free, state_load, state_new

cdef int NEG = -(1 << 28)   # a chart value of -inf, in the memo
cdef int HEAD_GONE = -2     # WorkC.fixed of a node whose built head is not in the string
# A work keeps its chart's block from one row to the next up to its
# chart_limit, by default this size (most strings are short once the buffer
# is reduced); a larger one is freed at the end of its row, so that an
# oracle that keeps many gold trees does not hold a large chart for each.
cdef size_t KEPT_CHART = 1 << 18
# Room for this many more positions when a chart grows (the strings of one
# row differ by a few positions): fewer reallocations, each of which loses
# the columns kept.
cdef int CHART_SLACK = 2

# terminal table index: ((where * 2 + is_root) * 2 + is_top) * 2 + headed
cdef enum:
    WHERE_STACK = 0
    WHERE_BUFFER = 1
    WHERE_OUTSIDE = 2
    TABLE_SIZE = 24


cdef struct SpecC:
    const MachineC* machine
    const Rules* rules
    const int* term_left       # start states of each terminal
    const int* term_right
    const Rules* rules_rev     # the same for the mirrored grammar (reversed strings)
    const int* term_left_rev
    const int* term_right_rev
    int n_prefix
    const int* prefix_ids
    int table[TABLE_SIZE]      # terminal id, -1: no rule
    bint uses_heads            # the terminal rules look at whether a node has a head
    bint root_none             # the root heads the words left headless: after the prefix
    bint critical              # the system declares critical_buffer


cdef struct WorkC:
    SpecC spec
    int n
    const int* gold            # gold heads, -1 for the root and unknown heads
    StateC* next               # scratch: a successor
    int* nodes                 # the string: node (-1 virtual), terminal, fixed head position
    int* ids
    int* fixed
    int* pos                   # string position of each node, -1 if not in it
    int* outside_below         # has a gold descendant outside the buffer
    int* root_of               # see mark_dropped
    int* lo
    int* hi
    int* size
    int* at                    # buffer index of each node, -1 if not in the buffer
    int* marked                # the buffer mark_dropped last read (back first)
    int marked_len             # its length, -1 if none or it does not stand for its input
    int* key                   # memo key: the three string arrays one after another
    Memo memo
    void* chart                # the chart's block (chart, then start states), stride positions
    size_t chart_size
    int stride                 # positions the chart is laid out for (0: no chart)
    int split                  # the string's first position after the stack
    bint rev                   # this row's strings are reversed for the chart
    int* last                  # the string the chart was last filled for (nodes, ids, fixed)
    int last_len               # its length: the chart's columns below it are valid
    bint last_rev              # and whether it was reversed
    long parses                # charts filled (the memo's saving shows here)
    long parses_rev            # of which for reversed strings
    bint out_of_memory         # a chart could not be allocated: its row is not exact
    size_t chart_limit         # the largest chart kept from one row to the next


cdef inline int term_of(const SpecC* sp, int where, bint is_root, bint is_top,
                        bint headed) noexcept nogil:
    if not sp.uses_heads:
        headed = False
    return sp.table[((where * 2 + is_root) * 2 + is_top) * 2 + headed]


cdef void mark_dropped(WorkC* w, const StateC* s) noexcept nogil:
    """The buffer nodes left out of s's string (``cubic_critical`` applies
    the same reduction through :meth:`GrammarGold.buffer_kept`, docs/fast-oracles.md,
    under every strategy of arc-standard): a buffer node is *critical* if
    its gold head or a gold descendant is outside the buffer (or it heads a
    stack node by a built edge); the *fragment* of a critical node r is r
    and the gold subtrees of its other children.  A fragment whose buffer
    positions are consecutive and whose gold edges nest (always so for a
    projective gold tree) is collapsed to r: every other node of it is left
    out, and credited its gold edge.  After this, for a buffer node x,
    ``root_of[x]`` is its fragment's critical node (x itself if critical),
    and ``size[r] < 0`` marks a collapsed fragment.

    What it finds depends on the buffer only, but for built heads of stack
    nodes that lie in the buffer: where there are none, the marks of the
    last call stand for a call with the same buffer (the successors of one
    configuration mostly keep its buffer)."""
    cdef int n = w.n, i, x, y, r
    cdef const int* gold = w.gold
    cdef int* at = w.at
    if s.buffer_len == w.marked_len and stack_heads_outside(w, s):
        i = 0
        while i < s.buffer_len and s.buffer[i] == w.marked[i]:
            i += 1
        if i == s.buffer_len:
            return
    for x in range(n + 1):
        at[x] = -1
        w.root_of[x] = -1
        w.outside_below[x] = 0
    for i in range(s.buffer_len):
        at[s.buffer[s.buffer_len - 1 - i]] = i
    for x in range(1, n + 1):
        if at[x] < 0:
            y = gold[x]
            while y >= 0 and not w.outside_below[y]:
                w.outside_below[y] = 1
                y = gold[y]
    for i in range(s.stack_len):   # a built head of a stack node counts as one
        y = s.head[s.stack[i]]
        while y >= 0 and not w.outside_below[y]:
            w.outside_below[y] = 1
            y = gold[y]
    # fragments: the nearest critical ancestor (heads in the buffer first)
    for i in range(s.buffer_len):
        x = s.buffer[s.buffer_len - 1 - i]
        y = x
        while y != 0 and gold[y] >= 0 and at[gold[y]] >= 0 and not w.outside_below[y]:
            y = gold[y]
        w.root_of[x] = y
        w.lo[x] = w.hi[x] = at[x]
        w.size[x] = 1
    # each node's part of its fragment: its span and size, from every member up
    for i in range(s.buffer_len):
        x = s.buffer[s.buffer_len - 1 - i]
        r = w.root_of[x]
        y = x
        while y != r:
            y = gold[y]
            w.lo[y] = min(w.lo[y], at[x])
            w.hi[y] = max(w.hi[y], at[x])
            w.size[y] += 1
    # a fragment collapses if every member's part is consecutive
    for i in range(s.buffer_len):
        x = s.buffer[s.buffer_len - 1 - i]
        r = w.root_of[x]
        if w.hi[x] - w.lo[x] + 1 != w.size[x]:
            w.hi[r] = -2               # not collapsible
    for i in range(s.buffer_len):
        x = s.buffer[s.buffer_len - 1 - i]
        if w.root_of[x] == x and w.hi[x] != -2 and w.size[x] > 1:
            w.size[x] = -1             # collapsed
        elif w.root_of[x] == x:
            w.size[x] = 1
    for i in range(s.buffer_len):
        x = s.buffer[s.buffer_len - 1 - i]
        if w.root_of[x] == x:
            w.root_of[x] = -1          # kept: a critical node
        elif w.size[w.root_of[x]] >= 0:
            w.root_of[x] = -1          # kept: its fragment does not collapse
    for i in range(s.buffer_len):
        w.marked[i] = s.buffer[i]
    w.marked_len = s.buffer_len if stack_heads_outside(w, s) else -1


cdef inline bint stack_heads_outside(const WorkC* w, const StateC* s) noexcept nogil:
    """Whether no stack node of s has a built head in the buffer that
    ``w.at`` records."""
    cdef int i, y
    for i in range(s.stack_len):
        y = s.head[s.stack[i]]
        if y >= 0 and w.at[y] >= 0:
            return False
    return True


cdef int build_string(WorkC* w, const StateC* s, int* credit) noexcept nogil:
    """Write the completion string of s into w.nodes / ids / fixed and w.key
    (with critical_buffer, the buffer nodes that collapse into their
    fragment's critical node left out, their number in credit); its length,
    or -1 where no terminal rule matches."""
    cdef const SpecC* sp = &w.spec
    cdef int n = w.n, N = 0, i, x, y, top = s.stack_len - 1, first
    cdef const int* gold = w.gold
    credit[0] = 0
    for i in range(sp.n_prefix):
        w.nodes[N], w.ids[N] = -1, sp.prefix_ids[i]
        N += 1
    if sp.root_none:
        w.nodes[N], w.ids[N] = 0, term_of(sp, WHERE_OUTSIDE, True, False, False)
        N += 1
    first = N
    for i in range(s.stack_len):
        x = s.stack[i]
        w.nodes[N], w.ids[N] = x, term_of(sp, WHERE_STACK, x == 0, i == top, s.head[x] >= 0)
        N += 1
    w.split = N
    if w.spec.critical:
        mark_dropped(w, s)
    for i in range(s.buffer_len - 1, -1, -1):   # front first
        x = s.buffer[i]
        if w.spec.critical and w.root_of[x] >= 0 and w.size[w.root_of[x]] < 0:
            credit[0] += 1
            continue
        w.nodes[N], w.ids[N] = x, term_of(sp, WHERE_BUFFER, x == 0, False, False)
        N += 1
    for x in range(n + 1):
        w.pos[x] = -1
    for i in range(N):
        if w.ids[i] < 0:
            return -1
        if w.nodes[i] >= 0:
            w.pos[w.nodes[i]] = i
    for i in range(N):
        # an edge built into a node from a node of the string: kept in every
        # completion, and not counted again; from a node that has left it
        # (HEAD_GONE), no edge into the node counts
        x = w.nodes[i]
        w.fixed[i] = -1
        if i >= first and s.head[x] >= 0:
            w.fixed[i] = w.pos[s.head[x]] if w.pos[s.head[x]] >= 0 else HEAD_GONE
        # the memo's key: the three arrays one after another
        w.key[i], w.key[N + i], w.key[2 * N + i] = w.nodes[i], w.ids[i], w.fixed[i]
    return N


cdef inline double edge_weight(const WorkC* w, int i, int j) noexcept nogil:
    """The weight of the edge from string position i to j: 1 for a gold
    edge, 0 for another; for a fixed dependent, 0 from its built head and
    -inf from any other; 0 into a node whose built head has left the string."""
    cdef int d = w.nodes[j], x = w.nodes[i]
    if w.fixed[j] >= 0:
        return 0.0 if i == w.fixed[j] else -INFINITY
    if w.fixed[j] == HEAD_GONE:
        return 0.0
    return 1.0 if d > 0 and x >= 0 and w.gold[d] == x else 0.0


cdef inline size_t chart_bytes(const SpecC* sp, int S) noexcept nogil:
    """The size of a chart of S positions for either direction's grammar."""
    return max(maxplus_bytes(sp.rules, S), maxplus_bytes(sp.rules_rev, S))


cdef bint chart_room(WorkC* w, int N) noexcept nogil:
    """Make the work's chart hold N positions (growing it forgets the string
    it was filled for); False if out of memory."""
    cdef const SpecC* sp = &w.spec
    cdef int S
    if N <= w.stride:
        return True
    free(w.chart)
    S = N + CHART_SLACK
    w.chart_size = chart_bytes(sp, S) + 2 * S * sizeof(int)
    w.chart = malloc(w.chart_size)
    w.last_len = 0
    if w.chart is NULL:
        w.chart_size, w.stride = 0, 0
        return False
    w.stride = S
    return True


cdef void reverse_string(WorkC* w, int N) noexcept nogil:
    """Reverse the string in w.nodes / ids / fixed (fixed head positions
    follow), for the mirrored grammar."""
    cdef int i, k, x
    for i in range(N // 2):
        k = N - 1 - i
        w.nodes[i], w.nodes[k] = w.nodes[k], w.nodes[i]
        w.ids[i], w.ids[k] = w.ids[k], w.ids[i]
        w.fixed[i], w.fixed[k] = w.fixed[k], w.fixed[i]
    for i in range(N):
        x = w.fixed[i]
        if x >= 0:
            w.fixed[i] = N - 1 - x


cdef double chart_value(WorkC* w, int N) noexcept nogil:
    """The max-plus value of the string in w, as :c:func:`build_string` left
    it (the memo first): -inf, NaN if out of memory.  The chart's columns
    over the longest prefix this string shares with the last one filled
    are kept (:c:func:`maxplus_columns`).  The strings of one row, and of a
    configuration and the next, mostly differ near the stack top only: the
    stack bottom comes first, and with ``w.rev`` the string is reversed
    (the buffer's end first) and parsed by the mirrored grammar, which keeps
    more where the buffer is the longer part.  Leaves the string reversed
    where it reversed it (its memo key is not)."""
    cdef const SpecC* sp = &w.spec
    cdef int i, j, v, S, kept = 0, strings = w.n + 3 + sp.n_prefix
    cdef double value
    cdef Chart ch
    cdef double* wt
    cdef int* states
    cdef const int* term_left = sp.term_left_rev if w.rev else sp.term_left
    cdef const int* term_right = sp.term_right_rev if w.rev else sp.term_right
    v = memo_get(&w.memo, w.key, 3 * N, 0)
    if v != MEMO_MISSING:
        return -INFINITY if v == NEG else v
    if not chart_room(w, N):
        return NAN
    S = w.stride
    if w.rev:
        reverse_string(w, N)
    while (w.rev == w.last_rev and kept < N and kept < w.last_len and w.nodes[kept] == w.last[kept]
           and w.ids[kept] == w.last[strings + kept] and w.fixed[kept] == w.last[2 * strings + kept]):
        kept += 1
    ch.block = w.chart
    maxplus_layout(&ch, sp.rules_rev if w.rev else sp.rules, S)
    states = <int*> (<char*> w.chart + chart_bytes(sp, S))
    ch.pl, ch.pr = states, states + S
    wt = <double*> ch.W
    for j in range(kept, N):
        states[j] = term_left[w.ids[j]]
        states[S + j] = term_right[w.ids[j]]
        for i in range(N):
            wt[i * S + j] = edge_weight(w, i, j)
    for i in range(kept, N):
        for j in range(kept):
            wt[i * S + j] = edge_weight(w, i, j)
    value = maxplus_columns(&ch, sp.rules_rev if w.rev else sp.rules, N, kept, w.rev)
    for i in range(kept, N):
        w.last[i] = w.nodes[i]
        w.last[strings + i] = w.ids[i]
        w.last[2 * strings + i] = w.fixed[i]
    w.last_len, w.last_rev = N, w.rev
    w.parses += 1
    w.parses_rev += w.rev
    memo_put(&w.memo, w.key, 3 * N, 0, NEG if value == -INFINITY else <int> value)
    return value


cdef void grammar_row(void* work, const StateC* state, const int* stack, int ns, int bstart,
                      const int* arcs, int strategy, double* out) noexcept nogil:
    """sigma of every transition that applies to ``state`` (column t: the
    t-th transition), NaN for the others and where memory ran out."""
    cdef WorkC* w = <WorkC*> work
    cdef const MachineC* m = w.spec.machine
    cdef int t, h, d, N, credit
    cdef double gain, value, best = -INFINITY
    cdef bint complete = True, directed = False
    for t in range(m.n_rules):
        out[t] = NAN
        if not machine_legal(m, state, t):
            continue
        gain = 1.0 if machine_arc(m, state, t, &h, &d) and w.gold[d] == h else 0.0
        state_copy(w.next, state)
        machine_apply(m, w.next, t, -1)
        N = build_string(w, w.next, &credit)
        if not directed:   # the chart's direction, one for the row: see chart_value
            w.rev, directed = N - w.split > w.split, True
        value = chart_value(w, N) if N >= 0 else NAN
        if value != value:
            complete = False
            w.out_of_memory = w.out_of_memory or N >= 0
            continue
        out[t] = value if value == -INFINITY else gain + credit + value
        best = max(best, out[t])
    # this configuration's value (the best of its row), for the row of the
    # configuration before it
    if complete and best > -INFINITY:
        N = build_string(w, state, &credit)
        if N > 0:
            memo_put(&w.memo, w.key, 3 * N, 0, <int> best - credit)
    if w.chart_size > w.chart_limit:
        chart_drop(w)


cdef inline void chart_drop(WorkC* w) noexcept nogil:
    free(w.chart)
    w.chart, w.chart_size, w.stride, w.last_len = NULL, 0, 0, 0


cdef class Spec:
    """What the kernel needs of one declared system: its machine, compiled
    completion grammar and terminal table (see :func:`grammar_kernel`)."""
    cdef SpecC c
    cdef object keep      # the Python objects behind the pointers

    def __init__(self, Machine machine, CompiledRules rules, completion):
        grammar = completion.grammar
        tables, mirrored = grammar.tables, grammar.mirrored.tables
        cdef CompiledRules rules_rev = compiled(grammar.mirrored)
        rules.group()
        rules_rev.group()
        terms = [np.ascontiguousarray(t, dtype=np.intc) for t in
                 (tables.term_left, tables.term_right, mirrored.term_left, mirrored.term_right)]
        prefix = np.asarray(completion.prefix_ids or [0], dtype=np.intc)
        cdef const int[::1] tl = terms[0], tr = terms[1], tlr = terms[2], trr = terms[3], px = prefix
        self.keep = (machine, rules, rules_rev, terms, prefix)
        self.c.machine = &machine.c
        self.c.rules = &rules.g
        self.c.term_left, self.c.term_right = &tl[0], &tr[0]
        self.c.rules_rev = &rules_rev.g
        self.c.term_left_rev, self.c.term_right_rev = &tlr[0], &trr[0]
        self.c.n_prefix = len(completion.prefix_ids)
        self.c.prefix_ids = &px[0]
        self.c.uses_heads = completion.uses_heads
        self.c.root_none = completion.root == "none"
        self.c.critical = completion.critical_buffer
        wheres = ("stack", "buffer", "outside")
        for i in range(TABLE_SIZE):
            where, rest = divmod(i, 8)
            is_root, rest = divmod(rest, 4)
            is_top, headed = divmod(rest, 2)
            self.c.table[i] = completion.terminal_table.get(
                (wheres[where], bool(is_root), bool(is_top), bool(headed)), -1)

    def work(self, heads):
        return GrammarGold(self, heads)


cdef class GrammarGold(KernelGold):
    """The kernel's data for one gold tree (heads, -1 unknown in a partial
    tree) and its scratch arrays: one thread at a time."""
    cdef WorkC c
    cdef int* block
    cdef Spec spec

    def __cinit__(self):
        self.block = NULL
        self.c.next = NULL
        self.c.chart = NULL
        self.c.chart_size = 0
        self.c.stride = 0
        self.c.last_len = 0
        self.c.last_rev = False
        self.c.rev = False
        self.c.marked_len = -1
        self.c.parses = 0
        self.c.parses_rev = 0
        self.c.out_of_memory = False
        self.c.chart_limit = KEPT_CHART

    def __init__(self, Spec spec, heads):
        cdef int n = len(heads) - 1, i, size, strings
        self.spec = spec
        self.c.spec = spec.c
        self.c.n = n
        # gold heads; nodes, ids, fixed; pos, outside_below, root_of, lo, hi, size, at,
        # marked; key; last
        size = (n + 1) + 9 * (n + 3 + spec.c.n_prefix) + 8 * (n + 1)
        self.block = <int*> malloc(size * sizeof(int))
        self.c.next = state_new(n)
        if self.block is NULL or self.c.next is NULL:
            raise MemoryError()
        for i in range(n + 1):
            self.block[i] = heads[i] if i > 0 and heads[i] >= 0 else -1
        self.c.gold = self.block
        strings = n + 3 + spec.c.n_prefix
        self.c.nodes = self.block + (n + 1)
        self.c.ids = self.c.nodes + strings
        self.c.fixed = self.c.ids + strings
        self.c.pos = self.c.fixed + strings
        self.c.outside_below = self.c.pos + (n + 1)
        self.c.root_of = self.c.outside_below + (n + 1)
        self.c.lo = self.c.root_of + (n + 1)
        self.c.hi = self.c.lo + (n + 1)
        self.c.size = self.c.hi + (n + 1)
        self.c.at = self.c.size + (n + 1)
        self.c.marked = self.c.at + (n + 1)
        self.c.key = self.c.marked + (n + 1)
        self.c.last = self.c.key + 3 * strings
        self.c.memo.on = 1
        self.ptr = &self.c

    def __dealloc__(self):
        free(self.c.chart)
        memo_free(&self.c.memo)
        state_free(self.c.next)
        free(self.block)

    @property
    def out_of_memory(self):
        """Whether a chart could not be allocated: the rows computed with this
        work are then not exact, and the caller must raise MemoryError."""
        return self.c.out_of_memory

    @property
    def chart_limit(self):
        """The largest chart (bytes) this work keeps from one row to the next:
        a longer string's chart is freed at the end of its row, and filled
        from its first column at the next.  Setting it frees a larger chart
        kept now."""
        return self.c.chart_limit

    @chart_limit.setter
    def chart_limit(self, value):
        try:
            limit = exact_index(value)
        except TypeError:
            limit = -1
        if not 0 <= limit < 2 ** 64:
            raise ValueError(f"chart_limit must be a number of bytes, an integer from 0 to "
                             f"2**64 - 1, got {value!r:.60}")
        self.c.chart_limit = limit
        if self.c.chart_size > self.c.chart_limit:
            chart_drop(&self.c)

    @property
    def parses(self):
        """How many charts this work has filled (the memo answers the others)."""
        return self.c.parses

    @property
    def parses_reversed(self):
        """How many of them were for reversed strings, by the mirrored grammar."""
        return self.c.parses_rev

    def buffer_kept(self, stack, buffer):
        """``(kept, dropped)``: the buffer nodes (front first) that the string
        of the configuration ``stack``, ``buffer`` (no edge built) keeps under
        ``critical_buffer`` (:c:func:`mark_dropped`, whether or not the
        system declares it), and how many it leaves out, each credited its
        gold edge.  For ``cubic_critical``, which applies the same reduction
        to arc-standard under every strategy."""
        state_load(self.c.next, stack, buffer, None)
        mark_dropped(&self.c, self.c.next)
        kept, dropped = [], 0
        for x in buffer:
            if self.c.root_of[x] >= 0 and self.c.size[self.c.root_of[x]] < 0:
                dropped += 1
            else:
                kept.append(x)
        return kept, dropped


def grammar_kernel(system):
    """The C grammar oracle of a declared ``system`` as a row kernel whose
    columns are all its transitions, or None where it has none (no compiled
    machine, no completion grammar, or a terminal table that misses a
    combination of node properties).  Built once per system object and
    completion (a copy given another grammar gets its own)."""
    completion = getattr(system, "completion_spec", None)
    found = vars(system).get("_grammar_kernel")
    if found is not None and found[0] is completion:
        return found[1]
    kernel = None
    if completion is not None and getattr(system, "compiled_moves", None) == "rewrite":
        try:
            machine = machine_for(system)
        except ValueError:
            machine = None
        if machine is not None and completion.covers_all_nodes():
            spec = Spec(machine, compiled(completion.grammar), completion)
            kernel = row_kernel(grammar_row, tuple(system.transitions), spec.work)
    system._grammar_kernel = (completion, kernel)
    return kernel

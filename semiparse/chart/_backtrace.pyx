# cython: language_level=3, wraparound=False, cdivision=True
"""The backtrace: a best tree of a filled chart, the first in chart order
or one drawn uniformly among the best derivations (:func:`best_tree`).

Over a max-plus chart (first best derivation), or a chart of best scores with
their counts (a best derivation sampled in proportion to counts): counts as
doubles while the total count fits one, else as logs.  In a log chart each
choice weighs its alternatives relative to a reference log count (that of
the item being expanded), so weights stay in [0, 1] however many
derivations there are.  In a max-plus chart every finite entry stands for
at least one derivation, so each alternative weighs 1.
"""
from libc.math cimport INFINITY, exp
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart._inside cimport fill
from semiparse.chart._layout cimport (Chart, CompiledRules, Rules, at, chart_alloc, chart_free,
                                      check_input)
from semiparse.chart._maxplus cimport MaxPlus
from semiparse.chart._values cimport MaxCountF, MaxLogCount


cdef inline int trace_cap(int N) noexcept nogil:
    """A bound on the items of one derivation over N positions (8 per
    position, and 8 more): the depth of the backtrace's stack, and the number
    of uniforms a sampled backtrace may draw (at most one per item)."""
    return 8 * N + 8


def uniforms_needed(int N):
    """How many uniforms :func:`best_tree` needs to sample a tree over N
    positions (:c:func:`trace_cap`)."""
    return trace_cap(N)


ctypedef fused BV:
    MaxPlus
    MaxCountF
    MaxLogCount

# Mass drawn in a choice, as a share of its total: keeps the cumulative walk
# of `pick` inside the total despite rounding (a bias below 1e-12).
cdef double SHRINK = 1.0 - 1e-12


cdef inline double weight(BV x, BV y, double ref) noexcept nogil:
    """Number of derivations of the product x * y (relative to exp(ref) in a
    log chart)."""
    if BV is MaxPlus:
        return 1.0 if x.s > -INFINITY and y.s > -INFINITY else 0.0
    elif BV is MaxCountF:
        return x.c * y.c
    else:
        if x.c == -INFINITY or y.c == -INFINITY:
            return 0.0
        return exp((x.c + y.c) - ref)


cdef inline double log_count(BV x) noexcept nogil:
    """The reference for `weight` (only a log chart needs one)."""
    if BV is MaxLogCount:
        return x.c
    else:
        return 0.0

cdef enum:
    ITEM_L, ITEM_R, ITEM_IL, ITEM_IR


cdef inline bint pick(double s, double c, double target, double* r, bint sample) noexcept nogil:
    """Decide whether this decomposition (score s, count c) is the one taken.

    First mode: the first that reaches the target score.  Sample mode: walk
    the cumulative count among those reaching it; ``r`` holds the remaining
    mass (u times their total count).
    """
    if s != target or c <= 0:
        return False
    if not sample:
        return True
    if r[0] < c:
        return True
    r[0] -= c
    return False


cdef double mass(const BV* a, const BV* b, int n, double extra,
                 double target, double ref) noexcept nogil:
    """Total weight of the n products a[x] * b[x] (* extra score) reaching target."""
    cdef int x
    cdef double t = 0
    for x in range(n):
        if (a[x].s + b[x].s) + extra == target:
            t += weight(a[x], b[x], ref)
    return t


cdef inline void push(int* stack, int* top, int kind, int a, int b, int i, int j) noexcept nogil:
    cdef int* f = stack + 5 * top[0]
    f[0], f[1], f[2], f[3], f[4] = kind, a, b, i, j
    top[0] += 1


cdef inline int split_point(const BV* row1, const BV* row2, int lo, int hi, double extra,
                            double target, double ref, double* r, bint sample) noexcept nogil:
    """The first x in lo..hi-1 whose term row1[x] * row2[x] (* extra score)
    `pick` takes; -1 if none."""
    cdef int x
    for x in range(lo, hi):
        if pick((row1[x].s + row2[x].s) + extra, weight(row1[x], row2[x], ref), target, r, sample):
            return x
    return -1


cdef bint trace_root(BV tag, Chart* ch, const Rules* g, double u, bint sample, int* stack,
                     int* top) noexcept nogil:
    """Push the right item of a best start rule: the best of L[B][0][0] *
    R[C][0][N-1] over start rules (B, C), weighed relative to the largest
    log count among them; False if there is none."""
    cdef int N = ch.N, q
    cdef size_t NN = <size_t> N * N
    cdef const BV* Lf = <const BV*> ch.Lf
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef double best_s = -INFINITY, ref = -INFINITY, best_c = 0, r
    cdef BV x, y
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if x.s > -INFINITY and y.s > -INFINITY and x.s + y.s >= best_s:
            if x.s + y.s > best_s:
                best_s, ref = x.s + y.s, -INFINITY
            if log_count(x) + log_count(y) > ref:
                ref = log_count(x) + log_count(y)
    if best_s == -INFINITY:
        return False
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if x.s + y.s == best_s:
            best_c += weight(x, y, ref)
    r = u * best_c * SHRINK
    for q in range(g.nroot):
        x = Lf[at(g.root[2 * q], 0, 0, N, NN)]
        y = Rf[at(g.root[2 * q + 1], 0, N - 1, N, NN)]
        if pick(x.s + y.s, weight(x, y, ref), best_s, &r, sample):
            push(stack, top, ITEM_R, g.root[2 * q + 1], 0, 0, N - 1)
            break
    return True


cdef bint trace_attachment(BV tag, Chart* ch, int kind, int a, int b, int i, int j, double u,
                           bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the attachment item (ITEM_IL or ITEM_IR) of
    the pair (a, b) over i..j: sum_k R[b][i][k] * L[a][k+1][j], times the
    (fixed) edge; False if no term reaches its value."""
    cdef int N = ch.N, k
    cdef size_t NN = <size_t> N * N
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef const BV* Lb = <const BV*> ch.Lb
    cdef const BV* W = <const BV*> ch.W
    cdef const BV* row1 = Rf + at(b, i, 0, N, NN)
    cdef const BV* row2 = Lb + at(a, j, 1, N, NN)
    cdef BV x
    cdef double extra, target, ref, r = 0
    if kind == ITEM_IL:
        x = (<const BV*> ch.IL)[at(a * ch.nr + b, j, i, N, NN)]
        extra = W[j * N + i].s
    else:
        x = (<const BV*> ch.IR)[at(a * ch.nr + b, i, j, N, NN)]
        extra = W[i * N + j].s
    target, ref = x.s, log_count(x)
    if sample:
        r = u * mass(row1 + i, row2 + i, j - i, extra, target, ref) * SHRINK
    k = split_point(row1, row2, i, j, extra, target, ref, &r, sample)
    if k < 0:
        return False
    push(stack, top, ITEM_R, b, 0, i, k)
    push(stack, top, ITEM_L, a, 0, k + 1, j)
    return True


cdef bint trace_left(BV tag, Chart* ch, const Rules* g, int a, int i, int j, double u,
                     bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the left item a over i..j:
    sum_d L[bd][i][d] * IL[b][cd][j][d] over its combinations; False if no
    term reaches its value."""
    cdef int N = ch.N, nr = ch.nr, q, d, bd, b, cd
    cdef size_t NN = <size_t> N * N
    cdef const BV* Lf = <const BV*> ch.Lf
    cdef const BV* IL = <const BV*> ch.IL
    cdef BV x = Lf[at(a, i, j, N, NN)]
    cdef double target = x.s, ref = log_count(x), r = 0
    if sample:
        for q in range(g.nlc):
            if g.lc[4 * q] == a:
                r += mass(Lf + at(g.lc[4 * q + 1], i, i, N, NN),
                          IL + at(g.lc[4 * q + 2] * nr + g.lc[4 * q + 3], j, i, N, NN),
                          j - i, 0, target, ref)
        r *= u * SHRINK
    for q in range(g.nlc):
        if g.lc[4 * q] != a:
            continue
        bd, b, cd = g.lc[4 * q + 1], g.lc[4 * q + 2], g.lc[4 * q + 3]
        d = split_point(Lf + at(bd, i, 0, N, NN), IL + at(b * nr + cd, j, 0, N, NN), i, j, 0,
                        target, ref, &r, sample)
        if d >= 0:
            push(stack, top, ITEM_L, bd, 0, i, d)
            push(stack, top, ITEM_IL, b, cd, d, j)
            return True
    return False


cdef bint trace_right(BV tag, Chart* ch, const Rules* g, int a, int i, int j, double u,
                      bint sample, int* stack, int* top) noexcept nogil:
    """Push the two items under the right item a over i..j:
    sum_d IR[bd][c][i][d] * R[cd][d][j] over its combinations; False if no
    term reaches its value."""
    cdef int N = ch.N, nr = ch.nr, q, d, bd, b, cd
    cdef size_t NN = <size_t> N * N
    cdef const BV* Rf = <const BV*> ch.Rf
    cdef const BV* Rb = <const BV*> ch.Rb
    cdef const BV* IR = <const BV*> ch.IR
    cdef BV x = Rf[at(a, i, j, N, NN)]
    cdef double target = x.s, ref = log_count(x), r = 0
    if sample:
        for q in range(g.nrc):
            if g.rc[4 * q] == a:
                r += mass(IR + at(g.rc[4 * q + 2] * nr + g.rc[4 * q + 1], i, i, N, NN) + 1,
                          Rb + at(g.rc[4 * q + 3], j, i + 1, N, NN), j - i, 0, target, ref)
        r *= u * SHRINK
    for q in range(g.nrc):
        if g.rc[4 * q] != a:
            continue
        b, bd, cd = g.rc[4 * q + 1], g.rc[4 * q + 2], g.rc[4 * q + 3]
        d = split_point(IR + at(bd * nr + b, i, 0, N, NN), Rb + at(cd, j, 0, N, NN), i + 1, j + 1,
                        0, target, ref, &r, sample)
        if d >= 0:
            push(stack, top, ITEM_IR, bd, b, i, d)
            push(stack, top, ITEM_R, cd, 0, d, j)
            return True
    return False


cdef int backtrace(BV tag, Chart* ch, const Rules* g, int* heads, const double* u,
                   bint sample) noexcept nogil:
    """Write a best tree (first or sampled) into heads; -1 if there is none.
    Each item taken from the stack pushes the two it splits into; a sampled
    backtrace draws one uniform per choice."""
    cdef int cap = trace_cap(ch.N)
    cdef int* stack = <int*> malloc(5 * cap * sizeof(int))
    cdef int top = 0, n_u = 1, kind, a, b, i, j
    cdef bint found = True
    if stack == NULL:
        return -1
    if not trace_root(tag, ch, g, u[0], sample, stack, &top):
        free(stack)
        return -1
    heads[0] = -1
    while top > 0:
        top -= 1
        kind, a, b, i, j = stack[5 * top], stack[5 * top + 1], stack[5 * top + 2], \
            stack[5 * top + 3], stack[5 * top + 4]
        if i == j and (kind == ITEM_L or kind == ITEM_R):
            continue
        if top + 2 >= cap:
            break
        if kind == ITEM_IL:
            heads[i] = j
        elif kind == ITEM_IR:
            heads[j] = i
        if kind == ITEM_IL or kind == ITEM_IR:
            found = trace_attachment(tag, ch, kind, a, b, i, j, u[n_u], sample, stack, &top)
        elif kind == ITEM_L:
            found = trace_left(tag, ch, g, a, i, j, u[n_u], sample, stack, &top)
        else:
            found = trace_right(tag, ch, g, a, i, j, u[n_u], sample, stack, &top)
        if sample:
            n_u += 1
        if not found:
            break
    free(stack)
    return 0 if top == 0 and found else -1


def best_tree(CompiledRules rules not None, const int[::1] pl not None,
              const int[::1] pr not None, const double[:, ::1] w not None,
              const double[::1] uniforms=None, bint log_counts=False):
    """``(score, heads)`` of a best tree; ``heads`` is None when there is none.

    Without ``uniforms`` the first best derivation in chart order is returned
    (the one the generic Viterbi semiring keeps), from a max-plus chart; with
    ``uniforms`` (at least :func:`uniforms_needed` numbers in [0, 1)) a best tree is
    drawn from a chart of best scores and their counts with probability
    proportional to derivation counts, i.e. uniformly among best derivations:
    counts are doubles while the total fits one, else logs (any length;
    ``log_counts`` takes logs at once, so tests can compare both ways).
    """
    cdef int N = w.shape[0], status
    cdef Chart ch
    cdef MaxPlus mp, mp_value
    cdef MaxCountF mc, mc_value
    cdef MaxLogCount ml
    cdef double score
    cdef int[::1] heads = np.full(N, -1, dtype=np.intc)
    cdef bint sample = uniforms is not None
    cdef const double* u
    cdef double[::1] zeros
    check_input(rules, pl, pr, w)
    if not sample:
        zeros = np.zeros(trace_cap(N))
        u = &zeros[0]
    else:
        if uniforms.shape[0] < trace_cap(N) or not all(0.0 <= x < 1.0 for x in uniforms):
            raise ValueError(f"best_tree needs {trace_cap(N)} uniforms (8 * N + 8) in [0, 1)")
        u = &uniforms[0]
    if chart_alloc(&ch, sizeof(MaxCountF) if sample else sizeof(MaxPlus),  # MaxLogCount: same size
                   N, rules.n_left, rules.n_right) < 0:
        raise MemoryError(f"chart for {N} positions does not fit in memory")
    with nogil:
        if sample:
            mc_value = fill(mc, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
            score = mc_value.s
            if score == -INFINITY:
                status = -1
            elif mc_value.c < INFINITY and not log_counts:
                status = backtrace(mc, &ch, &rules.g, &heads[0], u, True)
            else:  # too many best trees for a double: count again in logs
                fill(ml, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
                status = backtrace(ml, &ch, &rules.g, &heads[0], u, True)
        else:
            mp_value = fill(mp, &ch, &rules.g, &pl[0], &pr[0], &w[0, 0], 0)
            score = mp_value.s
            status = backtrace(mp, &ch, &rules.g, &heads[0], u, False) if score > -INFINITY else -1
    chart_free(&ch)
    if status < 0:
        return score, None
    return score, np.asarray(heads)


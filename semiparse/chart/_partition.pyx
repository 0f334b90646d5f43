# cython: language_level=3, wraparound=False, cdivision=True
"""The log partition of a padded batch of scores, and its edge posteriors, in
one call without the GIL (:func:`log_partition_batch`, the forward pass of
:func:`semiparse.torch.log_partition`): each item's checks, its shift per
dependent (:mod:`semiparse.chart._scores`) and its kernel, Eisner's
algorithm over plain probabilities stored by width (``eisner_src.c``) for
first-order projective rules, else the split-grammar log kernel
(:mod:`semiparse.chart._inside`, :mod:`semiparse.chart._outside`)."""
from libc.math cimport INFINITY
from libc.stddef cimport ptrdiff_t
from libc.stdlib cimport free, malloc
import numpy as np

from semiparse.chart._inside cimport KERNEL_LOG, log_inside
from semiparse.chart._layout cimport (Chart, CompiledRules, Rules, chart_alloc, chart_free,
                                      chart_layout, check_states)
from semiparse.chart._logsum cimport Scaled
from semiparse.chart._outside cimport marginals_one
from semiparse.chart._plain cimport Plain
from semiparse.chart._scores cimport rounding_limit, shift_core

cdef extern from "float.h":
    const double DBL_EPSILON

cdef extern from "semiparse/chart/eisner_src.h":
    double eisner "semiparse_eisner"(const double* w, int N, double* work, double* edges) nogil

cdef extern from "semiparse/chart/scores_src.h":
    bint any_nan_or_inf "semiparse_any_nan_or_inf"(const double* w, ptrdiff_t stride,
                                                   ptrdiff_t m) nogil
    double largest_below_zero "semiparse_largest_below_zero"(const double* x, ptrdiff_t n) nogil


cdef struct Work:
    # a batch's working memory, sized for its largest item
    double* scratch    # an item's shifted scores
    double* out        # its edge posteriors
    double* shifts     # its shift per dependent
    double* work       # Eisner's charts (first-order rules only)
    Chart ch           # the split-grammar kernel's chart (room for Scaled values)
    Chart ad           # its adjoints (with edges only)


cdef int check_batch(const double[:, :, ::1] w, list codes, const int[::1] sizes,
                     Py_ssize_t start, Py_ssize_t stop, double[:, :, ::1] edges) except -1:
    """ValueError unless the scores are B square N x N matrices, with B sizes
    and B codes, ``0 <= start <= stop <= B``, and ``edges`` (or None) of the
    scores' shape."""
    cdef Py_ssize_t B = w.shape[0], N = w.shape[1]
    if w.shape[2] != N or sizes.shape[0] != B or len(codes) != B or not 0 <= start <= stop <= B:
        raise ValueError(f"log_partition_batch: scores of shape ({B}, {N}, {w.shape[2]}), "
                         f"{sizes.shape[0]} sizes, {len(codes)} codes, items {start}..{stop}")
    if edges is not None and (edges.shape[0] != B or edges.shape[1] != N or edges.shape[2] != N):
        raise ValueError("log_partition_batch: edges must have the scores' shape")
    return 0


cdef Py_ssize_t check_items(CompiledRules rules, list codes, const int[::1] sizes, Py_ssize_t N,
                            Py_ssize_t start, Py_ssize_t stop, const int** pls,
                            const int** prs) except -1:
    """ValueError unless each item ``start..stop-1`` has 1 to N positions
    and as many start states of each side, states of these rules; points
    ``pls[b]``, ``prs[b]`` at them (the arrays of ``codes``) and returns
    the largest item's size."""
    cdef Py_ssize_t b, m, largest = 1
    cdef const int[::1] pl
    cdef const int[::1] pr
    for b in range(start, stop):
        m = sizes[b]
        pl, pr = codes[b]
        if not 1 <= m <= N or pl.shape[0] != m or pr.shape[0] != m:
            raise ValueError(f"log_partition_batch: item {b} of {m} positions with "
                             f"{pl.shape[0]} and {pr.shape[0]} start states for scores "
                             f"of size {N}")
        check_states(rules, pl, pr, m)
        pls[b], prs[b] = &pl[0], &pr[0]
        largest = max(largest, m)
    return largest


cdef void work_init(Work* s) noexcept nogil:
    """Nothing allocated yet (:c:func:`work_free` frees what is)."""
    s.scratch = s.out = s.shifts = s.work = NULL
    s.ch.block = NULL
    s.ad.block = NULL


cdef int work_alloc(Work* s, CompiledRules rules, Py_ssize_t largest, bint first_order,
                    bint marg) except -1:
    """The working memory for items of up to ``largest`` positions
    (MemoryError where it does not fit)."""
    s.scratch = <double*> malloc(largest * largest * sizeof(double))
    s.out = <double*> malloc(largest * largest * sizeof(double))
    s.shifts = <double*> malloc(largest * sizeof(double))
    if first_order:
        s.work = <double*> malloc(10 * largest * largest * sizeof(double))
    if (s.scratch == NULL or s.out == NULL or s.shifts == NULL or (first_order and s.work == NULL)
            or chart_alloc(&s.ch, sizeof(Scaled), largest, rules.n_left, rules.n_right) < 0
            or (marg and chart_alloc(&s.ad, sizeof(double), largest, rules.n_left,
                                     rules.n_right) < 0)):
        raise MemoryError(f"chart for {largest} positions does not fit in memory")
    return 0


cdef void work_free(Work* s) noexcept nogil:
    free(s.scratch)
    free(s.out)
    free(s.shifts)
    free(s.work)
    if s.ch.block != NULL:
        chart_free(&s.ch)
    if s.ad.block != NULL:
        chart_free(&s.ad)


cdef bint partition_item(Work* s, const Rules* g, const double* w, Py_ssize_t stride,
                         Py_ssize_t m, const int* pl, const int* pr, bint first_order, bint marg,
                         double* total, double* offset) noexcept nogil:
    """Whether the item of m positions whose scores are at ``w`` (rows
    ``stride`` apart) takes the fast path; if it does, the log kernel's
    value of its shifted scores in ``total[0]``, the shift's total in
    ``offset[0]`` and, with ``marg``, its posteriors in ``s.out`` (m x m)."""
    cdef Py_ssize_t bad[2]
    cdef double big, shift_total
    cdef bint plain
    cdef Plain pv
    cdef Scaled sl
    if any_nan_or_inf(w, stride, m):  # the checked path names them
        return False
    shift_total = shift_core(w, stride, m, s.scratch, s.shifts, bad)
    if bad[0] >= 0 or shift_total == INFINITY:
        return False
    # shifted scores are at most 0: the largest of largest_score
    big = largest_below_zero(s.scratch, m * m)
    if DBL_EPSILON * m * big > rounding_limit():  # shift_errors would compute the errors
        return False
    offset[0] = shift_total
    if first_order:
        total[0] = eisner(s.scratch, m, s.work, s.out if marg else NULL)
        if total[0] == total[0]:  # else beyond its range: the split kernel
            return True
    chart_layout(&s.ch, sizeof(Scaled), m, g.nl, g.nr)
    if marg:
        chart_layout(&s.ad, sizeof(double), m, g.nl, g.nr)
        total[0] = marginals_one(KERNEL_LOG, &s.ch, &s.ad, g, pl, pr, s.scratch, s.out)
    else:
        total[0] = log_inside(KERNEL_LOG, &s.ch, g, pl, pr, s.scratch, &plain, &pv, &sl)
    return True


def log_partition_batch(CompiledRules rules not None, const double[:, :, ::1] w not None,
                        list codes not None, const int[::1] sizes not None,
                        Py_ssize_t start, Py_ssize_t stop, double[:, :, ::1] edges=None,
                        bint use_eisner=True):
    """The log partition, and with ``edges`` the edge posteriors, of the
    items ``start..stop-1`` of a padded batch of scores ``w[b, h, d]``, item
    ``b`` reading ``w[b, :sizes[b], :sizes[b]]`` and the start states
    ``codes[b] = (pl, pr)``: in one call without the GIL, the checks and the
    shift of :func:`semiparse.chart.score_shift.shifted` included, so that an
    ordinary batch needs no Python per item.

    Returns ``(totals, offsets, fast)``, arrays over the whole batch written
    at ``start..stop-1``: the log kernel's value of the shifted scores, the
    shift's total (:attr:`semiparse.chart.score_shift.Shift.total`) and whether
    the item took this path.  An item whose scores are NaN or +inf, whose
    shift overflows, whose shift's total is not finite or whose shifted
    scores are large enough for rounding to matter (``eps * n * largest >
    ROUNDING_LIMIT``, where :func:`semiparse.chart.score_shift.shift_errors` would compute
    the errors) is left alone (``fast`` False) for the caller's checked
    path; so is every item when the kernel is not the log kernel.
    ``edges[b, :n, :n]`` gets the posteriors of a fast item with a tree
    (the rest of ``edges[b]`` is not written).

    For first-order projective rules (:meth:`CompiledRules.first_order`)
    an item first tries Eisner's algorithm over plain probabilities stored
    by width (``eisner_src.c``: each width's sums run over all its spans
    at once), and takes the split-grammar log kernel where that leaves its
    exact range; ``use_eisner=False`` always takes the latter (for tests)."""
    cdef Py_ssize_t B = w.shape[0], N = w.shape[1], b, h, d, m, largest
    cdef bint marg = edges is not None
    check_batch(w, codes, sizes, start, stop, edges)
    totals_array, offsets_array = np.zeros(B), np.zeros(B)
    fast_array = np.zeros(B, dtype=np.uint8)
    cdef double[::1] totals = totals_array
    cdef double[::1] offsets = offsets_array
    cdef unsigned char[::1] fast = fast_array
    if start == stop or N == 0:
        return totals_array, offsets_array, fast_array.astype(bool)
    cdef const int** pls = <const int**> malloc(B * sizeof(void*))
    cdef const int** prs = <const int**> malloc(B * sizeof(void*))
    cdef bint first_order = rules.first_order() and use_eisner
    cdef Work s
    work_init(&s)
    try:
        if pls == NULL or prs == NULL:
            raise MemoryError("no memory for the batch's pointers")
        largest = check_items(rules, codes, sizes, N, start, stop, pls, prs)
        work_alloc(&s, rules, largest, first_order, marg)
        with nogil:
            for b in range(start, stop):
                m = sizes[b]
                fast[b] = partition_item(&s, &rules.g, &w[b, 0, 0], N, m, pls[b], prs[b],
                                         first_order, marg, &totals[b], &offsets[b])
                if fast[b] and marg and totals[b] > -INFINITY:
                    for h in range(m):
                        for d in range(m):
                            edges[b, h, d] = s.out[h * m + d]
        return totals_array, offsets_array, fast_array.astype(bool)
    finally:
        free(pls)
        free(prs)
        work_free(&s)

"""Scores shifted per dependent before any semiring reads them (score
shifting, not a transition system's shift).

Each dependent's scores less the largest of them: every tree attaches each
word once, so every tree's score changes by the same sum and the
distribution over trees does not change.  Score-valued results get the sum
back (:func:`unshift`), with a ValueError where rounding would have eaten
their digits.  The guards of every client are here, in numpy: the shift of
a padded batch (:func:`shift_batch`, ``semiparse.torch``'s), whether its
rounding moved a likely tree (:func:`check_rounding`), and the digits of the
differences that entropies and log probabilities take
(:func:`check_entropy`, :func:`check_log_prob`)."""
import math

import numpy as np

from semiparse.chart import kernels
from semiparse.chart.counting import log_derivations
from semiparse.chart.inputs import NEG_INF, exact_log_scale

# Results are refused when rounding could move them by more (and, for scores,
# by more than a billionth of them); the batch kernel tests the same value.
ROUNDING_LIMIT = kernels.ROUNDING_LIMIT


def rounding_bound(n, *magnitudes):
    """A bound on the rounding error of a value computed from log-space
    quantities of these magnitudes over ``n`` positions (their sums keep the
    relative precision of a double, 2.2e-16, per operation)."""
    return 8 * n * np.finfo(float).eps * sum(abs(x) for x in magnitudes)


def rounding_matters(n, largest):
    """Whether shifted scores as large as ``largest`` (in magnitude) over
    ``n`` positions are large enough for their rounding to move a tree's
    score by more than :data:`ROUNDING_LIMIT` (elementwise on arrays): only
    then does :func:`shift_errors` compute the errors."""
    return np.finfo(float).eps * n * largest > ROUNDING_LIMIT


class Shift:
    """The shift of :func:`shifted`: ``columns[d]`` taken from the scores of
    the edges into ``d``, and ``total``, the sum of ``columns[1:]`` that every
    tree's score lost (inf when a partial sum leaves the range of a double).
    ``errors``: where shifted scores are large enough for their rounding to
    matter, ``errors[h, d]`` how much the shift rounded the score of
    ``h -> d`` (its largest over labels), else None."""

    __slots__ = ("columns", "total", "errors")

    def __init__(self, columns, total, errors=None):
        self.columns, self.total, self.errors = columns, total, errors

    @classmethod
    def of(cls, columns, errors=None):
        """The shift by ``columns``, its total summed exactly (:func:`shift_total`)."""
        return cls(columns, shift_total(columns), errors)

    def check_digits(self, likely=None):
        """ValueError when the shift may have moved the score of a tree over
        the edges of ``likely`` (finite entries; None: every edge) by more
        than :data:`ROUNDING_LIMIT`: log-space queries read differences of
        tree scores, and those differences would have lost their digits
        (1.38 - 1e16 is rounded by 0.6)."""
        if self.errors is None:
            return
        errors = self.errors if likely is None else np.where(np.isfinite(likely), self.errors, 0.0)
        lost = float(errors.max(axis=0).sum()) if errors.size else 0.0
        if lost > ROUNDING_LIMIT:
            h, d = np.unravel_index(int(np.argmax(errors)), errors.shape)
            raise ValueError(f"scores too large for log-space queries (marginals, entropy, "
                             f"expectations): the score of {h} -> {d} less the best score of an "
                             f"edge into {d} is rounded by {errors[h, d]:.2g} in a double, and a "
                             f"tree's score by up to {lost:.2g} (more than {ROUNDING_LIMIT:g}), "
                             "which the differences between trees cannot absorb")


def shift_errors(w, shifts, out):
    """:attr:`Shift.errors` of ``out = w - shifts`` (shifts broadcast over
    heads and labels): None when no shifted score is large enough for a
    tree's rounding to pass :data:`ROUNDING_LIMIT` (every ordinary input),
    else the exact rounding of each subtraction (Knuth's two-sum), reduced
    over labels."""
    n = out.shape[0]
    flat = np.ascontiguousarray(out).reshape(n, -1) if out.size else np.zeros((0, 0))
    if not rounding_matters(n, kernels.largest_score(flat)):
        return None
    minus = -np.asarray(shifts, dtype=np.float64).reshape((1, n) + (1,) * (out.ndim - 2))
    with np.errstate(all="ignore"):
        z = out - w
        errors = np.abs((w - (out - z)) + (minus - z))
    errors = np.where(np.isfinite(out), np.nan_to_num(errors, nan=np.inf), 0.0)
    return errors.max(axis=2) if errors.ndim == 3 else errors


def shifted(w):
    """``(scores, Shift)`` for checked ``(m+1, m+1)`` scores: each column
    ``d`` less the largest finite score of an edge into ``d``
    (:func:`semiparse.chart.kernels.shift_columns`; edges into the root and
    self-loops, which no tree has, become -inf).  Every tree attaches each
    word exactly once, so every tree's score drops by the same sum and the
    distribution over trees, the best trees and the marginals stay as they
    are, while the shifted scores are at most 0 and their sums keep the
    digits that tell trees apart, whatever constant the scores share.
    ValueError when two scores of one column differ by more than a double
    holds (their difference would round to -inf, forbidding an edge)."""
    out, columns, total, overflow = kernels.shift_columns(w)
    if overflow is not None:
        h, d = overflow
        raise ValueError(_apart(f"{h}, {d}", d, w[h, d], columns[d]))
    return out, Shift(columns, total, shift_errors(w, columns, out))


def _apart(where, d, score, largest):
    return (f"weights: the scores of the edges into word {d} differ by more than a double "
            f"holds (w[{where}] is {score:.3g} and the largest {largest:.3g}); use -inf to "
            "forbid an edge")


def shift_total(columns):
    """:attr:`Shift.total` of ``columns``: the exact sum of ``columns[1:]``
    (``math.fsum``), or inf when a partial sum leaves the range of a double."""
    try:
        return math.fsum(np.asarray(columns[1:]).tolist())
    except OverflowError:
        return math.inf


def shift_batch(given, sizes):
    """The shift of :func:`shifted` over a padded batch: ``given`` float64
    ``(B, N, N)`` scores or ``(B, N, N, L)`` labelled ones, -inf wherever no
    tree reads (padding, edges into the root, self-loops), ``sizes`` each
    item's positions.  Returns ``(columns, suspects)``: ``columns[b, d]``
    the largest finite score of an edge (of any label) into ``d`` in item
    ``b``, 0 where there is none, and the items whose shifted scores are large
    enough for the shift's rounding to matter (:func:`rounding_matters`;
    :func:`check_rounding` tells whether it did).  ValueError naming the first
    item where two scores of one dependent differ by more than a double holds."""
    columns = (given.max(axis=-1) if given.ndim == 4 else given).max(axis=1)
    columns = np.where(np.isfinite(columns), columns, 0.0)
    with np.errstate(over="ignore"):  # a shifted score beyond a double: -inf, refused below
        out = given - (columns[:, None, :, None] if given.ndim == 4 else columns[:, None, :])
    finite = given > NEG_INF
    low = np.where(finite, out, 0.0).min(axis=tuple(range(1, given.ndim)))  # each item's lowest
    if (low == NEG_INF).any():
        at = tuple(np.argwhere((out == NEG_INF) & finite)[0])
        b, h, d = at[:3]
        message = _apart(f"{b}, {h}, {d}", d, given[at], columns[b, d])
        raise ValueError(f"batch item {b}: {message}")
    return columns, np.flatnonzero(rounding_matters(np.asarray(sizes), -low)).tolist()


def keeps_digits(n, shifted_value, total):
    """Whether ``total``, a score ``shifted_value`` of shifted weights over
    ``n`` positions plus the shift, kept its digits: the rounding of the
    shifted score moves it by at most :data:`ROUNDING_LIMIT`, or by a
    billionth of it.  Elementwise on arrays."""
    return rounding_bound(n, shifted_value) <= np.maximum(ROUNDING_LIMIT, 1e-9 * np.abs(total))


def unshift(value, shift, what="the score"):
    """``value`` (a score or an array of scores of shifted weights; -inf
    stays -inf) plus ``shift.total``, the score every tree lost in
    :func:`shifted`.  ValueError if a finite value becomes too large for a
    double, or when the two cancel: a tree far below its words' best edges
    (a huge shifted score) whose total is small has lost its digits to
    rounding (scores 1e100, -1e100 and 1 summing to 1)."""
    offset = shift.total
    if offset == 0.0:
        return value
    n = len(shift.columns)
    if isinstance(value, float):
        if value == NEG_INF:  # no tree
            return value
        total = value + offset
        if not math.isfinite(total):
            total = _unshift_scaled(value, shift.columns, what)
        if not keeps_digits(n, value, total):
            _cancelled(value, total, n, what)
        return total
    largest = kernels.largest_score(np.ascontiguousarray(value).reshape(1, -1))
    if abs(offset) + largest < 1e308:
        total = value + offset  # no entry can overflow
    else:
        total = _unshift_scaled(value, shift.columns, what)
    if rounding_bound(n, largest) > ROUNDING_LIMIT:
        finite = np.isfinite(value)
        bad = np.argwhere(finite & ~keeps_digits(n, np.where(finite, value, 0.0), total))
        if len(bad):
            at = tuple(bad[0])
            _cancelled(value[at], total[at], n, f"{what} at {list(map(int, at))}")
    return total


def _unshift_scaled(value, columns, what):
    """``value`` plus the sum of ``columns[1:]`` near the limits of a double:
    the sums are taken at a power-of-two scale (exact), so that no partial
    sum overflows; ValueError if a finite value's total is beyond a double."""
    k = max(len(columns), 2).bit_length()
    offset = math.fsum(np.ldexp(columns[1:], -k).tolist())
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.ldexp(np.ldexp(value, -k) + offset, k)
    if np.any(np.isfinite(value) & ~np.isfinite(total)):
        raise ValueError(f"{what} of these weights overflows a double: a tree's score (a sum "
                         f"of {len(columns) - 1} scores) is beyond +-1.8e308")
    return total.item() if np.ndim(total) == 0 else total


def _cancelled(shifted_value, total, n, what):
    raise ValueError(f"{what} of these weights has lost its digits: the tree scores "
                     f"{-shifted_value:.3g} below the sum of its words' best edges, and that "
                     f"sum cancels it to {total:.3g}, which rounding could move by up to "
                     f"{rounding_bound(n, shifted_value):.1g}")


def unshift_result(result, shift):
    """A :class:`ParseResult` of shifted weights with its scores unshifted
    (see :func:`unshift`): max-plus, log, Viterbi, max-count, k-best and
    polynomial values."""
    value = result.value
    if isinstance(value, tuple):  # max-count: (score, count)
        value = (unshift(value[0], shift), value[1])
    elif isinstance(value, list):  # k-best: scores, best first
        value = [unshift(v, shift) for v in value]
    elif isinstance(value, dict):  # polynomial: {score: count}; scores may meet after rounding
        merged = {}
        for score, count in value.items():
            key = unshift(score, shift)
            merged[key] = merged.get(key, 0) + count
        value = merged
    else:
        value = unshift(value, shift)
    trees = [(unshift(score, shift), heads) for score, heads in result.trees]
    return type(result)(value, result.heads, trees)


# A tree scoring this much below the best weighs exp(-800) < 1e-347 of it:
# nothing in a double.
NEGLIGIBLE = 800.0


def likely_edges(rules, pl, pr, w, shift=None):
    """Shifted scores ``w`` (:func:`shifted`) within the log kernel's exact
    range (:func:`exact_log_scale`): ``w`` itself when it is, else ``w`` with
    -inf for every edge scoring more than 800 + log(number of trees) below
    the best tree's score.  Shifted scores are at most 0, so a tree with such
    an edge scores below that too, and all of them together weigh less than
    exp(-800) of the best tree: edge marginals, entropy, expectations and
    samples are those of ``w`` to the last digit of a double.  So scores of
    -1e300 that no likely tree uses (a soft "forbidden") cost nothing.

    ValueError when the likely trees' own edges are beyond the exact range,
    or when ``shift`` (the :class:`Shift` that gave ``w``) rounded their
    scores by more than :data:`ROUNDING_LIMIT` (:meth:`Shift.check_digits`).
    """
    if exact_log_scale(w):
        if shift is not None:
            shift.check_digits(w)
        return w
    log_count = log_derivations(rules, pl, pr, w)
    if log_count == NEG_INF:
        return w  # no tree: the caller says so
    best = kernels.inside("maxplus", rules, pl, pr, w)
    if best == NEG_INF:  # trees there are, but every one's score sums beyond a double
        raise ValueError(f"scores too large for log-space queries (marginals, entropy, "
                         f"expectations) of {len(w)} terminals: below the best edge into each "
                         "word, every tree scores less than the most negative double")
    likely = np.where(w < best - (NEGLIGIBLE + log_count), NEG_INF, w)
    if exact_log_scale(likely):
        if shift is not None:
            shift.check_digits(likely)
        return likely
    raise ValueError(f"scores too large for log-space queries (marginals, entropy, "
                     f"expectations) of {len(w)} terminals: the likely trees' edges score down "
                     f"to {kernels.largest_score(likely):.3g} below the best edge into the same "
                     "word, and that times the length must stay below 1e17 for log-space "
                     "differences to keep their digits")


def check_rounding(rules, pl, pr, w, out, columns, edges):
    """ValueError when the shift of one item's scores ``w`` by ``columns``
    into ``out`` (``(m, m)``, or labelled ``(m, m, L)``; an item of
    :func:`shift_batch`) rounded the score of a likely tree by more than
    :data:`ROUNDING_LIMIT`: :meth:`Shift.check_digits` on the likely edges
    of :func:`likely_edges`, for the queries that read differences of tree
    scores.  ``edges``: the shifted edge scores, ``out`` itself or, labelled,
    its log-sum-exp over labels; a label :data:`NEGLIGIBLE` below its edge's
    total weight is no likely tree's either."""
    if out.ndim == 3:
        negligible = out < edges[..., None] - NEGLIGIBLE
        w, out = np.where(negligible, NEG_INF, w), np.where(negligible, NEG_INF, out)
    likely_edges(rules, pl, pr, edges, Shift(columns, None, shift_errors(w, columns, out)))


def check_entropy(n, log_z, mean):
    """ValueError when an entropy ``log_z - mean`` of shifted scores over
    ``n`` positions could be off by more than :data:`ROUNDING_LIMIT` after
    rounding (the likely trees score far below their words' best edges)."""
    bound = rounding_bound(n, log_z, mean)
    if bound > ROUNDING_LIMIT:
        raise ValueError(f"entropy: the likely trees score about {-mean:.3g} below their words' "
                         f"best edges, so log Z - E[score] could be off by {bound:.1g} after "
                         "rounding")


def check_log_prob(n, score, log_z, log_p):
    """ValueError when ``log_p``, a tree's shifted ``score`` less the shifted
    ``log_z`` (plus the log of its number of derivations) over ``n``
    positions, is finite and could be off by more than
    :data:`ROUNDING_LIMIT` (or a billionth of it) after rounding."""
    if math.isfinite(log_p) and not keeps_digits(n, abs(score) + abs(log_z), log_p):
        raise ValueError(f"log_prob: the tree scores {-score:.3g} and log Z {-log_z:.3g} below "
                         f"the sum of their words' best edges, so their difference could be off "
                         f"by {rounding_bound(n, score, log_z):.1g} after rounding")

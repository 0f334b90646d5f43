"""Scores shifted per dependent before any semiring reads them.

Each dependent's scores less the largest of them: every tree attaches each
word once, so every tree's score changes by the same sum and the
distribution over trees does not change.  Score-valued results get the sum
back (:func:`unshift`), with a ValueError where rounding would have eaten
their digits."""
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
    if np.finfo(float).eps * n * kernels.largest_score(flat) <= ROUNDING_LIMIT:
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
        raise ValueError(f"weights: the scores of the edges into word {d} differ by more than "
                         f"a double holds (w[{h}, {d}] is {w[h, d]:.3g} and the largest "
                         f"{columns[d]:.3g}); use -inf to forbid an edge")
    return out, Shift(columns, total, shift_errors(w, columns, out))


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

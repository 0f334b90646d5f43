"""Labelled edge weights ``(m+1, m+1, L)``: their checks, their shift over
every head and label of a dependent, and their reduction over labels (best
label, label count, log-sum-exp) to the edge weights the chart reads."""
from dataclasses import dataclass

import numpy as np

from semiparse.chart.inputs import NEG_INF, as_array, check_input as check_unlabelled, is_labelled
from semiparse.chart.result import ParseResult
from semiparse.chart.score_shift import Shift, shift_errors, shifted

@dataclass
class LabelReduction:
    """Per-edge summaries of labelled weights, all ``(m+1, m+1)`` arrays.

    best: the best label's score (``-inf`` when no label is allowed);
    argmax: the first best label; count: the number of allowed labels;
    logsumexp: log of the sum over labels of exp(score).
    """

    weights: np.ndarray
    best: np.ndarray
    argmax: np.ndarray
    count: np.ndarray
    logsumexp: np.ndarray

    def posterior(self):
        """``p[h, d, l]``: probability of label l given the edge ``h -> d``
        (softmax over labels; all zero for a forbidden edge)."""
        allowed = self.logsumexp > NEG_INF
        shift = np.where(allowed, self.logsumexp, 0.0)[..., None]
        return np.where(allowed[..., None], np.exp(self.weights - shift), 0.0)

    def mean(self, values):
        """``sum over l of posterior[h, d, l] * values[h, d, l]``: the expected
        value of an edge's label given the edge (0 for forbidden edges)."""
        return np.einsum("hdl,hdl->hd", self.posterior(), values)


def reduce_labels(weights):
    """:class:`LabelReduction` of checked ``(m+1, m+1, L)`` float weights, L >= 1."""
    best = weights.max(axis=2)
    shift = np.where(best > NEG_INF, best, 0.0)
    with np.errstate(divide="ignore"):  # log 0 = -inf for edges without a label
        lse = np.log(np.exp(weights - shift[..., None]).sum(axis=2)) + shift
    return LabelReduction(weights, best, weights.argmax(axis=2),
                          (weights > NEG_INF).sum(axis=2), lse)


def check_weights(grammar, terminals, weights):
    """``(terminal ids, float64 weights)`` for a loaded grammar, labelled
    (three axes) or not, or a ValueError saying what is wrong: the checks of
    :func:`semiparse.parse`, applied to each label's ``(m+1, m+1)`` plane."""
    if not is_labelled(weights):
        (ids, _, _), w = check_unlabelled(grammar, terminals, weights)
        return ids, w
    n = len(terminals) if isinstance(terminals, (str, list, tuple, np.ndarray)) else 0
    (ids, _, _), _ = check_unlabelled(grammar, terminals, np.zeros((n, n)))  # the terminals alone
    w = as_array(weights, "labelled weights must be an array of real numbers", np.asanyarray)
    m1 = len(ids)
    if w.shape[:2] != (m1, m1) or w.shape[2] == 0:
        raise ValueError(f"labelled weights have shape {w.shape}: expected ({m1}, {m1}, L) with "
                         f"L >= 1 labels for {m1} terminals (w[h, d, l] scores h -> d with label l)")
    planes = []
    for label in range(w.shape[2]):
        try:
            planes.append(check_unlabelled(grammar, terminals, w[:, :, label])[1])
        except ValueError as exc:
            raise ValueError(f"label {label} (weights[:, :, {label}]): {exc}") from None
    return ids, np.stack(planes, axis=2)


def shifted_input(grammar, terminals, weights):
    """``(terminal ids, shifted float64 weights, Shift)``: the weights checked
    (:func:`check_weights`) and shifted per dependent, labelled ones over all
    their heads and labels (:func:`shifted_labels`), unlabelled ones by
    :func:`semiparse.chart.score_shift.shifted`."""
    ids, w = check_weights(grammar, terminals, weights)
    return (ids,) + (shifted_labels(w) if w.ndim == 3 else shifted(w))


def shifted_labels(w):
    """``(scores, Shift)`` for checked ``(m+1, m+1, L)`` weights: as
    :func:`semiparse.chart.score_shift.shifted`, each dependent ``d`` shifted by the
    largest finite score of a labelled edge into it over every head and label.  Shifting
    before the label axis is reduced keeps the log-sum-exp over labels exact:
    ``log 3`` added to 1e16 would be lost.  ValueError when two scores of one
    dependent differ by more than a double holds."""
    n = w.shape[0]
    w = w.copy()
    w[:, 0, :] = NEG_INF                      # edges into the root and self-loops:
    w[np.arange(n), np.arange(n), :] = NEG_INF  # no tree has them
    shifts = w.max(axis=(0, 2)) if w.size else np.zeros(n)
    shifts[shifts == NEG_INF] = 0.0
    out = w - shifts[None, :, None]
    overflow = np.argwhere((out == NEG_INF) & (w > NEG_INF))
    if len(overflow):
        h, d, label = overflow[0]
        raise ValueError(f"weights: the scores of the labelled edges into word {d} differ by "
                         f"more than a double holds (w[{h}, {d}, {label}] is "
                         f"{w[h, d, label]:.3g} and the largest {shifts[d]:.3g}); use -inf to "
                         "forbid an edge")
    return out, Shift.of(shifts, shift_errors(w, shifts, out))


def edge_weights(w):
    """``(edge weights, LabelReduction or None)`` for checked weights: labelled
    ones reduced to the log-sum-exp over labels, so that exp(edge weight) is
    the total weight of the edge's labels."""
    if w.ndim == 2:
        return w, None
    reduction = reduce_labels(w)
    return reduction.logsumexp, reduction


@dataclass
class LabelledParseResult(ParseResult):
    """A :class:`~semiparse.chart.result.ParseResult` with ``labels``: with Viterbi,
    ``labels[d]`` the label of the edge ``heads[d] -> d`` (``labels[0] ==
    -1``); None for the other semirings or when there is no tree."""

    labels: list = None

"""Labelled edges: weights of shape ``(m+1, m+1, L)``, ``weights[h, d, l]``
the score of the edge ``h -> d`` with label ``l`` (``-inf`` forbids it).

A labelled tree picks a tree and one label per edge, its score the sum of
its labelled edges' scores.  Labels are independent given the tree, so every
query reduces the label axis edge by edge (:func:`reduce_labels`) and parses
the reduced ``(m+1, m+1)`` weights: the best label's score for max-plus and
Viterbi, the number of allowed labels for counting, the log-sum-exp over
labels for the log partition, entropy, expectations and sampling.  Given an
edge, its label has probability ``softmax over l of weights[h, d, l]``
(:meth:`LabelReduction.posterior`), so label marginals are edge marginals
times that posterior.
"""
import math
from dataclasses import dataclass

import numpy as np

from .. import semiring as sr
from ..engine import (NEG_INF, ParseResult, Shift, _check_input, _labelled, _loaded, parse, shifted,
                      unshift)

SEMIRINGS = ("boolean", "counting", "log", "maxplus", "viterbi")


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


is_labelled = _labelled


def check_input(grammar, terminals, weights):
    """``(terminal ids, float64 weights)`` for a loaded grammar, labelled
    (three axes) or not, or a ValueError saying what is wrong: the checks of
    :func:`semiparse.parse`, applied to each label's ``(m+1, m+1)`` plane."""
    if not is_labelled(weights):
        (ids, _, _), w = _check_input(grammar, terminals, weights)
        return ids, w
    n = len(terminals) if isinstance(terminals, (str, list, tuple, np.ndarray)) else 0
    (ids, _, _), _ = _check_input(grammar, terminals, np.zeros((n, n)))  # the terminals alone
    w = np.asanyarray(weights)
    m1 = len(ids)
    if w.shape[:2] != (m1, m1) or w.shape[2] == 0:
        raise ValueError(f"labelled weights have shape {w.shape}: expected ({m1}, {m1}, L) with "
                         f"L >= 1 labels for {m1} terminals (w[h, d, l] scores h -> d with label l)")
    planes = []
    for label in range(w.shape[2]):
        try:
            planes.append(_check_input(grammar, terminals, w[:, :, label])[1])
        except ValueError as exc:
            raise ValueError(f"label {label} (weights[:, :, {label}]): {exc}") from None
    return ids, np.stack(planes, axis=2)


def shifted_input(grammar, terminals, weights):
    """``(terminal ids, shifted float64 weights, Shift)``: the weights checked
    (:func:`check_input`) and shifted per dependent, labelled ones over all
    their heads and labels (:func:`shifted_labels`), unlabelled ones by
    :func:`semiparse.engine.shifted`."""
    ids, w = check_input(grammar, terminals, weights)
    return (ids,) + (shifted_labels(w) if w.ndim == 3 else shifted(w))


def shifted_labels(w):
    """``(scores, Shift)`` for checked ``(m+1, m+1, L)`` weights: as
    :func:`semiparse.engine.shifted`, each dependent ``d`` shifted by the
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
    try:
        total = math.fsum(shifts[1:].tolist())
    except OverflowError:
        total = math.inf
    return out, Shift(shifts, total)


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
    """A :class:`~semiparse.engine.ParseResult` with ``labels``: with Viterbi,
    ``labels[d]`` the label of the edge ``heads[d] -> d`` (``labels[0] ==
    -1``); None for the other semirings or when there is no tree."""

    labels: list = None


def parse_labelled(grammar, terminals, weights, semiring="maxplus"):
    """Parse with labelled edge weights ``(m+1, m+1, L)`` in a semiring of
    :data:`SEMIRINGS`.

    boolean: is there a tree with an allowed label on every edge; counting:
    the exact number of labelled derivations (an edge counts as many times as
    it has allowed labels); maxplus: the best labelled score; viterbi: that
    score with ``heads`` and ``labels``; log: log of the sum over labelled
    derivations of exp(score).  Returns a :class:`LabelledParseResult`.
    """
    grammar = _loaded(grammar)
    if not is_labelled(weights):
        raise ValueError(f"parse_labelled needs weights with three axes (m+1, m+1, L), got shape "
                         f"{np.shape(weights)}: use semiparse.parse for unlabelled weights")
    if not (isinstance(semiring, str) and semiring in SEMIRINGS):
        raise ValueError(f"labelled weights support the semirings {', '.join(SEMIRINGS)}, "
                         f"got {semiring!r}")
    _, raw = check_input(grammar, terminals, weights)
    w, shift = shifted_labels(raw)
    reduction = reduce_labels(w)
    if semiring == "log":
        return LabelledParseResult(unshift(parse(grammar, terminals, reduction.logsumexp,
                                                 "log").value, shift))
    if semiring == "counting":
        ring = sr.WeightedCounting(reduction.count)
        return LabelledParseResult(parse(grammar, terminals, reduction.best, ring).value)
    result = parse(grammar, terminals, reduction.best, semiring)
    labels = None
    if result.heads is not None:
        # from the scores as given: shifting may round two labels' scores together
        labels = [-1] + [int(raw[h, d].argmax()) for d, h in enumerate(result.heads) if d]
    value = result.value if semiring == "boolean" else unshift(result.value, shift)
    return LabelledParseResult(value, result.heads, labels=labels)

"""Entropy and expectations of the distribution over trees.

Edge scores ``w`` define p(T) = exp(sum of w[h, d] over the edges of T) / Z
over the derivations T of the grammar (the trees themselves for the shipped
grammars, which have no spurious ambiguity).  Both queries run the generic
engine with the expectation semiring (:class:`semiparse.semiring.Expectation`),
so they are correct for any grammar.  With edge marginals
``mu[h, d] = p(h -> d in T)`` they are the identities

    entropy  = log Z - sum over h, d of mu[h, d] * w[h, d]
    expected = sum over h, d of mu[h, d] * values[h, d]

(labelled weights: ``w`` the log-sum-exp over labels, and ``w[h, d]`` in
the entropy and ``values[h, d]`` replaced by their means under the label
posterior), which a marginals routine can compute instead.
"""
import numpy as np

from .. import semiring as sr
from ..engine import NEG_INF, _loaded, inside_generic
from .labels import check_input, edge_weights


def entropy(grammar, terminals, weights):
    """Entropy in nats of p(T) proportional to exp(score(T)).

    weights: ``(m+1, m+1)`` edge scores, or ``(m+1, m+1, L)`` labelled ones
    (then the entropy of the distribution over labelled trees).  Checked as
    :func:`semiparse.parse` checks them; ValueError too when no tree exists.
    Returns a float >= 0.
    """
    grammar = _loaded(grammar)
    ids, w = check_input(grammar, terminals, weights)
    edge_w, labels = edge_weights(w)
    # Labelled: H = H(tree) + E[label entropies] = log Z - E[sum of mean label scores].
    mean_score = edge_w if labels is None else labels.mean(np.where(w > NEG_INF, w, 0.0))
    log_z, mean = _expectation(grammar, ids, edge_w, mean_score)
    return max(log_z - mean, 0.0)  # rounding may leave -1e-12 for a single tree


def expected(grammar, terminals, weights, values):
    """E[sum of ``values[h, d]`` over the edges of T] under p(T) proportional
    to exp(score(T)), e.g. the expected number of gold edges (values a 0/1
    gold mask) or a risk.

    values: finite numbers of the shape of the edges, ``(m+1, m+1)``; with
    labelled weights either that (a value per edge) or ``(m+1, m+1, L)`` (a
    value per labelled edge).  ValueError for bad input or when no tree
    exists.  Returns a float.
    """
    grammar = _loaded(grammar)
    ids, w = check_input(grammar, terminals, weights)
    edge_w, labels = edge_weights(w)
    v = _checked_values(values, w.shape)
    if v.ndim == 3:
        v = labels.mean(v)
    return _expectation(grammar, ids, edge_w, v)[1]


def _expectation(grammar, ids, w, values):
    """``(log Z, E[sum of values])`` with the expectation semiring."""
    log_z, mean = inside_generic(sr.Expectation(values), grammar.tables, ids, w)
    if log_z == NEG_INF:
        raise ValueError("no tree: every derivation of these terminals uses a forbidden "
                         "(-inf) edge, so the distribution over trees is empty")
    return log_z, mean


def _checked_values(values, shape):
    """``values`` as float64 of the weights' shape (or the edge shape), finite."""
    try:
        v = np.asarray(values)
    except ValueError:
        v = None
    if v is None or v.dtype.kind not in "iuf":
        raise ValueError(f"values must be an array of real numbers of shape {shape}, got "
                         f"{type(values).__name__}" + ("" if v is None else f" of dtype {v.dtype}"))
    if v.shape not in (shape, shape[:2]):
        raise ValueError(f"values have shape {v.shape}: expected {shape} like the weights"
                         + (f" or {shape[:2]} (a value per edge)" if len(shape) == 3 else ""))
    v = v.astype(np.float64)
    if not np.isfinite(v).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(v))[0])
        raise ValueError(f"values must be finite numbers, got {v[where]} at values{list(where)}")
    return v

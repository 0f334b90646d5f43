"""Entropy and expectations of the distribution over trees.

Edge scores ``w`` define p(T) = exp(sum of w[h, d] over the edges of T) / Z
over the derivations T of the grammar (the trees themselves for the shipped
grammars, which have no spurious ambiguity).  With the edge marginals
``mu[h, d] = p(h -> d in T)`` of the Cython outside pass
(:func:`semiparse.marginals`), both are sums over the edges:

    entropy  = log Z - sum over h, d of mu[h, d] * w[h, d]
    expected = sum over h, d of mu[h, d] * values[h, d]

(labelled weights: ``w`` the log-sum-exp over labels, and ``w[h, d]`` in
the entropy and ``values[h, d]`` replaced by their means under the label
posterior).  The scores are shifted per dependent first
(:func:`semiparse.chart.score_shift.shifted`), which changes neither; edges no likely
tree has are dropped where the scores exceed the kernel's exact range
(:func:`semiparse.chart.score_shift.likely_edges`).  The entropy is a difference of two
sums of scores, so it is refused when they are so large (the likely trees'
edges far below their words' best ones) that rounding could move it by more
than :data:`semiparse.chart.score_shift.ROUNDING_LIMIT`.
"""
import numpy as np

from semiparse.chart import kernels
from semiparse.chart.batch import run_batch
from semiparse.chart.inputs import NEG_INF, check_input, compiled, loaded, real_array
from semiparse.chart.labels import edge_weights, shifted_input
from semiparse.chart.score_shift import ROUNDING_LIMIT, likely_edges, rounding_bound


def entropy(grammar, terminals, weights=None, *, n_jobs=1):
    """Entropy in nats of p(T) proportional to exp(score(T)).

    weights: ``(m+1, m+1)`` edge scores, or ``(m+1, m+1, L)`` labelled ones
    (then the entropy of the distribution over labelled trees).  Checked as
    :func:`semiparse.parse` checks them; ValueError too when no tree exists.
    Returns a float >= 0.  A batch as for :func:`semiparse.parse`.
    """
    grammar = loaded(grammar)
    return run_batch(terminals, weights, n_jobs, lambda t, w: _entropy(grammar, t, w))


def _entropy(grammar, terminals, weights):
    ids, w, shift = shifted_input(grammar, terminals, weights)  # the same distribution
    edge_w, labels = edge_weights(w)
    # Labelled: H = H(tree) + E[label entropies] = log Z - E[sum of mean label scores].
    mean_score = edge_w if labels is None else labels.mean(np.where(w > NEG_INF, w, 0.0))
    log_z, mean = _expectation(grammar, terminals, edge_w, mean_score, shift)
    bound = rounding_bound(len(ids), log_z, mean)
    if bound > ROUNDING_LIMIT:
        raise ValueError(f"entropy: the likely trees score about {-mean:.3g} below the sum of "
                         f"their words' best edges, so log Z - E[score] could be off by "
                         f"{bound:.1g} after rounding (more than {ROUNDING_LIMIT:g})")
    return max(log_z - mean, 0.0)  # rounding may leave -1e-12 for a single tree


def expected(grammar, terminals, weights=None, values=None, *, n_jobs=1):
    """E[sum of ``values[h, d]`` over the edges of T] under p(T) proportional
    to exp(score(T)), e.g. the expected number of gold edges (values a 0/1
    gold mask) or a risk.

    values: finite numbers of the shape of the edges, ``(m+1, m+1)``; with
    labelled weights either that (a value per edge) or ``(m+1, m+1, L)`` (a
    value per labelled edge).  ValueError for bad input or when no tree
    exists.  Returns a float.  A batch: ``terminals`` a list of
    ``(terminals, weights, values)`` triples and neither weights nor values.
    """
    grammar = loaded(grammar)
    if values is None and weights is not None:
        raise ValueError("expected() needs values (one per edge), or a batch of "
                         "(terminals, weights, values) triples")
    if values is not None:
        return _expected(grammar, terminals, weights, values)
    if weights is not None or not isinstance(terminals, (list, tuple)):
        raise ValueError("a batch for expected() is a list of (terminals, weights, values) triples")
    pairs = []
    for i, item in enumerate(terminals):
        if not (isinstance(item, (list, tuple)) and len(item) == 3):
            raise ValueError(f"batch item {i}: expected a (terminals, weights, values) triple, "
                             f"got {item!r:.60}")
        pairs.append((item[0], (item[1], item[2])))
    return run_batch(pairs, None, n_jobs, lambda t, wv: _expected(grammar, t, *wv))


def _expected(grammar, terminals, weights, values):
    _, w, shift = shifted_input(grammar, terminals, weights)  # the same distribution
    edge_w, labels = edge_weights(w)
    v = _checked_values(values, w.shape)
    if v.ndim == 3:
        v = labels.mean(v)
    return _expectation(grammar, terminals, edge_w, v, shift)[1]


def _expectation(grammar, terminals, w, values, shift):
    """``(log Z, E[sum of values])`` for scores ``w`` shifted by ``shift``,
    by the edge marginals of the Cython outside pass."""
    (_, pl, pr), w = check_input(grammar, terminals, w)
    w = likely_edges(compiled(grammar), pl, pr, w, shift)
    log_z, mu = kernels.edge_marginals("log", compiled(grammar), pl, pr, w)
    if log_z == NEG_INF:
        raise ValueError("no tree: every derivation of these terminals uses a forbidden "
                         "(-inf) edge, so the distribution over trees is empty")
    allowed = w > NEG_INF
    mu, values = mu[allowed], values[allowed]
    mean = float(np.dot(mu, values))
    if not np.isfinite(mean):  # partial sums beyond a double: again at a power-of-two scale
        k = len(values).bit_length()
        with np.errstate(over="ignore"):
            mean = float(np.ldexp(np.dot(mu, np.ldexp(values, -k)), k))
        if not np.isfinite(mean):
            raise ValueError(f"the expected value is beyond a double (+-1.8e308): values up "
                             f"to {np.abs(values).max():.3g} on the likely edges")
    return log_z, mean


def _checked_values(values, shape):
    """``values`` as float64 of the weights' shape (or the edge shape), finite."""
    v = real_array(values, f"values must be an array of real numbers of shape {shape}")
    if v.shape not in (shape, shape[:2]):
        raise ValueError(f"values have shape {v.shape}: expected {shape} like the weights"
                         + (f" or {shape[:2]} (a value per edge)" if len(shape) == 3 else ""))
    v = v.astype(np.float64)
    if not np.isfinite(v).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(v))[0])
        raise ValueError(f"values must be finite numbers, got {v[where]} at values{list(where)}")
    return v

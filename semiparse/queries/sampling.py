"""Exact samples from p(T) proportional to exp(score(T) / temperature).

One inside pass of the generic engine with the sampling semiring
(:class:`semiparse.semiring.Sampling`) draws all k trees: log weights
throughout, so the draw is exact (up to rounding of the probabilities) at
any length.  The scores are shifted per dependent first
(:func:`semiparse.chart.score_shift.shifted`), which leaves the distribution as it is,
so a constant shared by all scores does not matter; what remains is refused
when the likely trees score so far below their words' best edges that
rounding their log weights could move a probability by more than
:data:`semiparse.chart.score_shift.ROUNDING_LIMIT`.  Labelled weights: the tree is drawn with each
edge weighted by the sum over its labels, then each edge's label from its
posterior given the edge, which is the joint distribution over labelled
trees.  ``semiparse.chart.engine.sample_best_tree`` (uniform among max-plus optima) is a
different query and stays as it is.
"""
import math
import numbers
import random as _random

import numpy as np

from semiparse.chart import kernels
from semiparse import semiring as sr
from semiparse.chart.batch import run_batch
from semiparse.chart.generic import heads_of_edges, inside_generic
from semiparse.chart.inputs import NEG_INF, check_input, compiled, loaded
from semiparse.chart.labels import edge_weights, shifted_input
from semiparse.chart.score_shift import ROUNDING_LIMIT, rounding_bound


# The most draws one call takes: every chart item keeps one slot per draw.
MAX_DRAWS = 1_000_000


def sample(grammar, terminals, weights=None, temperature=1.0, rng=None, k=1, *, n_jobs=1):
    """k independent trees drawn from p(T) proportional to exp(score(T) / temperature).

    weights: ``(m+1, m+1)`` edge scores or ``(m+1, m+1, L)`` labelled ones,
    checked as :func:`semiparse.parse` checks them.  temperature: a finite
    number > 0 (ValueError otherwise); large values flatten the distribution
    towards uniform over the trees.  rng: a ``random.Random`` or None (a
    fresh one).  k: a positive int.

    Returns a list of k draws.  Unlabelled: each a list of heads
    (``heads[0] == -1``).  Labelled: each a pair ``(heads, labels)`` of lists,
    ``labels[d]`` the label of the edge ``heads[d] -> d`` and ``labels[0] ==
    -1``.  ValueError when no tree exists.  Trees are derivations for a
    grammar with spurious ambiguity (none of the shipped ones).  A batch
    (a list of ``(terminals, weights)`` pairs and no weights) gives a list of
    such lists; on ``n_jobs`` > 1 threads sharing ``rng``, which draws go to
    which item depends on the threads' timing.
    """
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    if rng is None:
        rng = _random.Random()
    elif not isinstance(rng, _random.Random):
        raise ValueError(f"rng must be a random.Random or None, got {rng!r}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= MAX_DRAWS:
        raise ValueError(f"k must be a positive integer (the number of samples) up to "
                         f"{MAX_DRAWS:,} (each chart item keeps a slot per draw), got {k!r}")
    grammar = loaded(grammar)
    return run_batch(terminals, weights, n_jobs,
                     lambda t, w: _sample(grammar, t, w, float(temperature), rng, int(k)))


def _sample(grammar, terminals, weights, temperature, rng, k):
    ids, w, _ = shifted_input(grammar, terminals, weights)  # the same distribution
    with np.errstate(over="ignore"):
        cooled = w / temperature
    if np.any(np.isneginf(cooled) & np.isfinite(w)):
        raise ValueError(f"temperature {temperature!r}: scores divided by it overflow a double "
                         "(their differences exceed 1.8e308)")
    edge_w, labels = edge_weights(cooled)
    _check_rounding(grammar, terminals, edge_w)
    log_z, draws = inside_generic(sr.Sampling(k, rng), grammar.tables, ids, edge_w)
    if log_z == NEG_INF:
        raise ValueError("no tree: every derivation of these terminals uses a forbidden "
                         "(-inf) edge, so there is nothing to sample")
    trees = [heads_of_edges(sr.edges_of(d), len(ids)) for d in draws]
    if labels is None:
        return trees
    posterior = labels.posterior()
    return [(heads, [-1] + [_draw(posterior[h, dep], rng) for dep, h in enumerate(heads) if dep])
            for heads in trees]


def _check_rounding(grammar, terminals, w):
    """ValueError when the log weights of the likely trees' items are so large
    that rounding them could move a probability by more than the limit: the
    items of a tree that weighs anything score between the best tree's score
    (shifted scores are at most 0) less a few hundred, and 0."""
    (_, pl, pr), w = check_input(grammar, terminals, w)
    best = kernels.inside("maxplus", compiled(grammar), pl, pr, w)
    if best > NEG_INF and rounding_bound(len(w), best, 1000.0) > ROUNDING_LIMIT:
        raise ValueError(f"sample: the likely trees score about {-best:.3g} below the sum of "
                         "their words' best edges, too far for log weights to keep the digits "
                         f"of their probabilities (off by up to "
                         f"{rounding_bound(len(w), best, 1000.0):.1g})")


def _draw(p, rng):
    """An index drawn with probabilities ``p`` (summing to 1 up to rounding)."""
    cumulative = np.cumsum(p)
    i = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(i, int(np.flatnonzero(p)[-1]))  # u * total rounded up to the total

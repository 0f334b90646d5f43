"""Edge marginals and max-marginals: the outside pass over the chart.

``marginals`` gives the posterior p(h -> d) of every edge when a derivation
has probability proportional to exp(sum of its edge scores);
``max_marginals`` the best score of a derivation that contains the edge.
Both run the inside pass and then the outside pass over the same chart, in
Cython (:func:`semiparse.chart.kernels.edge_marginals`), or with ``engine="python"``
in the generic engine (:func:`semiparse.chart.generic.outside_generic`).
"""
import numpy as np

from semiparse.chart import kernels
from semiparse import semiring as sr
from semiparse.chart.batch import run_batch
from semiparse.chart.generic import outside_generic
from semiparse.chart.inputs import NEG_INF, check_engine, check_input, compiled, is_labelled, loaded
from semiparse.chart.labels import check_weights, reduce_labels, shifted_labels
from semiparse.chart.score_shift import likely_edges, shifted, unshift


def marginals(grammar, terminals, weights=None, *, n_jobs=1, engine="auto"):
    """``(m+1) x (m+1)`` array, ``[h, d]`` the posterior probability of the edge
    ``h -> d``: each word's column sums to 1 over its heads.  Labelled weights
    ``(m+1, m+1, L)`` give ``(m+1, m+1, L)`` marginals of labelled edges (the
    edge's marginal times its label's posterior given the edge).

    Arguments as for :func:`semiparse.parse` (``terminals`` a list of
    ``(terminals, weights)`` pairs and no ``weights`` for a batch, run on
    ``n_jobs`` threads).  ValueError if the grammar derives no tree of the
    input with the allowed edges.
    """
    return _query("log", grammar, terminals, weights, n_jobs, engine)


def max_marginals(grammar, terminals, weights=None, *, n_jobs=1, engine="auto"):
    """``(m+1) x (m+1)`` array, ``[h, d]`` the best score of a tree containing
    the edge ``h -> d`` (-inf if none); ``(m+1, m+1, L)`` for labelled weights,
    ``[h, d, l]`` the best score of a labelled tree containing ``h -> d`` with
    label ``l``.  Arguments as for :func:`marginals`."""
    return _query("maxplus", grammar, terminals, weights, n_jobs, engine)


def _query(kernel, grammar, terminals, weights, n_jobs, engine):
    grammar = loaded(grammar)
    check_engine(engine)
    return run_batch(terminals, weights, n_jobs,
                     lambda t, w: _edges(kernel, grammar, t, w, engine),
                     lambda pairs: _edges_many(kernel, grammar, pairs, engine))


def _edges(kernel, grammar, terminals, weights, engine):
    item = _prepare(kernel, grammar, terminals, weights, engine)
    if not isinstance(item, _KernelItem):
        return item
    return item.finish(*kernels.edge_marginals(kernel, compiled(grammar), item.pl, item.pr, item.w))


def _edges_many(kernel, grammar, pairs, engine, group=16):
    """``(results, error)`` for ``run_batch``: the items in groups of ``group``,
    each group checked in order up to the first item at fault and its Cython
    kernels then run in one call (:func:`semiparse.chart.kernels.edge_marginals_batch`,
    one release of the GIL): few hand-overs of the GIL between threads, while
    one thread's checks still overlap another's kernels."""
    out = []
    for start in range(0, len(pairs), group):
        items, error = [], None
        for terminals, weights in pairs[start:start + group]:
            try:
                items.append(_prepare(kernel, grammar, terminals, weights, engine))
            except ValueError as exc:
                error = exc
                break
        pending = [x for x in items if isinstance(x, _KernelItem)]
        values = iter(kernels.edge_marginals_batch(kernel, compiled(grammar),
                                                [(x.pl, x.pr, x.w) for x in pending]))
        for item in items:
            if isinstance(item, _KernelItem):
                try:
                    item = item.finish(*next(values))
                except ValueError as exc:
                    return out, exc
            out.append(item)
        if error is not None:
            return out, error
    return out, None


class _KernelItem:
    """A checked and shifted input waiting for the Cython kernel; ``shift``
    (max-plus only) goes back onto the max-marginals."""

    __slots__ = ("n", "pl", "pr", "w", "shift")

    def __init__(self, n, pl, pr, w, shift):
        self.n, self.pl, self.pr, self.w, self.shift = n, pl, pr, w, shift

    def finish(self, total, edges):
        """The kernel's result: ``edges`` unshifted, or ValueError when the
        input has no tree."""
        edges = _finish(self.n, total, edges)
        return edges if self.shift is None else unshift(edges, self.shift, "a max-marginal")


def _prepare(kernel, grammar, terminals, weights, engine):
    """The checked input as a :class:`_KernelItem`, or the result itself when
    another path computes it (labelled weights, the Python engine).  Scores
    are shifted per dependent (:func:`semiparse.chart.score_shift.shifted`): marginals
    do not change, max-marginals get the shift back."""
    if is_labelled(weights):
        return _labelled_edges(kernel, grammar, terminals, weights, engine)
    (ids, pl, pr), w = check_input(grammar, terminals, weights)
    w, shift = shifted(w)
    if kernel == "log":
        w = likely_edges(compiled(grammar), pl, pr, w, shift)
    item = _KernelItem(len(ids), pl, pr, w, shift if kernel == "maxplus" else None)
    if engine != "python":
        return item
    total, edges = outside_generic(sr.Log() if kernel == "log" else sr.MaxPlus(),
                                   grammar.tables, ids, w)
    edges = np.array(edges, dtype=np.float64)
    if kernel == "log":
        return np.exp(_finish(len(ids), total, edges) - total)
    return item.finish(total, edges)


def _finish(n, total, edges):
    """``edges``, or ValueError when the input (of n terminals) has no tree."""
    if total == NEG_INF:
        raise ValueError(f"no tree: the grammar derives no tree of these {n} terminals "
                         "with the allowed edges (scores > -inf), so edge marginals are undefined")
    return edges


def _labelled_edges(kernel, grammar, terminals, weights, engine):
    """Labelled marginals or max-marginals: the edge query on the weights with
    the label axis reduced (log-sum-exp or best label), then spread over the
    labels (by the label posterior, or by each label's loss against the best)."""
    _, w = check_weights(grammar, terminals, weights)
    w, shift = shifted_labels(w)
    labels = reduce_labels(w)
    if kernel == "log":
        shift.check_digits()  # the label shift's rounding, on any edge
        return _edges(kernel, grammar, terminals, labels.logsumexp, engine)[..., None] * labels.posterior()
    edges = _edges(kernel, grammar, terminals, labels.best, engine)
    allowed = np.isfinite(edges)[..., None] & (w > NEG_INF)
    with np.errstate(invalid="ignore"):
        edges = np.where(allowed, edges[..., None] - labels.best[..., None] + w, NEG_INF)
    return unshift(edges, shift, "a max-marginal")

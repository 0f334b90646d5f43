"""The distribution over a grammar's trees (:class:`TreeCRF`, torch-struct's
names) and its log partition (:func:`log_partition`).

Each public query is a few lines over one query of the core or of the
autograd functions; what they share is a handful of helpers: the shifted
float64 scores (:attr:`TreeCRF._ws`) and their edge scores
(:meth:`TreeCRF._edges`), the marginals, a tree's edges, and the core's
parse of each sentence.  The numeric guards are the core's
(:mod:`semiparse.chart.score_shift`), asked per sentence; the dtype's range
is :mod:`semiparse.torch.tensors`'.
"""
import numpy as np
import torch

from semiparse.chart.engine import parse
from semiparse.chart.inputs import NEG_INF
from semiparse.chart.score_shift import (Shift, check_entropy, check_log_prob, check_rounding,
                                         shift_batch, unshift)
from semiparse.torch.batch import _Batch
from semiparse.torch.functions import _LogPartition, _Marginals
from semiparse.torch.tensors import (MAX_RESULT, as_numpy, beyond, checked_weights, described,
                                     in_dtype, integers, padded, row_sums, storage)


def log_partition(weights, grammar="projective", lengths=None, terminals=None, n_jobs=1):
    """log Z of each sentence of a batch, differentiable (``(B,)`` tensor).

    weights: ``(B, n+1, n+1)`` or labelled ``(B, n+1, n+1, L)``, float32 or
    float64, on any device.  grammar: a Grammar, shipped name, path or
    ``"single_root"``.  lengths: words per sentence (None: all n).
    terminals: one string or list of terminal names per sentence, the root
    first (None: the grammar's one terminal, or ``r`` then ``s`` for
    ``single_root``).  n_jobs: threads running the kernels.  ValueError for
    bad input or a sentence without a tree.
    """
    w = checked_weights(weights)
    if w.dim() == 4:
        return TreeCRF(w, lengths, grammar, terminals, n_jobs).log_partition
    # unlabelled: straight to the kernels, which shift the scores themselves
    return _LogPartition.apply(w, _Batch(grammar, w.shape, lengths, terminals, n_jobs))


def _named(b, check, *args, **kwargs):
    """``check(*args, **kwargs)``, its ValueError naming batch item ``b``."""
    try:
        return check(*args, **kwargs)
    except ValueError as exc:
        raise ValueError(f"batch item {b}: {exc}") from None


class TreeCRF:
    """The distribution over the trees (labelled trees, for labelled
    weights) that ``grammar`` derives for each sentence of a batch,
    p(T) proportional to exp(sum of the scores of T's edges).

    Arguments as for :func:`log_partition`; the names follow torch-struct's
    ``DependencyCRF``.  Differentiable: :attr:`log_partition`,
    :attr:`marginals`, :meth:`log_prob`, :attr:`entropy`, :meth:`expected`,
    :attr:`max`.  Not differentiable: :attr:`argmax`, :meth:`sample`,
    :meth:`kbest`, :attr:`count`.  Every query computes in float64 whatever
    the weights' dtype and casts its result to that dtype at the end.
    """

    def __init__(self, log_potentials, lengths=None, grammar="projective", terminals=None,
                 n_jobs=1):
        w = checked_weights(log_potentials)
        self.log_potentials, self.labelled = w, w.dim() == 4
        self._batch = _Batch(grammar, w.shape, lengths, terminals, n_jobs)
        inside = self._batch.inside(w.device)
        self._batch.check_values(w, inside)  # as log_partition says
        valid = self._batch.mask(inside)
        self._valid = valid.unsqueeze(-1) if self.labelled else valid
        self._neg = torch.tensor(NEG_INF, dtype=torch.float64, device=w.device)
        # per-dependent shifts (max over heads and labels), float64 and detached:
        # every tree attaches each word once, so they change no probability and
        # no gradient; _suspect: the sentences for _check_digits
        columns, self._suspect = shift_batch(as_numpy(self._given), self._batch.size_array)
        self._shift = torch.from_numpy(columns).to(w.device)

    # -- the queries ----------------------------------------------------------------
    @property
    def lengths(self):
        return torch.tensor([m - 1 for m in self._batch.sizes])

    @property
    def log_partition(self):
        """``(B,)`` log Z of the scores as given."""
        if self.labelled:
            return self._labelled_log_z()
        return _LogPartition.apply(self.log_potentials, self._batch)

    partition = log_partition

    @property
    def marginals(self):
        """``(B, N, N)`` edge posteriors (``(B, N, N, L)`` of labelled edges),
        zero outside each sentence; differentiable (exactly)."""
        return self._marginals(self._ws).to(self.log_potentials.dtype)

    @property
    def entropy(self):
        """``(B,)`` entropy in nats, ``log Z - sum mu * w`` over shifted
        scores; ValueError when rounding could move it by more than
        :data:`semiparse.chart.score_shift.ROUNDING_LIMIT` (the likely trees score far
        below their words' best edges: :func:`~semiparse.chart.score_shift.check_entropy`)."""
        ws = self._ws
        scores = torch.where(ws > NEG_INF, ws, torch.zeros_like(ws))  # before the marginals:
        mean = (self._marginals(ws) * scores).flatten(1).sum(1)      # autograd's order as ever
        log_z = self._log_z_shifted
        self._check_items(check_entropy, log_z, mean)
        return torch.clamp(log_z - mean, min=0.0).to(self.log_potentials.dtype)

    def expected(self, values):
        """``(B,)`` E[sum of ``values`` over the (labelled) edges of T],
        differentiable in the scores and in ``values`` (a real tensor, finite
        where an edge is allowed; the weights' shape, or ``(B, N, N)`` per edge whatever
        its label).  ValueError where the expectation is beyond the weights'
        dtype."""
        values = self._values(values)
        ws = self._ws
        mu, allowed = self._marginals(ws), ws > NEG_INF
        if self.labelled and values.dim() == 3:
            mu, allowed = mu.sum(-1), self._edges(ws) > NEG_INF
        values = values.to(device=mu.device, dtype=torch.float64)
        if not torch.isfinite(values[allowed]).all():
            raise ValueError("values must be finite where an edge is allowed")
        terms = mu * torch.where(allowed, values, torch.zeros_like(values))
        return row_sums(terms.flatten(1), self.log_potentials.dtype, "the expected value")

    def log_prob(self, heads, labels=None):
        """``(B,)`` log p of the trees ``heads`` (``(B, N)`` ints, ``heads[b, d]``
        the head of d, ``heads[b, 0]`` and padding ignored; with labelled
        weights also ``labels``, same shape): the tree's score less log Z,
        plus the log of its number of derivations (0 for a tree the grammar
        does not derive: -inf).  ValueError when rounding could move it by
        more than :data:`semiparse.chart.score_shift.ROUNDING_LIMIT` (or a
        billionth of it): the tree and log Z both score far below their
        words' best edges (:func:`~semiparse.chart.score_shift.check_log_prob`)."""
        heads, labels = self._trees(heads, labels)
        self._check_digits()
        counts = [self._derivations(b, heads[b].tolist()) for b in range(self._batch.B)]
        score = self._tree_edges(self._ws, heads, labels).sum(1)
        log_z = self._log_z_shifted
        log_count = torch.tensor([np.log(c) if c else NEG_INF for c in counts],
                                 dtype=torch.float64, device=score.device)
        log_p = score + log_count - log_z
        self._check_items(check_log_prob, score, log_z, log_p)
        return log_p.to(self.log_potentials.dtype)

    @property
    def argmax(self):
        """``(B, N)`` heads of a best tree (Viterbi; -1 at the root and in
        padding); with labelled weights ``(heads, labels)``.  ValueError
        naming the sentence when it has no tree."""
        heads, labels = self._best()
        return (heads, labels) if self.labelled else heads

    @property
    def max(self):
        """``(B,)`` the best tree's score, the sum of its edges' scores as
        given; its gradient is the best tree's edges (a subgradient where
        several trees are best)."""
        edges = self._tree_edges(self.log_potentials.to(torch.float64), *self._best())
        return row_sums(edges, self.log_potentials.dtype, "the best score")

    def sample(self, k=1, temperature=1.0, rng=None):
        """``(k, B, N)`` heads of k exact independent draws per sentence
        (``semiparse.sample`` of the batch, which checks temperature and rng
        before any sentence; labelled: ``(heads, labels)``).  rng: a
        ``random.Random`` (None: a fresh one)."""
        from semiparse.queries.sampling import sample

        self._check_k(k)
        batch = list(zip(self._batch.terminals, self._numpy_items()))
        items = sample(self._batch.grammar, batch, temperature=temperature, rng=rng, k=k)
        draws = [[d if self.labelled else (d, None) for d in item] for item in items]
        heads = torch.stack([padded([item[i][0] for item in draws], self._batch.N)
                             for i in range(k)])
        if not self.labelled:
            return heads
        return heads, torch.stack([padded([item[i][1] for item in draws], self._batch.N)
                                   for i in range(k)])

    def kbest(self, k):
        """``(scores (k, B), heads (k, B, N))``: the k best trees of each
        sentence, best first (the generic engine's k-best semiring); a
        sentence with fewer trees pads with -inf and -1.  Unlabelled weights
        only."""
        if self.labelled:
            raise ValueError("kbest takes unlabelled weights (B, n+1, n+1)")
        self._check_k(k)
        scores = torch.full((k, self._batch.B), NEG_INF, dtype=torch.float64)
        heads = torch.full((k, self._batch.B, self._batch.N), -1, dtype=torch.long)
        for b, r in enumerate(self._each("kbest", k)):
            for i, (score, h) in enumerate(r.trees):
                scores[i, b] = score
                heads[i, b, :len(h)] = torch.tensor(h)
        out = scores.to(self.log_potentials.dtype)
        bad = torch.nonzero(torch.isfinite(scores) & ~torch.isfinite(out))
        if len(bad):
            i, b = bad[0].tolist()
            raise beyond(b, f"the score of tree {i + 1}", self.log_potentials.dtype)
        return out, heads

    @property
    def count(self):
        """The exact number of trees (labelled trees) of each sentence with
        allowed edges, as a list of Python ints."""
        return [r.value for r in self._each("counting")]

    # -- the scores the kernels see (built anew for each query, so that each
    # -- query's graph can be differentiated on its own) -------------------------
    @property
    def _given(self):
        """The scores as given in float64, detached, -inf where no tree reads
        (padding too)."""
        return torch.where(self._valid, self.log_potentials.detach().to(torch.float64), self._neg)

    @property
    def _ws(self):
        """Shifted float64 scores, -inf where no tree reads; the graph reaches
        the weights through the conversion."""
        columns = (-1, 1, self._batch.N) + ((1,) if self.labelled else ())
        return (torch.where(self._valid, self.log_potentials.to(torch.float64), self._neg)
                - self._shift.reshape(columns))

    def _edges(self, ws=None):
        """Shifted edge scores ``(B, N, N)``: labelled ones reduced by
        log-sum-exp over labels (an edge's total weight)."""
        ws = self._ws if ws is None else ws
        if self.labelled:
            allowed = (ws > NEG_INF).any(-1)
            safe = torch.where(allowed.unsqueeze(-1), ws, torch.zeros_like(ws))
            lse = torch.logsumexp(safe, -1)
            ws = torch.where(allowed, lse, torch.full_like(lse, NEG_INF))
        return ws

    @property
    def _log_z_shifted(self):
        return _LogPartition.apply(self._edges(), self._batch)

    def _labelled_log_z(self):
        """Labelled log Z: log Z of the shifted edge scores plus the score each
        sentence's trees lost to the shift
        (:func:`semiparse.chart.score_shift.unshift`: exact near the limits of a
        double, ValueError where rounding ate its digits); differentiable, in
        the weights' dtype."""
        if torch.is_grad_enabled() and self.log_potentials.requires_grad:
            self._check_digits()  # its gradient is the marginals
        value = self._log_z_shifted
        shifts = as_numpy(self._shift)
        totals = [unshift(lz, Shift.of(shifts[b, :m]), f"batch item {b}: log Z")
                  for b, (lz, m) in enumerate(zip(value.detach().cpu().tolist(), self._batch.sizes))]
        total = torch.tensor(totals, dtype=torch.float64, device=value.device)
        return in_dtype(total + (value - value.detach()), self.log_potentials.dtype,
                        "log Z of these weights")

    def _marginals(self, ws):
        """The marginals in float64, of the shifted scores ``ws``."""
        self._check_digits()
        edge = self._edges(ws)
        mu = _Marginals.apply(edge, self._batch, None)
        if not self.labelled:
            return mu
        edge = edge.unsqueeze(-1)
        post = torch.exp(ws - torch.where(torch.isfinite(edge), edge, torch.zeros_like(edge)))
        return mu.unsqueeze(-1) * torch.where(ws > NEG_INF, post, torch.zeros_like(post))

    # -- the guards ---------------------------------------------------------------
    def _check_digits(self):
        """ValueError naming the first sentence whose shift rounded the score
        of a likely tree by more than the core's limit, for the queries that
        read differences of tree scores
        (:func:`semiparse.chart.score_shift.check_rounding`).  Only the
        sentences ``__init__`` found large enough for it (none of the
        ordinary ones), once."""
        if not self._suspect:
            return
        with torch.no_grad():
            ws = self._ws
            edges = self._edges(ws)
        given = self._numpy_items()
        for b in self._suspect:
            m, (_, pl, pr) = self._batch.sizes[b], self._batch.codes[b]
            _named(b, check_rounding, self._batch.rules, pl, pr, given[b], as_numpy(ws[b, :m, :m]),
                   as_numpy(self._shift[b, :m]), np.ascontiguousarray(as_numpy(edges[b, :m, :m])))
        self._suspect = []

    def _check_items(self, check, *values):
        """``check(n, *values of b)`` for each sentence b of n positions (the
        core's guards), its ValueError naming the sentence."""
        rows = zip(*(v.detach().cpu().tolist() for v in values))
        for b, (m, row) in enumerate(zip(self._batch.sizes, rows)):
            _named(b, check, m, *row)

    def _check_k(self, k):
        """ValueError unless k is a positive int whose ``(k, B, N)`` result fits
        in :data:`MAX_RESULT` entries."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if k * self._batch.B * self._batch.N > MAX_RESULT:
            raise ValueError(f"k = {k}: the result would hold k x {self._batch.B} x "
                             f"{self._batch.N} heads, more than {MAX_RESULT:.0e}")

    def _values(self, values):
        """``values`` of :meth:`expected`, if a dense real tensor of the
        weights' shape or ``(B, N, N)``, else ValueError."""
        shape = self.log_potentials.shape
        if (not torch.is_tensor(values) or storage(values) or values.is_complex()
                or values.shape not in (shape, shape[:3])):
            got = described(values) if torch.is_tensor(values) else f"a {type(values).__name__}"
            raise ValueError(f"values must be a dense real tensor of shape {tuple(shape)}"
                             + (f" or {tuple(shape[:3])}" if self.labelled else "")
                             + f", got {got}")
        return values

    # -- trees --------------------------------------------------------------------
    def _trees(self, heads, labels):
        """Checked ``(heads, labels)`` of :meth:`log_prob` (labels: None
        for unlabelled weights)."""
        heads = self._tree_tensor(heads, "heads")
        if self.labelled:
            if labels is None:
                raise ValueError("labelled weights: log_prob needs labels as well as heads")
            labels = self._tree_tensor(labels, "labels")
        elif labels is not None:
            raise ValueError("labels given but the weights have no label axis")
        return heads, labels

    def _tree_tensor(self, x, name):
        x = integers(x, name, (self._batch.B, self._batch.N))
        for b, m in enumerate(self._batch.sizes):
            row = x[b, 1:m]
            top = m if name == "heads" else (self.log_potentials.shape[3] if self.labelled else 1)
            if len(row) and (row.min() < 0 or row.max() >= top):
                raise ValueError(f"batch item {b}: {name} must lie in 0..{top - 1} for "
                                 f"positions 1..{m - 1}, got {row.tolist()}")
        return x

    def _tree_edges(self, scores, heads, labels=None):
        """``(B, N)``: ``[b, d]`` the score in ``scores`` (shaped as the
        weights) of the edge into d of sentence b's tree (checked heads), 0
        where there is no word."""
        dev = scores.device
        B, N = self._batch.B, self._batch.N
        d = torch.arange(N, device=dev).expand(B, N)
        used = (d > 0) & (d < torch.tensor(self._batch.sizes, device=dev).unsqueeze(1))
        h = torch.where(used, heads.to(dev), torch.zeros_like(d))
        bidx = torch.arange(B, device=dev).unsqueeze(1).expand(B, N)
        if self.labelled:
            lab = torch.where(used, labels.to(dev), torch.zeros_like(d))
            edge = scores[bidx, h, d, lab]
        else:
            edge = scores[bidx, h, d]
        return torch.where(used, edge, torch.zeros_like(edge))

    def _best(self):
        """``(heads, labels)`` of a best tree of each sentence (labels: None
        for unlabelled weights), padded with -1; ValueError naming the
        sentence when it has no tree."""
        results = self._each("viterbi")
        for b, r in enumerate(results):
            if r.heads is None:
                raise ValueError(f"batch item {b}: no tree: the grammar derives no tree with "
                                 "the allowed edges")
        heads = padded([r.heads for r in results], self._batch.N)
        return heads, (padded([r.labels for r in results], self._batch.N) if self.labelled
                       else None)

    def _derivations(self, b, heads):
        """Number of derivations of sentence b whose edges are those of
        ``heads`` (Cython counting over 0 / -inf scores)."""
        m = self._batch.sizes[b]
        w = np.full((m, m), NEG_INF)
        for d in range(1, m):
            w[heads[d], d] = 0.0
        return parse(self._batch.grammar, self._batch.terminals[b], w, "counting").value

    # -- the core's parse of each sentence ---------------------------------------
    def _numpy_items(self):
        """Sentence b's scores as given (float64 numpy), within its length."""
        w64 = as_numpy(self._given)
        return [np.ascontiguousarray(w64[b, :m, :m]) for b, m in enumerate(self._batch.sizes)]

    def _each(self, semiring, k=None):
        return [_named(b, parse, self._batch.grammar, self._batch.terminals[b], w, semiring, k=k)
                for b, w in enumerate(self._numpy_items())]

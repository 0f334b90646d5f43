"""Exact, differentiable queries over the trees a split grammar defines, in PyTorch.

The optional extra ``neural`` (PyTorch); nothing in the core imports this
module.  Edge scores are a batch of tensors ``w[b, h, d]`` (``(B, n+1, n+1)``,
position 0 the root, ``-inf`` forbidding an edge) or labelled scores
``w[b, h, d, l]`` (``(B, n+1, n+1, L)``), float32 or float64, with ``lengths``
(words per sentence) for a padded batch: sentence ``b`` reads
``w[b, :lengths[b]+1, :lengths[b]+1]`` and nothing else.

- :func:`log_partition` is an autograd function: the forward pass is the
  Cython log kernel (:func:`semiparse.chart.kernels.log_partition_batch`: checks,
  shift and kernels of a batch per thread without the GIL; Eisner's
  algorithm for first-order projective rules), the backward pass hands the
  incoming gradient to the edge marginals of the outside pass, computed with
  the forward pass when a gradient is wanted.  Exact: the marginals are the
  gradient.
- The marginals are differentiable too: their backward pass is the
  covariance of edges, ``Cov(sum_e g_e x_e, x_f)`` for an incoming gradient
  ``g``, computed exactly by the outside pass of the generic engine over the
  first-order expectation semiring (Li and Eisner 2009): for each edge, the
  mean of ``sum g x`` over the trees through it.  So second derivatives of
  the log partition, and the gradients of the entropy and of expectations,
  are exact.  That pass is Python (about 2 ms at 10 words, 90 ms at 40).
- :class:`TreeCRF` is the distribution over the grammar's trees with the
  names of torch-struct's ``DependencyCRF``.

Tensors on a GPU are copied to the CPU for the kernels and the results
copied back.  Scores are shifted per dependent first
(:func:`semiparse.chart.shift.shifted`), in float64 whatever the dtype
(:class:`TreeCRF` computes in float64 and casts its results back at the
end), so large or shifted scores give the same distribution; what a double
cannot hold, or a shift whose rounding would move a likely tree's score
(:meth:`semiparse.chart.shift.Shift.check_digits`), is a ValueError naming
the batch item, never a wrong number.
"""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from semiparse.chart import kernels
from semiparse import semiring as sr
from semiparse.chart.engine import parse
from semiparse.chart.generic import outside_generic
from semiparse.chart.inputs import NEG_INF, compiled
from semiparse.chart.shift import (NEGLIGIBLE, ROUNDING_LIMIT, Shift, keeps_digits, likely_edges,
                                   rounding_bound, shift_errors, shifted, unshift)
from semiparse.grammar import Grammar, load_grammar

__all__ = ["log_partition", "TreeCRF", "SINGLE_ROOT", "grammar_of", "heads_to_edges"]

# Trees whose root (position 0) has exactly one child, every other word any
# number of children, projective.  ``grammar="single_root"`` loads it.
SINGLE_ROOT = """\
# Projective trees whose root has exactly one child.
start T
(RL, R0) -> r
(S, S) -> s
T -> (RL, R1)
S -> (S, S)
(_, R1) -> (_, R0) S
(S, _) -> S (S, _)
(_, S) -> (_, S) S
"""

_DTYPES = (torch.float32, torch.float64)


def grammar_of(grammar):
    """A :class:`~semiparse.grammar.Grammar` from a Grammar, a shipped name, a
    path, or ``"single_root"`` (:data:`SINGLE_ROOT`, terminals ``r`` for the
    root and ``s`` for a word)."""
    if isinstance(grammar, str) and grammar == "single_root":
        return _single_root()
    if not isinstance(grammar, (Grammar, str)) and not hasattr(grammar, "__fspath__"):
        raise ValueError(f"grammar must be a Grammar, a shipped name or a path, got {grammar!r}")
    return load_grammar(grammar)


_SINGLE = []


def _single_root():
    if not _SINGLE:
        _SINGLE.append(Grammar.from_text(SINGLE_ROOT, "single_root"))
    return _SINGLE[0]


MAX_RESULT = 10 ** 8  # entries of a result: the (k, B, N) heads of sample and kbest, heads_to_edges


class _Batch:
    """A checked batch: the grammar, each sentence's terminals and size, the
    threads; :meth:`run` and :meth:`covariance` do the work on float64 numpy
    copies of the scores."""

    def __init__(self, grammar, shape, lengths, terminals, n_jobs):
        self.grammar = grammar_of(grammar)
        B, N = shape[0], shape[1]
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
            raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
        self.n_jobs, self.B, self.N = n_jobs, B, N
        if lengths is not None:
            if torch.is_tensor(lengths) and _storage(lengths):
                raise ValueError(f"lengths must be a dense tensor holding values, got one"
                                 f"{_storage(lengths)}")
            values = lengths.tolist() if torch.is_tensor(lengths) else lengths
            values = None if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") \
                else list(values)  # once: a generator is read only once
            if values is None or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in values):
                raise ValueError(f"lengths must be one number of words per batch item, got "
                                 f"{lengths!r} (the grammar is the keyword argument grammar=)")
            lengths = [int(x) for x in values]
            if len(lengths) != B:
                raise ValueError(f"lengths has {len(lengths)} entries for a batch of {B}")
            for b, n in enumerate(lengths):
                if not 0 <= n <= N - 1:
                    raise ValueError(f"lengths[{b}] is {n}: expected 0..{N - 1} words "
                                     f"for weights of size {N}")
        if terminals is None:
            names = list(self.grammar.terminals)
            if len(names) == 1:
                one = names[0]
                terminals = [[one] * ((N - 1 if lengths is None else lengths[b]) + 1)
                             for b in range(B)]
            elif set(names) == {"r", "s"}:
                terminals = [["r"] + ["s"] * (N - 1 if lengths is None else lengths[b])
                             for b in range(B)]
            else:
                raise ValueError(f"grammar {self.grammar!r} has the terminals "
                                 f"{', '.join(names)}: give terminals, one string or list of "
                                 "names per sentence (the root first)")
        if isinstance(terminals, (str, bytes)) or not hasattr(terminals, "__iter__"):
            raise ValueError(f"terminals must give one string or list of terminal names per "
                             f"sentence, got {terminals!r:.80}")
        terminals = list(terminals)
        if len(terminals) != B:
            raise ValueError(f"terminals has {len(terminals)} entries for a batch of {B}")
        self.terminals, self.sizes, self.codes = [], [], []
        seen = {}  # sentences of the same terminals share their (read-only) codes
        for b, t in enumerate(terminals):
            if not isinstance(t, str) and not hasattr(t, "__iter__"):
                raise ValueError(f"batch item {b}: terminals must be a string or a list of terminal "
                                 f"names (the root first), got {t!r:.80}")
            t = t if isinstance(t, str) else list(t)
            m = len(t)
            if lengths is not None and m != lengths[b] + 1:
                raise ValueError(f"batch item {b}: {m} terminals for lengths[{b}] = {lengths[b]} "
                                 f"words: expected {lengths[b] + 1} (the root first)")
            if not 1 <= m <= N:
                raise ValueError(f"batch item {b}: {m} terminals for weights of size {N}")
            key = t if isinstance(t, str) else tuple(t)
            try:
                code = seen.get(key)
            except TypeError:  # unhashable names: the grammar says what is wrong
                key, code = None, None
            if code is None:
                try:
                    code = self.grammar.encode(t)
                except ValueError as exc:
                    raise ValueError(f"batch item {b}: {exc}") from None
                if key is not None:
                    seen[key] = code
            self.terminals.append(t)
            self.sizes.append(m)
            self.codes.append(code)
        self.rules = compiled(self.grammar)
        self.starts = [(pl, pr) for _, pl, pr in self.codes]
        self.size_array = np.array(self.sizes, dtype=np.intc)

    def inside(self, device):
        """``(B, N, N)`` bool: the entries within each sentence's length (the
        padding beyond it is never read)."""
        idx = torch.arange(self.N, device=device)
        m = torch.tensor(self.sizes, dtype=torch.long, device=device).reshape(-1, 1, 1)
        return (idx.reshape(1, -1, 1) < m) & (idx.reshape(1, 1, -1) < m)

    def mask(self, inside):
        """``(B, N, N)`` bool: the entries a sentence reads: those of ``inside``
        (:meth:`inside`) but the edges into the root and the self-loops."""
        idx = torch.arange(self.N, device=inside.device)
        proper = (idx.reshape(-1, 1) != idx.reshape(1, -1)) & (idx.reshape(1, -1) > 0)
        return inside & proper

    def item(self, w64, b):
        """Sentence b's checked, contiguous float64 scores."""
        m = self.sizes[b]
        w = np.ascontiguousarray(w64[b, :m, :m])
        bad = np.isnan(w) | (w == np.inf)
        if bad.any():
            h, d = np.argwhere(bad)[0]
            what = "NaN" if np.isnan(w[h, d]) else "+inf"
            raise ValueError(f"batch item {b}: weights contain {what} at w[{b}, {h}, {d}]: scores "
                             "must be finite or -inf")
        return w

    def prepared(self, w64, indices=None):
        """Per sentence (of ``indices``, None: all) ``(pl, pr, shifted likely
        scores, shifts)``: the same distribution as the scores
        (:func:`semiparse.chart.shift.shifted`,
        :func:`semiparse.chart.shift.likely_edges`)."""
        out = []
        for b in range(self.B) if indices is None else indices:
            _, pl, pr = self.codes[b]
            try:
                w, shifts = shifted(self.item(w64, b))
                w = likely_edges(self.rules, pl, pr, w, shifts)
            except ValueError as exc:
                raise ValueError(exc if str(exc).startswith("batch item") else
                                 f"batch item {b}: {exc}") from None
            out.append((pl, pr, w, shifts))
        return out

    def _chunks(self, indices):
        return [c for c in np.array_split(np.asarray(indices), min(self.n_jobs, len(indices)))
                if len(c)]

    def _threaded(self, work, chunks):
        if len(chunks) > 1:
            with ThreadPoolExecutor(len(chunks)) as pool:
                return list(pool.map(work, chunks))
        return [work(c) for c in chunks]

    def run(self, w, marginals):
        """``(log Z tensor (B,) in w's dtype and device, edge marginals as a
        (B, N, N) float64 array or None)``.

        Ordinary sentences take one Cython call per thread for the checks,
        the shift and the kernels (:func:`semiparse.chart.kernels.log_partition_batch`),
        which writes the marginals into the batch's array; a sentence it
        leaves alone (NaN or +inf, scores too far apart or too large for the
        plain shift) takes the checked path of :meth:`prepared`, which
        raises the same errors as ever or handles it exactly."""
        w64 = np.ascontiguousarray(_numpy(w))
        B = self.B
        mu = np.zeros((B, self.N, self.N)) if marginals else None
        totals, offsets, fast = np.zeros(B), np.zeros(B), np.zeros(B, dtype=bool)

        def batch_work(chunk):
            lo, hi = int(chunk[0]), int(chunk[-1]) + 1
            t, o, f = kernels.log_partition_batch(self.rules, w64, self.starts, self.size_array,
                                               lo, hi, mu)
            totals[lo:hi], offsets[lo:hi], fast[lo:hi] = t[lo:hi], o[lo:hi], f[lo:hi]

        if B:
            self._threaded(batch_work, self._chunks(np.arange(B)))
        slow = np.flatnonzero(~fast).tolist()
        shifts = {}
        if slow:
            items = dict(zip(slow, self.prepared(w64, slow)))

            def work(chunk):
                chunk = chunk.tolist()
                if marginals:
                    return list(zip(chunk, kernels.edge_marginals_batch(
                        "log", self.rules, [items[b][:3] for b in chunk])))
                return [(b, (kernels.inside("log", self.rules, *items[b][:3]), None)) for b in chunk]

            for part in self._threaded(work, self._chunks(slow)):
                for b, (total, edges) in part:
                    totals[b], shifts[b] = total, items[b][3]
                    if marginals and edges is not None:
                        m = self.sizes[b]
                        mu[b, :m, :m] = edges
        sizes = self.size_array
        with np.errstate(invalid="ignore", over="ignore"):
            log_z = totals + offsets
            ok = (fast & (totals > NEG_INF) & np.isfinite(log_z)
                  & ((offsets == 0.0) | keeps_digits(sizes, totals, log_z)))
            if w.dtype != torch.float64:
                ok &= np.abs(log_z) <= torch.finfo(w.dtype).max
        if not ok.all():
            self._finish(w, w64, totals, log_z, shifts, ok)
        return torch.from_numpy(log_z).to(device=w.device, dtype=w.dtype), mu

    def _finish(self, w, w64, totals, log_z, shifts, ok):
        """The sentences that take the checked path, or whose log Z may need
        scaling or be beyond the dtype's range: ``log_z`` from
        :func:`semiparse.chart.shift.unshift`, ValueError for the first that
        has no tree or no log Z."""
        for b in range(self.B):
            if ok[b]:
                continue
            total = float(totals[b])
            if total == NEG_INF:
                raise ValueError(f"batch item {b}: no tree: the grammar derives no tree of its "
                                 f"{self.sizes[b]} terminals with the allowed edges (scores > -inf)")
            shift = shifts[b] if b in shifts else self.prepared(w64, [b])[0][3]
            log_z[b] = unshift(total, shift, f"batch item {b}: log Z")
            if w.dtype != torch.float64 and abs(log_z[b]) > torch.finfo(w.dtype).max:
                raise ValueError(f"batch item {b}: log Z of these weights overflows {w.dtype}: "
                                 f"{log_z[b]:.3g} is beyond its largest number")

    def covariance(self, w, g):
        """``c[b, h, d] = Cov(sum_e g[b, e] x_e, x_(h, d))`` under sentence b's
        distribution, ``x_e`` the indicator of edge e: the marginals' backward
        pass, from the outside pass of the expectation semiring (for each
        edge, the log mass and the mean of ``sum g x`` of the trees through it)."""
        items = self.prepared(_numpy(w))
        g64 = _numpy(g)
        out = np.zeros((self.B, self.N, self.N))
        for b, (_, _, wb, _) in enumerate(items):
            m = self.sizes[b]
            values = np.where(wb > NEG_INF, g64[b, :m, :m], 0.0)
            (log_z, mean), edges = outside_generic(sr.Expectation(values), self.grammar.tables,
                                                   self.codes[b][0], wb)
            log_mass = np.array([[e[0] for e in row] for row in edges])
            means = np.array([[e[1] for e in row] for row in edges])
            with np.errstate(invalid="ignore"):
                cov = np.exp(log_mass - log_z) * (means - mean)
            out[b, :m, :m] = np.where(log_mass > NEG_INF, cov, 0.0)
        return torch.from_numpy(out).to(device=w.device, dtype=w.dtype)


def _numpy(t):
    """A float64 CPU numpy view or copy of a tensor (no gradient); a lazily
    negated or conjugated view (``z.conj().imag``) is materialized first,
    as numpy cannot take one."""
    return t.detach().to(device="cpu", dtype=torch.float64).resolve_neg().resolve_conj().numpy()


class _LogPartition(torch.autograd.Function):
    """log Z of each sentence; backward: incoming gradient times the edge marginals."""

    @staticmethod
    def forward(ctx, w, batch):
        need = ctx.needs_input_grad[0]
        log_z, mu = batch.run(w, marginals=need)
        ctx.batch, ctx.mu = batch, mu
        if need:
            ctx.save_for_backward(w)
        return log_z

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the marginals' own backward is needed
            mu = _Marginals.apply(w, ctx.batch, ctx.mu)
            return grad.reshape(-1, 1, 1) * mu, None
        # a plain backward: one product in float64 and one conversion, no graph
        g = _numpy(grad).reshape(-1, 1, 1)
        return torch.from_numpy(ctx.mu * g).to(device=w.device, dtype=w.dtype), None


class _Marginals(torch.autograd.Function):
    """Edge marginals (``cached``: already computed with log Z); backward:
    the covariance of edges with the incoming gradient (exact)."""

    @staticmethod
    def forward(ctx, w, batch, cached):
        mu = cached if cached is not None else batch.run(w, marginals=True)[1]
        ctx.batch = batch
        ctx.save_for_backward(w)
        return torch.from_numpy(mu).to(device=w.device, dtype=w.dtype)

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        with torch.no_grad():
            cov = ctx.batch.covariance(w, grad)
        if torch.is_grad_enabled() and (w.requires_grad or grad.requires_grad):
            cov = _ThirdOrder.apply(cov, w, grad)  # create_graph: a graph that refuses
        return cov, None, None


class _ThirdOrder(torch.autograd.Function):
    """The covariance (the marginals' gradient) in a graph built for higher
    derivatives: a node joined to the scores and the incoming gradient, so
    that differentiating through it reaches it and raises, where it would
    otherwise give zeros.  (``once_differentiable`` hangs its error on new
    leaves, which ``torch.autograd.grad(..., w)`` leaves out: the derivative
    came back as zero.)"""

    @staticmethod
    def forward(ctx, cov, w, grad):
        return cov.clone()

    @staticmethod
    def backward(ctx, _):
        raise RuntimeError("third derivatives of log Z (derivatives of the gradient of the "
                           "marginals, e.g. second derivatives of the entropy) are not "
                           "implemented")


def _checked(weights):
    if not torch.is_tensor(weights):
        raise ValueError(f"weights must be a torch tensor, got {type(weights).__name__}")
    if weights.dtype not in _DTYPES:
        raise ValueError(f"weights must be float32 or float64, got {weights.dtype}")
    if _storage(weights):
        raise ValueError(f"weights must be a dense tensor holding values, got one{_storage(weights)}")
    if weights.dim() not in (3, 4) or weights.shape[1] != weights.shape[2] or weights.shape[1] < 1:
        raise ValueError(f"weights have shape {tuple(weights.shape)}: expected (B, n+1, n+1) "
                         "edge scores or (B, n+1, n+1, L) labelled ones, w[b, h, d] the edge h -> d")
    if weights.dim() == 4 and weights.shape[3] == 0:
        raise ValueError("labelled weights need at least one label (a label axis of size 0)")
    return weights


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
    w = _checked(weights)
    if w.dim() == 4:
        return TreeCRF(w, lengths, grammar, terminals, n_jobs).log_partition
    # unlabelled: straight to the kernels, which shift the scores themselves
    return _LogPartition.apply(w, _Batch(grammar, w.shape, lengths, terminals, n_jobs))


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
        w = _checked(log_potentials)
        self.log_potentials = w
        self.labelled = w.dim() == 4
        self._batch = _Batch(grammar, w.shape, lengths, terminals, n_jobs)
        inside = self._batch.inside(w.device)
        bad = torch.nonzero((torch.isnan(w) | (w == float("inf")))
                            & (inside.unsqueeze(-1) if self.labelled else inside))
        if len(bad):  # as log_partition says (edges no tree has included)
            at = tuple(bad[0].tolist())
            what = "NaN" if torch.isnan(w[at]) else "+inf"
            raise ValueError(f"batch item {at[0]}: weights contain {what} at w{list(at)}: scores "
                             f"must be finite or -inf")
        valid = self._batch.mask(inside)
        if self.labelled:
            valid = valid.unsqueeze(-1)
        self._valid = valid
        self._neg = torch.tensor(NEG_INF, dtype=torch.float64, device=w.device)
        # per-dependent shifts (max over heads and labels), float64 and detached:
        # every tree attaches each word once, so they change no probability and
        # no gradient
        given = self._given
        col = (given.amax(-1) if self.labelled else given).amax(1)
        self._shift = torch.where(torch.isfinite(col), col, torch.zeros_like(col))
        ws = given - self._shift.reshape(self._columns)
        # each sentence's lowest shifted score (of an allowed edge): -inf where
        # the shift overflowed, else how far its rounding may go
        low = _numpy(torch.where(given > NEG_INF, ws, 0.0).flatten(1).amin(1))
        if (low == NEG_INF).any():
            at = torch.nonzero((ws == NEG_INF) & (given > NEG_INF))[0].tolist()
            b, h, d = at[:3]
            raise ValueError(f"batch item {b}: weights: the scores of the edges into word {d} differ "
                             f"by more than a double holds (w[{b}, {h}, {d}] is "
                             f"{given[tuple(at)].item():.3g} and the largest "
                             f"{self._shift[b, d].item():.3g}); use -inf to forbid an edge")
        # the sentences whose shifted scores are large enough for the shift's
        # rounding to matter (where shift_errors computes it), for _check_digits
        self._suspect = np.flatnonzero(
            np.finfo(float).eps * self._batch.size_array * -low > ROUNDING_LIMIT).tolist()

    # -- the scores the kernels see (built anew for each query, so that each
    # -- query's graph can be differentiated on its own) -------------------------
    @property
    def _given(self):
        """The scores as given in float64, detached, -inf where no tree reads
        (padding too)."""
        return torch.where(self._valid, self.log_potentials.detach().to(torch.float64), self._neg)

    @property
    def _columns(self):
        """The shape that broadcasts the ``(B, N)`` shifts over heads (and labels)."""
        return (-1, 1, self._batch.N) + ((1,) if self.labelled else ())

    @property
    def _ws(self):
        """Shifted float64 scores, -inf where no tree reads; the graph reaches
        the weights through the conversion."""
        return (torch.where(self._valid, self.log_potentials.to(torch.float64), self._neg)
                - self._shift.reshape(self._columns))

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

    def _check_digits(self):
        """ValueError naming the first sentence whose shift rounded the score
        of a likely tree by more than :data:`ROUNDING_LIMIT`, for the queries
        that read differences of tree scores: the core's check
        (:func:`semiparse.chart.shift.shift_errors` and
        :func:`semiparse.chart.shift.likely_edges` on the edge scores), a
        label exp(800) below its edge's total weight being no likely tree's
        either.  Only the sentences ``__init__`` found large enough for it
        (none of the ordinary ones), once."""
        if not self._suspect:
            return
        with torch.no_grad():
            ws = self._ws
            edges = self._edges(ws)
        given = self._numpy_items()
        for b in self._suspect:
            m, (_, pl, pr) = self._batch.sizes[b], self._batch.codes[b]
            w, out, columns = given[b], _numpy(ws[b, :m, :m]), _numpy(self._shift[b, :m])
            edge = np.ascontiguousarray(_numpy(edges[b, :m, :m]))
            if self.labelled:
                negligible = out < edge[..., None] - NEGLIGIBLE
                w, out = np.where(negligible, NEG_INF, w), np.where(negligible, NEG_INF, out)
            shift = Shift(columns, None, shift_errors(w, columns, out))  # no check reads a total
            try:
                likely_edges(self._batch.rules, pl, pr, edge, shift)
            except ValueError as exc:
                raise ValueError(f"batch item {b}: {exc}") from None
        self._suspect = []

    @property
    def lengths(self):
        return torch.tensor([m - 1 for m in self._batch.sizes])

    @property
    def log_partition(self):
        """``(B,)`` log Z of the scores as given."""
        if not self.labelled:
            return _LogPartition.apply(self.log_potentials, self._batch)
        if torch.is_grad_enabled() and self.log_potentials.requires_grad:
            self._check_digits()  # its gradient is the marginals
        return self._unshift(self._log_z_shifted)

    partition = log_partition

    @property
    def _log_z_shifted(self):
        return _LogPartition.apply(self._edges(), self._batch)

    def _unshift(self, value):
        """Labelled log Z: ``value`` (B,), log Z of the shifted scores, plus the
        score each sentence's trees lost to the shift
        (:func:`semiparse.chart.shift.unshift`: exact near the limits of a
        double, ValueError where rounding ate its digits); differentiable in
        ``value``, in the weights' dtype."""
        shifts = _numpy(self._shift)
        totals = [unshift(lz, Shift(shifts[b, :m], _fsum(shifts[b, 1:m])), f"batch item {b}: log Z")
                  for b, (lz, m) in enumerate(zip(value.detach().cpu().tolist(), self._batch.sizes))]
        total = torch.tensor(totals, dtype=torch.float64, device=value.device)
        return self._in_dtype(total + (value - value.detach()), "log Z of these weights")

    @property
    def marginals(self):
        """``(B, N, N)`` edge posteriors (``(B, N, N, L)`` of labelled edges),
        zero outside each sentence; differentiable (exactly)."""
        return self._marginals(self._ws).to(self.log_potentials.dtype)

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

    @property
    def entropy(self):
        """``(B,)`` entropy in nats, ``log Z - sum mu * w`` over shifted
        scores; ValueError when rounding could move it by more than
        :data:`semiparse.chart.shift.ROUNDING_LIMIT` (the likely trees score far
        below their words' best edges)."""
        ws = self._ws
        scores = torch.where(ws > NEG_INF, ws, torch.zeros_like(ws))
        mean = (self._marginals(ws) * scores).flatten(1).sum(1)
        log_z = self._log_z_shifted
        lz, mn = log_z.detach().cpu().tolist(), mean.detach().cpu().tolist()
        for b in range(self._batch.B):
            bound = rounding_bound(self._batch.sizes[b], lz[b], mn[b])
            if bound > ROUNDING_LIMIT:
                raise ValueError(f"batch item {b}: entropy: the likely trees score about "
                                 f"{-mn[b]:.3g} below their words' best edges, so log Z "
                                 f"- E[score] could be off by {bound:.1g} after rounding")
        return torch.clamp(log_z - mean, min=0.0).to(self.log_potentials.dtype)

    def expected(self, values):
        """``(B,)`` E[sum of ``values`` over the (labelled) edges of T],
        differentiable in the scores and in ``values`` (a real tensor, finite
        where an edge is allowed; the weights' shape, or ``(B, N, N)`` per edge whatever
        its label).  ValueError where the expectation is beyond the weights'
        dtype."""
        shape = self.log_potentials.shape
        if (not torch.is_tensor(values) or _storage(values) or values.is_complex()
                or values.shape not in (shape, shape[:3])):
            got = _what(values) if torch.is_tensor(values) else f"a {type(values).__name__}"
            raise ValueError(f"values must be a dense real tensor of shape {tuple(shape)}"
                             + (f" or {tuple(shape[:3])}" if self.labelled else "")
                             + f", got {got}")
        ws = self._ws
        mu = self._marginals(ws)
        if self.labelled and values.dim() == 3:
            mu = mu.sum(-1)
            allowed = self._edges(ws) > NEG_INF
        else:
            allowed = ws > NEG_INF
        values = values.to(device=mu.device, dtype=torch.float64)
        if not torch.isfinite(values[allowed]).all():
            raise ValueError("values must be finite where an edge is allowed")
        terms = mu * torch.where(allowed, values, torch.zeros_like(values))
        return self._total(terms.flatten(1), "the expected value")

    def _total(self, terms, what):
        """``(B,)`` the sums of the rows of float64 ``terms`` in the weights'
        dtype, taken at a power-of-two scale where a partial sum overflows
        (exact, and differentiable); ValueError naming the first sentence
        whose sum is beyond the dtype."""
        total = terms.sum(1)
        if not torch.isfinite(total.detach()).all():
            scale = 2.0 ** max(terms.shape[1], 2).bit_length()
            total = (terms / scale).sum(1) * scale
        return self._in_dtype(total, what)

    def _in_dtype(self, x, what):
        """Float64 ``x`` (B,) in the weights' dtype, or ValueError naming the
        first sentence where it is not finite there (beyond the dtype)."""
        x = x.to(self.log_potentials.dtype)
        bad = torch.nonzero(~torch.isfinite(x.detach())).flatten().tolist()
        if bad:
            raise self._beyond(bad[0], what)
        return x

    def _beyond(self, b, what):
        dtype = self.log_potentials.dtype
        return ValueError(f"batch item {b}: {what} is beyond the range of {dtype} "
                          f"(+-{torch.finfo(dtype).max:.2g})")

    def log_prob(self, heads, labels=None):
        """``(B,)`` log p of the trees ``heads`` (``(B, N)`` ints, ``heads[b, d]``
        the head of d, ``heads[b, 0]`` and padding ignored; with labelled
        weights also ``labels``, same shape): the tree's score less log Z,
        plus the log of its number of derivations (0 for a tree the grammar
        does not derive: -inf).  ValueError when rounding could move it by
        more than :data:`semiparse.chart.shift.ROUNDING_LIMIT` (or a
        billionth of it): the tree and log Z both score far below their
        words' best edges."""
        heads = self._tree_tensor(heads, "heads")
        if self.labelled:
            if labels is None:
                raise ValueError("labelled weights: log_prob needs labels as well as heads")
            labels = self._tree_tensor(labels, "labels")
        elif labels is not None:
            raise ValueError("labels given but the weights have no label axis")
        self._check_digits()
        counts = [self._derivations(b, heads[b].tolist()) for b in range(self._batch.B)]
        score = self._tree_edges(self._ws, heads, labels).sum(1)
        log_z = self._log_z_shifted
        log_count = torch.tensor([np.log(c) if c else NEG_INF for c in counts],
                                 dtype=torch.float64, device=score.device)
        log_p = score + log_count - log_z
        s, lz, lp = _numpy(score), _numpy(log_z), _numpy(log_p)
        with np.errstate(invalid="ignore"):  # both sums' rounding against log p
            bad = np.flatnonzero(np.isfinite(lp) & ~keeps_digits(self._batch.size_array,
                                                                 np.abs(s) + np.abs(lz), lp))
        if len(bad):
            b = int(bad[0])
            raise ValueError(f"batch item {b}: log_prob: the tree scores {-s[b]:.3g} and log Z "
                             f"{-lz[b]:.3g} below the sum of their words' best edges, so their "
                             f"difference could be off by "
                             f"{rounding_bound(self._batch.sizes[b], s[b], lz[b]):.1g} after rounding")
        return log_p.to(self.log_potentials.dtype)

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

    def _tree_tensor(self, x, name):
        x = _integers(x, name, (self._batch.B, self._batch.N))
        for b, m in enumerate(self._batch.sizes):
            row = x[b, 1:m]
            top = m if name == "heads" else (self.log_potentials.shape[3] if self.labelled else 1)
            if len(row) and (row.min() < 0 or row.max() >= top):
                raise ValueError(f"batch item {b}: {name} must lie in 0..{top - 1} for "
                                 f"positions 1..{m - 1}, got {row.tolist()}")
        return x

    def _derivations(self, b, heads):
        """Number of derivations of sentence b whose edges are those of
        ``heads`` (Cython counting over 0 / -inf scores)."""
        m = self._batch.sizes[b]
        w = np.full((m, m), NEG_INF)
        for d in range(1, m):
            w[heads[d], d] = 0.0
        return parse(self._batch.grammar, self._batch.terminals[b], w, "counting").value

    def _numpy_items(self):
        """Sentence b's scores as given (float64 numpy), within its length."""
        w64 = _numpy(self._given)
        return [np.ascontiguousarray(w64[b, :m, :m]) for b, m in enumerate(self._batch.sizes)]

    def _each(self, semiring, k=None):
        g = self._batch.grammar
        out = []
        for b, w in enumerate(self._numpy_items()):
            try:
                out.append(parse(g, self._batch.terminals[b], w, semiring, k=k))
            except ValueError as exc:
                raise ValueError(f"batch item {b}: {exc}") from None
        return out

    def _padded(self, rows, fill=-1):
        out = torch.full((len(rows), self._batch.N), fill, dtype=torch.long)
        for b, row in enumerate(rows):
            if row is not None:
                out[b, :len(row)] = torch.tensor(row, dtype=torch.long)
        return out

    @property
    def argmax(self):
        """``(B, N)`` heads of a best tree (Viterbi; -1 at the root and in
        padding); with labelled weights ``(heads, labels)``.  ValueError
        naming the sentence when it has no tree."""
        results = self._each("viterbi")
        for b, r in enumerate(results):
            if r.heads is None:
                raise ValueError(f"batch item {b}: no tree: the grammar derives no tree with "
                                 "the allowed edges")
        heads = self._padded([r.heads for r in results])
        if self.labelled:
            return heads, self._padded([r.labels for r in results])
        return heads

    @property
    def max(self):
        """``(B,)`` the best tree's score, the sum of its edges' scores as
        given; its gradient is the best tree's edges (a subgradient where
        several trees are best)."""
        best = self.argmax
        heads, labels = best if self.labelled else (best, None)
        edges = self._tree_edges(self.log_potentials.to(torch.float64), heads, labels)
        return self._total(edges, "the best score")

    def sample(self, k=1, temperature=1.0, rng=None):
        """``(k, B, N)`` heads of k exact independent draws per sentence
        (``semiparse.sample`` of the batch, which checks temperature and rng
        before any sentence; labelled: ``(heads, labels)``).  rng: a
        ``random.Random`` (None: a fresh one)."""
        from semiparse.queries.sampling import sample

        self._check_k(k)
        batch = list(zip(self._batch.terminals, self._numpy_items()))
        items = sample(self._batch.grammar, batch, temperature=temperature, rng=rng, k=k)
        heads = torch.full((k, self._batch.B, self._batch.N), -1, dtype=torch.long)
        labels = heads.clone()
        for b, draws in enumerate(items):
            for i, draw in enumerate(draws):
                h, lab = draw if self.labelled else (draw, None)
                heads[i, b, :len(h)] = torch.tensor(h)
                if lab is not None:
                    labels[i, b, :len(lab)] = torch.tensor(lab)
        return (heads, labels) if self.labelled else heads

    def _check_k(self, k):
        """ValueError unless k is a positive int whose ``(k, B, N)`` result fits
        in :data:`MAX_RESULT` entries."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if k * self._batch.B * self._batch.N > MAX_RESULT:
            raise ValueError(f"k = {k}: the result would hold k x {self._batch.B} x "
                             f"{self._batch.N} heads, more than {MAX_RESULT:.0e}")

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
            raise self._beyond(b, f"the score of tree {i + 1}")
        return out, heads

    @property
    def count(self):
        """The exact number of trees (labelled trees) of each sentence with
        allowed edges, as a list of Python ints."""
        return [r.value for r in self._each("counting")]


def _integers(x, name, shape=None):
    """``x`` as a dense tensor of integers holding values, of ``shape``
    (None: any ``(B, N)``), or ValueError."""
    wanted = "(B, N)" if shape is None else shape
    try:
        x = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"{name} must be integers of shape {wanted}, got {type(x).__name__}") from None
    if (_storage(x) or x.dtype.is_floating_point or x.dtype.is_complex
            or x.dtype == torch.bool or x.dim() != 2 or shape is not None and x.shape != shape):
        raise ValueError(f"{name} must be integers of shape {wanted}, got {_what(x)}")
    return x


def _storage(x):
    """What keeps tensor ``x`` from being read: " on the meta device", " of
    layout ...", " nested (torch.nested)", or "" for a dense tensor holding
    values."""
    if x.is_meta:
        return " on the meta device"
    if x.is_nested:
        return " nested (torch.nested)"
    return "" if x.layout == torch.strided else f" of layout {x.layout}"


def _what(x):
    """Tensor ``x`` for a message: its shape (none for a nested tensor), its
    dtype and :func:`_storage`."""
    return ("a tensor" if x.is_nested else str(tuple(x.shape))) + f" of {x.dtype}{_storage(x)}"


def _fsum(x):
    """The exact sum of the numbers ``x``, or inf when a partial sum leaves
    the range of a double (:attr:`semiparse.chart.shift.Shift.total`)."""
    try:
        return math.fsum(x.tolist())
    except OverflowError:
        return math.inf


def heads_to_edges(heads, n_labels=None, labels=None):
    """``(B, N, N)`` 0/1 float64 edge indicators of ``(B, N)`` heads (``-1``
    ignored); with ``labels`` and ``n_labels``, ``(B, N, N, L)``.
    ValueError for heads outside -1..N-1, a label outside 0..L-1 at a word
    with a head, or only one of ``labels`` and ``n_labels``."""
    heads = _integers(heads, "heads")
    B, N = heads.shape
    bad = heads[(heads < -1) | (heads >= N)]
    if len(bad):
        raise ValueError(f"heads must lie in -1..{N - 1} (-1: no head), got {bad[0].item()}")
    if (labels is None) != (n_labels is None):
        raise ValueError("labels and n_labels go together: give both or neither")
    if labels is not None:
        if isinstance(n_labels, bool) or not isinstance(n_labels, (int, np.integer)) or n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}")
        labels = _integers(labels, "labels", tuple(heads.shape))
        bad = labels[(heads >= 0) & ((labels < 0) | (labels >= n_labels))]
        if len(bad):
            raise ValueError(f"labels must lie in 0..{n_labels - 1} where a head is given, "
                             f"got {bad[0].item()}")
    shape = (B, N, N) if labels is None else (B, N, N, int(n_labels))
    if math.prod(shape) > MAX_RESULT:
        raise ValueError(f"the result would hold {' x '.join(map(str, shape))} entries, more than "
                         f"{MAX_RESULT:.0e}")
    out = torch.zeros(shape, dtype=torch.float64)
    b, d = torch.nonzero(heads >= 0, as_tuple=True)
    if labels is None:
        out[b, heads[b, d], d] = 1.0
    else:
        out[b, heads[b, d], d, labels[b, d]] = 1.0
    return out

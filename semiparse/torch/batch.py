"""The batch the queries share: the grammar, each sentence's length,
terminals and codes, checked once; the threads; the log partition and edge
marginals of the Cython kernels (:meth:`_Batch.run`), and the marginals'
backward pass (:meth:`_Batch.covariance`).  Scores are read as float64
numpy copies, shifted per dependent by the core
(:mod:`semiparse.chart.score_shift`)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from semiparse import semiring as sr
from semiparse.chart import kernels
from semiparse.chart.generic import outside_generic
from semiparse.chart.inputs import NEG_INF, compiled
from semiparse.chart.score_shift import keeps_digits, likely_edges, shifted, unshift
from semiparse.grammar import Grammar, load_grammar
from semiparse.resources import data_dir
from semiparse.torch.tensors import as_numpy, storage

# Trees whose root (position 0) has exactly one child, every other word any
# number of children, projective: the shipped grammar ``single_root``
# (grammars/single_root.grammar), which ``grammar="single_root"`` loads.
SINGLE_ROOT = (data_dir("grammars") / "single_root.grammar").read_text(encoding="utf-8")


def grammar_of(grammar):
    """A :class:`~semiparse.grammar.Grammar` from a Grammar, a shipped name
    (``"single_root"``: :data:`SINGLE_ROOT`, terminals ``r`` for the root and
    ``s`` for a word) or a path."""
    if not isinstance(grammar, (Grammar, str)) and not hasattr(grammar, "__fspath__"):
        raise ValueError(f"grammar must be a Grammar, a shipped name or a path, got {grammar!r}")
    return load_grammar(grammar)


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
            if torch.is_tensor(lengths) and storage(lengths):
                raise ValueError(f"lengths must be a dense tensor holding values, got one"
                                 f"{storage(lengths)}")
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

    def check_values(self, w, inside):
        """ValueError naming the first NaN or +inf of tensor ``w`` that a
        sentence reads (``inside``: :meth:`inside`; labelled weights: over
        every label), as :meth:`item` says it of a sentence's copy."""
        bad = torch.nonzero((torch.isnan(w) | (w == float("inf")))
                            & (inside.unsqueeze(-1) if w.dim() == 4 else inside))
        if len(bad):  # edges no tree has included
            at = tuple(bad[0].tolist())
            what = "NaN" if torch.isnan(w[at]) else "+inf"
            raise ValueError(f"batch item {at[0]}: weights contain {what} at w{list(at)}: scores "
                             f"must be finite or -inf")

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
        (:func:`semiparse.chart.score_shift.shifted`,
        :func:`semiparse.chart.score_shift.likely_edges`)."""
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
        w64 = np.ascontiguousarray(as_numpy(w))
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
        :func:`semiparse.chart.score_shift.unshift`, ValueError for the first that
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
        items = self.prepared(as_numpy(w))
        g64 = as_numpy(g)
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


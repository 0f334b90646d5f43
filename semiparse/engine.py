"""Parsing with a split grammar over a semiring (Nederhof 2019, Table 2).

Two engines compute the same equations in the same order:

- the Cython engine (:mod:`semiparse._cky`) for boolean, counting, max-plus,
  Viterbi, max-count and log;
- the generic Python engine below, for any semiring object (k-best, score
  polynomials, user-defined ones).

Counts are exact at any length: the Cython engine counts in double precision,
which is exact while the count stays below 2**51, and otherwise recounts
modulo enough primes below 2**31 and rebuilds the integer by the Chinese
remainder theorem.

Scores are shifted before any semiring that reads them (:func:`shifted`):
each dependent's scores less the largest of them, which changes every tree's
score by the same sum and leaves the distribution over trees unchanged; the
sum is added back to score-valued results (:func:`unshift`).  So adding a
constant to every score changes nothing but the totals, at any magnitude.
"""
import math
import os
import random as _random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from . import _cky
from . import semiring as sr
from .grammar import Grammar, load_grammar

NEG_INF = float("-inf")
_EXACT_DOUBLE = 2.0 ** 51


@dataclass
class ParseResult:
    """The value of the whole input, and a tree where the semiring gives one.

    ``value``: the semiring value (``(score, count)`` for max-count, a list of
    scores for k-best, ``{score: count}`` for the polynomial).  ``heads``: a
    best tree (Viterbi, k-best) with ``heads[0] == -1``, or None.
    ``trees``: for k-best, ``[(score, heads), ...]`` best first.
    """

    value: object
    heads: list = None
    trees: list = field(default_factory=list)


def parse(grammar, terminals, weights=None, semiring="maxplus", k=None, engine="auto", n_jobs=1):
    """Parse ``terminals`` with ``grammar`` and edge ``weights`` in a semiring.

    grammar: a :class:`~semiparse.grammar.Grammar` or a name/path for
    :func:`~semiparse.grammar.load_grammar`.  terminals: a string (one
    character per terminal) or a sequence of terminal names.  weights: an
    ``(m+1) x (m+1)`` array, ``weights[h, d]`` the score of the edge
    ``h -> d``, ``-inf`` forbidding it (real numbers: complex and masked
    arrays are refused).  A generator of terminals is refused too (ValueError):
    give a string, list or tuple.  semiring: a name from
    ``semiparse.semiring.NAMES`` (``"kbest"`` with ``k``) or a semiring
    object.  engine: ``"auto"`` (Cython where the semiring has a kernel),
    ``"cython"`` or ``"python"``.

    A batch: ``terminals`` a list of ``(terminals, weights)`` pairs and no
    ``weights``; the result is the list of results, computed on ``n_jobs``
    threads (see :func:`run_batch`).

    Labelled weights, ``(m+1, m+1, L)`` with ``weights[h, d, l]`` the score of
    ``h -> d`` with label ``l``, go to :func:`semiparse.queries.labels.parse_labelled`
    (boolean, counting, maxplus, viterbi, log; Viterbi also gives ``labels``).
    """
    grammar = _loaded(grammar)
    ring = sr.get(semiring, k)
    kernel = getattr(ring, "cython_kernel", None)
    check_engine(engine)
    if engine == "cython" and kernel is None:
        raise ValueError(f"semiring {ring!r} has no Cython kernel: use engine='python'")
    return run_batch(terminals, weights, n_jobs,
                     lambda t, w: _parse_one(grammar, t, w, ring, kernel, engine, semiring))


# The semirings whose values are tree scores (sums of edge scores) and whose
# trees and counts depend only on score differences: they parse shifted
# scores.  Exact classes: a subclass may read the scores otherwise.
_SHIFTED = (sr.MaxPlus, sr.Log, sr.Viterbi, sr.MaxCount, sr.KBest, sr.Polynomial)


def _parse_one(grammar, terminals, weights, ring, kernel, engine, semiring):
    if _labelled(weights):
        from .queries.labels import parse_labelled

        return parse_labelled(grammar, terminals, weights, semiring)
    (ids, pl, pr), w = _check_input(grammar, terminals, weights)
    shift = None
    if type(ring) in _SHIFTED:
        w, shift = shifted(w)
    if engine == "python" or kernel is None or (kernel == "log" and not exact_log_scale(w)):
        result = _python_result(ring, grammar, ids, w)
    else:
        result = _cython_result(kernel, grammar, pl, pr, w)
    return result if shift is None else unshift_result(result, shift)


# Results are refused when rounding could move them by more (and, for scores,
# by more than a billionth of them).
ROUNDING_LIMIT = 1e-6


def rounding_bound(n, *magnitudes):
    """A bound on the rounding error of a value computed from log-space
    quantities of these magnitudes over ``n`` positions (their sums keep the
    relative precision of a double, 2.2e-16, per operation)."""
    return 8 * n * np.finfo(float).eps * sum(abs(x) for x in magnitudes)


class Shift:
    """The shift of :func:`shifted`: ``columns[d]`` taken from the scores of
    the edges into ``d``, and ``total``, the sum of ``columns[1:]`` that every
    tree's score lost (inf when a partial sum leaves the range of a double)."""

    __slots__ = ("columns", "total")

    def __init__(self, columns, total):
        self.columns, self.total = columns, total


def shifted(w):
    """``(scores, Shift)`` for checked ``(m+1, m+1)`` scores: each column
    ``d`` less the largest finite score of an edge into ``d``
    (:func:`semiparse._cky.shift_columns`; edges into the root and
    self-loops, which no tree has, become -inf).  Every tree attaches each
    word exactly once, so every tree's score drops by the same sum and the
    distribution over trees, the best trees and the marginals stay as they
    are, while the shifted scores are at most 0 and their sums keep the
    digits that tell trees apart, whatever constant the scores share.
    ValueError when two scores of one column differ by more than a double
    holds (their difference would round to -inf, forbidding an edge)."""
    out, columns, total, overflow = _cky.shift_columns(w)
    if overflow is not None:
        h, d = overflow
        raise ValueError(f"weights: the scores of the edges into word {d} differ by more than "
                         f"a double holds (w[{h}, {d}] is {w[h, d]:.3g} and the largest "
                         f"{columns[d]:.3g}); use -inf to forbid an edge")
    return out, Shift(columns, total)


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
        if rounding_bound(n, value) > max(ROUNDING_LIMIT, 1e-9 * abs(total)):
            _cancelled(value, total, n, what)
        return total
    largest = _cky.largest_score(np.ascontiguousarray(value).reshape(1, -1))
    if abs(offset) + largest < 1e308:
        total = value + offset  # no entry can overflow
    else:
        total = _unshift_scaled(value, shift.columns, what)
    if rounding_bound(n, largest) > ROUNDING_LIMIT:
        finite = np.isfinite(value)
        bounds = rounding_bound(n, np.where(finite, value, 0.0))
        bad = np.argwhere(finite & (bounds > np.maximum(ROUNDING_LIMIT, 1e-9 * np.abs(total))))
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


def _labelled(weights):
    """Whether ``weights`` has three axes (labelled edges)."""
    try:
        return np.ndim(weights) == 3
    except ValueError:  # ragged: left to the checks, which name the problem
        return False


def exact_log_scale(w):
    """Whether the Cython log kernel is exact for these scores (a checked,
    contiguous float64 array).

    Its scaled-number path (where plain probabilities would leave their
    range) keeps exp(value) as a mantissa and a power of 2**64 whose exponent
    is a double, exact while every value in the chart is below
    2**52 * 64 log 2 (about 2e17) in size: scores times the input length
    below 1e17.
    """
    return _cky.largest_score(w) * len(w) < 1e17


# A tree scoring this much below the best weighs exp(-800) < 1e-347 of it:
# nothing in a double.
_NEGLIGIBLE = 800.0


def likely_edges(rules, pl, pr, w):
    """Shifted scores ``w`` (:func:`shifted`) within the log kernel's exact
    range (:func:`exact_log_scale`): ``w`` itself when it is, else ``w`` with
    -inf for every edge scoring more than 800 + log(number of trees) below
    the best tree's score.  Shifted scores are at most 0, so a tree with such
    an edge scores below that too, and all of them together weigh less than
    exp(-800) of the best tree: edge marginals, entropy, expectations and
    samples are those of ``w`` to the last digit of a double.  So scores of
    -1e300 that no likely tree uses (a soft "forbidden") cost nothing.
    ValueError when the likely trees' own edges are beyond the exact range.
    """
    if exact_log_scale(w):
        return w
    best = _cky.inside("maxplus", rules, pl, pr, w)
    if best == NEG_INF:
        return w  # no tree: the caller says so
    log_count = _cky.inside("log", rules, pl, pr, np.where(w == NEG_INF, w, 0.0))
    likely = np.where(w < best - (_NEGLIGIBLE + log_count), NEG_INF, w)
    if exact_log_scale(likely):
        return likely
    raise ValueError(f"scores too large for log-space queries (marginals, entropy, "
                     f"expectations) of {len(w)} terminals: the likely trees' edges score down "
                     f"to {_cky.largest_score(likely):.3g} below the best edge into the same "
                     "word, and that times the length must stay below 1e17 for log-space "
                     "differences to keep their digits")


def sample(grammar, terminals, weights, rng=None):
    """Heads of a tree drawn uniformly among the max-plus optimal trees.

    Uniform over optimal derivations, which are the trees themselves for
    grammars without spurious ambiguity (all shipped ones).  rng: a
    ``random.Random`` (or None for a fresh one).  Counts are carried as
    doubles, or as logs once they pass the range of a double, so the draw is
    uniform up to rounding at any length.  Returns None when no tree exists.
    """
    if rng is None:
        rng = _random.Random()
    elif not isinstance(rng, _random.Random):
        raise ValueError(f"rng must be a random.Random or None, got {rng!r}")
    grammar = _loaded(grammar)
    (ids, pl, pr), w = _check_input(grammar, terminals, weights)
    w, _ = shifted(w)
    uniforms = np.array([rng.random() for _ in range(8 * len(ids) + 8)])
    _, heads = _cky.best_tree(grammar.compiled, pl, pr, w, uniforms)
    return None if heads is None else heads.tolist()


def run_batch(terminals, weights, n_jobs, one, many=None):
    """``one(terminals, weights)``, or for a batch (``weights`` None and
    ``terminals`` a list of ``(terminals, weights)`` pairs) the list of
    ``one`` of each pair, on ``n_jobs`` threads.

    The Cython kernels release the GIL, so threads run them in parallel.  A
    ValueError in a batch names the index of the first item at fault.
    ``many(pairs)``, if given, does the work of a thread's share of the batch
    at once (e.g. all its kernels in one call without the GIL) and returns
    ``(results, error)``: the results of the items before the first one at
    fault, and that item's ValueError (or None).
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    if weights is not None:
        if n_jobs != 1:
            raise ValueError("n_jobs is for batches: give a list of (terminals, weights) pairs "
                             "and no weights")
        return one(terminals, weights)
    if not isinstance(terminals, (list, tuple)):
        raise ValueError("weights missing: expected an array of real numbers, or a batch as "
                         "terminals: a list of (terminals, weights) pairs and no weights")
    batch = list(terminals)

    def each(pairs):
        out = []
        for pair in pairs:
            try:
                out.append(one(*pair))
            except ValueError as exc:
                return out, exc
        return out, None

    def run_chunk(indices):
        """Results of the items in order, up to the first error (returned)."""
        pairs, bad = [], None
        for i in indices:
            pair = batch[i]
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                bad = ValueError(f"batch item {i}: expected a (terminals, weights) pair, "
                                 f"got {pair!r:.60}")
                break
            pairs.append(pair)
        out, error = (many or each)(pairs)
        if error is not None:
            return out, ValueError(f"batch item {indices[len(out)]}: {error}")
        return out, bad

    chunks = [c for c in np.array_split(np.arange(len(batch)), n_jobs) if len(c)]
    if n_jobs == 1 or len(chunks) < 2:
        done = [run_chunk(c) for c in chunks]
    else:
        with ThreadPoolExecutor(len(chunks)) as pool:
            done = list(pool.map(run_chunk, chunks))
    results = []
    for out, error in done:
        if error is not None:
            raise error
        results += out
    return results


def check_engine(engine):
    """ValueError unless ``engine`` names an engine ``parse`` knows."""
    if not (isinstance(engine, str) and engine in ("auto", "cython", "python")):
        raise ValueError(f"unknown engine {engine!r}: expected 'auto', 'cython' or 'python'")


# The most words count_projective takes: its chart has (n + 1)**2 cells per
# state and the count, past 2**51, is recounted modulo about n / 10 primes,
# so 1000 words take minutes and 10000 hours and gigabytes.
MAX_COUNT_WORDS = 10_000


def count_projective(n):
    """Exact number of projective dependency trees over ``n`` words (an
    integer from 0 to :data:`MAX_COUNT_WORDS`; ValueError otherwise).

    The root (position 0) may take several children.  Computed with the
    counting semiring and ``projective.grammar``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"count_projective needs a word count n >= 0, got {n!r}")
    if n > MAX_COUNT_WORDS:
        raise ValueError(f"count_projective takes n up to {MAX_COUNT_WORDS} words, got {n}: "
                         "its chart has (n + 1)**2 cells (the closed form is "
                         "math.comb(3 * n, n) // (2 * n + 1))")
    return parse("projective", "s" * (int(n) + 1), np.zeros((n + 1, n + 1)), "counting").value


# -- input checks ------------------------------------------------------------

def _loaded(grammar):
    if not isinstance(grammar, (Grammar, str, os.PathLike)):
        raise ValueError(f"grammar must be a Grammar, a shipped name or a path, got {grammar!r}")
    return load_grammar(grammar)


def real_array(value, expected):
    """``value`` as a numpy array of ints or floats, or the ValueError
    ``"{expected}, got TYPE of dtype DTYPE"``."""
    try:
        a = np.asarray(value)
    except ValueError:  # e.g. ragged nested lists
        a = None
    if a is None or a.dtype.kind not in "iuf":
        raise ValueError(f"{expected}, got {type(value).__name__}"
                         + ("" if a is None else f" of dtype {a.dtype}"))
    return a


def _check_input(grammar, terminals, weights):
    """``(encoded terminals, weights as a contiguous float64 array)`` for a
    loaded grammar, or ValueError saying which argument is wrong and what was
    expected."""
    if isinstance(terminals, np.ndarray) and terminals.ndim == 1:
        terminals = terminals.tolist()
    if not isinstance(terminals, (str, list, tuple)):
        raise ValueError(f"terminals must be a string or a list of terminal names, got "
                         f"{type(terminals).__name__} (a generator or iterator cannot be re-read)")
    if not isinstance(terminals, str) and not all(isinstance(t, str) for t in terminals):
        raise ValueError(f"terminals must be terminal names (strings), got {terminals!r}")
    if len(terminals) == 0:
        raise ValueError("empty input: expected at least one terminal (the root)")
    encoded = grammar.encode(terminals)
    if np.ma.isMaskedArray(weights):
        raise ValueError("weights is a masked array, whose mask would be ignored: fill it first, "
                         "e.g. w.filled(-np.inf)")
    w = real_array(weights, "weights must be an array of real numbers (ints or floats)")
    w = w.astype(np.float64, copy=False)
    m1 = len(encoded[0])
    if w.shape != (m1, m1):
        raise ValueError(f"weights have shape {w.shape}: expected ({m1}, {m1}) for "
                         f"{m1} terminals (w[h, d] scores the edge h -> d)")
    with np.errstate(over="ignore", invalid="ignore"):  # huge finite scores are checked below
        total = np.add.reduce(w, axis=None)  # NaN or +inf shows in the sum (-inf + inf = NaN)
    if total == NEG_INF or math.isfinite(total):
        return encoded, np.ascontiguousarray(w)
    if np.isnan(w).any():
        h, d = np.argwhere(np.isnan(w))[0]
        raise ValueError(f"weights contain NaN (first at w[{h}, {d}]): use -inf to forbid an edge")
    if (w == np.inf).any():
        h, d = np.argwhere(w == np.inf)[0]
        raise ValueError(f"weights contain +inf (at w[{h}, {d}]): scores must be finite or -inf")
    return encoded, np.ascontiguousarray(w)  # huge finite scores whose sum overflowed


# -- Cython engine -------------------------------------------------------------

def _cython_result(kernel, grammar, pl, pr, w):
    rules = grammar.compiled
    if kernel == "maxplus":
        return ParseResult(_cky.inside("maxplus", rules, pl, pr, w))
    if kernel == "boolean":
        # Recognition is max-plus with every allowed edge scored 0: a semiring
        # homomorphism (allowed -> 0, forbidden -> -inf, true <=> > -inf).
        return ParseResult(_cky.inside("maxplus", rules, pl, pr, np.where(w == NEG_INF, w, 0.0))
                           > NEG_INF)
    if kernel == "log":
        return ParseResult(_cky.inside("log", rules, pl, pr, w))
    if kernel == "viterbi":
        score, heads = _cky.best_tree(rules, pl, pr, w)
        return ParseResult(score, None if heads is None else heads.tolist())
    if kernel == "counting":
        approx = _cky.inside("countf", rules, pl, pr, w)
        if approx < _EXACT_DOUBLE:
            return ParseResult(int(approx))
        return ParseResult(_crt_count("countmod", rules, pl, pr, w, approx))
    if kernel == "maxcount":
        score, approx = _cky.inside("maxcountf", rules, pl, pr, w)
        if approx < _EXACT_DOUBLE:
            return ParseResult((score, int(approx)))
        return ParseResult((score, _crt_count("maxcountmod", rules, pl, pr, w, approx)))
    raise ValueError(f"unknown kernel {kernel!r}")


def _crt_count(kernel, rules, pl, pr, w, approx):
    """Exact count from residues modulo primes whose product exceeds a bound."""
    if math.isfinite(approx):
        bits = math.frexp(approx)[1] + 1  # double rounding is far below a factor 2
    else:
        # Overflowed: bound by the total number of derivations, from the log kernel.
        allowed = np.where(w == NEG_INF, w, 0.0)
        bits = int(_cky.inside("log", rules, pl, pr, allowed) / math.log(2)) + 2
    residues, moduli, product = [], [], 1
    for p in _primes():
        if product.bit_length() > bits:
            break
        value = _cky.inside(kernel, rules, pl, pr, w, p)
        residues.append(value[1] if isinstance(value, tuple) else value)
        moduli.append(p)
        product *= p
    total = 0
    for r, p in zip(residues, moduli):
        q = product // p
        total += r * q * pow(q, -1, p)
    return total % product


_PRIMES = []


def _primes():
    """Primes below 2**31, largest first (generated on demand, cached)."""
    yield from _PRIMES
    candidate = (_PRIMES[-1] if _PRIMES else 2 ** 31) - 1
    while True:
        if _is_prime(candidate):
            _PRIMES.append(candidate)
            yield candidate
        candidate -= 2 if candidate % 2 else 1


def _is_prime(n):
    if n % 2 == 0:
        return n == 2
    return all(n % f for f in range(3, math.isqrt(n) + 1, 2))


# -- generic Python engine -------------------------------------------------------

def _python_result(ring, grammar, ids, w):
    value = inside_generic(ring, grammar.tables, ids, w)
    if isinstance(ring, sr.Viterbi):
        if value[0] == NEG_INF:
            return ParseResult(NEG_INF, None)
        return ParseResult(value[0], _heads(sr.edges_of(value[1]), len(ids)))
    if isinstance(ring, sr.KBest):
        trees = [(score, _heads(sr.edges_of(edges), len(ids))) for score, edges in value]
        return ParseResult([s for s, _ in trees], trees[0][1] if trees else None, trees)
    return ParseResult(value)


def _heads(edges, n1):
    heads = [-1] * n1
    for h, d in edges:
        heads[d] = h
    return heads


def inside_generic(ring, tables, ids, w):
    """The chart equations (Nederhof 2019, Table 2; see docs/engine.md) in pure
    Python over any semiring, in the same order as the Cython engine."""
    return _inside_chart(ring, tables, ids, w)[0]


def outside_generic(ring, tables, ids, w):
    """``(value, edges)``: the inside value and, for each edge, ``edges[h][d]``
    the semiring sum over the derivations that contain ``h -> d`` (zero if
    none), by the outside pass over the chart of :func:`inside_generic`.

    Any commutative semiring works (``zero``, ``one``, ``plus``, ``times``,
    ``weight``; no division or subtraction): log gives the log of the
    unnormalized edge mass (subtract the value for posteriors), max-plus the
    max-marginals, counting the number of derivations through each edge.
    """
    N = len(ids)
    zero, plus, times = ring.zero, ring.plus, ring.times
    total, W, L, R, IL, IR = _inside_chart(ring, tables, ids, w)
    oL, oR, oIL, oIR = {}, {}, {}, {}

    def add(table, key, value):
        table[key] = plus(table.get(key, zero), value)

    for b, c in tables.root.tolist():
        add(oL, (b, 0, 0), R.get((c, 0, N - 1), zero))
        add(oR, (c, 0, N - 1), L.get((b, 0, 0), zero))
    edges = [[zero] * N for _ in range(N)]
    pairs = tables.pairs.tolist()
    left_combos = tables.left_combos.tolist()
    right_combos = tables.right_combos.tolist()
    for span in range(N - 1, 0, -1):  # the inside equations backwards
        for i in range(N - span):
            j = i + span
            for c2, c, bd, cd in right_combos:
                out = oR.get((c2, i, j), zero)
                for d in range(i + 1, j + 1):
                    add(oIR, (bd, c, i, d), times(out, R.get((cd, d, j), zero)))
                    add(oR, (cd, d, j), times(out, IR.get((bd, c, i, d), zero)))
            for b2, bd, b, cd in left_combos:
                out = oL.get((b2, i, j), zero)
                for d in range(i, j):
                    add(oL, (bd, i, d), times(out, IL.get((b, cd, d, j), zero)))
                    add(oIL, (b, cd, d, j), times(out, L.get((bd, i, d), zero)))
            for b, c, needs_left, needs_right in pairs:
                for needed, (h, d), inside, outside in ((needs_left, (j, i), IL, oIL),
                                                        (needs_right, (i, j), IR, oIR)):
                    if not needed:
                        continue
                    out = outside.get((b, c, i, j), zero)
                    edges[h][d] = plus(edges[h][d], times(inside[b, c, i, j], out))
                    out = times(out, W[h][d])
                    for k in range(i, j):
                        add(oR, (c, i, k), times(out, L.get((b, k + 1, j), zero)))
                        add(oL, (b, k + 1, j), times(out, R.get((c, i, k), zero)))
    return total, edges


def _inside_chart(ring, tables, ids, w):
    """``(value, W, L, R, IL, IR)``: the value and the filled chart."""
    N = len(ids)
    zero, one, plus, times = ring.zero, ring.one, ring.plus, ring.times
    W = [[zero if w[h, d] == NEG_INF else ring.weight(float(w[h, d]), h, d) for d in range(N)]
         for h in range(N)]
    L = {}  # (B, i, j) -> value; missing entries are zero
    R = {}
    IL = {}  # (B, C, i, j): head j, left child i
    IR = {}  # (B, C, i, j): head i, right child j
    for h, t in enumerate(ids):
        L[int(tables.term_left[t]), h, h] = one
        R[int(tables.term_right[t]), h, h] = one
    pairs = tables.pairs.tolist()
    left_combos = tables.left_combos.tolist()
    right_combos = tables.right_combos.tolist()
    for span in range(1, N):
        for i in range(N - span):
            j = i + span
            for b, c, needs_left, needs_right in pairs:
                acc = zero
                for k in range(i, j):
                    acc = plus(acc, times(R.get((c, i, k), zero), L.get((b, k + 1, j), zero)))
                if needs_left:
                    IL[b, c, i, j] = times(acc, W[j][i])
                if needs_right:
                    IR[b, c, i, j] = times(acc, W[i][j])
            for b2, bd, b, cd in left_combos:
                acc = zero
                for d in range(i, j):
                    acc = plus(acc, times(L.get((bd, i, d), zero), IL.get((b, cd, d, j), zero)))
                L[b2, i, j] = plus(L.get((b2, i, j), zero), acc)
            for c2, c, bd, cd in right_combos:
                acc = zero
                for d in range(i + 1, j + 1):
                    acc = plus(acc, times(IR.get((bd, c, i, d), zero), R.get((cd, d, j), zero)))
                R[c2, i, j] = plus(R.get((c2, i, j), zero), acc)
    acc = zero
    for b, c in tables.root.tolist():
        acc = plus(acc, times(L.get((b, 0, 0), zero), R.get((c, 0, N - 1), zero)))
    return acc, W, L, R, IL, IR

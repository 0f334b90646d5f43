"""Parsing with a split grammar over a semiring (Nederhof 2019, Table 2).

Two engines compute the same equations in the same order:

- the Cython engine (:mod:`semiparse.chart.kernels`) for boolean, counting, max-plus,
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
import random as _random

import numpy as np

from semiparse import semiring as sr
from semiparse.chart import kernels
from semiparse.chart.batch import run_batch
from semiparse.chart.counting import EXACT_DOUBLE, exact_count, log_derivations
from semiparse.chart.generic import python_result
from semiparse.chart.inputs import NEG_INF, check_engine, check_input, compiled, exact_log_scale, is_labelled, loaded
from semiparse.chart.labels import LabelledParseResult, check_weights, reduce_labels, shifted_labels
from semiparse.chart.result import ParseResult
from semiparse.chart.score_shift import shifted, unshift, unshift_result


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
    ``h -> d`` with label ``l``, go to :func:`parse_labelled`
    (boolean, counting, maxplus, viterbi, log; Viterbi also gives ``labels``).
    """
    grammar = loaded(grammar)
    ring = sr.get(semiring, k)
    kernel = sr.kernel_of(ring)
    check_engine(engine)
    if engine == "cython" and kernel is None:
        raise ValueError(f"semiring {ring!r} has no Cython kernel: use engine='python'")
    return run_batch(terminals, weights, n_jobs,
                     lambda t, w: _parse_one(grammar, t, w, ring, kernel, engine, semiring))


# The semirings whose values are tree scores (sums of edge scores) and whose
# trees and counts depend only on score differences: they parse shifted
# scores, as does a subclass that keeps their arithmetic (one that changes
# it may read the scores otherwise).
_SHIFTED = (sr.MaxPlus, sr.Log, sr.Viterbi, sr.MaxCount, sr.KBest, sr.Polynomial)


def _parse_one(grammar, terminals, weights, ring, kernel, engine, semiring):
    if is_labelled(weights):
        return parse_labelled(grammar, terminals, weights, semiring)
    (ids, pl, pr), w = check_input(grammar, terminals, weights)
    shift = None
    if any(sr.same_arithmetic(ring, c) for c in _SHIFTED):
        w, shift = shifted(w)
    if engine == "python" or kernel is None or (kernel == "log" and not exact_log_scale(w)):
        result = python_result(ring, grammar, ids, w)
    else:
        result = _cython_result(kernel, grammar, pl, pr, w)
    if shift is None:
        return result
    if _overflowed(result.value, grammar, pl, pr, w):
        raise ValueError(f"weights: the scores of the edges into the words differ by more than a "
                         f"double can sum: every tree of these {len(ids)} terminals scores more "
                         f"than {np.finfo(float).max:.3g} below the best edges into its words")
    return unshift_result(result, shift)


def _overflowed(value, grammar, pl, pr, w):
    """Whether the best score of the shifted weights ``w`` came out -inf
    although the grammar derives a tree with the allowed edges: finite
    shifted scores whose sum is below the most negative double."""
    if isinstance(value, tuple):  # max-count
        value = value[0]
    elif isinstance(value, list):  # k-best
        value = value[0] if value else None
    if not (isinstance(value, float) and value == NEG_INF):
        return False
    return log_derivations(compiled(grammar), pl, pr, w) > NEG_INF


def sample_best_tree(grammar, terminals, weights, rng=None):
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
    grammar = loaded(grammar)
    (ids, pl, pr), w = check_input(grammar, terminals, weights)
    w, _ = shifted(w)
    uniforms = np.array([rng.random() for _ in range(kernels.uniforms_needed(len(ids)))])
    _, heads = kernels.best_tree(compiled(grammar), pl, pr, w, uniforms)
    return None if heads is None else heads.tolist()


def _cython_result(kernel, grammar, pl, pr, w):
    rules = compiled(grammar)
    if kernel == "maxplus":
        return ParseResult(kernels.inside("maxplus", rules, pl, pr, w))
    if kernel == "boolean":
        # Recognition is max-plus with every allowed edge scored 0: a semiring
        # homomorphism (allowed -> 0, forbidden -> -inf, true <=> > -inf).
        return ParseResult(kernels.inside("maxplus", rules, pl, pr, np.where(w == NEG_INF, w, 0.0))
                           > NEG_INF)
    if kernel == "log":
        return ParseResult(kernels.inside("log", rules, pl, pr, w))
    if kernel == "viterbi":
        score, heads = kernels.best_tree(rules, pl, pr, w)
        return ParseResult(score, None if heads is None else heads.tolist())
    if kernel == "counting":
        approx = kernels.inside("countf", rules, pl, pr, w)
        if approx < EXACT_DOUBLE:
            return ParseResult(int(approx))
        return ParseResult(exact_count("countmod", rules, pl, pr, w, approx))
    if kernel == "maxcount":
        score, approx = kernels.inside("maxcountf", rules, pl, pr, w)
        if approx < EXACT_DOUBLE:
            return ParseResult((score, int(approx)))
        return ParseResult((score, exact_count("maxcountmod", rules, pl, pr, w, approx)))
    raise ValueError(f"unknown kernel {kernel!r}")


# The most words count_projective takes: its chart has (n + 1)**2 cells per
# state and the count, past 2**51, is recounted modulo about n / 10 primes,
# so the time grows about as n**4: 500 words take a few seconds, 1000
# minutes and 10000 hours (beyond it, the closed form in the error message).
MAX_COUNT_WORDS = 500


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


LABELLED_SEMIRINGS = ("boolean", "counting", "log", "maxplus", "viterbi")


def parse_labelled(grammar, terminals, weights, semiring="maxplus"):
    """Parse with labelled edge weights ``(m+1, m+1, L)`` in a semiring of
    :data:`LABELLED_SEMIRINGS`.

    boolean: is there a tree with an allowed label on every edge; counting:
    the exact number of labelled derivations (an edge counts as many times as
    it has allowed labels); maxplus: the best labelled score; viterbi: that
    score with ``heads`` and ``labels``; log: log of the sum over labelled
    derivations of exp(score).  Returns a :class:`LabelledParseResult`.
    """
    grammar = loaded(grammar)
    if not is_labelled(weights):
        raise ValueError(f"parse_labelled needs weights with three axes (m+1, m+1, L), got shape "
                         f"{np.shape(weights)}: use semiparse.parse for unlabelled weights")
    if not (isinstance(semiring, str) and semiring in LABELLED_SEMIRINGS):
        raise ValueError(f"labelled weights support the semirings {', '.join(LABELLED_SEMIRINGS)}, "
                         f"got {semiring!r}")
    _, raw = check_weights(grammar, terminals, weights)
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

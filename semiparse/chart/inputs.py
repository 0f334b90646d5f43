"""The checked inputs of the engine and its queries.

A grammar (loaded by name or path), terminals encoded for it, weights as a
contiguous float64 array with no NaN or +inf, the grammar's tables compiled
for the Cython kernels, and the edges that matter to log-space queries.
Every query checks its arguments here, so that the same mistake gets the
same message everywhere."""
import math
import os
import weakref

import numpy as np

from semiparse.chart import kernels
from semiparse.grammar import Grammar, load_grammar

NEG_INF = float("-inf")


def loaded(grammar):
    if not isinstance(grammar, (Grammar, str, os.PathLike)):
        raise ValueError(f"grammar must be a Grammar, a shipped name or a path, got {grammar!r}")
    return load_grammar(grammar)


def as_array(value, expected, convert=np.asarray):
    """``convert(value)``, or the ValueError ``"{expected}, got ..."`` where
    numpy cannot read ``value``: ragged nested lists, a torch tensor that
    requires grad (these queries give values; ``semiparse.torch`` gives
    gradients) or that holds no values (meta device, sparse)."""
    if getattr(value, "requires_grad", False):
        raise ValueError(f"{expected}, got a tensor that requires grad: for gradients use "
                         f"semiparse.torch (log_partition, TreeCRF), for a value pass tensor.detach()")
    try:
        return convert(value)
    except (ValueError, TypeError, RuntimeError) as exc:
        reason = str(exc).split(".")[0]
        raise ValueError(f"{expected}, got {type(value).__name__} ({reason})") from None


def real_array(value, expected):
    """``value`` as a numpy array of ints or floats, or the ValueError
    ``"{expected}, got TYPE of dtype DTYPE"`` (or of :func:`as_array`)."""
    a = as_array(value, expected)
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{expected}, got {type(value).__name__} of dtype {a.dtype}")
    return a


def check_input(grammar, terminals, weights):
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


def is_labelled(weights):
    """Whether ``weights`` has three axes (labelled edges)."""
    try:
        return np.ndim(weights) == 3
    except ValueError:  # ragged: left to the checks, which name the problem
        return False


def check_engine(engine):
    """ValueError unless ``engine`` names an engine ``parse`` knows."""
    if not (isinstance(engine, str) and engine in ("auto", "cython", "python")):
        raise ValueError(f"unknown engine {engine!r}: expected 'auto', 'cython' or 'python'")


_COMPILED = weakref.WeakKeyDictionary()


def compiled(grammar):
    """The grammar's tables as the C structure of the Cython kernels (built
    once per grammar)."""
    rules = _COMPILED.get(grammar)
    if rules is None:
        rules = _COMPILED[grammar] = kernels.CompiledRules(grammar.tables)
    return rules


def exact_log_scale(w):
    """Whether the Cython log kernel is exact for these scores (a checked,
    contiguous float64 array).

    Its scaled-number path (where plain probabilities would leave their
    range) keeps exp(value) as a mantissa and a power of 2**64 whose exponent
    is a double, exact while every value in the chart is below
    2**52 * 64 log 2 (about 2e17) in size: scores times the input length
    below 1e17.
    """
    return kernels.largest_score(w) * len(w) < 1e17

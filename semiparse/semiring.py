"""Semirings for the chart parser.

A semiring is a tiny class: ``zero``, ``one``, ``plus``, ``times`` and
``weight(score, head, dep)``, which maps the score of an allowed edge
``head -> dep`` to a semiring value (forbidden edges, score ``-inf``, are
always ``zero``).  The generic engine (:mod:`semiparse.chart.engine`) works with any
object of this shape; the Cython engine has specialized kernels for the
numeric ones (``cython_kernel`` names the kernel, ``None`` for none).

Derivation-valued semirings (Viterbi, k-best) keep the edges of a derivation
as a nested pair ``(left, right)`` of edge groups, flattened only at the end
by :func:`edges_of`: ``times`` is then O(1) instead of copying edge lists.

Three classes take per-edge data and run only in the generic engine:
:class:`Expectation` (expected additive values, Li and Eisner 2009),
:class:`Sampling` (exact draws from p(derivation) proportional to
exp(score)) and :class:`WeightedCounting` (counts where an edge stands for
several parallel edges, e.g. one per label).
"""
import heapq
import math
import numbers
import sys
from itertools import islice

NEG_INF = float("-inf")


class Semiring:
    """Base class: subclasses set ``zero`` and ``one`` and the operations."""

    name = "semiring"
    zero = None
    one = None
    cython_kernel = None

    def plus(self, a, b):
        raise NotImplementedError

    def times(self, a, b):
        raise NotImplementedError

    def weight(self, score, head, dep):
        """Value of an allowed edge ``head -> dep`` with the given score."""
        raise NotImplementedError

    def sum(self, values):
        total = self.zero
        for v in values:
            total = self.plus(total, v)
        return total

    def __repr__(self):
        return f"<semiring {self.name}>"


class Boolean(Semiring):
    """Recognition: is there any derivation using allowed edges only?"""

    name = "boolean"
    zero, one = False, True
    cython_kernel = "boolean"

    def plus(self, a, b):
        return a or b

    def times(self, a, b):
        return a and b

    def weight(self, score, head, dep):
        return True


class Counting(Semiring):
    """Number of derivations using allowed edges, as an exact Python int."""

    name = "counting"
    zero, one = 0, 1
    cython_kernel = "counting"

    def plus(self, a, b):
        return a + b

    def times(self, a, b):
        return a * b

    def weight(self, score, head, dep):
        return 1


class MaxPlus(Semiring):
    """Tropical semiring: the best total score."""

    name = "maxplus"
    zero, one = NEG_INF, 0.0
    cython_kernel = "maxplus"

    def plus(self, a, b):
        return a if a >= b else b

    def times(self, a, b):
        return a + b

    def weight(self, score, head, dep):
        return score


class Log(Semiring):
    """Inside semiring in log space: log of the sum of exp(total score)."""

    name = "log"
    zero, one = NEG_INF, 0.0
    cython_kernel = "log"

    def plus(self, a, b):
        return log_add(a, b)

    def times(self, a, b):
        return a + b

    def weight(self, score, head, dep):
        return score


def log_add(a, b):
    """log(exp(a) + exp(b)) without overflow; ``-inf`` is log 0."""
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + math.log1p(math.exp(lo - hi))


class MaxCount(Semiring):
    """``(best score, exact number of derivations reaching it)``."""

    name = "maxcount"
    zero, one = (NEG_INF, 0), (0.0, 1)
    cython_kernel = "maxcount"

    def plus(self, a, b):
        if a[0] > b[0]:
            return a
        if b[0] > a[0]:
            return b
        return (a[0], a[1] + b[1])

    def times(self, a, b):
        return (a[0] + b[0], a[1] * b[1])

    def weight(self, score, head, dep):
        return (score, 1)


class Viterbi(Semiring):
    """``(best score, its derivation's edges)``; ties keep the first found."""

    name = "viterbi"
    zero, one = (NEG_INF, None), (0.0, ())
    cython_kernel = "viterbi"

    def plus(self, a, b):
        return a if a[0] >= b[0] else b

    def times(self, a, b):
        return (a[0] + b[0], (a[1], b[1]))

    def weight(self, score, head, dep):
        return (score, ((head, dep),))


class KBest(Semiring):
    """The k best ``(score, edges)`` derivations, best first."""

    name = "kbest"
    cython_kernel = None

    def __init__(self, k):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= sys.maxsize:
            raise ValueError(f"kbest needs a positive integer k up to {sys.maxsize}, got {k!r}")
        self.k = int(k)
        self.zero = ()
        self.one = ((0.0, ()),)

    def plus(self, a, b):
        key = lambda item: -item[0]  # noqa: E731 - stable merge on score
        return tuple(islice(heapq.merge(a, b, key=key), self.k))

    def times(self, a, b):
        if not a or not b:
            return ()
        # Best-first enumeration of pairwise sums (both lists sorted best first).
        out, seen = [], {(0, 0)}
        heap = [(-(a[0][0] + b[0][0]), 0, 0)]
        while heap and len(out) < self.k:
            neg, i, j = heapq.heappop(heap)
            out.append((-neg, (a[i][1], b[j][1])))
            for ni, nj in ((i + 1, j), (i, j + 1)):
                if ni < len(a) and nj < len(b) and (ni, nj) not in seen:
                    seen.add((ni, nj))
                    heapq.heappush(heap, (-(a[ni][0] + b[nj][0]), ni, nj))
        return tuple(out)

    def weight(self, score, head, dep):
        return ((score, ((head, dep),)),)

    def __repr__(self):
        return f"<semiring kbest k={self.k}>"


class Polynomial(Semiring):
    """Score distribution: ``{score: number of derivations with that score}``.

    The value is the polynomial sum_T x^score(T), stored sparsely.
    """

    name = "polynomial"
    zero, one = {}, {0: 1}
    cython_kernel = None

    def plus(self, a, b):
        if not a:
            return b
        if not b:
            return a
        out = dict(a)
        for s, c in b.items():
            out[s] = out.get(s, 0) + c
        return out

    def times(self, a, b):
        out = {}
        for s1, c1 in a.items():
            for s2, c2 in b.items():
                out[s1 + s2] = out.get(s1 + s2, 0) + c1 * c2
        return out

    def weight(self, score, head, dep):
        return {score: 1}


def log_plus(a, b, rest):
    """``a + b`` for elements ``(log weight, rest)``: the other one when
    either weighs nothing (-inf), else the log of their summed weights, z,
    with ``rest(a, b, z)``."""
    if a[0] == NEG_INF:
        return b
    if b[0] == NEG_INF:
        return a
    z = log_add(a[0], b[0])
    return (z, rest(a, b, z))


def _weighted_mean(a, b, z):
    """The mean value of two sets of derivations, each weighing its share of z."""
    return math.exp(a[0] - z) * a[1] + math.exp(b[0] - z) * b[1]


class Expectation(Semiring):
    """First-order expectation semiring (Li and Eisner 2009) in log space.

    The textbook element is ``(p, r)``: p the total weight exp(score) of a set
    of derivations, r the sum over them of weight times the sum of
    ``values[h, d]`` over their edges; ``(p1, r1) + (p2, r2) = (p1 + p2, r1 +
    r2)`` and ``(p1, r1) * (p2, r2) = (p1 p2, p1 r2 + p2 r1)``.  Both overflow
    a double at a few hundred words, so an element here is ``(log p, r / p)``:
    the log weight and the *mean* value of the set, which lies between the
    smallest and the largest total value of a derivation.  Then times adds
    both parts and plus is a log-add and a weighted mean; the whole input's
    value is ``(log Z, E[sum of values over the edges])``.  ``values``: any
    array indexed ``values[h, d]`` (finite numbers).
    """

    name = "expectation"
    zero, one = (NEG_INF, 0.0), (0.0, 0.0)

    def __init__(self, values):
        self.values = values

    def plus(self, a, b):
        return log_plus(a, b, _weighted_mean)

    def times(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def weight(self, score, head, dep):
        return (score, float(self.values[head, dep]))


class Sampling(Semiring):
    """``k`` independent draws of a derivation, each with probability
    proportional to exp(its score), in one inside pass.

    An element is ``(log of the total weight, k derivations)`` (each a nested
    edge pair as in :class:`Viterbi`).  ``plus`` keeps, in each of the k slots
    independently, the left or the right draw with probability proportional
    to its side's weight; ``times`` pairs the draws slot by slot.  Every chart
    item occurs at most once in a derivation (its children cover smaller
    spans or are items of another kind), so the choices along any derivation
    are independent and its probability is the product of the chosen weights
    over the item totals, which telescopes to exp(score) / Z: each slot is an
    exact sample.  Probabilities are computed from log weights, so nothing
    overflows.  rng: a ``random.Random``.
    """

    name = "sampling"

    def __init__(self, k, rng):
        self.k, self.rng = k, rng
        self.zero = (NEG_INF, None)
        self.one = (0.0, ((),) * k)

    def plus(self, a, b):
        return log_plus(a, b, self._draw)

    def _draw(self, a, b, z):
        """Each slot's draw from b with probability b's share of the weight z."""
        p_right, draw = math.exp(b[0] - z), self.rng.random
        return tuple(y if draw() < p_right else x for x, y in zip(a[1], b[1]))

    def times(self, a, b):
        if a[0] == NEG_INF or b[0] == NEG_INF:
            return self.zero
        return (a[0] + b[0], tuple(zip(a[1], b[1])))

    def weight(self, score, head, dep):
        return (score, (((head, dep),),) * self.k)

    def __repr__(self):
        return f"<semiring sampling k={self.k}>"


class WeightedCounting(Counting):
    """Exact counting where an allowed edge ``h -> d`` counts as
    ``multiplicity[h, d]`` parallel edges (e.g. its number of labels)."""

    name = "weighted_counting"
    cython_kernel = None

    def __init__(self, multiplicity):
        self.multiplicity = multiplicity

    def weight(self, score, head, dep):
        return int(self.multiplicity[head, dep])


def edges_of(tree):
    """Flatten the nested edge pairs of a Viterbi/k-best value into a list."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        if not node:
            continue
        if isinstance(node[0], int):
            out.append(node)
        else:
            stack.extend(node)
    return out


_BY_NAME = {
    cls.name: cls for cls in (Boolean, Counting, MaxPlus, Log, MaxCount, Viterbi, Polynomial)
}
NAMES = tuple(sorted(list(_BY_NAME) + ["kbest"]))


def get(semiring, k=None):
    """A semiring object from a name (``"kbest"`` needs ``k``) or an object.

    ``k`` is refused for any other semiring, so that it is never silently ignored.
    """
    if k is not None and not (isinstance(semiring, str) and semiring == "kbest"):
        raise ValueError(f"k={k!r} is only for the kbest semiring, not {semiring!r}")
    if isinstance(semiring, str):
        if semiring == "kbest":
            return KBest(1 if k is None else k)
        if semiring not in _BY_NAME:
            raise ValueError(f"unknown semiring {semiring!r}: expected one of {', '.join(NAMES)} "
                             "or a semiring object")
        return _BY_NAME[semiring]()
    if isinstance(semiring, type):
        raise ValueError(f"semiring {semiring.__name__}: pass an instance ({semiring.__name__}"
                         f"(...)) or a name, not the class")
    for attr in ("zero", "one", "plus", "times", "weight"):
        if not hasattr(semiring, attr):
            raise ValueError(f"semiring object {semiring!r} lacks {attr!r}: a semiring provides "
                             "zero, one, plus(a, b), times(a, b) and weight(score, head, dep)")
    return semiring


_OPERATIONS = ("zero", "one", "plus", "times", "weight")


def same_arithmetic(ring, cls):
    """Whether ``ring`` is a ``cls`` that keeps ``cls``'s zero, one, plus,
    times and weight (a subclass that adds methods but changes none of
    these computes what ``cls`` computes)."""
    return isinstance(ring, cls) and all(getattr(type(ring), op, None) is getattr(cls, op, None)
                                         for op in _OPERATIONS)


def kernel_of(ring):
    """The name of ``ring``'s Cython kernel, or None: that of the nearest
    class naming one, where ``ring`` keeps its arithmetic (a subclass that
    changes ``weight``, ``plus`` or ``times``, which the kernel would not
    see, runs in the generic engine)."""
    owner = next(c for c in type(ring).__mro__ if "cython_kernel" in vars(c) or c is object)
    kernel = vars(owner).get("cython_kernel")
    return kernel if kernel is not None and same_arithmetic(ring, owner) else None

"""The result of parsing: a semiring value and, where the semiring gives one,
a tree."""
from dataclasses import dataclass, field

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

"""Labelled bracket precision, recall and F1 with evalb's conventions.

Following evalb's ``COLLINS.prm``:

* punctuation: words whose *gold* POS tag is one of ``,  :  ``  ''  .`` are
  deleted from both trees before spans are computed (spans are then counted
  over the remaining words); brackets left without words are dropped;
* root: the outer bracket, unlabelled or ``TOP`` (``DELETE_LABEL TOP``), is
  not a bracket, whatever it holds (one word, several roots); the real root,
  e.g. ``(S ...)``, is counted like any other bracket;
* preterminals (POS tags) are not brackets; ``-NONE-`` traces are removed by
  the readers;
* ``ADVP`` and ``PRT`` count as the same label;
* brackets are multisets: a repeated identical bracket (a unary chain with one
  label) matches at most as many times as it occurs in the gold tree;
* gold and test trees must have the same words (else a yield mismatch error).
"""
from collections import Counter
from typing import NamedTuple

from semiparse.treebank.brackets import OUTER_LABELS, traverse

PUNCTUATION = frozenset([",", ":", "``", "''", "."])
EQUAL_LABELS = {"PRT": "ADVP"}


class Scores(NamedTuple):
    """Bracket counts and the derived precision, recall and F1 (in [0, 1])."""
    matched: int
    gold: int
    test: int

    @property
    def precision(self):
        return self.matched / self.test if self.test else 0.0

    @property
    def recall(self):
        return self.matched / self.gold if self.gold else 0.0

    @property
    def f1(self):
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other):
        return Scores(self.matched + other.matched, self.gold + other.gold, self.test + other.test)


def brackets(tree, keep=None, equal_labels=EQUAL_LABELS):
    """Counter of labelled brackets ``(label, l, r)`` over the kept words
    (``keep``: one bool per word, default all); an unlabelled or ``TOP``
    bracket (the outer one) is none."""
    out = Counter()
    position = 0
    index = 0  # position among kept words
    starts = []  # index at each open phrasal node
    for node, entering in traverse(tree):
        if entering is None:
            continue
        if node.is_preterminal:
            if not entering:
                if keep is None or keep[position]:
                    index += 1
                position += 1
        elif entering:
            starts.append(index)
        else:
            start = starts.pop()
            if index > start and node.label not in OUTER_LABELS:
                out[(equal_labels.get(node.label, node.label), start, index)] += 1
    return out


def score(gold, test, punctuation=PUNCTUATION, equal_labels=EQUAL_LABELS):
    """:class:`Scores` of one test tree against its gold tree."""
    gold_leaves, test_leaves = gold.leaves(), test.leaves()
    if [w for _, w in gold_leaves] != [w for _, w in test_leaves]:
        raise ValueError(f"yield mismatch: gold has {len(gold_leaves)} words "
                         f"{_preview(gold_leaves)}, test {len(test_leaves)} {_preview(test_leaves)}")
    keep = [tag not in punctuation for tag, _ in gold_leaves]
    g = brackets(gold, keep, equal_labels)
    t = brackets(test, keep, equal_labels)
    return Scores(sum((g & t).values()), sum(g.values()), sum(t.values()))


def _preview(leaves):
    words = [w for _, w in leaves]
    return " ".join(words[:8]) + (" ..." if len(words) > 8 else "")


def evaluate(gold_trees, test_trees, **options):
    """Corpus :class:`Scores` (brackets summed over sentences, as evalb)."""
    gold_trees, test_trees = list(gold_trees), list(test_trees)
    if len(gold_trees) != len(test_trees):
        raise ValueError(f"{len(gold_trees)} gold trees but {len(test_trees)} test trees")
    total = Scores(0, 0, 0)
    for k, (g, t) in enumerate(zip(gold_trees, test_trees)):
        try:
            total = total + score(g, t, **options)
        except ValueError as exc:
            raise ValueError(f"sentence {k + 1}: {exc}") from None
    return total

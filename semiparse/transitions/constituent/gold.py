"""Gold trees prepared once for the constituent oracle and its exhaustive
search."""
from collections import Counter

from semiparse.transitions.constituent.systems import check_rooted
from semiparse.transitions.oracles.protocol import GoldTree
from semiparse.treebank.brackets import constituents


class Gold(GoldTree):
    """A gold tree prepared for the oracle: pre-order constituents, their
    spans grouped by start (outer first), repeat numbers of identical ones."""

    def __init__(self, tree):
        check_rooted(tree)
        self.tree = tree
        self.leaves = tree.leaves()
        self.n = n = len(self.leaves)
        self.items = items = constituents(tree)
        self.counts = Counter(items)
        self.labels = sorted({x for x, _, _ in items})
        self.groups_at = [[] for _ in range(n + 1)]  # [(r, ranks)] by start, outer first
        seen = Counter()
        self.repeat = []
        for p, (x, l, r) in enumerate(items):
            if self.groups_at[l] and self.groups_at[l][-1][0] == r:
                self.groups_at[l][-1][1].append(p)
            else:
                self.groups_at[l].append((r, [p]))
            self.repeat.append(seen[items[p]])
            seen[items[p]] += 1
        self.labels_at = [sorted({items[p][0] for _, ranks in groups for p in ranks})
                          for groups in self.groups_at]
        # at_least[l] = number of gold constituents whose left end is >= l
        self.at_least = [0] * (n + 2)
        for l in range(n, -1, -1):
            self.at_least[l] = self.at_least[l + 1] + sum(len(ranks) for _, ranks in self.groups_at[l])

    def __len__(self):
        return len(self.items)


def as_gold(gold):
    return gold if isinstance(gold, Gold) else Gold(gold)

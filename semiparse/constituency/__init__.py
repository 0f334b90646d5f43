"""Top-down and in-order constituent parsing with exact dynamic oracles.

The systems and the oracles' loss follow Fernández-González and
Gómez-Rodríguez 2018 (see docs/references.md).

* :mod:`.trees`: Penn-Treebank bracketed trees (read, clean, write) and their
  labelled-span constituent sets;
* :mod:`.systems`: the two transition systems, configurations, static oracles;
* :mod:`.dynamic`: the dynamic oracles, ``oracle("top_down" | "in_order")``;
* :mod:`.exhaustive`: the minimum loss by memoized search (ground truth);
* :mod:`.evaluation`: labelled bracket P/R/F1 with evalb's conventions.

``semiparse check top_down|in_order`` is
:mod:`semiparse.testing.constituent_checking`.  See ``docs/constituency.md``.
"""
from semiparse.constituency.dynamic import Gold, Oracle, oracle
from semiparse.constituency.evaluation import Scores, evaluate, score
from semiparse.constituency.systems import FINISH, NT, REDUCE, SHIFT, Configuration, Transition, system
from semiparse.constituency.trees import Tree, TreeError, constituents, read_ptb, tree, write_ptb

__all__ = [
    "FINISH", "NT", "REDUCE", "SHIFT", "Configuration", "Gold", "Oracle", "Scores",
    "Transition", "Tree", "TreeError", "constituents", "evaluate", "oracle", "read_ptb",
    "score", "system", "tree", "write_ptb",
]

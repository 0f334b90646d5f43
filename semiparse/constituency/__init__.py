"""Top-down and in-order constituent parsing with exact dynamic oracles.

The systems and the oracles' loss follow Fernández-González and
Gómez-Rodríguez 2018 (see docs/references.md).

The parts live in the layers that own them, and this package is their public
face (the same names as before) with the perceptron parser of :mod:`.train`:

* :mod:`semiparse.treebank.brackets`: Penn-Treebank bracketed trees (read,
  clean, write) and their labelled-span constituent sets;
* :mod:`semiparse.transitions.constituent.systems`: the two transition
  systems (registered beside the dependency ones: ``semiparse.system("top_down")``),
  configurations, static oracles;
* :mod:`semiparse.transitions.constituent.oracle`: the dynamic oracles,
  ``oracle("top_down" | "in_order")``;
* :mod:`semiparse.transitions.constituent.exhaustive`: the minimum loss by
  memoized search (ground truth);
* :mod:`semiparse.treebank.evalb`: labelled bracket P/R/F1 with evalb's conventions.

The previous paths ``semiparse.constituency.trees``, ``.systems``,
``.dynamic``, ``.exhaustive`` and ``.evaluation`` still import for one
release, with a ``DeprecationWarning``.  ``semiparse check top_down|in_order``
runs the generic walk check of :mod:`semiparse.testing.checking` on the trees
of :mod:`semiparse.testing.constituent_checking`.  See ``docs/constituency.md``.
"""
from semiparse.transitions.constituent.oracle import Gold, Oracle, oracle
from semiparse.treebank.evalb import Scores, evaluate, score
from semiparse.transitions.constituent.systems import FINISH, NT, REDUCE, SHIFT, Configuration, Transition, system
from semiparse.treebank.brackets import Tree, TreeError, constituents, read_ptb, tree, write_ptb

__all__ = [
    "FINISH", "NT", "REDUCE", "SHIFT", "Configuration", "Gold", "Oracle", "Scores",
    "Transition", "Tree", "TreeError", "constituents", "evaluate", "oracle", "read_ptb",
    "score", "system", "tree", "write_ptb",
]

"""The constituent transition systems of the oracle family: top-down and
in-order (Fernández-González and Gómez-Rodríguez 2018), registered beside the
dependency systems (``semiparse.system("top_down")``).

* :mod:`.systems`: the two systems, their configurations, static oracles
  (the :class:`~semiparse.transitions.systems.interface.SystemProtocol` of
  the constituent kind);
* :mod:`.gold`: a gold tree prepared once for the oracle and the search;
* :mod:`.oracle`: the exact dynamic oracles (the family's
  :class:`~semiparse.transitions.oracles.protocol.DynamicOracle`);
* :mod:`.exhaustive`: the minimum loss by memoized search (the ground truth
  of ``semiparse check top_down|in_order``).

The trees they build are :mod:`semiparse.treebank.brackets`'s; the public
face, with the perceptron parser, is :mod:`semiparse.constituency`.
"""

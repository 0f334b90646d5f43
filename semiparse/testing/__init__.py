"""What checks semiparse and its users' systems.

- :mod:`~semiparse.testing.strategies`: hypothesis strategies (gold trees,
  computations, configurations, oracle examples, perturbed configurations),
  also importable from here, for users' own tests;
- :mod:`~semiparse.testing.checking`: an oracle against the exhaustive search,
  what ``semiparse check`` runs;
- :mod:`~semiparse.testing.imports`: the package's import layers and cycles.

Names are imported lazily, so that ``python -m semiparse.testing.imports``
needs neither hypothesis nor the rest of the package.
"""
import importlib

_STRATEGIES = ("projective_trees", "any_trees", "gold_trees", "Computation", "computations",
               "perturbed_configurations", "validation_outcome", "configurations", "OracleExample",
               "oracle_examples")

__all__ = list(_STRATEGIES)


def __getattr__(name):
    if name in _STRATEGIES:
        return getattr(importlib.import_module("semiparse.testing.strategies"), name)
    raise AttributeError(f"module 'semiparse.testing' has no attribute {name!r}")

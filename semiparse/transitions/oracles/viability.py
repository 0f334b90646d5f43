"""Which transitions keep a configuration able to finish.

A dead end is a configuration that is not final and from which no final
configuration is reachable (some declared systems have them).  The dynamic
oracle scores a transition -inf exactly when no final configuration is
reachable after it, whatever the gold tree, so one oracle call with any
tree (here every word under the root) tells the viable transitions: the
completion grammar decides it exactly, as ``semiparse check`` verifies
against the exhaustive search.  Parsers ask only after a greedy parse has
reached a dead end, so systems without dead ends pay nothing.
"""
import math

from semiparse.transitions.oracles.oracle import oracle


class Viability:
    """The viable transitions of a system's configurations."""

    def __init__(self, system):
        self.oracle = oracle(system)
        self.needs_arcs = self.oracle.system.needs_arcs
        self._flat = {}

    def names(self, stack, buffer, arcs, n):
        """The transitions after which a final configuration is reachable,
        in a configuration of a sentence of ``n`` words."""
        heads = self._flat.get(n)
        if heads is None:
            heads = self._flat[n] = (-1,) + (0,) * n
        scores = self.oracle.scores(tuple(stack), tuple(buffer), heads,
                                    tuple(arcs) if self.needs_arcs else None)
        return {t for t, v in scores.items() if v > -math.inf}

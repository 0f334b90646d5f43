"""``semiparse.system``: a transition system for users' own training loops.

A :class:`System` wraps a system definition (shipped name, TOML file,
``module:attr`` or system object) with its compiled machine, and makes
:class:`~semiparse.transitions.runtime._configuration.Configuration` objects that a
parser steps through by transition name and that its oracle scores, one at a
time or in batches::

    system = semiparse.system("arc_hybrid")
    oracle = system.oracle()
    config = system.initial(len(words))
    while not config.is_final():
        sigma = oracle.scores(config, gold_heads)
        config = config.apply(max(sigma, key=sigma.get))
"""
from semiparse.transitions.runtime._configuration import Configuration
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.oracles.oracle import Oracle
from semiparse.transitions.systems.loading import load_system


class System:
    """A transition system and its compiled machine (see :func:`system`)."""

    def __init__(self, spec):
        self.definition = load_system(spec)
        self.machine = machine_for(self.definition)

    @property
    def name(self):
        return self.definition.name

    @property
    def transitions(self):
        """Transition names (LR-spine: the families ``left_arc_K``, ``right_arc_K``)."""
        return self.definition.transitions

    def initial(self, n):
        """The initial configuration for a sentence of ``n`` words (an integer
        from 0 to ``Configuration``'s ``MAX_WORDS``; ValueError otherwise)."""
        return Configuration.initial(self.machine, n)

    def oracle(self, strategy="none", method="auto"):
        """The dynamic oracle of this system (see :func:`semiparse.oracle`)."""
        return Oracle(self.definition, strategy, method)

    def __repr__(self):
        return f"<System {self.name}: {', '.join(self.transitions)}>"

    def __reduce__(self):  # the machine is made again from the definition
        return System, (self.definition,)


def system(name_or_path):
    """A :class:`System`: a shipped or registered name, a TOML file, ``module:attr``
    or a system object; ValueError (or a ``SystemFileError`` naming FILE:LINE)
    if it cannot be loaded."""
    return System(name_or_path)

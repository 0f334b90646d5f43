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
from semiparse.transitions.oracles.oracle import Oracle, check_system
from semiparse.transitions.systems.interface import SystemProtocol, TransitionSystem
from semiparse.transitions.systems.loading import load_system
from semiparse.transitions.systems.registry import lookup_oracle


class System(SystemProtocol):
    """A dependency transition system and its compiled machine (see
    :func:`system`): the :class:`SystemProtocol` over
    :class:`Configuration` objects."""

    kind = "dependency"

    def __init__(self, spec):
        self.definition = load_system(spec)
        if not isinstance(self.definition, TransitionSystem):
            raise ValueError(f"{self.definition!r} is a {self.definition.kind} system, not a "
                             f"dependency system to compile: semiparse.system gives it as it is")
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

    def legal(self, config):
        """The names of the transitions that apply to ``config`` (none if final)."""
        return self.validate(config).legal()

    def apply(self, config, t):
        """The configuration after transition ``t`` (a name; ValueError if it
        does not apply)."""
        return self.validate(config).apply(t)

    def is_final(self, config):
        return self.validate(config).is_final()

    def validate(self, config):
        """``config`` if it is a :class:`Configuration` of this system's
        definition, else ValueError."""
        if not isinstance(config, Configuration):
            raise ValueError(f"expected a Configuration of {self.name} (from its initial(n)), "
                             f"got {config!r:.60} ({type(config).__name__})")
        check_system(config, self.definition)
        return config

    def oracle(self, strategy="none", method="auto", max_states=None, **options):
        """The dynamic oracle of this system (see :func:`semiparse.oracle`)."""
        if options:
            raise ValueError(f"unknown options {', '.join(sorted(options))} for the dependency "
                             f"oracle of {self.name!r}: expected strategy, method and "
                             f"max_states")
        return Oracle(self.definition, strategy, method, max_states)

    def __repr__(self):
        return f"<System {self.name}: {', '.join(self.transitions)}>"

    def __reduce__(self):  # the machine is made again from the definition
        return System, (self.definition,)


def system(name_or_path):
    """The system to step through: a shipped or registered name, a TOML file,
    ``module:attr`` or a system object; ValueError (or a ``SystemFileError``
    naming FILE:LINE) if it cannot be loaded.  A dependency definition gives
    a :class:`System` (its compiled machine); a registered system that
    implements :class:`SystemProtocol` itself (``top_down``, ``in_order``)
    is given as it is."""
    found = load_system(name_or_path)
    if isinstance(found, SystemProtocol):
        return found
    return System(found)


def oracle(system, strategy="none", method="auto", **options):
    """The dynamic oracle of ``system`` (as for :func:`system`), by the
    registry: a dependency system's :class:`Oracle` (``strategy``,
    ``method``, ``max_states``), or the one registered with the system
    (``maker(system, strategy, method, **options)``; the constituent
    systems' takes ``chain``)."""
    found = load_system(system)
    if isinstance(found, SystemProtocol):
        maker = lookup_oracle(found)
        if maker is None:
            raise ValueError(f"no oracle is registered with transition system {found.name!r}: "
                             f"register it with register_system(system, oracle=...)")
        return maker(found, strategy, method, **options)
    max_states = options.pop("max_states", None)
    if options:
        raise ValueError(f"unknown options {', '.join(sorted(options))} for the dependency "
                         f"oracle of {system!r}: expected strategy, method and max_states")
    return Oracle(found, strategy, method, max_states)

"""The interface every oracle works through: transition systems and their
configurations.

A configuration is ``(stack, buffer, arcs)``: positions bottom first / front
first, ``arcs[d]`` the head given to ``d`` so far or -1 (``arcs`` may be None
for systems that do not look at it).  Methods return tuples.

Strategies restrict the computations from the configuration ``c`` an oracle
is asked about.  Their meaning, as far as the exhaustive search needs it, is a
bit mask per node of ``c`` (:meth:`TransitionSystem.constraints`):

- ``LBR``: the node takes all its future left children before any future
  right child; ``RBL``: the mirror image;
- ``NO_LEFT`` / ``NO_RIGHT``: the node takes no future left / right child.
"""
from abc import ABC, abstractmethod

from semiparse.heads import int_tuple

LBR, RBL, NO_LEFT, NO_RIGHT = 1, 2, 4, 8
NEG_INF = float("-inf")


def edge_masks(masks, edge):
    """Strategy flags (a tuple, one mask per position) after ``edge`` (head,
    dependent), or None if the edge violates them."""
    h, d = edge
    m = masks[h]
    if not m:
        return masks
    if d < h:  # a left child of h
        if m & NO_LEFT:
            return None
        new = (m | NO_RIGHT) & ~RBL if m & RBL else m
    else:
        if m & NO_RIGHT:
            return None
        new = (m | NO_LEFT) & ~LBR if m & LBR else m
    if new == m:
        return masks
    return masks[:h] + (new,) + masks[h + 1:]


def initial_masks(system, strategy, stack, buffer, arcs, n):
    """The strategy's flags at the configuration the oracle is asked about, or
    None when it restricts nothing."""
    found = system.constraints(strategy, stack, buffer, arcs)
    if not any(found.values()):
        return None
    masks = [0] * (n + 1)
    for x, m in found.items():
        if m & NO_LEFT:
            m &= ~LBR
        if m & NO_RIGHT:
            m &= ~RBL
        masks[x] = m
    return tuple(masks)


def int_configuration(stack, buffer, arcs):
    """``(stack, buffer, arcs)`` as tuples of Python ints (``arcs`` may be None),
    or the ValueError of :func:`int_tuple`."""
    return (int_tuple(stack, "stack must be a sequence of integer positions"),
            int_tuple(buffer, "buffer must be a sequence of integer positions"),
            None if arcs is None else
            int_tuple(arcs, "arcs must be a sequence of integer heads (-1 for none)"))


class SystemProtocol(ABC):
    """What every kind of transition system gives a parser, its oracle and
    ``semiparse check``: configurations to step through.

    ``name``, ``transitions`` (the names of its transitions, or of their
    families), ``kind`` (``"dependency"`` or ``"constituent"``: which family
    of trees, oracles and checks it belongs to) and

    - ``initial(n)``: the initial configuration for ``n`` words;
    - ``legal(config)``: the transitions that apply (none if final);
    - ``apply(config, t)``: the configuration after ``t`` (ValueError if it
      does not apply);
    - ``is_final(config)``;
    - ``validate(config)``: the configuration as this system takes it, or a
      ValueError saying what is wrong.

    Its dynamic oracle (a
    :class:`~semiparse.transitions.oracles.protocol.DynamicOracle`) is
    registered with it (``register_system(system, oracle=maker)``) and
    given by :func:`semiparse.oracle`.

    Implemented by :class:`semiparse.transitions.System` (what
    ``semiparse.system`` gives for a dependency system: configurations of
    the compiled machine) and by the constituent systems
    (:mod:`semiparse.transitions.constituent.systems`).  The registry
    (:func:`semiparse.transitions.register_system`) takes any instance, or a
    dependency definition (:class:`TransitionSystem`), which
    ``semiparse.system`` compiles.
    """

    name = None
    transitions = ()
    kind = None

    @abstractmethod
    def initial(self, n):
        """The initial configuration for ``n`` words."""

    @abstractmethod
    def legal(self, config):
        """The transitions that apply to ``config`` (none if final)."""

    @abstractmethod
    def apply(self, config, t):
        """The configuration after ``t``; ValueError if ``t`` does not apply."""

    @abstractmethod
    def is_final(self, config):
        """Whether ``config`` is final."""

    @abstractmethod
    def validate(self, config):
        """``config`` as this system takes it, or ValueError saying what is wrong."""


class TransitionSystem:
    """Base class of transition systems; subclass it for a system that is not a
    stack/buffer rewrite (and register the instance with
    :func:`semiparse.transitions.register_system`).

    Required: the attributes ``name`` and ``transitions`` (tuple of names)
    and the methods :meth:`initial`, :meth:`legal`, :meth:`apply`,
    :meth:`is_final`, :meth:`validate_slowly` (or :meth:`validate`); an
    optional fast :meth:`accepts` spares the common case the slow path.  The
    exhaustive search and ``semiparse check`` use only these.  A system with
    strategies other than ``"none"`` overrides :meth:`constraints`; a system
    with a completion grammar sets ``grammar`` and overrides
    :meth:`completion` (and :meth:`forbidden` for its strategies); one whose
    oracle searches its computations sets ``completion_kind = "search"``.
    """

    name = None
    transitions = ()
    kind = "dependency"  # what semiparse.system makes of it: a compiled System
    strategies = ("none",)
    grammar = None
    completion_kind = None  # "search": the oracle searches the computations (docs/oracles.md)
    projective_form = False
    needs_arcs = True
    keys_all_heads = False  # the future reads heads off the stack and buffer too
    sets_aside = False  # a transition brings back words set aside (Covington)
    reachable = None  # completion kind "spanning": the arcs each reachable by itself
    own_methods = {}  # oracle methods of this object only: {name: registry.Method}

    @property
    def method_key(self):
        """The name whose registered oracle methods apply to this system (None:
        none of them); a system registered from Python owns its name."""
        return self.name

    def initial(self, n):
        """The initial configuration for ``n`` words: ``(stack, buffer, arcs)``."""
        return (0,), tuple(range(1, n + 1)), (-1,) * (n + 1)

    def legal(self, stack, buffer, arcs):
        """Names of the transitions applicable to the configuration (none if final)."""
        raise NotImplementedError

    def apply(self, stack, buffer, arcs, t):
        """``(stack, buffer, arcs, edge)`` after transition ``t``; ``edge`` is
        ``(head, dependent)`` or None."""
        raise NotImplementedError

    def is_final(self, stack, buffer, arcs):
        raise NotImplementedError

    def final_edges(self, stack, buffer, arcs):
        """``((head, dependent), ...)``: the edges a final configuration adds
        when parsing ends (none by default)."""
        return ()

    def successors(self, stack, buffer, arcs):
        """``[(name, stack, buffer, arcs, edge)]`` for every legal transition."""
        return [(t,) + tuple(self.apply(stack, buffer, arcs, t))
                for t in self.legal(stack, buffer, arcs)]

    def validate(self, stack, buffer, arcs, n):
        """Normalized ``(stack, buffer, arcs)`` for a sentence of ``n`` words, or
        ValueError saying what is wrong.  :meth:`accepts` answers the common
        case at once; anything it does not accept goes to
        :meth:`validate_slowly`, which normalizes it or explains the error."""
        try:
            stack, buffer = tuple(stack), tuple(buffer)
            arcs = None if arcs is None else tuple(arcs)
            if self.accepts(stack, buffer, arcs, n):
                return stack, buffer, arcs if self.needs_arcs else None
        except (TypeError, OverflowError):
            pass
        return self.validate_slowly(stack, buffer, arcs, n)

    def accepts(self, stack, buffer, arcs, n):
        """Fast check of tuples of exact ints (``arcs`` may be None): True only
        where :meth:`validate_slowly` would return them as they are.  The
        default accepts nothing, so every call takes the slow path."""
        return False

    def validate_slowly(self, stack, buffer, arcs, n):
        """:meth:`validate` in Python: normalizes any integer type and says what
        is wrong (the reference for :meth:`accepts`)."""
        raise NotImplementedError

    def constraints(self, strategy, stack, buffer, arcs):
        """``{node: mask}`` of the strategy's restrictions at this configuration."""
        self.check_strategy(strategy)
        return {}

    def search_key(self, stack, buffer, arcs):
        """What the future of a configuration depends on (a memo key)."""
        return stack, buffer, arcs

    def completion(self, stack, buffer, arcs):
        """``(nodes, terminal_ids)`` of the completion-grammar input: one entry
        per string position, node -1 for a virtual position (scores 0)."""
        raise ValueError(f"transition system {self.name!r} has no completion grammar")

    def forbidden(self, strategy, t, stack, buffer, after_stack, after_buffer):
        """``[(node, side)]``: after ``t`` these nodes take no child on ``side``
        ('left' or 'right') in the grammar path under ``strategy``."""
        return []

    def check_strategy(self, strategy):
        if strategy not in self.strategies:
            raise ValueError(f"unknown strategy {strategy!r} for transition system "
                             f"{self.name!r}: expected one of {', '.join(self.strategies)}")

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}: {', '.join(self.transitions)}>"

"""Transition systems declared as data (``systems/*.toml``, see
docs/oracles.md): :class:`RewriteSystem`, the interface of
:mod:`semiparse.transitions.interface` over a system file read by
:mod:`semiparse.transitions.declaration` (its compiled rules, completion and
strategies).  Load one with :func:`semiparse.transitions.loading.load_system`.
"""
import warnings

import numpy as np

from semiparse.heads import find_cycle
from semiparse.transitions import _validation
from semiparse.transitions.completion import describe_kind, first_rule, node_kinds
from semiparse.transitions.declaration import Declaration
from semiparse.transitions.interface import TransitionSystem, int_configuration
from semiparse.transitions.limits import MAX_WORDS
from semiparse.transitions.loops import find_loop, loop_advice
from semiparse.transitions.registry import lookup_system
from semiparse.transitions.system_file import key_line


class RewriteSystem(TransitionSystem):
    """A transition system declared in a TOML file (``systems/*.toml``).

    Build with :func:`~semiparse.transitions.loading.load_system`.  Positions on
    the stack are in sentence order and the buffer holds the positions after
    them up to the end (the root last with ``initial.root = "buffer_end"``;
    checked by :meth:`validate`), as in every system whose transitions only
    push the buffer front, pop and attach (where a transition moves stack
    nodes back into the buffer, the buffer is only in sentence order).
    Unknown keys and values of the wrong type are errors
    (:data:`~semiparse.transitions.system_file.SCHEMA`), so that a misspelt
    key is not ignored.  A system pickles and deep-copies as its definition
    (``loading``).
    """

    compiled_moves = "rewrite"  # the compiled machine runs its rules (_machine.pxd)

    def __init__(self, path, text, data, grammar_text=None, shipped=False, twin=None,
                 grammar_file=None):
        """The system of a system file's text and parsed TOML ``data`` (read
        by :class:`~semiparse.transitions.declaration.Declaration`; its
        completion grammar is ``grammar_text`` or the file ``grammar_file``
        if given).  It is the shipped definition of its name if ``shipped``,
        or if ``twin``, the shipped system of that name, declares the same:
        the oracle methods registered under the name then apply to it."""
        d = self.declaration = Declaration(path, text, data, grammar_text, grammar_file)
        shipped = shipped or (twin is not None and twin.declaration.same_as(d))
        self.path, self.name, self.description = d.path, d.name, d.description
        self.root, self.root_code, self.final_stack = d.root, d.root_code, d.final_stack
        self.transitions, self.static_order, self.not_split = (d.transitions, d.static_order,
                                                               d.not_split)
        self.needs_arcs, self.pops_headed, self.stack_heads = (d.needs_arcs, d.pops_headed,
                                                               d.stack_heads)
        self.buffer_suffix, self.in_order = d.buffer_suffix, d.in_order
        self.buffer_heads = d.buffer_heads
        # what the fast check assumes (accepts): positions up to the end in the buffer,
        # none of them headed, and the stack heads of arc-eager or none
        self._fast_check = (d.buffer_suffix and not d.buffer_heads
                              and d.stack_heads in ("none", "below"))
        self.strategies, self.strategy_descriptions = d.strategies, d.strategy_descriptions
        self._data = d.data  # the parsed TOML
        self._rules = d.rules
        self._rule_of = {r.name: r for r in d.rules}
        self._shipped = shipped
        self.set_completion(d.completion)
        loop = find_loop(self)
        if loop:
            names, (stack, buffer, arcs) = loop
            many = len(names) > 1
            d.fail(f"{'transitions' if many else 'transition'} {', '.join(names)} can loop: "
                   f"from stack {list(stack)} buffer {list(buffer)} arcs {list(arcs)} "
                   f"{'they come' if many else 'it comes'} back to the same configuration"
                   f"{loop_advice(self, names)}",
                   "transition", self.transitions.index(names[0]), "name")
        if d.completion is not None:
            self._check_terminal_rules(d)

    def _check_terminal_rules(self, d):
        """Refuse a kind of node the configurations hold that no completion
        terminal rule matches; warn of a rule that matches none of them (an
        earlier rule matches them first, or no configuration holds them)."""
        completion = d.completion
        kinds = node_kinds(self, completion)
        heads, rules = completion.uses_heads, completion.rules
        for kind, (n, (stack, buffer, arcs)) in kinds.items():
            if first_rule(rules, kind) is None:
                d.fail(f"no completion terminal rule matches {describe_kind(kind, heads)}, which "
                       f"a sentence of {n} word{'' if n == 1 else 's'} reaches (stack "
                       f"{list(stack)} buffer {list(buffer)} arcs {list(arcs)}): add a rule "
                       f"for it", "completion", "terminals")
        used = {first_rule(rules, kind) for kind in kinds}
        if completion.root == "none":
            used.add(first_rule(rules, ("outside", True, False, False)))
        for i, (node, headed, term) in enumerate(rules):
            if i not in used:
                what = node if headed is None else f"{node}, headed = {str(headed).lower()}"
                warnings.warn(f"{d.path}:{key_line(d.text, ('completion', 'terminals', i))}: "
                              f"completion terminal rule {i + 1} ({what}) matches no node "
                              f"that the configurations of sentences of up to 4 words hold: "
                              f"an earlier rule matches them first, or none is there",
                              stacklevel=2)

    def __copy__(self):  # as for any object (pickling, in loading, rebuilds it)
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def set_completion(self, completion):
        """Use ``completion`` (a :class:`~semiparse.transitions.completion.Completion`,
        or None for none) to make the grammar's input."""
        self.completion_spec = completion
        self.grammar = None if completion is None else completion.grammar
        self.grammar_name = None if completion is None else completion.grammar_name
        self.projective_form = completion is not None and completion.projective_form

    @property
    def method_key(self):
        """The name, if this is the shipped definition of that name or the
        system registered under it; else None (see ``loading._build``)."""
        if self._shipped or lookup_system(self.name) is self:
            return self.name
        return None

    @property
    def shipped(self):
        """Whether this is the definition of the shipped file of its name."""
        return self._shipped

    @property
    def text(self):
        """The TOML text of the definition."""
        return self.declaration.text

    @property
    def grammar_text(self):
        """The text of the completion grammar (None without one), as it was
        read when the system was loaded."""
        return None if self.grammar is None else self.completion_spec.text

    def adds_edge(self, t):
        """Whether transition ``t`` adds an edge."""
        return self._rule_of[t].edge is not None

    # -- the interface ------------------------------------------------------------

    def initial(self, n):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_WORDS:
            raise ValueError(f"a sentence's number of words n must be an integer from 0 to "
                             f"{MAX_WORDS}, got {n!r}")
        n = int(n)
        words = tuple(range(1, n + 1))
        if self.root == "stack_bottom":
            return (0,), words, (-1,) * (n + 1)
        return (), words + (0,) if self.root == "buffer_end" else words, (-1,) * (n + 1)

    def is_final(self, stack, buffer, arcs):
        if buffer or self.final_stack == "any":
            return not buffer
        if self.final_stack == "root":
            return len(stack) == 1 and stack[0] == 0  # a list as well as a tuple
        return len(stack) <= 1

    def legal(self, stack, buffer, arcs):
        if self.is_final(stack, buffer, arcs):
            return []
        return [r.name for r in self._rules if r.test(stack, buffer, arcs)]

    def apply(self, stack, buffer, arcs, t):
        r = self._rule_of.get(t)
        if r is None:
            raise ValueError(f"unknown transition {t!r} for {self.name}: expected one of "
                             f"{', '.join(self.transitions)}")
        stack, buffer, arcs = int_configuration(stack, buffer, arcs)
        if arcs is None and self.needs_arcs:
            raise ValueError(f"{self.name} needs arcs (the head of each position or -1)")
        # the positions (the arcs are the oracle's to check: the rules build
        # only what validate accepts, heads where Declaration's invariants
        # allow them and never a cycle, see rules.cycle_edge); n from arcs,
        # else the last position named
        n = len(arcs) - 1 if arcs is not None else max(stack + buffer, default=0)
        self._check_positions(stack, buffer, n)
        if not r.test(stack, buffer, arcs):
            raise ValueError(f"transition {t} is not legal in configuration "
                             f"stack={list(stack)} buffer={list(buffer)}")
        return r.step(stack, buffer, arcs)[1:]

    def successors(self, stack, buffer, arcs):
        """``[(name, stack, buffer, arcs, edge)]`` for every legal transition (the
        inner loop of the searches: no validation, tuples in and out)."""
        if self.is_final(stack, buffer, arcs):
            return []
        return [r.step(stack, buffer, arcs) for r in self._rules if r.test(stack, buffer, arcs)]

    def final_edges(self, stack, buffer, arcs):
        """With ``initial.root = "none"``, the root's edges to the words a final
        configuration leaves headless (they are on the stack: every transition
        that removes a node gives it a head, see ``Declaration.pops_headed``)."""
        if self.root != "none":
            return ()
        return tuple((0, x) for x in stack if arcs is None or arcs[x] < 0)

    def search_key(self, stack, buffer, arcs):
        if not self.needs_arcs:
            return stack, buffer
        # The future reads the heads of the nodes still there only (the rules'
        # requirements, the root's final edges): those of the stack, and of the
        # buffer where one may have a head (the _exhaustive.pyx key likewise).
        return stack, buffer, tuple(map(arcs.__getitem__,
                                        stack + buffer if self.buffer_heads else stack))

    def accepts(self, stack, buffer, arcs, n):
        return (self._fast_check and (arcs is not None or not self.needs_arcs)
                and _validation.accepts(stack, buffer, arcs, n, self.stack_heads == "below",
                                        self.pops_headed, self.root_code))

    def _rank(self, x, n):
        """Where ``x`` stands in the order of the sentence: the root first, or
        after the last word with ``initial.root = "buffer_end"``."""
        return n + 1 if x == 0 and self.root == "buffer_end" else x

    def validate_slowly(self, stack, buffer, arcs, n):
        stack, buffer, arcs = int_configuration(stack, buffer, arcs)
        self._check_positions(stack, buffer, n)
        if arcs is None:
            if self.needs_arcs:
                raise ValueError(f"{self.name} needs arcs: the head given to each position "
                                 f"so far, -1 for none")
            return stack, buffer, None
        if len(arcs) != n + 1:
            raise ValueError(f"arcs has length {len(arcs)}: expected n + 1 = {n + 1}")
        bad = [d for d, h in enumerate(arcs) if not -1 <= h <= n or h == d]
        if bad:
            raise ValueError(f"arcs[{bad[0]}] = {arcs[bad[0]]} is not a head: expected -1 or "
                             f"a position 0..{n} other than {bad[0]}")
        if arcs[0] != -1:
            raise ValueError("arcs[0] must be -1: the root never gets a head")
        for d in buffer:
            if arcs[d] >= 0 and not self.buffer_heads:
                raise ValueError(f"buffer node {d} has head {arcs[d]} in arcs: buffer nodes "
                                 f"have no head in {self.name}")
        for i, d in enumerate(stack):
            h = arcs[d]
            if h >= 0 and self.stack_heads != "any" and (self.stack_heads == "none" or i == 0
                                                         or h != stack[i - 1]):
                expected = ("no stack node has a head" if self.stack_heads == "none" else
                            "a headed stack node's head is the node just below it")
                raise ValueError(f"stack node {d} has head {h} in arcs, but in {self.name} "
                                 f"{expected}")
        if self.pops_headed:
            present = set(stack) | set(buffer)
            for d in range(1, n + 1):
                if arcs[d] < 0 and d not in present:
                    raise ValueError(f"position {d} has left the stack and buffer but has no "
                                     f"head in arcs: {self.name} gives every node it removes "
                                     f"a head")
        cycle = find_cycle(arcs)
        if cycle:
            raise ValueError(f"arcs has a cycle ({' -> '.join(map(str, cycle))}): heads built "
                             f"so far form a forest")
        return stack, buffer, arcs if self.needs_arcs else None

    def _check_positions(self, stack, buffer, n):
        """ValueError unless the stack holds positions in sentence order (the
        root under it when ``initial.root = "stack_bottom"``) and the buffer
        the positions after them up to the end (the root last when it is
        ``"buffer_end"``; where a transition moves stack nodes back into the
        buffer, positions after them in sentence order); nothing but words
        when it is ``"none"``.  Where a transition reorders nodes, only that
        each position is in one place once."""
        if self.root == "stack_bottom" and (not stack or stack[0] != 0):
            raise ValueError(f"stack {list(stack)} must have the root 0 at the bottom")
        bad = [x for x in stack + buffer if not 0 <= x <= n]
        if bad:
            where = "stack" if bad[0] in stack else "buffer"
            raise ValueError(f"{where} {list(stack if where == 'stack' else buffer)}: position "
                             f"{bad[0]} out of range 0..{n}")
        if self.root == "none" and 0 in stack + buffer:
            raise ValueError(f"stack {list(stack)} buffer {list(buffer)}: the root 0 is not a "
                             f"node of {self.name}'s configurations (initial.root = \"none\")")
        if not self.in_order:  # a transition reorders nodes: each is in one place once
            seen = set()
            for x in stack + buffer:
                if x in seen:
                    raise ValueError(f"stack {list(stack)} buffer {list(buffer)}: position {x} "
                                     f"is there twice")
                seen.add(x)
            return
        ranks = [self._rank(x, n) for x in stack]
        for i in range(1, len(stack)):
            if ranks[i - 1] >= ranks[i]:
                a, b = stack[i - 1], stack[i]
                what = "duplicate position" if a == b else "positions out of order"
                raise ValueError(f"stack {list(stack)}: {what} ({a} then {b}); "
                                 f"{self.name} keeps stack positions in sentence order")
        if not buffer:
            return
        last = n + 1 if self.root == "buffer_end" else n
        first = self._rank(buffer[0], n)
        if ranks and first <= ranks[-1]:
            raise ValueError(f"buffer {list(buffer)} must start after the stack top {stack[-1]}")
        order = [self._rank(x, n) for x in buffer]
        if not self.buffer_suffix:  # an unshift leaves out the nodes reduced meanwhile
            if any(a >= b for a, b in zip(order, order[1:])):
                raise ValueError(f"buffer {list(buffer)}: positions out of order or repeated; "
                                 f"{self.name} keeps buffer positions in sentence order")
        elif order != list(range(first, last + 1)):
            expected = f"{buffer[0]}..{n}" + (", then the root 0" if last > n else "")
            raise ValueError(f"buffer {list(buffer)}: it must be the consecutive positions "
                             f"{expected}")

    def constraints(self, strategy, stack, buffer, arcs):
        self.check_strategy(strategy)
        masks = {}
        for role, bit in self.declaration.roles[strategy]:
            nodes = {"root": (0,), "top": stack[-1:], "below_top": stack[:-1],
                     "stack": stack, "buffer": buffer}[role]
            for x in nodes:
                masks[x] = masks.get(x, 0) | bit
        return masks

    def completion(self, stack, buffer, arcs):
        """The completion string (:meth:`Completion.string
        <semiparse.transitions.completion.Completion.string>`)."""
        if self.grammar is None:
            return super().completion(stack, buffer, arcs)
        return self.completion_spec.string(stack, buffer, arcs)

    def forbidden_edges(self, prefix, stack, buffer, arcs):
        """The edges the declared projective form forbids, a boolean matrix
        over the completion string (:meth:`Completion.forbidden_edges
        <semiparse.transitions.completion.Completion.forbidden_edges>`)."""
        return self.completion_spec.forbidden_edges(prefix, stack, buffer, arcs)

    def forbidden(self, strategy, t, stack, buffer, after_stack, after_buffer):
        items = self.declaration.forbid[strategy].get(t)
        if not items:
            return []
        r = self._rule_of[t]
        cut = len(stack) - r.ns
        env = stack[cut:] + buffer[:r.nb]
        out = []
        for node, side in items:
            if node == "stack*":
                out.extend((x, side) for x in stack[:cut])
            elif node == "buffer*":
                out.extend((x, side) for x in buffer[r.nb:])
            else:
                out.append((env[node], side))
        return out

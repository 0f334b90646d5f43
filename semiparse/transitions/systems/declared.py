"""Transition systems declared as data (``systems/*.toml``, docs/oracles.md).

A system file's parsed TOML is read and checked into a :class:`Declaration`
(every mistake a SystemFileError naming the file and line of the entry);
:class:`RewriteSystem` is the system it declares, the interface of
:mod:`semiparse.transitions.systems.interface` over the declaration's
compiled rules, completion and strategies.  Load one with
:func:`semiparse.transitions.systems.loading.load_system`.
"""
import warnings

import numpy as np

from semiparse.heads import find_cycle, tree_tops
from semiparse.transitions.runtime import _validation
from semiparse.transitions.systems.format.completion import (completion_kind, describe_kind,
                                                             first_rule, node_kinds,
                                                             read_completion)
from semiparse.transitions.systems.format.limits import MAX_WORDS
from semiparse.transitions.systems.format.loops import find_loop, loop_advice
from semiparse.transitions.systems.format.rules import (FINAL_STACKS, FORBID, ROLES,
                                                        ROOT_PLACEMENTS, compile_transition,
                                                        cycle_edge, head_not_below,
                                                        headed_on_stack, headed_places, not_split,
                                                        restores, second_head)
from semiparse.errors import SystemFileWarning
from semiparse.transitions.systems.format.spanning import read_reachable
from semiparse.transitions.systems.format.system_file import (SCHEMA, SystemFileError,
                                                              check_schema, key_line)
from semiparse.transitions.systems.interface import (LBR, NO_LEFT, NO_RIGHT, RBL,
                                                     TransitionSystem, int_configuration)
from semiparse.transitions.systems.registry import lookup_system

# strategy keys and the mask bit each sets (semiparse.transitions.systems.interface)
STRATEGY_KEYS = {"left_before_right": LBR, "right_before_left": RBL,
                 "no_left": NO_LEFT, "no_right": NO_RIGHT}


class Declaration:
    """The parts of one declared system, checked: ``name``, ``description``,
    ``root`` (and its C code ``root_code``), ``final_stack``, ``rules`` (one
    compiled :class:`~semiparse.transitions.systems.format.rules.Rule` per transition),
    ``transitions``, ``static_order``, ``not_split``, ``needs_arcs``,
    ``pops_headed``, ``stack_heads``, ``buffer_heads``, ``in_order``,
    ``buffer_suffix``, ``completion_kind`` (``"grammar"``, ``"search"`` or
    None), ``completion`` (a
    :class:`~semiparse.transitions.systems.format.completion.Completion` for a
    grammar, else None), and the
    strategies (``strategies``, ``strategy_descriptions``, ``roles`` and
    ``forbid`` by strategy).  ``path``, ``text`` and ``data`` are the file,
    its text and its parsed TOML; ``grammar_text`` the completion grammar
    recorded with the definition, if any; ``grammar_file`` a completion
    grammar file to read instead of the one the definition names."""

    def __init__(self, path, text, data, grammar_text=None, grammar_file=None):
        self.path, self.text, self.data, self.grammar_text = str(path), text, data, grammar_text
        check_schema(data, SCHEMA, [], self.fail)
        self._read_header(data)
        self._read_rules(data)
        self.completion_kind = completion_kind(data.get("completion"), self.fail)
        self.completion = read_completion(data.get("completion"), self.path, self.root,
                                          self.not_split, grammar_text, self.fail, grammar_file)
        self.reachable = (read_reachable(data["completion"], self.fail)
                          if self.completion_kind == "spanning" else None)
        self._read_strategies(data.get("strategy", {"none": {}}))

    def fail(self, reason, *path):
        """Raise the SystemFileError for the entry at ``path`` (see :func:`key_line`)."""
        raise SystemFileError(f"{self.path}:{key_line(self.text, path)}: {reason}")

    def same_as(self, other):
        """Whether ``other`` declares the same system: the same parsed content
        and completion grammar file."""
        return self.data == other.data and self._grammar_file() == other._grammar_file()

    def _grammar_file(self):
        return self.completion.grammar_file if self.completion is not None else None

    def _read_header(self, d):
        for key in ("name", "final"):
            if key not in d:
                self.fail(f"missing key {key!r}")
        self.name = d["name"]
        if not self.name.isidentifier():
            self.fail(f"name {self.name!r} is not an identifier", "name")
        self.description = d.get("description", "")
        self.root = d.get("initial", {}).get("root", "stack_bottom")
        if self.root not in ROOT_PLACEMENTS:
            self.fail(f"initial.root {self.root!r}: expected one of "
                      f"{', '.join(ROOT_PLACEMENTS)}", "initial", "root")
        self.root_code = ROOT_PLACEMENTS.index(self.root)  # the C code (_state.pxd ROOT_*)
        final = d["final"]
        if final.get("stack") not in FINAL_STACKS or final.get("buffer") != "empty":
            self.fail("final must be { stack = \"root\" | \"one\" | \"any\", "
                      "buffer = \"empty\" }", "final")
        self.final_stack = final["stack"]
        if self.final_stack == "root" and self.root == "none":
            self.fail('final stack = "root", but initial.root = "none": there is no root '
                      'token (use "one" or "any": the words left headless become the root\'s '
                      'children)', "final")

    def _read_rules(self, d):
        """The transitions, the static order and what the rules imply."""
        rules = d.get("transition")
        if not rules:
            self.fail("no [[transition]] tables")
        self.sets_aside = restores(rules)
        self.rules = [compile_transition(r, i, self.root, self.fail, self.sets_aside)
                      for i, r in enumerate(rules)]
        self.transitions = tuple(r.name for r in self.rules)
        dup = next((i for i, t in enumerate(self.transitions) if t in self.transitions[:i]), None)
        if dup is not None:
            self.fail(f"duplicate transition name {self.transitions[dup]!r}",
                      "transition", dup, "name")
        for check in (second_head, cycle_edge):
            found = check(self.rules)
            if found:
                rule, reason = found
                self.fail(reason, "transition", self.rules.index(rule), "name")
        self.not_split = not_split(self.rules)
        order = d.get("static_order", list(self.transitions))
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(self.transitions):
            unknown = [x for x in order if x not in self.transitions] if isinstance(order, list) else []
            self.fail(f"static_order must list each transition once: {list(self.transitions)}"
                      + (f"; {unknown[0]!r} is not one of them" if unknown else ""),
                      "static_order" if "static_order" in d else "name")
        self.static_order = tuple(order)
        # Whether every transition that removes a node gives it a head (or
        # requires one): then every position off the stack and buffer is headed.
        self.pops_headed = all(
            i in r.headed or (r.edge is not None and r.edge[1] == i)
            for r in self.rules
            for i in set(range(len(r.names))) - set(r.stack_after + r.buffer_after))
        # Whether the stack and buffer stay in sentence order: every transition
        # keeps its named nodes in pattern order (stack, then buffer).  And
        # whether the buffer stays the consecutive positions up to the end:
        # no transition moves a stack node into it (an unshift) or keeps any
        # but its last named nodes.  What validate_slowly checks depends on both.
        self.in_order = all(list(r.stack_after + r.buffer_after)
                            == sorted(r.stack_after + r.buffer_after) for r in self.rules)
        self.buffer_suffix = self.in_order and all(
            not any(i < r.ns for i in r.buffer_after)
            and list(r.buffer_after) == list(range(r.ns + r.nb - len(r.buffer_after), r.ns + r.nb))
            for r in self.rules)
        if self.root == "none" and not self.pops_headed:
            self.fail('initial.root = "none": every transition that removes a node must give '
                      'it a head (an edge to it, or "has head"), so that the words left '
                      'headless, which become the root\'s children, are on the stack at the '
                      'end', "initial", "root")
        self._read_invariants(d.get("invariants", {}))
        # Whether the oracles read the heads: a rule requires some, or the root's
        # final edges go to the headless stack nodes and a stack node may have one.
        self.needs_arcs = (any(r.headed or r.headless or r.acyclic for r in self.rules)
                           or (self.root == "none" and self.stack_heads != "none"))
        # Whether the future reads the heads of words off the stack and buffer:
        # a cycle test follows the arcs anywhere, and words set aside come back.
        # An edge's dependent is always headless (second_head), so the future
        # reads of the arcs only the tree of each word (search_key).
        self.keys_all_heads = self.sets_aside or any(r.acyclic for r in self.rules)

    def _read_invariants(self, declared):
        """What the rules imply of the heads, which validate and the searches'
        memo keys rely on: ``buffer_heads``, whether a buffer node may have a
        head; ``stack_heads``, "none" where no stack node ever has one,
        "below" where a headed stack node's head is always the node just
        below it, else "any" (rules.headed_on_stack, rules.head_not_below).
        ``invariants.stack_heads``, if given, must follow from them."""
        self.buffer_heads = "buffer" in headed_places(self.rules)
        found = {"none": headed_on_stack(self.rules), "below": head_not_below(self.rules)}
        self.stack_heads = "any" if found["below"] else "below" if found["none"] else "none"
        claim = declared.get("stack_heads")
        if claim is None:
            return
        if claim not in found:
            self.fail(f"invariants.stack_heads {claim!r}: expected 'none' or 'below'",
                      "invariants", "stack_heads")
        if found[claim]:
            self.fail(f"invariants.stack_heads = {claim!r} does not follow from the "
                      f"transitions: {found[claim][1]}", "invariants", "stack_heads")

    def _read_strategies(self, table):
        if "none" not in table:
            self.fail("[strategy.none] must be declared", "strategy")
        self.strategies = tuple(table)
        self.strategy_descriptions, self.roles, self.forbid = {}, {}, {}
        rule_of = {r.name: r for r in self.rules}
        for sname, spec in table.items():
            at = ("strategy", sname)
            self.strategy_descriptions[sname] = spec.get("description", "")
            roles = []
            for key, bit in STRATEGY_KEYS.items():
                for role in spec.get(key, []):
                    if role not in ROLES:
                        self.fail(f"strategy {sname}: {key} role {role!r}: "
                                  f"expected one of {', '.join(ROLES)}", *at, key)
                    roles.append((role, bit))
            self.roles[sname] = roles
            forbid = {}
            for tname, items in spec.get("forbid", {}).items():
                if tname not in rule_of:
                    self.fail(f"strategy {sname}: forbid names unknown transition {tname!r}: "
                              f"expected one of {', '.join(self.transitions)}",
                              *at, "forbid", tname)
                rule = rule_of[tname]
                kept = {rule.names[i]: i for i in rule.stack_after + rule.buffer_after}
                out = []
                for item in items:
                    m = FORBID.match(item)
                    if not m:
                        self.fail(f"strategy {sname}: bad forbid {item!r}: "
                                  "expected 'NODE left|right'", *at, "forbid", tname)
                    node, side = m.groups()
                    if node not in kept and node not in ("stack*", "buffer*"):
                        self.fail(f"strategy {sname}: forbid {item!r}: {node} is not in the "
                                  f"configuration after {tname} (expected one of "
                                  f"{', '.join(list(kept) + ['stack*', 'buffer*'])})",
                                  *at, "forbid", tname)
                    out.append((kept.get(node, node), side))
                forbid[tname] = out
            self.forbid[sname] = forbid



class RewriteSystem(TransitionSystem):
    """A transition system declared in a TOML file (``systems/*.toml``).

    Build with :func:`~semiparse.transitions.systems.loading.load_system`.  Positions on
    the stack are in sentence order and the buffer holds the positions after
    them up to the end (the root last with ``initial.root = "buffer_end"``;
    checked by :meth:`validate`), as in every system whose transitions only
    push the buffer front, pop and attach (where a transition moves stack
    nodes back into the buffer, the buffer is only in sentence order).
    Unknown keys and values of the wrong type are errors
    (:data:`~semiparse.transitions.systems.format.system_file.SCHEMA`), so that a misspelt
    key is not ignored.  A system pickles and deep-copies as its definition
    (``loading``).
    """

    compiled_moves = "rewrite"  # the compiled machine runs its rules (_machine.pxd)

    def __init__(self, path, text, data, grammar_text=None, shipped=False, twin=None,
                 grammar_file=None):
        """The system of a system file's text and parsed TOML ``data`` (read
        by :class:`~semiparse.transitions.systems.declared.Declaration`; its
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
        self.buffer_heads, self.keys_all_heads = d.buffer_heads, d.keys_all_heads
        # a transition brings back the words set aside (Covington's list λ2)
        self.sets_aside = d.sets_aside
        # "grammar", "search" (an exact search serves the oracle) or None
        self.completion_kind = d.completion_kind
        # "spanning": the arcs each reachable by itself (format/spanning.py)
        self.reachable = d.reachable
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
                              SystemFileWarning, stacklevel=2)

    def __copy__(self):  # as for any object (pickling, in loading, rebuilds it)
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def set_completion(self, completion):
        """Use ``completion`` (a :class:`~semiparse.transitions.systems.format.completion.Completion`,
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
        if self.keys_all_heads:
            return stack, buffer, tree_tops(arcs)
        # The future reads the heads of the nodes still there only (the rules'
        # requirements, the root's final edges): those of the stack, and of the
        # buffer where one may have a head (the _exhaustive.pyx key likewise).
        return stack, buffer, tuple(map(arcs.__getitem__,
                                        stack + buffer if self.buffer_heads else stack))

    def accepts(self, stack, buffer, arcs, n):
        return (self._fast_check and (arcs is not None or not self.needs_arcs)
                and _validation.accepts(stack, buffer, arcs, n, self.stack_heads == "below",
                                        self.pops_headed, self.root_code))

    def set_aside(self, stack, buffer, n):
        """The words set aside (Covington's list λ2, front first): with a
        transition that brings them back (``"..."`` in ``stack_after``), the
        positions between the stack top and the buffer front (the end with
        an empty buffer); else none."""
        if not self.sets_aside:
            return ()
        low = stack[-1] + 1 if stack else 1 if self.root == "none" else 0
        return tuple(range(low, buffer[0] if buffer else n + 1))

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
            if not (self.sets_aside and not stack):  # else the root is set aside
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
        <semiparse.transitions.systems.format.completion.Completion.string>`)."""
        if self.grammar is None:
            return super().completion(stack, buffer, arcs)
        return self.completion_spec.string(stack, buffer, arcs)

    def forbidden_edges(self, prefix, stack, buffer, arcs):
        """The edges the declared projective form forbids, a boolean matrix
        over the completion string (:meth:`Completion.forbidden_edges
        <semiparse.transitions.systems.format.completion.Completion.forbidden_edges>`)."""
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

"""Transition systems declared as data (``systems/*.toml``, see
docs/oracles.md): :class:`RewriteSystem`, the interface of
:mod:`semiparse.transitions.interface` over the compiled rules of
:mod:`semiparse.transitions.rules`, with the system's completion (how a
configuration becomes the input of its grammar) and strategies.  Load one
with :func:`semiparse.transitions.system.load_system`.
"""
import itertools
from pathlib import Path

import numpy as np

from semiparse.transitions import _configs
from semiparse.grammar import Grammar, load_grammar
from semiparse.heads import find_cycle
from semiparse.resources import data_dir
from semiparse.transitions.interface import LBR, NEG_INF, NO_LEFT, NO_RIGHT, RBL, TransitionSystem, int_configuration
from semiparse.transitions.loops import find_loop
from semiparse.transitions.registry import lookup_system
from semiparse.transitions.rules import (FINAL_STACKS, FORBID, ROLES, ROOT_PLACEMENTS, compile_transition, not_split,
                    second_head)
from semiparse.transitions.system_file import SCHEMA, SystemFileError, check_schema, is_file, key_line


class RewriteSystem(TransitionSystem):
    """A transition system declared in a TOML file (``systems/*.toml``).

    Build with :func:`~semiparse.transitions.system.load_system`.  Positions on
    the stack are in sentence order and the buffer holds the positions after
    them up to the end (the root last with ``initial.root = "buffer_end"``;
    checked by :meth:`validate`), as in every system whose transitions only
    push the buffer front, pop and attach.  Unknown keys and values of the
    wrong type are errors (:data:`~semiparse.transitions.system_file.SCHEMA`), so
    that a misspelt key is not ignored.
    """

    _definition = None  # the shipped system this one is (set by system._build)
    compiled_moves = "rewrite"  # the compiled machine runs its rules (_machine.pxd)

    @property
    def method_key(self):
        """The name, if this is the shipped definition of that name or the
        system registered under it; else None (see ``system._build``)."""
        if self._definition == self.name or lookup_system(self.name) is self:
            return self.name
        return None

    @property
    def shipped(self):
        """Whether this is the definition of the shipped file of its name."""
        return self._definition == self.name

    @property
    def text(self):
        """The TOML text of the definition."""
        return self._text

    @property
    def grammar_text(self):
        """The text of the completion grammar (None without one)."""
        if self.grammar is None:
            return None
        if self._given_grammar is None:
            self._given_grammar = self._grammar_file.read_text(encoding="utf-8")
        return self._given_grammar

    def adds_edge(self, t):
        """Whether transition ``t`` adds an edge."""
        return self._rule_of[t].edge is not None

    def __init__(self, path, text, data, grammar_text=None):
        self.path = str(path)
        self._given_grammar = grammar_text
        self._text, self._data = text, data
        check_schema(data, SCHEMA, [], self._fail)
        d = data
        for key in ("name", "final"):
            if key not in d:
                self._fail(f"missing key {key!r}")
        self.name = d["name"]
        if not self.name.isidentifier():
            self._fail(f"name {self.name!r} is not an identifier", "name")
        self.description = d.get("description", "")
        self.root = d.get("initial", {}).get("root", "stack_bottom")
        if self.root not in ROOT_PLACEMENTS:
            self._fail(f"initial.root {self.root!r}: expected one of "
                       f"{', '.join(ROOT_PLACEMENTS)}", "initial", "root")
        self.root_code = ROOT_PLACEMENTS.index(self.root)  # the C code (_state.pxd ROOT_*)
        final = d["final"]
        if final.get("stack") not in FINAL_STACKS or final.get("buffer") != "empty":
            self._fail("final must be { stack = \"root\" | \"one\" | \"any\", "
                       "buffer = \"empty\" }", "final")
        self.final_stack = final["stack"]
        if self.final_stack == "root" and self.root == "none":
            self._fail('final stack = "root", but initial.root = "none": there is no root '
                       'token (use "one" or "any": the words left headless become the root\'s '
                       'children)', "final")
        rules = d.get("transition")
        if not rules:
            self._fail("no [[transition]] tables")
        self._rules = [compile_transition(r, i, self.root, self._fail) for i, r in enumerate(rules)]
        self.transitions = tuple(r.name for r in self._rules)
        dup = next((i for i, t in enumerate(self.transitions) if t in self.transitions[:i]), None)
        if dup is not None:
            self._fail(f"duplicate transition name {self.transitions[dup]!r}",
                       "transition", dup, "name")
        self._rule_of = {r.name: r for r in self._rules}
        overwrite = second_head(self._rules)
        if overwrite:
            rule, reason = overwrite
            self._fail(reason, "transition", self._rules.index(rule), "name")
        self.not_split = not_split(self._rules)
        self.static_order = d.get("static_order", list(self.transitions))
        if (not isinstance(self.static_order, list)
                or sorted(map(str, self.static_order)) != sorted(self.transitions)):
            self._fail(f"static_order must list each transition once: {list(self.transitions)}",
                       "static_order" if "static_order" in d else "name")
        self.static_order = tuple(self.static_order)
        self.needs_arcs = any(r.headed or r.headless for r in self._rules)
        # Whether every transition that removes a node gives it a head (or
        # requires one): then every position off the stack and buffer is headed.
        self.pops_headed = all(
            i in r.headed or (r.edge is not None and r.edge[1] == i)
            for r in self._rules
            for i in set(range(len(r.names))) - set(r.stack_after + r.buffer_after))
        if self.root == "none" and not self.pops_headed:
            self._fail('initial.root = "none": every transition that removes a node must give '
                       'it a head (an edge to it, or "has head"), so that the words left '
                       'headless, which become the root\'s children, are on the stack at the '
                       'end', "initial", "root")
        inv = d.get("invariants", {})
        self.stack_heads = inv.get("stack_heads", "below" if self.needs_arcs else "none")
        if self.stack_heads not in ("none", "below"):
            self._fail(f"invariants.stack_heads {self.stack_heads!r}: expected 'none' or "
                       f"'below'", "invariants", "stack_heads")
        self._load_completion(d.get("completion"))
        self._load_strategies(d.get("strategy", {"none": {}}))
        loop = find_loop(self)
        if loop:
            names, (stack, buffer, arcs) = loop
            many = len(names) > 1
            self._fail(f"{'transitions' if many else 'transition'} {', '.join(names)} can loop: "
                       f"from stack {list(stack)} buffer {list(buffer)} arcs {list(arcs)} "
                       f"{'they come' if many else 'it comes'} back to the same configuration",
                       "transition", self.transitions.index(names[0]), "name")

    # -- loading ---------------------------------------------------------------

    def _fail(self, reason, *path):
        """Raise the SystemFileError for the entry at ``path`` (see :func:`key_line`)."""
        raise SystemFileError(f"{self.path}:{key_line(self._text, path)}: {reason}")

    def _load_completion(self, comp):
        self.grammar = self._grammar_file = None
        if comp is None:
            return
        at = ("completion",)
        if self.not_split:
            self._fail(f"a [completion] cannot describe this system: {self.not_split}", *at)
        gname = comp.get("grammar")
        if gname is None:
            self._fail("completion.grammar must name a grammar file", *at)
        local = Path(self.path).parent / gname
        shipped = gname[:-8] if gname.endswith(".grammar") else gname
        if self._given_grammar is not None:  # recorded with the definition (in a model)
            self.grammar = Grammar.from_text(self._given_grammar, f"{self.path} ({gname})")
        elif is_file(local):
            self._grammar_file = local.resolve()
            self.grammar = load_grammar(local)  # a bad grammar names its own file and line
        elif shipped.isidentifier() and is_file(data_dir("grammars") / f"{shipped}.grammar"):
            self._grammar_file = (data_dir("grammars") / f"{shipped}.grammar").resolve()
            self.grammar = load_grammar(shipped)
        else:
            self._fail(f"completion grammar {gname!r} not found next to the system file "
                       f"nor among the shipped grammars", *at, "grammar")
        self.grammar_name = self.grammar.name
        self._prefix = tuple(comp.get("prefix", []))
        rules = comp.get("terminals")
        if not rules:
            self._fail("completion.terminals must be a list of { node, terminal } rules",
                       *at, "terminals")
        self._term_rules = []
        for i, rule in enumerate(rules):
            node, term = rule.get("node"), rule.get("terminal")
            if node not in ROLES:
                self._fail(f"completion terminal rule node {node!r}: expected one of "
                           f"{', '.join(ROLES)}", *at, "terminals", i)
            if term not in self.grammar.terminals:
                self._fail(f"terminal {term!r} is not in grammar {self.grammar.name} "
                           f"(terminals {', '.join(self.grammar.terminals)})",
                           *at, "terminals", i)
            self._term_rules.append((node, rule.get("headed"), term))
        for term in self._prefix:
            if term not in self.grammar.terminals:
                self._fail(f"prefix terminal {term!r} is not in grammar {self.grammar.name} "
                           f"(terminals {', '.join(self.grammar.terminals)})", *at, "prefix")
        ids = self.grammar.terminal_ids
        self._prefix_ids = [int(i) for i in ids(list(self._prefix))] if self._prefix else []
        self._term_ids = [(node, headed, int(ids([t])[0])) for node, headed, t in self._term_rules]
        self._build_terminal_table()
        if self.root == "none" and ("outside", True, False, False) not in self._terminal_table:
            self._fail('initial.root = "none": completion.terminals must give the root a '
                       'terminal ({ node = "root", terminal = ... }): the completion string '
                       'starts with it', *at, "terminals")
        if self.root != "stack_bottom" and "projective" in comp:
            self._fail(f"[completion.projective] describes configurations with the root at the "
                       f"stack bottom, not initial.root = {self.root!r}", *at, "projective")
        self._load_projective_form(comp.get("projective"))

    def _load_projective_form(self, spec):
        """``[completion.projective]``: the completion as the projective grammar
        with forbidden edges (see :meth:`forbid_edges`)."""
        self.projective_form = spec is not None
        if spec is None:
            return
        at = ("completion", "projective")
        roles = ("root", "stack", "headed", "headless", "buffer")
        kinds = ("virtual", "below", "stack", "buffer")
        self._no_left = tuple(spec.get("no_left_children", []))
        bad = [r for r in self._no_left if r not in roles]
        if bad:
            self._fail(f"no_left_children role {bad[0]!r}: expected one of {', '.join(roles)}",
                       *at, "no_left_children")
        self._allowed_heads = {}
        for role, allowed in spec.get("heads", {}).items():
            if role not in roles:
                self._fail(f"heads role {role!r}: expected one of {', '.join(roles)}",
                           *at, "heads", role)
            bad = [k for k in allowed if k not in kinds]
            if bad:
                self._fail(f"heads.{role}: head kind {bad[0]!r}: expected some of "
                           f"{', '.join(kinds)}", *at, "heads", role)
            self._allowed_heads[role] = frozenset(allowed)
        # Tables by dependent role code (0 virtual, 1 buffer, 2 root, 3 headed,
        # 4 headless stack node) and head kind (0 virtual, 1 buffer, 2 stack).
        codes = [(), ("buffer",), ("stack", "root"), ("stack", "headed"), ("stack", "headless")]
        self._head_ok = np.ones((5, 3), bool)
        self._below_ok = np.zeros(5, bool)
        self._no_left_of = np.zeros(5, bool)
        for code, names in enumerate(codes):
            restricted = [self._allowed_heads[r] for r in names if r in self._allowed_heads]
            if restricted:
                allowed = frozenset.intersection(*restricted)
                self._head_ok[code] = [k in allowed for k in ("virtual", "buffer", "stack")]
                self._below_ok[code] = "below" in allowed
            self._no_left_of[code] = any(r in self._no_left for r in names)

    def _load_strategies(self, table):
        if "none" not in table:
            self._fail("[strategy.none] must be declared", "strategy")
        self.strategies = tuple(table)
        self.strategy_descriptions = {}
        self._roles, self._forbid = {}, {}
        keys = {"left_before_right": LBR, "right_before_left": RBL,
                "no_left": NO_LEFT, "no_right": NO_RIGHT}
        for sname, spec in table.items():
            at = ("strategy", sname)
            self.strategy_descriptions[sname] = spec.get("description", "")
            roles = []
            for key, bit in keys.items():
                for role in spec.get(key, []):
                    if role not in ROLES:
                        self._fail(f"strategy {sname}: {key} role {role!r}: "
                                   f"expected one of {', '.join(ROLES)}", *at, key)
                    roles.append((role, bit))
            self._roles[sname] = roles
            forbid = {}
            for tname, items in spec.get("forbid", {}).items():
                if tname not in self._rule_of:
                    self._fail(f"strategy {sname}: forbid names unknown transition {tname!r}: "
                               f"expected one of {', '.join(self.transitions)}",
                               *at, "forbid", tname)
                rule = self._rule_of[tname]
                kept = {rule.names[i]: i for i in rule.stack_after + rule.buffer_after}
                out = []
                for item in items:
                    m = FORBID.match(item)
                    if not m:
                        self._fail(f"strategy {sname}: bad forbid {item!r}: "
                                   "expected 'NODE left|right'", *at, "forbid", tname)
                    node, side = m.groups()
                    if node not in kept and node not in ("stack*", "buffer*"):
                        self._fail(f"strategy {sname}: forbid {item!r}: {node} is not in the "
                                   f"configuration after {tname} (expected one of "
                                   f"{', '.join(list(kept) + ['stack*', 'buffer*'])})",
                                   *at, "forbid", tname)
                    out.append((kept.get(node, node), side))
                forbid[tname] = out
            self._forbid[sname] = forbid

    # -- the interface ------------------------------------------------------------

    def initial(self, n):
        words = tuple(range(1, n + 1))
        if self.root == "stack_bottom":
            return (0,), words, (-1,) * (n + 1)
        return (), words + (0,) if self.root == "buffer_end" else words, (-1,) * (n + 1)

    def is_final(self, stack, buffer, arcs):
        if buffer or self.final_stack == "any":
            return not buffer
        return stack == (0,) if self.final_stack == "root" else len(stack) <= 1

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
        that removes a node gives it a head, see :meth:`_load_completion`)."""
        if self.root != "none":
            return ()
        return tuple((0, x) for x in stack if arcs is None or arcs[x] < 0)

    def search_key(self, stack, buffer, arcs):
        if not self.needs_arcs:
            return stack, buffer
        # A stack node's head, if any, is fixed by the stack (the node below it).
        return stack, buffer, tuple(map(arcs.__getitem__, stack))

    def accepts(self, stack, buffer, arcs, n):
        return (arcs is not None or not self.needs_arcs) and _configs.accepts(
            stack, buffer, arcs, n, self.stack_heads == "below", self.pops_headed,
            self.root_code)

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
            if arcs[d] >= 0:
                raise ValueError(f"buffer node {d} has head {arcs[d]} in arcs: buffer nodes "
                                 f"have no head in {self.name}")
        for i, d in enumerate(stack):
            h = arcs[d]
            if h >= 0 and (self.stack_heads == "none" or i == 0 or h != stack[i - 1]):
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
        ``"buffer_end"``); nothing but words when it is ``"none"``."""
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
        if [self._rank(x, n) for x in buffer] != list(range(first, last + 1)):
            expected = f"{buffer[0]}..{n}" + (", then the root 0" if last > n else "")
            raise ValueError(f"buffer {list(buffer)}: it must be the consecutive positions "
                             f"{expected}")

    def constraints(self, strategy, stack, buffer, arcs):
        self.check_strategy(strategy)
        masks = {}
        for role, bit in self._roles[strategy]:
            nodes = {"root": (0,), "top": stack[-1:], "below_top": stack[:-1],
                     "stack": stack, "buffer": buffer}[role]
            for x in nodes:
                masks[x] = masks.get(x, 0) | bit
        return masks

    def _build_terminal_table(self):
        """Terminal id of a node by (where: stack, buffer or outside (the root
        with ``initial.root = "none"``), is root, is top, headed): the first
        matching completion rule, or None."""
        table = {}
        for where, is_root, is_top, headed in itertools.product(
                ("stack", "buffer", "outside"), (False, True), (False, True), (False, True)):
            on_stack = where == "stack"
            for node, want_headed, tid in self._term_ids:
                hit = {"root": is_root, "top": on_stack and is_top,
                       "below_top": on_stack and not is_top, "stack": on_stack,
                       "buffer": where == "buffer"}[node]
                if hit and (want_headed is None or want_headed == headed):
                    table[where, is_root, is_top, headed] = tid
                    break
        self._terminal_table = table
        self._uses_heads = any(h is not None for _, h, _ in self._term_ids)

    def completion(self, stack, buffer, arcs):
        """The completion string: the ``prefix`` virtual nodes, the root when
        ``initial.root = "none"`` (it is in no configuration, but heads the
        words that end headless), the stack bottom first, then the buffer."""
        if self.grammar is None:
            return super().completion(stack, buffer, arcs)
        table, top = self._terminal_table, len(stack) - 1
        heads = arcs is not None and self._uses_heads
        try:
            ids = self._prefix_ids + [
                table["stack", x == 0, i == top, heads and arcs[x] >= 0]
                for i, x in enumerate(stack)]
            ids += [table["buffer", x == 0, False, False] for x in buffer]
            outside = [table["outside", True, False, False]] if self.root == "none" else []
        except KeyError:
            raise ValueError(f"{self.path}: no completion terminal rule matches a node of "
                             f"stack={list(stack)} buffer={list(buffer)}") from None
        k = len(self._prefix)
        return ([-1] * k + [0] * len(outside) + list(stack) + list(buffer),
                ids[:k] + outside + ids[k:])

    def forbid_edges(self, w, prefix, stack, buffer, arcs):
        """Set to -inf, in the weights ``w`` of the completion string (``prefix``
        virtual positions, then stack, then buffer), the edges the declared
        projective form forbids: left edges of ``no_left_children`` roles and
        edges into a node from heads its roles do not allow (a node with
        several roles gets the intersection)."""
        k = len(stack)
        m = prefix + k + len(buffer)
        role = np.empty(m, dtype=np.intp)  # dependent roles, see _load_projective_form
        role[:prefix] = 0
        role[prefix + k:] = 1
        st = role[prefix:prefix + k]
        st[:] = 4
        if arcs is not None:
            st[[arcs[x] >= 0 for x in stack]] = 3
        if stack and stack[0] == 0:
            st[0] = 2
        kind = np.minimum(role, 2)  # as a head: 0 virtual, 1 buffer, 2 stack
        forbid = ~self._head_ok[role[None, :], kind[:, None]]
        pos = np.arange(prefix + 1, prefix + k)
        forbid[pos - 1, pos] &= ~self._below_ok[role[pos]]
        forbid |= self._no_left_of[role][:, None] & (np.arange(m)[None, :] < np.arange(m)[:, None])
        w[forbid] = NEG_INF

    def forbidden(self, strategy, t, stack, buffer, after_stack, after_buffer):
        items = self._forbid[strategy].get(t)
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

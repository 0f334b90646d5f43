"""A system file's parsed TOML read and checked into what a declared system
runs (:class:`Declaration`); every mistake is a SystemFileError naming the
file and line of the entry (docs/oracles.md)."""
from semiparse.transitions.completion import read_completion
from semiparse.transitions.interface import LBR, NO_LEFT, NO_RIGHT, RBL
from semiparse.transitions.rules import (FINAL_STACKS, FORBID, ROLES, ROOT_PLACEMENTS,
                                         compile_transition, cycle_edge, head_not_below,
                                         headed_on_stack, headed_places, not_split,
                                         second_head)
from semiparse.transitions.system_file import SCHEMA, SystemFileError, check_schema, key_line

# strategy keys and the mask bit each sets (semiparse.transitions.interface)
STRATEGY_KEYS = {"left_before_right": LBR, "right_before_left": RBL,
                 "no_left": NO_LEFT, "no_right": NO_RIGHT}


class Declaration:
    """The parts of one declared system, checked: ``name``, ``description``,
    ``root`` (and its C code ``root_code``), ``final_stack``, ``rules`` (one
    compiled :class:`~semiparse.transitions.rules.Rule` per transition),
    ``transitions``, ``static_order``, ``not_split``, ``needs_arcs``,
    ``pops_headed``, ``stack_heads``, ``buffer_heads``, ``in_order``,
    ``buffer_suffix``, ``completion`` (a
    :class:`~semiparse.transitions.completion.Completion` or None), and the
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
        self.completion = read_completion(data.get("completion"), self.path, self.root,
                                          self.not_split, grammar_text, self.fail, grammar_file)
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
        self.rules = [compile_transition(r, i, self.root, self.fail) for i, r in enumerate(rules)]
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
        self.needs_arcs = (any(r.headed or r.headless for r in self.rules)
                           or (self.root == "none" and self.stack_heads != "none"))

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

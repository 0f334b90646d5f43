"""Transition systems declared as data (``systems/*.toml``, see
docs/oracles.md): the file schema, the loader and the rewrite rules, which
run as small generated Python functions in the oracles' searches and as the
compiled machine (:mod:`semiparse.oracles._machine`) in training and parsing.
The interface they implement is :mod:`semiparse.oracles.interface`.
"""
import itertools
import operator
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

import numpy as np

from . import _configs
from ..grammar import Grammar, load_grammar
from ..heads import find_cycle, int_tuple
from ..resources import data_dir
from .grammar_path import MASKED_MIN_SIZE, masked_method
from .interface import LBR, NEG_INF, NO_LEFT, NO_RIGHT, RBL, TransitionSystem, int_configuration
from .loops import find_loop
from .registry import Method, lookup_system, register_method, registered_systems

ROLES = ("root", "top", "below_top", "stack", "buffer")
# Where the root (position 0) is in the initial configuration: under the
# stack (stack [0], buffer 1..n), at the end of the buffer (stack [], buffer
# 1..n 0; Ballesteros and Nivre 2013), or nowhere (stack [], buffer 1..n; the
# words left headless in the final configuration become the root's children).
ROOT_PLACEMENTS = ("stack_bottom", "buffer_end", "none")
# Final configurations: the buffer is empty and the stack holds any nodes,
# only the root, or one node (none for an empty sentence).
FINAL_STACKS = ("any", "root", "one")


# -- systems declared as stack/buffer rewrites -----------------------------------

_REQUIRE = re.compile(r"^\s*(\w+)\s*(?:(!=)\s*root|(==)\s*root|(has head)|(has no head))\s*$")
_REQUIRE_BUFFER_EMPTY = re.compile(r"^\s*buffer\s+empty\s*$")
_REQUIRE_STACK_SIZE = re.compile(r"^\s*stack\s+size\s*>=\s*(\d+)\s*$")
_REQUIRE_FORMS = "'X != root', 'X == root', 'X has head', 'X has no head', 'buffer empty' or 'stack size >= K'"
_EDGE = re.compile(r"^\s*(\w+)\s*->\s*(\w+)\s*$")
_FORBID = re.compile(r"^\s*(\w+\*?)\s+(left|right)\s*$")


class _Rule:
    """One rewrite, compiled to two Python functions (generated source, so the
    searches run no interpretive loop): ``test(stack, buffer, arcs)`` and
    ``step(stack, buffer, arcs) -> (name, stack, buffer, arcs, edge)``.
    Indices refer to ``names``: the named stack top elements, then the named
    buffer front elements."""

    __slots__ = ("name", "ns", "nb", "not_root", "is_root", "headed", "headless",
                 "buffer_empty", "stack_min", "stack_after", "buffer_after", "edge", "names",
                 "test", "step")

    def __init__(self, name, ns, nb, names):
        self.name, self.ns, self.nb, self.names = name, ns, nb, names
        self.not_root, self.is_root, self.headed, self.headless = [], [], [], []
        self.buffer_empty, self.stack_min = False, ns
        self.stack_after = self.buffer_after = ()
        self.edge = None

    def _ref(self, i):
        return f"stack[{i - self.ns}]" if i < self.ns else f"buffer[{i - self.ns}]"

    def build(self):
        ref = self._ref
        conds = []
        if self.stack_min:
            conds.append(f"len(stack) >= {self.stack_min}")
        if self.nb:
            conds.append(f"len(buffer) >= {self.nb}")
        if self.buffer_empty:
            conds.append("not buffer")
        conds += [f"{ref(i)} != 0" for i in self.not_root]
        conds += [f"{ref(i)} == 0" for i in self.is_root]
        conds += [f"arcs[{ref(i)}] >= 0" for i in self.headed]
        conds += [f"arcs[{ref(i)}] < 0" for i in self.headless]
        rest = f"stack[:{-self.ns}]" if self.ns else "stack"
        top = "".join(f"{ref(i)}, " for i in self.stack_after)
        new_stack = f"{rest} + ({top})" if top else rest
        front = "".join(f"{ref(i)}, " for i in self.buffer_after)
        tail = f"buffer[{self.nb}:]" if self.nb else "buffer"
        new_buffer = f"({front}) + {tail}" if front else tail
        lines = [f"def step(stack, buffer, arcs):"]
        if self.edge is None:
            lines.append(f"    return {self.name!r}, {new_stack}, {new_buffer}, arcs, None")
        else:
            h, d = ref(self.edge[0]), ref(self.edge[1])
            lines += [f"    h, d = {h}, {d}",
                      f"    if arcs is not None:",
                      f"        arcs = arcs[:d] + (h,) + arcs[d + 1:]",
                      f"    return {self.name!r}, {new_stack}, {new_buffer}, arcs, (h, d)"]
        lines.append(f"def test(stack, buffer, arcs):")
        lines.append(f"    return {' and '.join(conds) or 'True'}")
        namespace = {}
        exec("\n".join(lines), namespace)
        self.test, self.step = namespace["test"], namespace["step"]


class SystemFileError(ValueError):
    """A malformed system file; the message starts with ``FILE:LINE:``."""


# The keys a system file may use (docs/oracles.md): a dict is a table of
# these keys, ``[dict]`` an array of such tables, ``{"*": spec}`` a table of
# any keys; a leaf is the value's type, ``[str]`` a list of strings.
_SCHEMA = {
    "name": str,
    "description": str,
    "initial": {"root": str},
    "final": {"stack": str, "buffer": str},
    "static_order": [str],
    "transition": [{"name": str, "stack": [str], "buffer": [str], "require": [str],
                    "stack_after": [str], "buffer_after": [str], "edge": str}],
    "invariants": {"stack_heads": str},
    "completion": {
        "grammar": str, "prefix": [str],
        "terminals": [{"node": str, "terminal": str, "headed": bool}],
        "projective": {"no_left_children": [str], "heads": {"*": [str]}},
    },
    "strategy": {"*": {"description": str, "left_before_right": [str],
                       "right_before_left": [str], "no_left": [str], "no_right": [str],
                       "forbid": {"*": [str]}}},
}
_TYPE_NAMES = {str: "a string", bool: "true or false"}

_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_HEADER_LINE = re.compile(rf"^\s*(\[\[?)\s*({_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*\]")
_KEY_LINE = re.compile(rf"^\s*({_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*=(?!=)")


def _key_parts(dotted):
    return [p.strip("\"'") for p in re.findall(_TOML_KEY, dotted)]


def _element_line(lines, start, index):
    """Line (1-based) of element ``index`` of the inline array whose key is on
    line ``start``, or ``start``."""
    depth = braces = count = 0
    for no in range(start, len(lines) + 1):
        text = re.sub(r'"[^"]*"|\'[^\']*\'', '""', lines[no - 1]).split("#")[0]
        if no == start:
            text = text.split("=", 1)[-1]
        for ch in text:
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth <= 0:
                    return start
            elif ch == "{":
                if depth == 1 and braces == 0:
                    if count == index:
                        return no
                    count += 1
                braces += 1
            elif ch == "}":
                braces -= 1
    return start


def key_line(text, path):
    """Line (1-based) of the entry ``path`` (keys, and indices into arrays of
    tables) of a TOML text: the first table header or ``key =`` line that
    declares the longest prefix of ``path`` (or something under ``path``), or
    1.  tomllib gives no line numbers, so error messages find them here."""
    path = list(path)
    lines = text.splitlines()
    best, best_len, from_key = 1, 0, False
    table, arrays = [], {}
    for no, line in enumerate(lines, 1):
        header = _HEADER_LINE.match(line)
        if header:
            table = _key_parts(header.group(2))
            if header.group(1) == "[[":
                arrays[tuple(table)] = arrays.get(tuple(table), -1) + 1
                table = table + [arrays[tuple(table)]]
            full, is_key = table, False
        else:
            key = _KEY_LINE.match(line)
            if not key:
                continue
            full, is_key = table + _key_parts(key.group(1)), True
        common = min(len(full), len(path))
        if common > best_len and path[:common] == full[:common]:
            best, best_len, from_key = no, common, is_key and common == len(full)
    if from_key and best_len < len(path) and isinstance(path[best_len], int):
        return _element_line(lines, best, path[best_len])
    return best


def _check_schema(value, spec, path, fail):
    """Call ``fail(reason, *path)`` for the first key ``spec`` does not know or
    value of the wrong type under ``path``."""
    where = ".".join(str(p) for p in path) or "the file"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            fail(f"{where} must be a table", *path)
        for key, sub in value.items():
            if "*" in spec:
                _check_schema(sub, spec["*"], path + [key], fail)
            elif key not in spec:
                fail(f"unknown key {key!r} in {where}: expected one of {', '.join(spec)}",
                     *path, key)
            else:
                _check_schema(sub, spec[key], path + [key], fail)
    elif isinstance(spec, list):
        (item,) = spec
        if not isinstance(value, list):
            what = "an array of tables" if isinstance(item, dict) else "a list of strings"
            fail(f"{where} must be {what}", *path)
        for i, sub in enumerate(value):
            _check_schema(sub, item, path + [i], fail)
    elif not isinstance(value, spec):
        where = where if not isinstance(path[-1], int) else f"each entry of {where[:-2]}"
        fail(f"{where} must be {_TYPE_NAMES[spec]}, got {value!r}", *path)


class RewriteSystem(TransitionSystem):
    """A transition system declared in a TOML file (``systems/*.toml``).

    Build with :func:`load_system`.  Positions on the stack are increasing and
    the buffer is a suffix ``j..n`` of the sentence (checked by
    :meth:`validate`), as in every system whose transitions only push the
    buffer front, pop and attach.  Unknown keys and values of the wrong type
    are errors (:data:`_SCHEMA`), so that a misspelt key is not ignored.
    """

    _definition = None  # the shipped system this one is (set by _build)

    @property
    def method_key(self):
        """The name, if this is the shipped definition of that name or the
        system registered under it; else None (see :func:`_build`)."""
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
        _check_schema(data, _SCHEMA, [], self._fail)
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
        self._rules = [self._compile(r, i) for i, r in enumerate(rules)]
        self.transitions = tuple(r.name for r in self._rules)
        dup = next((i for i, t in enumerate(self.transitions) if t in self.transitions[:i]), None)
        if dup is not None:
            self._fail(f"duplicate transition name {self.transitions[dup]!r}",
                       "transition", dup, "name")
        self._rule_of = {r.name: r for r in self._rules}
        self.not_split = _not_split(self._rules)
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

    def _compile(self, r, index):
        at = ("transition", index)
        name = r.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            self._fail(f"transition name {name!r} is not an identifier", *at, "name")

        def fail(reason, key="name"):
            self._fail(f"transition {name}: {reason}", *at, key)

        stack, buffer = r.get("stack", ["*"]), r.get("buffer", ["*"])
        if not (stack and stack[0] == "*" and "*" not in stack[1:]):
            fail('stack pattern must be ["*", names..., top]', "stack")
        if not (buffer and buffer[-1] == "*" and "*" not in buffer[:-1]):
            fail('buffer pattern must be [front, names..., "*"]', "buffer")
        names = stack[1:] + buffer[:-1]
        if len(set(names)) != len(names) or not all(x.isidentifier() for x in names):
            fail(f"pattern names {names} must be distinct identifiers", "stack")
        rule = _Rule(name, len(stack) - 1, len(buffer) - 1, names)
        index = {x: i for i, x in enumerate(names)}

        def idx(x, what):
            if x not in index:
                fail(f"{what} names {x!r}, which is not in the stack or buffer pattern", what)
            return index[x]

        for cond in r.get("require", []):
            m = _REQUIRE.match(cond)
            if _REQUIRE_BUFFER_EMPTY.match(cond):
                rule.buffer_empty = True
            elif _REQUIRE_STACK_SIZE.match(cond):
                rule.stack_min = max(rule.stack_min, int(_REQUIRE_STACK_SIZE.match(cond).group(1)))
            elif m:
                i = idx(m.group(1), "require")
                kind = (rule.not_root if m.group(2) else rule.is_root if m.group(3)
                        else rule.headed if m.group(4) else rule.headless)
                if i not in kind:
                    kind.append(i)
            else:
                fail(f"bad require {cond!r}: expected {_REQUIRE_FORMS}", "require")
        self._check_requirements(rule, fail)
        sa, ba = r.get("stack_after"), r.get("buffer_after")
        if not (sa and sa[0] == "*" and "*" not in sa[1:]):
            fail('stack_after must be ["*", names...]', "stack_after")
        if not (ba and ba[-1] == "*" and "*" not in ba[:-1]):
            fail('buffer_after must be [names..., "*"]', "buffer_after")
        kept = sa[1:] + ba[:-1]
        if len(set(kept)) != len(kept):
            fail(f"stack_after/buffer_after use a name twice: {kept}", "stack_after")
        rule.stack_after = tuple(idx(x, "stack_after") for x in sa[1:])
        rule.buffer_after = tuple(idx(x, "buffer_after") for x in ba[:-1])
        if ("edge" not in r and rule.stack_after == tuple(range(rule.ns))
                and rule.buffer_after == tuple(range(rule.ns, rule.ns + rule.nb))):
            fail("it changes nothing (no edge; the stack and buffer stay as they are), so "
                 "it can be applied forever", "stack_after")
        if "edge" in r:
            m = _EDGE.match(r["edge"])
            if not m or m.group(1) == m.group(2):
                fail(f"bad edge {r['edge']!r}: expected 'HEAD -> DEPENDENT'", "edge")
            rule.edge = (idx(m.group(1), "edge"), idx(m.group(2), "edge"))
            if rule.edge[1] in rule.is_root:
                fail(f"edge {r['edge']!r} makes the root a dependent ({names[rule.edge[1]]} "
                     f"== root): the root never gets a head", "edge")
            if rule.edge[1] not in rule.not_root:  # implied: the root never gets a head
                rule.not_root.append(rule.edge[1])
        rule.build()
        return rule

    def _check_requirements(self, rule, fail):
        """Refuse requirements no configuration can meet (the root never gets a
        head, and sits where ``initial.root`` puts it)."""
        names = rule.names
        for a, b, what in ((rule.not_root, rule.is_root, "!= root and == root"),
                           (rule.headed, rule.headless, "has head and has no head"),
                           (rule.is_root, rule.headed, "== root and has head (the root never "
                                                       "gets a head)")):
            both = sorted(set(a) & set(b))
            if both:
                fail(f"contradictory requirements: {names[both[0]]} {what}", "require")
        if rule.buffer_empty and rule.nb:
            fail(f"contradictory requirements: buffer empty, but the buffer pattern names "
                 f"{', '.join(names[rule.ns:])}", "require")
        if rule.is_root and self.root == "none":
            fail(f"contradictory requirements: {names[rule.is_root[0]]} == root, but "
                 f"initial.root = \"none\": no node is the root", "require")
        if self.root != "stack_bottom":
            return
        in_buffer = [i for i in rule.is_root if i >= rule.ns]
        if in_buffer:
            fail(f"contradictory requirements: {names[in_buffer[0]]} == root, but the root is "
                 f"at the bottom of the stack, never in the buffer", "require")
        for i in rule.is_root:
            if i > 0 or rule.stack_min > rule.ns:
                fail(f"contradictory requirements: {names[i]} == root, but {names[i]} has "
                     f"stack elements below it and the root is the bottom of the stack",
                     "require")

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
        elif _is_file(local):
            self._grammar_file = local.resolve()
            self.grammar = load_grammar(local)  # a bad grammar names its own file and line
        elif shipped.isidentifier() and _is_file(data_dir("grammars") / f"{shipped}.grammar"):
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
                    m = _FORBID.match(item)
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
            ROOT_PLACEMENTS.index(self.root))

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
        for a, b in zip(stack, stack[1:]):
            if self._rank(a, n) >= self._rank(b, n):
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


def _not_split(rules):
    """Why no split grammar can describe the trees a system builds (None if
    nothing says so): the completion grammar of a configuration parses its
    stack and buffer nodes in their order, with projective trees over that
    string, so a transition must keep the nodes it names in their order and
    attach only neighbours (no kept node between the two ends of its edge)."""
    for r in rules:
        kept = list(r.stack_after + r.buffer_after)
        if kept != sorted(kept):
            return (f"transition {r.name} changes the order of "
                    f"{', '.join(r.names[i] for i in kept)}, as swap does, so it builds "
                    f"non-projective trees, which no split grammar derives")
        if r.edge is not None:
            low, high = sorted(r.edge)
            between = [r.names[i] for i in kept if low < i < high]
            if between:
                return (f"transition {r.name} adds the edge {r.names[r.edge[0]]} -> "
                        f"{r.names[r.edge[1]]} over {', '.join(between)}, which stays, as "
                        f"Attardi's arcs to s2 do, so it builds non-projective trees, which no "
                        f"split grammar derives")
    return None


_SYSTEM_CACHE = {}


def _is_file(path):
    """``path.is_file()``, False for names the OS cannot take (e.g. a NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _shipped(name):
    """The shipped system ``systems/NAME.toml`` (loaded once), or None."""
    if name not in _SYSTEM_CACHE:
        path = data_dir("systems") / f"{name}.toml"
        if not (name.isidentifier() and _is_file(path)):
            return None
        _SYSTEM_CACHE[name] = _from_file(path, shipped=True)
    return _SYSTEM_CACHE[name]


_MODULE_ATTR = re.compile(r"^([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)$")


def load_system(spec):
    """A transition system: a registered or shipped name, a TOML path,
    ``module:attr`` (a system object, e.g. a :class:`TransitionSystem` instance,
    found by importing ``module`` and following the dotted ``attr``), or a
    system.  Anything else is a ValueError saying what was expected."""
    if isinstance(spec, TransitionSystem):
        return spec
    if isinstance(getattr(spec, "definition", None), TransitionSystem):  # semiparse.system(...)
        return spec.definition
    text_name = str(spec)
    registered = lookup_system(text_name)
    if registered is not None:
        return registered
    m = _MODULE_ATTR.match(text_name)
    if m and not _is_file(Path(text_name)):
        return _imported(text_name, *m.groups())
    if "/" not in text_name and not text_name.endswith(".toml"):
        system = _shipped(text_name)
        if system is None:
            raise ValueError(f"unknown transition system {text_name!r}: expected one of "
                             f"{', '.join(available_systems())}, a .toml file or module:attr")
        return system
    path = Path(text_name)
    if not _is_file(path):
        raise ValueError(f"no transition system file {text_name!r}")
    return _from_file(path)


def _imported(spec, module, attr):
    """The system object ``attr`` of ``module`` (see :func:`load_system`)."""
    import importlib

    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"transition system {spec!r}: cannot import module {module!r} "
                         f"({exc})") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"transition system {spec!r}: module {module!r} has no "
                             f"attribute {attr!r}")
        obj = getattr(obj, part)
    if not isinstance(obj, TransitionSystem):
        raise ValueError(f"transition system {spec!r}: {attr} is of type {type(obj).__name__}, "
                         f"not a transition system (expected a TransitionSystem instance, e.g. "
                         f"from load_system)")
    return obj


def available_systems():
    """Names of the shipped and registered systems."""
    shipped = [p.name[:-5] for p in data_dir("systems").iterdir() if p.name.endswith(".toml")]
    return sorted(set(shipped) | set(registered_systems()))


def _read_system_file(path):
    """``(text, data)`` of a system file, or SystemFileError with the line."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise SystemFileError(f"{path}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}): "
                              f"system files are UTF-8 text") from None
    return text, _parse_text(text, path)


def _parse_text(text, where):
    """The parsed TOML of a system definition, or SystemFileError ``WHERE:LINE:COL``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = f"{m.group(1)}:{m.group(2)}" if m else str(len(text.splitlines()) or 1)
        raise SystemFileError(f"{where}:{line}: {str(exc).split(' (at ')[0]}") from None


def system_from_text(text, where, grammar_text=None):
    """A declared system rebuilt from its TOML text (e.g. the copy a model
    records); ``where`` names it in error messages.  Its completion grammar is
    ``grammar_text`` if given (the copy recorded with it), else looked for as
    a system file's would be."""
    return _build(where, text, _parse_text(text, where), grammar_text=grammar_text)


def definition_sha256(system):
    """The sha256 (hex) of a declared system's parsed definition, so that
    formatting, comments and key order do not count; None for a system
    written in Python."""
    import hashlib
    import json

    if not isinstance(system, RewriteSystem):
        return None
    normal = json.dumps(system._data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def _from_file(path, shipped=False):
    """Load a system file (see :func:`_build`)."""
    text, data = _read_system_file(path)
    return _build(path, text, data, shipped)


def _build(path, text, data, shipped=False, grammar_text=None):
    """The system of a parsed definition.  Registered oracle methods are bound
    to definitions, never to names alone: a shipped file registers its
    ``projective_masked`` method (exact for every gold tree, rank 90, used by
    ``auto`` from k + m = ``MASKED_MIN_SIZE`` on) and gets every method
    registered under its name; another definition gets them only
    if it is the same (the same parsed content and completion grammar) as the
    shipped file of its name, else only its own ``projective_masked``."""
    system = RewriteSystem(path, text, data, grammar_text)
    twin = None if shipped else _shipped(system.name)
    if shipped or (twin is not None and twin._data == data
                   and twin._grammar_file == system._grammar_file):
        system._definition = system.name
    if system.projective_form:
        if shipped:
            register_method(system.name, "projective_masked", masked_method(system), ("none",),
                            projective_only=False, rank=90, min_size=MASKED_MIN_SIZE)
        elif system.method_key is None:
            system.own_methods = {"projective_masked": Method(
                system.name, "projective_masked", masked_method(system), ("none",), False, 90.0,
                MASKED_MIN_SIZE)}
    return system

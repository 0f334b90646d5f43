"""A declared system's completion: its ``[completion]`` table read and
checked (:func:`read_completion`), and the input of the completion grammar
it makes of a configuration (:class:`Completion`: the string, its terminals,
the edges its projective form forbids)."""
import itertools
from pathlib import Path

import numpy as np

from semiparse.grammar import Grammar, load_grammar_text
from semiparse.resources import data_dir
from semiparse.transitions.systems.format.rules import ROLES
from semiparse.transitions.systems.format.system_file import is_file

# What a [completion] table declares (completion.kind): a split grammar that
# derives the trees reachable from a configuration; the forests over the arcs
# each reachable by itself (format/spanning.py); or an exact search over the
# computations from it (for systems neither describes).
COMPLETION_KINDS = ("grammar", "spanning", "search")

# The roles of [completion.projective] and the kinds of head it allows.
PROJECTIVE_ROLES = ("root", "stack", "headed", "headless", "buffer")
HEAD_KINDS = ("virtual", "below", "stack", "buffer")


class Completion:
    """How configurations of one system become the input of its completion
    grammar.  ``grammar``, ``grammar_name``, ``text`` (read once, with the
    definition: a copy or a pickle of the system has the grammar it was
    loaded with, whatever became of the file); ``grammar_file`` is where it was
    read (None for a grammar recorded with the definition); ``prefix``: the
    virtual nodes' terminals; ``rules``: ``(node, headed, terminal)`` in file
    order; ``projective_form``: whether ``[completion.projective]`` is given;
    ``critical_buffer``: whether the system declares that the buffer nodes
    that are not critical (Nederhof 2019, section 5) may be left out of the
    string where their fragment collapses, each credited one edge
    (``semiparse/transitions/oracles/_grammar_rows.pyx``)."""

    def __init__(self, where, root, grammar, grammar_name, grammar_file, prefix, rules,
                 projective, critical_buffer=False, text=None):
        self.where, self.root, self.text = where, root, text
        self.grammar, self.grammar_name, self.grammar_file = grammar, grammar_name, grammar_file
        self.prefix, self.rules = prefix, rules
        self.critical_buffer = critical_buffer
        ids = grammar.terminal_ids
        self.prefix_ids = [int(i) for i in ids(list(prefix))] if prefix else []
        self.terminal_table = _terminal_table([(node, headed, int(ids([t])[0]))
                                               for node, headed, t in rules])
        self.uses_heads = any(h is not None for _, h, _ in rules)
        self.projective_form = projective is not None
        if projective is not None:
            self._head_ok, self._below_ok, self._no_left_of = projective

    def with_grammar(self, grammar, name, text):
        """The same completion into another grammar (that has its terminals)
        of the given text."""
        return self._copy(grammar, name, self.critical_buffer, text)

    def declaring_critical_buffer(self, declared=True):
        """The same completion with ``critical_buffer`` declared (or not)."""
        return self._copy(self.grammar, self.grammar_name, declared, self.text)

    def _copy(self, grammar, name, critical_buffer, text):
        return Completion(self.where, self.root, grammar, name, self.grammar_file, self.prefix,
                          self.rules,
                          (self._head_ok, self._below_ok, self._no_left_of)
                          if self.projective_form else None, critical_buffer, text)

    def covers_all_nodes(self):
        """Whether a terminal rule matches every kind of node a configuration
        can hold (on the stack: root or not, top or not, headed or not; in
        the buffer: root or not; the root outside with ``initial.root =
        "none"``), so that compiled code may look terminals up unchecked."""
        kinds = [("stack", r, t, h) for r in (False, True) for t in (False, True)
                 for h in (False, True)] + [("buffer", r, False, False) for r in (False, True)]
        if self.root == "none":
            kinds.append(("outside", True, False, False))
        return all(k in self.terminal_table for k in kinds)

    def string(self, stack, buffer, arcs):
        """``(nodes, terminal_ids)``: the ``prefix`` virtual nodes, the root when
        ``initial.root = "none"`` (it is in no configuration, but heads the
        words that end headless), the stack bottom first, then the buffer."""
        table, top = self.terminal_table, len(stack) - 1
        heads = arcs is not None and self.uses_heads
        try:
            ids = self.prefix_ids + [
                table["stack", x == 0, i == top, heads and arcs[x] >= 0]
                for i, x in enumerate(stack)]
            ids += _buffer_ids(table, buffer)
            outside = [table["outside", True, False, False]] if self.root == "none" else []
        except KeyError:
            raise ValueError(f"{self.where}: no completion terminal rule matches a node of "
                             f"stack={list(stack)} buffer={list(buffer)}") from None
        k = len(self.prefix)
        return ([-1] * k + [0] * len(outside) + list(stack) + list(buffer),
                ids[:k] + outside + ids[k:])

    def forbidden_edges(self, prefix, stack, buffer, arcs):
        """Boolean ``(m, m)``: over the completion string (``prefix`` virtual
        positions, then stack, then buffer), the edges ``(head, dependent)``
        the declared projective form forbids: left edges of
        ``no_left_children`` roles and edges into a node from heads its roles
        do not allow (a node with several roles gets the intersection)."""
        k = len(stack)
        m = prefix + k + len(buffer)
        role = np.empty(m, dtype=np.intp)  # dependent role codes, see _projective_tables
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
        return forbid


def node_kinds(system, completion, max_words=4, max_states=20_000):
    """``{kind: (n, (stack, buffer, arcs))}``: each kind of node of the
    terminal table (where, is root, is top, headed) that the configurations
    ``system`` reaches from sentences of up to ``max_words`` words hold,
    with the first such configuration met.  For the loader, which refuses
    a kind no terminal rule matches (every oracle call on a configuration
    that holds one would fail) and warns of a rule that matches none."""
    heads = completion.uses_heads
    found = {}
    for n in range(max_words + 1):
        start = tuple(system.initial(n))
        seen, todo = {start}, [start]
        while todo:
            stack, buffer, arcs = config = todo.pop()
            top = len(stack) - 1
            kinds = [("stack", x == 0, i == top, heads and arcs[x] >= 0)
                     for i, x in enumerate(stack)]
            kinds += [("buffer", x == 0, False, False) for x in buffer]
            for kind in kinds:
                found.setdefault(kind, (n, config))
            for _, *after, _ in system.successors(stack, buffer, arcs):
                after = tuple(after)
                if after not in seen and len(seen) < max_states:
                    seen.add(after)
                    todo.append(after)
    return found


def describe_kind(kind, heads):
    """A kind of node of the terminal table in words (``heads``: whether the
    rules look at heads)."""
    where, is_root, is_top, headed = kind
    what = "the root" if is_root else "a word"
    if where == "buffer":
        return f"{what} in the buffer"
    state = (", with a head" if headed else ", without a head") if heads else ""
    return f"{what} at the stack top{state}" if is_top else f"{what} on the stack below the top{state}"


def _buffer_ids(table, buffer):
    """The terminal ids of the buffer's nodes: one for every word, another
    for the root (the positions are distinct, so it is there at most once);
    KeyError where no rule matches."""
    words = len(buffer) - (0 in buffer)
    ids = [table["buffer", False, False, False]] * words if words else []
    if words < len(buffer):
        ids.insert(buffer.index(0), table["buffer", True, False, False])
    return ids


def _terminal_table(term_ids):
    """Terminal id of a node by (where: stack, buffer or outside (the root
    with ``initial.root = "none"``), is root, is top, headed): the first
    matching completion rule; combinations no rule matches are absent."""
    table = {}
    for kind in itertools.product(("stack", "buffer", "outside"), (False, True), (False, True),
                                  (False, True)):
        rule = first_rule(term_ids, kind)
        if rule is not None:
            table[kind] = term_ids[rule][2]
    return table


def first_rule(rules, kind):
    """The index of the first of the terminal ``rules`` (``(node, headed, _)``)
    that matches a node of ``kind`` (where, is root, is top, headed), or None."""
    where, is_root, is_top, headed = kind
    on_stack = where == "stack"
    for i, (node, want_headed, _) in enumerate(rules):
        hit = {"root": is_root, "top": on_stack and is_top, "below_top": on_stack and not is_top,
               "stack": on_stack, "buffer": where == "buffer"}[node]
        if hit and (want_headed is None or want_headed == headed):
            return i
    return None


def completion_kind(comp, fail):
    """The ``kind`` of a ``[completion]`` table (None without one), checked:
    a ``search`` completion takes no other key."""
    if comp is None:
        return None
    kind = comp.get("kind", "grammar")
    if kind not in COMPLETION_KINDS:
        fail(f"completion.kind {kind!r}: expected one of {', '.join(COMPLETION_KINDS)}",
             "completion", "kind")
    if kind != "spanning" and "reachable" in comp:
        fail('completion.reachable: only a completion of kind "spanning" declares reachable '
             'arcs', "completion", "reachable")
    extra = sorted(set(comp) - {"kind"})
    if kind == "search" and extra:
        fail(f"completion.{extra[0]}: a completion of kind \"search\" has no grammar; the "
             f"oracle searches the computations themselves (docs/oracles.md, \"Completion "
             f"kinds\")", "completion", extra[0])
    extra = sorted(set(extra) - {"reachable"})
    if kind == "spanning" and extra:
        fail(f"completion.{extra[0]}: a completion of kind \"spanning\" has no grammar; it "
             f"declares only its reachable arcs (docs/oracles.md, \"Completion kinds\")",
             "completion", extra[0])
    return kind


def read_completion(comp, path, root, not_split, grammar_text, fail, grammar_file=None):
    """The :class:`Completion` of a ``[completion]`` table (None without one);
    ``fail(reason, *key_path)`` raises for what is wrong.  The grammar is
    ``grammar_text`` if given (recorded with the definition), else the file
    ``grammar_file`` if given (instead of the one the table names, which is
    then not looked for), else the file named next to the system file
    ``path``, else the shipped grammar."""
    if comp is None or completion_kind(comp, fail) != "grammar":
        return None
    at = ("completion",)
    if not_split:
        fail(f"a completion grammar cannot describe this system: {not_split}; declare "
             f"kind = \"search\" in [completion] instead (an exact search over the "
             f"computations, docs/oracles.md)", *at)
    gname = comp.get("grammar")
    if gname is None:
        fail("completion.grammar must name a grammar file", *at)
    local = Path(path).parent / gname
    shipped = gname[:-8] if gname.endswith(".grammar") else gname
    if grammar_text is not None:
        grammar, grammar_file = Grammar.from_text(grammar_text, f"{path} ({gname})"), None
    elif grammar_file is not None:
        grammar, grammar_text = load_grammar_text(grammar_file)  # its errors name the file given
        grammar_file = Path(grammar_file).resolve()
    elif is_file(local):
        grammar_file = local.resolve()
        grammar, grammar_text = load_grammar_text(local)  # a bad grammar names its file and line
    elif shipped.isidentifier() and is_file(data_dir("grammars") / f"{shipped}.grammar"):
        grammar_file = (data_dir("grammars") / f"{shipped}.grammar").resolve()
        grammar, grammar_text = load_grammar_text(shipped)
    elif local.exists():
        fail(f"completion grammar {gname!r} next to the system file is not a regular file",
             *at, "grammar")
    else:
        fail(f"completion grammar {gname!r} not found next to the system file "
             f"nor among the shipped grammars", *at, "grammar")
    prefix = tuple(comp.get("prefix", []))
    rules = comp.get("terminals")
    if not rules:
        fail("completion.terminals must be a list of { node, terminal } rules", *at, "terminals")
    term_rules = []
    for i, rule in enumerate(rules):
        for key in ("node", "terminal"):
            if key not in rule:
                fail(f"completion terminal rule {i + 1} has no {key!r}: each rule is "
                     f"{{ node = ..., terminal = ... }}", *at, "terminals", i)
        node, term = rule.get("node"), rule.get("terminal")
        if node not in ROLES:
            fail(f"completion terminal rule node {node!r}: expected one of {', '.join(ROLES)}",
                 *at, "terminals", i)
        if term not in grammar.terminals:
            fail(f"terminal {term!r} is not in grammar {grammar.name} "
                 f"(terminals {', '.join(grammar.terminals)})", *at, "terminals", i)
        term_rules.append((node, rule.get("headed"), term))
    for term in prefix:
        if term not in grammar.terminals:
            fail(f"prefix terminal {term!r} is not in grammar {grammar.name} "
                 f"(terminals {', '.join(grammar.terminals)})", *at, "prefix")
    if root == "none" and not any(node == "root" and headed is not True
                                  for node, headed, _ in term_rules):
        fail('initial.root = "none": completion.terminals must give the root a '
             'terminal ({ node = "root", terminal = ... }): the completion string '
             'starts with it', *at, "terminals")
    if root != "stack_bottom" and "projective" in comp:
        fail(f"[completion.projective] describes configurations with the root at the "
             f"stack bottom, not initial.root = {root!r}", *at, "projective")
    projective = comp.get("projective")
    return Completion(path, root, grammar, grammar.name, grammar_file, prefix, term_rules,
                      None if projective is None else _projective_tables(projective, fail),
                      comp.get("critical_buffer", False), grammar_text)


def _projective_tables(spec, fail):
    """``[completion.projective]`` as the tables of :meth:`Completion.forbidden_edges`:
    by dependent role code (0 virtual, 1 buffer, 2 root, 3 headed, 4 headless
    stack node), whether a head of each kind (0 virtual, 1 buffer, 2 stack)
    is allowed, whether the node just below is, and whether left children are
    forbidden."""
    at = ("completion", "projective")
    no_left = tuple(spec.get("no_left_children", []))
    bad = [r for r in no_left if r not in PROJECTIVE_ROLES]
    if bad:
        fail(f"no_left_children role {bad[0]!r}: expected one of {', '.join(PROJECTIVE_ROLES)}",
             *at, "no_left_children")
    allowed_heads = {}
    for role, allowed in spec.get("heads", {}).items():
        if role not in PROJECTIVE_ROLES:
            fail(f"heads role {role!r}: expected one of {', '.join(PROJECTIVE_ROLES)}",
                 *at, "heads", role)
        bad = [k for k in allowed if k not in HEAD_KINDS]
        if bad:
            fail(f"heads.{role}: head kind {bad[0]!r}: expected some of "
                 f"{', '.join(HEAD_KINDS)}", *at, "heads", role)
        allowed_heads[role] = frozenset(allowed)
    codes = [(), ("buffer",), ("stack", "root"), ("stack", "headed"), ("stack", "headless")]
    head_ok = np.ones((5, 3), bool)
    below_ok = np.zeros(5, bool)
    no_left_of = np.zeros(5, bool)
    for code, names in enumerate(codes):
        restricted = [allowed_heads[r] for r in names if r in allowed_heads]
        if restricted:
            allowed = frozenset.intersection(*restricted)
            head_ok[code] = [k in allowed for k in ("virtual", "buffer", "stack")]
            below_ok[code] = "below" in allowed
        no_left_of[code] = any(r in no_left for r in names)
    return head_ok, below_ok, no_left_of

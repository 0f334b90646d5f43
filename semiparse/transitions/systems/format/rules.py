"""The transitions of a declared system: each ``[[transition]]`` table
compiled to a :class:`Rule` (checked against the root's placement), which
runs as small generated Python functions in the oracles' searches and is
the program of the compiled machine (:mod:`semiparse.transitions.runtime._machine`)."""
import re

from semiparse.transitions.systems.format.limits import MAX_WORDS

ROLES = ("root", "top", "below_top", "stack", "buffer")
# Where the root (position 0) is in the initial configuration: under the
# stack (stack [0], buffer 1..n), at the end of the buffer (stack [], buffer
# 1..n 0; Ballesteros and Nivre 2013), or nowhere (stack [], buffer 1..n; the
# words left headless in the final configuration become the root's children).
ROOT_PLACEMENTS = ("stack_bottom", "buffer_end", "none")
# Final configurations: the buffer is empty and the stack holds any nodes,
# only the root, or one node (none for an empty sentence).
FINAL_STACKS = ("any", "root", "one")


_REQUIRE = re.compile(r"^\s*(\w+)\s*(?:(!=)\s*root|(==)\s*root|(has head)|(has no head))\s*$")
_REQUIRE_BUFFER_EMPTY = re.compile(r"^\s*buffer\s+empty\s*$")
_REQUIRE_STACK_EMPTY = re.compile(r"^\s*stack\s+empty\s*$")
_REQUIRE_STACK_SIZE = re.compile(r"^\s*stack\s+size\s*(>=|<=|==)\s*([0-9]+)\s*$")
_REQUIRE_ORDER = re.compile(r"^\s*(\w+)\s*([<>])\s*(\w+)\s*$")
_REQUIRE_NO_CYCLE = re.compile(r"^\s*no\s+cycle\s*$")
_REQUIRE_FORMS = ("'X != root', 'X == root', 'X has head', 'X has no head', 'X < Y' (X comes "
                  "before Y in the sentence; also X > Y), 'no cycle' (the edge closes no cycle "
                  "of arcs), 'buffer empty', 'stack empty' or 'stack size >= K' (also <= K, "
                  "== K)")
# In stack_after, right after "*": the words set aside (on neither the stack
# nor the buffer, between the stack top and the buffer front) come back onto
# the stack, in sentence order, before the nodes named after it.
RESTORE = "..."
_EDGE = re.compile(r"^\s*(\w+)\s*->\s*(\w+)\s*$")
FORBID = re.compile(r"^\s*(\w+\*?)\s+(left|right)\s*$")


class Rule:
    """One rewrite, compiled to two Python functions (generated source, so the
    searches run no interpretive loop): ``test(stack, buffer, arcs)`` and
    ``step(stack, buffer, arcs) -> (name, stack, buffer, arcs, edge)``.
    Indices refer to ``names``: the named stack top elements, then the named
    buffer front elements."""

    __slots__ = ("name", "ns", "nb", "not_root", "is_root", "headed", "headless", "before",
                 "acyclic", "buffer_empty", "stack_min", "stack_max", "stack_after", "restore",
                 "first", "buffer_after", "edge", "names", "test", "step")

    def __init__(self, name, ns, nb, names, first=0):
        self.name, self.ns, self.nb, self.names = name, ns, nb, names
        self.first = first  # the first position a restore brings back on an empty stack
        self.acyclic = False  # "no cycle": the edge's dependent is no ancestor of its head
        self.restore = False  # stack_after starts with the words set aside (RESTORE)
        self.not_root, self.is_root, self.headed, self.headless = [], [], [], []
        self.before = []  # (i, j): node i comes before node j in the sentence
        self.buffer_empty, self.stack_min = False, ns
        self.stack_max = None  # no bound; "stack empty", "stack size <= K", a whole-stack pattern
        self.stack_after = self.buffer_after = ()
        self.edge = None

    def _ref(self, i):
        return f"stack[{i - self.ns}]" if i < self.ns else f"buffer[{i - self.ns}]"

    def build(self):
        ref = self._ref
        conds = []
        if self.stack_min:
            conds.append(f"len(stack) >= {self.stack_min}")
        if self.stack_max is not None:
            conds.append(f"len(stack) <= {self.stack_max}")
        if self.nb:
            conds.append(f"len(buffer) >= {self.nb}")
        if self.buffer_empty:
            conds.append("not buffer")
        conds += [f"{ref(i)} != 0" for i in self.not_root]
        conds += [f"{ref(i)} == 0" for i in self.is_root]
        conds += [f"arcs[{ref(i)}] >= 0" for i in self.headed]
        conds += [f"arcs[{ref(i)}] < 0" for i in self.headless]
        conds += [f"{ref(i)} < {ref(j)}" for i, j in self.before]
        if self.acyclic:
            conds.append(f"not reaches(arcs, {ref(self.edge[0])}, {ref(self.edge[1])})")
        rest = f"stack[:{-self.ns}]" if self.ns else "stack"
        top = "".join(f"{ref(i)}, " for i in self.stack_after)
        if self.restore:  # the words between the stack top and the first node named
            rest = (f"{rest} + tuple(range(stack[-1] + 1 if stack else {self.first}, "
                    f"{ref(self.stack_after[0])}))")
        new_stack = f"{rest} + ({top})" if top else rest
        front = "".join(f"{ref(i)}, " for i in self.buffer_after)
        tail = f"buffer[{self.nb}:]" if self.nb else "buffer"
        new_buffer = f"({front}) + {tail}" if front else tail
        lines = ["def step(stack, buffer, arcs):"]
        if self.edge is None:
            lines.append(f"    return {self.name!r}, {new_stack}, {new_buffer}, arcs, None")
        else:
            h, d = ref(self.edge[0]), ref(self.edge[1])
            lines += [f"    h, d = {h}, {d}",
                      "    if arcs is not None:",
                      "        arcs = arcs[:d] + (h,) + arcs[d + 1:]",
                      f"    return {self.name!r}, {new_stack}, {new_buffer}, arcs, (h, d)"]
        lines.append("def test(stack, buffer, arcs):")
        lines.append(f"    return {' and '.join(conds) or 'True'}")
        namespace = {"reaches": reaches}
        exec("\n".join(lines), namespace)
        self.test, self.step = namespace["test"], namespace["step"]


def reaches(arcs, x, y):
    """Whether ``y`` is ``x`` or one of its ancestors under ``arcs`` (a forest)."""
    while x >= 0:
        if x == y:
            return True
        x = arcs[x]
    return False


def restores(tables):
    """Whether one of the raw ``[[transition]]`` tables brings the words set
    aside back onto the stack (``RESTORE`` in its ``stack_after``)."""
    return any(isinstance(r.get("stack_after"), list) and RESTORE in r["stack_after"]
               for r in tables)


def compile_transition(r, index, root, fail_at, sets_aside=False):
    """The :class:`Rule` of the ``index``-th ``[[transition]]`` table ``r``
    of a system whose root is placed by ``root`` (``initial.root``);
    ``fail_at(reason, *path)`` raises the error for the entry at ``path``.
    ``sets_aside``: some transition of the system restores the words set
    aside (:func:`restores`), so that taking the top off the stack without
    an edge, the root included, only sets it aside until then."""
    at = ("transition", index)
    name = r.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        fail_at(f"transition name {name!r} is not an identifier", *at, "name")

    def fail(reason, key="name"):
        fail_at(f"transition {name}: {reason}", *at, key)

    stack, buffer = r.get("stack", ["*"]), r.get("buffer", ["*"])
    # ["*", names..., top]: the top of a stack of any size; [names..., top]
    # without "*": the whole stack ([] the empty stack)
    whole = "*" not in stack
    if not (whole or (stack[0] == "*" and "*" not in stack[1:])):
        fail('stack pattern must be ["*", names..., top], or [names..., top] for the whole '
             'stack', "stack")
    if not (buffer and buffer[-1] == "*" and "*" not in buffer[:-1]):
        fail('buffer pattern must be [front, names..., "*"]', "buffer")
    named = stack if whole else stack[1:]
    names = named + buffer[:-1]
    if len(set(names)) != len(names) or not all(x.isidentifier() for x in names):
        fail(f"pattern names {names} must be distinct identifiers", "stack")
    if "root" in names:  # "x != root" would read as the node, not the root
        fail("pattern name 'root' is reserved: requirements name the root so", "stack")
    rule = Rule(name, len(named), len(buffer) - 1, names, first=1 if root == "none" else 0)
    if whole:
        rule.stack_max = rule.ns
    index = {x: i for i, x in enumerate(names)}

    def idx(x, what):
        if x not in index:
            fail(f"{what} names {x!r}, which is not in the stack or buffer pattern", what)
        return index[x]

    for cond in r.get("require", []):
        if not isinstance(cond, str):
            fail(f"bad require {cond!r}: expected {_REQUIRE_FORMS}", "require")
        m, size = _REQUIRE.match(cond), _REQUIRE_STACK_SIZE.match(cond)
        order = _REQUIRE_ORDER.match(cond)
        if order:
            a, op, b = order.groups()
            pair = (idx(a, "require"), idx(b, "require"))
            if pair[0] == pair[1]:
                fail(f"bad require {cond!r}: a node never comes before itself", "require")
            pair = pair if op == "<" else pair[::-1]
            if pair[::-1] in rule.before:
                fail(f"contradictory requirements: {names[pair[1]]} < {names[pair[0]]} and "
                     f"{names[pair[0]]} < {names[pair[1]]}", "require")
            if pair not in rule.before:
                rule.before.append(pair)
        elif _REQUIRE_NO_CYCLE.match(cond):
            rule.acyclic = True
        elif _REQUIRE_BUFFER_EMPTY.match(cond):
            rule.buffer_empty = True
        elif _REQUIRE_STACK_EMPTY.match(cond) or size:
            op, k = (size.group(1), int(size.group(2))) if size else ("==", 0)
            if k > MAX_WORDS + 1:
                fail(f"bad require {cond!r}: a stack holds at most {MAX_WORDS + 1} nodes (the "
                     f"words of the longest sentence and the root)", "require")
            if op in (">=", "=="):
                rule.stack_min = max(rule.stack_min, k)
            if op in ("<=", "=="):
                rule.stack_max = k if rule.stack_max is None else min(rule.stack_max, k)
        elif m:
            i = idx(m.group(1), "require")
            kind = (rule.not_root if m.group(2) else rule.is_root if m.group(3)
                    else rule.headed if m.group(4) else rule.headless)
            if i not in kind:
                kind.append(i)
        else:
            fail(f"bad require {cond!r}: expected {_REQUIRE_FORMS}", "require")
    _check_requirements(rule, root, fail)
    sa, ba = r.get("stack_after"), r.get("buffer_after")
    if sa is None or ba is None:
        fail(f"{'stack_after' if sa is None else 'buffer_after'} is missing: a transition says "
             f"what the stack and the buffer hold after it (stack_after = [\"*\", names...], "
             f"buffer_after = [names..., \"*\"])", "name")
    if RESTORE in sa:
        _read_restore(rule, stack, buffer, sa, root, fail)
        sa = [x for x in sa if x != RESTORE]
    # Without "*", stack_after (buffer_after) says that the stack (buffer)
    # after is exactly the nodes named: only where the rest under (behind) the
    # pattern is empty, else it would drop nodes the rule does not name.
    sa_whole, ba_whole = "*" not in sa, "*" not in ba
    if not (sa_whole or (sa[0] == "*" and "*" not in sa[1:])):
        fail('stack_after must be ["*", names...], or [names...] for the whole stack',
             "stack_after")
    if not (ba_whole or (ba[-1] == "*" and "*" not in ba[:-1])):
        fail('buffer_after must be [names..., "*"], or [names...] for the whole buffer',
             "buffer_after")
    if sa_whole and not (rule.stack_max is not None and rule.stack_max <= rule.ns):
        fail(f'stack_after = {_toml_list(sa)} without "*" says the stack after holds exactly '
             f'{_names_or_nothing(sa)}, but the stack pattern {_toml_list(stack)} matches a '
             f'stack with more nodes under them, which the rule would drop: write '
             f'{_toml_list(["*"] + sa)}, or match the whole stack (a stack pattern without "*", '
             f'or require "stack size == {rule.ns}")', "stack_after")
    if ba_whole and not rule.buffer_empty:
        fail(f'buffer_after = {_toml_list(ba)} without "*" says the buffer after holds exactly '
             f'{_names_or_nothing(ba)}, but the buffer pattern {_toml_list(buffer)} matches a '
             f'buffer with more nodes behind them, which the rule would drop: write '
             f'{_toml_list(ba + ["*"])}, or require "buffer empty"', "buffer_after")
    sa = sa if not sa_whole else ["*"] + sa
    ba = ba if not ba_whole else ba + ["*"]
    kept = sa[1:] + ba[:-1]
    if len(set(kept)) != len(kept):
        fail(f"stack_after/buffer_after use a name twice: {kept}", "stack_after")
    rule.stack_after = tuple(idx(x, "stack_after") for x in sa[1:])
    rule.buffer_after = tuple(idx(x, "buffer_after") for x in ba[:-1])
    if ("edge" not in r and rule.stack_after == tuple(range(rule.ns))
            and rule.buffer_after == tuple(range(rule.ns, rule.ns + rule.nb))):
        fail("it changes nothing (no edge; the stack and buffer stay as they are), so "
             "it can be applied forever", "stack_after")
    dropped = set(range(len(names))) - set(rule.stack_after + rule.buffer_after)
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
    if rule.acyclic and rule.edge is None:
        fail('require "no cycle" speaks of the edge, and the transition adds none', "require")
    if root != "none":
        for i in sorted(dropped):
            if sets_aside and _sets_aside(rule, i):
                continue  # the root comes back with the words set aside
            if i not in rule.not_root and i not in rule.headed:
                fail(f"it removes {names[i]}, which may be the root (its edge does not make "
                     f"{names[i]} a dependent and nothing requires \"{names[i]} != root\"): "
                     f"the root never leaves the configuration", "stack_after")
    rule.build()
    return rule


def _read_restore(rule, stack, buffer, sa, root, fail):
    """Read ``RESTORE`` in ``stack_after``: only as ``["*", "...", b, ...]``
    with ``b`` the buffer front and a stack pattern that names no node
    (Covington's shift), so that the words set aside are the positions
    between the stack top and ``b``, and come back in the sentence's order."""
    if not (sa.count(RESTORE) == 1 and len(sa) > 2 and sa[:2] == ["*", RESTORE]
            and stack == ["*"] and rule.nb and sa[2] == buffer[0]):
        fail(f'stack_after = {_toml_list(sa)}: "{RESTORE}" (the words set aside come back) '
             f'is written ["*", "{RESTORE}", FRONT, ...], with FRONT the buffer front\'s name '
             f'and the stack pattern ["*"] (as Covington\'s shift: stack_after = ["*", '
             f'"{RESTORE}", "b"])', "stack_after")
    if root == "buffer_end":
        fail(f'"{RESTORE}" brings back the positions between the stack top and the buffer '
             f'front, and with initial.root = "buffer_end" the root 0 is not among them in the '
             f'sentence\'s order: place the root "stack_bottom" or "none"', "stack_after")
    rule.restore = True


def _sets_aside(rule, i):
    """Whether ``rule`` takes named stack node ``i`` off the top of the stack
    (every stack node it keeps was below it): it then lies between the stack
    top and the buffer front, set aside for a restore."""
    return i < rule.ns and all(j < i for j in rule.stack_after if j < rule.ns)


def _toml_list(names):
    """A list of strings as a system file writes it."""
    return "[" + ", ".join(f'"{x}"' for x in names) + "]"


def _names_or_nothing(names):
    return ", ".join(names) if names else "nothing"


def _check_requirements(rule, root, fail):
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
    if rule.stack_max is not None and rule.stack_max < rule.stack_min:
        fail(f"contradictory requirements: the stack holds at least {rule.stack_min} and at "
             f"most {rule.stack_max} nodes", "require")
    if rule.is_root and root == "none":
        fail(f"contradictory requirements: {names[rule.is_root[0]]} == root, but "
             f"initial.root = \"none\": no node is the root", "require")
    if root != "stack_bottom":
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


def not_split(rules):
    """Why no split grammar can describe the trees a system builds (None if
    nothing says so): the completion grammar of a configuration parses its
    stack and buffer nodes in their order, with projective trees over that
    string, so a transition must keep the nodes it names in their order and
    attach only neighbours (no kept node between the two ends of its edge)."""
    for r in rules:
        if r.restore:
            return (f"transition {r.name} brings back words set aside, which edges from the "
                    f"nodes around them have crossed, so it builds non-projective trees, "
                    f"which no split grammar derives")
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


def headed_places(rules):
    """Where a node that already has a head can be: ``{"stack": (rule,
    node), "buffer": (rule, node), "gone": (rule, node)}`` (gone: off the
    stack and buffer), each place with the rule and the index of the node it
    was first found to put there headed; a place left out provably never
    holds a headed node.

    Read from the rules alone, as a fixed point: at first no node has a
    head; the dependent of an edge has one afterwards; a node a rule keeps
    may have one if the place it came from may hold one, unless the rule
    requires it headless or to be the root (which never gets a head); nodes
    the patterns do not name stay where they are; a restore puts the words
    set aside, which may be headed if a gone one may be, onto the stack."""
    places = {}
    changed = True
    while changed:
        changed = False
        for r in rules:
            dropped = set(range(len(r.names))) - set(r.stack_after + r.buffer_after)
            for place, kept in (("stack", r.stack_after), ("buffer", r.buffer_after),
                                ("gone", dropped)):
                for i in kept:
                    headed = (r.edge is not None and r.edge[1] == i) or may_have_head(r, i, places)
                    if headed and place not in places:
                        places[place] = (r, i)
                        changed = True
            if r.restore and "gone" in places and "stack" not in places:
                places["stack"] = places["gone"]  # a word set aside with a head comes back
                changed = True
    return places


def may_have_head(rule, i, places):
    """Whether node ``i`` of ``rule`` may have a head when the rule applies,
    given the :func:`headed_places` ``places``."""
    if i in rule.headless or i in rule.is_root:
        return False
    return ("stack" if i < rule.ns else "buffer") in places


def second_head(rules):
    """``(rule, reason)`` for the first rule whose edge may give a node that
    already has a head a second one (the non-monotonic arc-eager of
    Honnibal, Goldberg and Johnson 2013 does so on purpose), or None.  The
    oracles count gold edges as if every edge stayed, so such a system is
    refused until it is supported exactly."""
    places = headed_places(rules)
    for r in rules:
        if r.edge is None or not may_have_head(r, r.edge[1], places):
            continue
        d = r.names[r.edge[1]]
        place = "stack" if r.edge[1] < r.ns else "buffer"
        by, node = places[place]
        what = ("the dependent of its edge" if by.edge is not None and by.edge[1] == node
                else f"{by.names[node]}, which may have a head,")
        return r, (f"transition {r.name} can give a word that already has a head a new one: "
                   f"{d} (the dependent of its edge {r.names[r.edge[0]]} -> {d}) may have a "
                   f"head, because transition {by.name} puts {what} "
                   f"{'on the stack' if place == 'stack' else 'in the buffer'}.  Overwriting a "
                   f"head (non-monotonic parsing, Honnibal, Goldberg and Johnson 2013) is not "
                   f"supported: add require \"{d} has no head\"")
    return None


# The places of a node and of a proper ancestor of it (see descents), and the
# ancestor's side of the node in the stack, bottom first, then the buffer.
_PLACE_WORDS = {"stack": "on the stack", "buffer": "in the buffer"}
_SIDE_WORDS = {("stack", "before"): "below it", ("stack", "after"): "above it",
               ("buffer", "before"): "in front of it", ("buffer", "after"): "behind it"}


def _layout(rule, after):
    """``{node: (place, rank)}`` of the nodes ``rule`` sees, before it
    applies or ``after``: its named nodes (by index), the unnamed rest of the
    stack and of the buffer (``"stack*"``, ``"buffer*"``; left out where a
    requirement empties it) and the nodes no longer on either (``"gone"``,
    place ``"gone"``, with the nodes the rule removes), ranked in the order
    of the stack, bottom first, then the buffer."""
    stack = rule.stack_after if after else range(rule.ns)
    buffer = rule.buffer_after if after else range(rule.ns, rule.ns + rule.nb)
    out = {i: ("gone", None) for i in range(len(rule.names))}
    out["gone"] = ("gone", None)
    if rule.stack_max is None or rule.stack_max > rule.ns:
        out["stack*"] = ("stack", -1)
    out.update((i, ("stack", k)) for k, i in enumerate(stack))
    out.update((i, ("buffer", len(stack) + k)) for k, i in enumerate(buffer))
    if not rule.buffer_empty:
        out["buffer*"] = ("buffer", len(rule.names))
    return out


def _sides(layout, x, y):
    """The sides of node ``x`` that node ``y`` may be on: None for a node
    that is gone; both for two nodes of an unnamed rest (``x == y``)."""
    (_, rx), (py, ry) = layout[x], layout[y]
    if py == "gone":
        return (None,)
    return ("before", "after") if x == y else ("before",) if ry < rx else ("after",)


def _may_descend(rule, x, y, layout, found):
    """Whether node ``x``, not gone, may be a proper descendant of node ``y``
    (nodes of the ``layout`` before ``rule`` applies), given the
    :func:`descents` ``found``."""
    if x in rule.headless or x in rule.is_root:
        return False
    return any((layout[x][0], layout[y][0], side) in found for side in _sides(layout, x, y))


def _may_apply(rule, layout, found):
    """Whether every node ``rule`` requires to have a head may have one (a
    proper ancestor), given the :func:`descents` ``found``."""
    headed = {key[0] for key in found}
    return all(layout[i][0] in headed for i in rule.headed)


def descents(rules):
    """Where a node may have a proper ancestor (through any chain of arcs):
    a dict from ``(place, ancestor's place, side)`` to the rule that first
    leaves such a node on the stack or in the buffer.  The ancestor's place
    is ``"gone"`` for a node no longer on either, side None; else side is
    ``"before"`` or ``"after"`` the node in the stack, bottom first, then
    the buffer.  A key left out never occurs.

    Read from the rules alone, as a fixed point like :func:`headed_places`:
    at first no node has a head; a rule applies only if each node it
    requires to have a head may have an ancestor; its edge makes its
    dependent and the dependent's descendants descendants of its head and
    the head's ancestors; a node keeps its ancestors wherever the rule puts
    it, unless the rule requires it headless or to be the root; the nodes
    the patterns do not name keep their order."""
    found = {}
    changed = True
    while changed:
        changed = False
        for r in rules:
            before, after = _layout(r, False), _layout(r, True)
            if not _may_apply(r, before, found):
                continue
            h, d = r.edge if r.edge is not None else (None, None)
            for x, (px, _) in after.items():
                if px == "gone":
                    continue
                under = h is not None and (x == d or _may_descend(r, x, d, before, found))
                for y, (py, _) in after.items():
                    linked = under and (y == h or _may_descend(r, h, y, before, found))
                    if x == y and not (linked and isinstance(x, str)):
                        continue  # a named node, or a rest whose ancestors stay
                    if linked or _may_descend(r, x, y, before, found):
                        for side in _sides(after, x, y):
                            if (px, py, side) not in found:
                                found[px, py, side] = r
                                changed = True
    return found


def cycle_edge(rules):
    """``(rule, reason)`` for the first rule whose edge may close a cycle of
    arcs: its head may be a descendant of its dependent (see
    :func:`descents`), and it does not require "no cycle"; or None.  Its
    head then has a head, so requiring that it has none is a fix too.  With
    a restore, :func:`descents` does not follow the words set aside: every
    edge must then require "no cycle" or a headless head."""
    if any(r.restore for r in rules):
        # words set aside come back between nodes the edges have already
        # joined: only a run-time test keeps them from closing a cycle
        for r in rules:
            if r.edge is not None and not r.acyclic and r.edge[0] not in r.headless:
                head, dep = (r.names[i] for i in r.edge)
                return r, (f"transition {r.name}: its edge {head} -> {dep} can close a cycle of "
                           f"arcs: transition {next(x.name for x in rules if x.restore)} brings "
                           f"back words set aside, so {head} may be a descendant of {dep}.  "
                           f"Arcs must form trees: require \"no cycle\" (tested on the arcs "
                           f"when the transition applies, as Covington's systems do)")
        return None
    found = descents(rules)
    for r in rules:
        if r.edge is None or r.acyclic:
            continue
        h, d = r.edge
        layout = _layout(r, False)
        if not (_may_apply(r, layout, found) and _may_descend(r, h, d, layout, found)):
            continue
        (ph, _), (pd, _) = layout[h], layout[d]
        (side,) = _sides(layout, h, d)
        where = (f"{_SIDE_WORDS[pd, side]} " if pd == ph else "") + _PLACE_WORDS[pd]
        head, dep = r.names[h], r.names[d]
        return r, (f"transition {r.name}: its edge {head} -> {dep} can close a cycle of arcs: "
                   f"{head} may be a descendant of {dep}, because transition "
                   f"{found[ph, pd, side].name} can leave a node {_PLACE_WORDS[ph]} with an "
                   f"ancestor {where}.  Arcs must form trees: require \"no cycle\" (tested on "
                   f"the arcs when the transition applies, as Covington's systems do), or "
                   f"\"{head} has no head\", which rules the edge out whenever {head} has a "
                   f"head")
    return None


def headed_on_stack(rules):
    """``(rule, reason)`` for the first rule that may leave a node with a head
    on the stack (see :func:`headed_places`), or None: then no stack node
    ever has a head (arc-standard, arc-hybrid)."""
    found = headed_places(rules).get("stack")
    if found is None:
        return None
    r, i = found
    x = r.names[i]
    what = (f"the dependent of its edge {r.names[r.edge[0]]} -> {x}"
            if r.edge is not None and r.edge[1] == i else "which may have a head in the buffer")
    return r, f"transition {r.name} can leave a node with a head on the stack: {x}, {what}"


def head_not_below(rules):
    """``(rule, reason)`` for the first rule that may leave a stack node with a
    head other than the node directly below it, or None: then a headed stack
    node's head is always the node directly below it (arc-eager, whose
    right_arc pushes the buffer front onto its head).

    Sound by induction over computations: it holds at first (no node has a
    head), and every rule keeps it.  A rule changes only the nodes its
    patterns name, at the top of the stack: the rest of the stack under them
    keeps its nodes, their order and their heads (an edge heads a named
    node).  So a rule keeps it if each node it leaves on the stack that may
    have a head afterwards ends directly above that head: the dependent of
    its edge above the edge's head; a stack node that may already have a
    head (:func:`may_have_head`, from the fixed point of
    :func:`headed_places`) above the node that was below it, its head (the
    named node below it, or for the lowest named node the top of the rest);
    and no buffer node that may have a head (that head may be anywhere).
    The lowest node of a whole-stack pattern has none below it, so no head."""
    places = headed_places(rules)
    for r in rules:
        rest = r.stack_max is None or r.stack_max > r.ns  # unnamed nodes may be under the pattern
        for j, i in enumerate(r.stack_after):
            under = r.stack_after[j - 1] if j else None  # None: the top of the rest
            x = r.names[i]
            if r.edge is not None and r.edge[1] == i:
                if under == r.edge[0]:
                    continue
                why = f"{x}, the dependent of its edge {r.names[r.edge[0]]} -> {x},"
            elif not may_have_head(r, i, places):
                continue
            elif i >= r.ns:
                why = f"{x}, which may have a head in the buffer,"
            elif under == (i - 1 if i else None) or (i == 0 and not rest):
                continue
            else:
                head = r.names[i - 1] if i else "the top of the rest of the stack"
                why = f"{x}, which may have a head, the node below it ({head}),"
            return r, (f"transition {r.name} can leave a stack node whose head is not the node "
                       f"just below it: {why} ends {_above(r, under, rest)}")
    return None


def _above(rule, i, rest):
    """Where a stack node is: above named node ``i`` of ``rule``, or (``i``
    None) above the top of the stack under its pattern, if any."""
    if i is not None:
        return f"above {rule.names[i]}"
    return "above the rest of the stack" if rest else "at the stack bottom"

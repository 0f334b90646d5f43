"""Split grammars: the DSL, its checks, and the integer tables the engines use.

A grammar file holds a ``start`` declaration and rules of the four forms of a
split grammar (Nederhof 2019, section 3), alternatives separated by ``|`` and
``#`` starting a comment::

    start S
    (S, S) -> s            # terminal s starts in left state S, right state S
    S -> (S, S)            # left state S + right state S finish a constituent S
    (S, _) -> S (S, _)     # left state S takes a left child S, stays in S
    (_, S) -> (_, S) S     # right state S takes a right child S, stays in S

Left states, right states and constituents are three name spaces (the same
name may be used in each); terminals are a fourth.  The file is parsed with
lark into a tree, turned into rules by a transformer, and checked as a whole
before a :class:`Grammar` exists, so a bad file never loads partially.
"""
import os
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from lark import Lark, Transformer, v_args
from lark.exceptions import UnexpectedInput, VisitError

from semiparse.resources import data_dir
from semiparse.errors import GrammarError, GrammarWarning

_DSL = r"""
    start: statement*
    ?statement: "start" NAME                                  -> start_decl
              | pair "->" NAME ("|" NAME)*                     -> preterminal
              | NAME "->" pair ("|" pair)*                     -> finish
              | "(" NAME "," "_" ")" "->" left_rhs ("|" left_rhs)*     -> left_rule
              | "(" "_" "," NAME ")" "->" right_rhs ("|" right_rhs)*   -> right_rule
    pair: "(" NAME "," NAME ")"
    left_rhs: NAME "(" NAME "," "_" ")"
    right_rhs: "(" "_" "," NAME ")" NAME
    NAME: /[A-Za-z0-9][A-Za-z0-9_'.]*/
    COMMENT: /#[^\n]*/
    %import common.WS
    %ignore WS
    %ignore COMMENT
"""

_PARSER = Lark(_DSL, parser="lalr", propagate_positions=True)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'.]*")  # NAME of the DSL


@dataclass(frozen=True)
class Rule:
    """One rule; ``form`` is preterminal, finish, left or right.

    preterminal ``(a, b) -> t``: symbols (a, b, t);
    finish ``A -> (b, c)``: (A, b, c);
    left ``(b2, _) -> A (b, _)``: (b2, A, b);
    right ``(_, c2) -> (_, c) A``: (c2, c, A).
    """

    form: str
    symbols: tuple
    line: int = field(default=None, compare=False)
    column: int = field(default=None, compare=False)

    def __str__(self):
        s = self.symbols
        return {
            "preterminal": f"({s[0]}, {s[1]}) -> {s[2]}",
            "finish": f"{s[0]} -> ({s[1]}, {s[2]})",
            "left": f"({s[0]}, _) -> {s[1]} ({s[2]}, _)",
            "right": f"(_, {s[0]}) -> (_, {s[1]}) {s[2]}",
        }[self.form]


class _ToRules(Transformer):
    """lark tree -> list of ('start', name, pos) and Rule objects."""

    @staticmethod
    def _pos(tok):
        return tok.line, tok.column

    def start(self, items):
        return [r for item in items for r in item]

    @v_args(inline=True)
    def pair(self, b, c):
        return (b, c, self._pos(b))

    @v_args(inline=True)
    def left_rhs(self, a, b):
        return (a, b)

    @v_args(inline=True)
    def right_rhs(self, c, a):
        return (c, a)

    @v_args(inline=True)
    def start_decl(self, name):
        return [("start", str(name), self._pos(name))]

    def preterminal(self, items):
        (b, c, _), terms = items[0], items[1:]
        return [Rule("preterminal", (str(b), str(c), str(t)), *self._pos(t)) for t in terms]

    def finish(self, items):
        """One rule per alternative, each at its own pair (the first at the
        constituent's name)."""
        a = items[0]
        return [Rule("finish", (str(a), str(b), str(c)), *(self._pos(a) if i == 0 else pos))
                for i, (b, c, pos) in enumerate(items[1:])]

    def left_rule(self, items):
        b2 = items[0]
        return [Rule("left", (str(b2), str(a), str(b)), *self._pos(a)) for a, b in items[1:]]

    def right_rule(self, items):
        c2 = items[0]
        return [Rule("right", (str(c2), str(c), str(a)), *self._pos(a)) for c, a in items[1:]]


@dataclass(frozen=True)
class Tables:
    """A grammar compiled to integer arrays for the chart engines.

    ``term_left[t], term_right[t]``: initial states of terminal t.
    ``left_combos`` rows ``(B2, Bd, B, Cd)``: a head in left state B takes a
    left child that finished in states (Bd, Cd) and moves to B2 (one row per
    left rule and finish rule of the child's constituent: rows are
    derivation steps, so duplicates are kept).  ``right_combos`` rows
    ``(C2, C, Bd, Cd)`` likewise.  ``root`` rows ``(B, C)``: finish rules of
    the start symbol.  ``pairs`` rows ``(B, C, needs_left, needs_right)``:
    the (left state of head, right state of child) combinations whose
    attachment items the engines must build.
    """

    n_left: int
    n_right: int
    term_left: np.ndarray
    term_right: np.ndarray
    left_combos: np.ndarray
    right_combos: np.ndarray
    root: np.ndarray
    pairs: np.ndarray


class Grammar:
    """A checked split grammar.  Build with :func:`load_grammar` or :meth:`from_text`."""

    def __init__(self, rules, start, name="<string>"):
        self.name = name
        self.start = start
        self.rules = tuple(rules)
        self.terminals = {r.symbols[2]: r.symbols[:2] for r in self.rules if r.form == "preterminal"}
        self.left_states = _ordered(
            [r.symbols[0] for r in self.rules if r.form == "preterminal"]
            + [r.symbols[0] for r in self.rules if r.form == "left"]
        )
        self.right_states = _ordered(
            [r.symbols[1] for r in self.rules if r.form == "preterminal"]
            + [r.symbols[0] for r in self.rules if r.form == "right"]
        )
        self.constituents = _ordered([r.symbols[0] for r in self.rules if r.form == "finish"])

    @classmethod
    def from_text(cls, text, name="<string>"):
        """Parse and check grammar text; raises :class:`GrammarError`.  Line
        ends are those of :func:`plain_text`."""
        if not isinstance(text, str):
            raise ValueError(f"text must be the grammar's text (a string), got {type(text).__name__}")
        text = plain_text(text)
        try:
            items = _ToRules().transform(_PARSER.parse(text))
        except UnexpectedInput as exc:
            reason, line, column = _syntax_error(exc, text)
            raise GrammarError(reason, name, line, column) from None
        except VisitError as exc:  # pragma: no cover - the transformer does not raise
            raise GrammarError(str(exc.orig_exc), name) from None
        starts = [item for item in items if isinstance(item, tuple)]
        rules = [item for item in items if isinstance(item, Rule)]
        # whole-file problems (no start, no terminals) are reported at the last line
        last_line = text.count("\n") + (not text.endswith("\n"))
        start = _check(rules, starts, name, last_line)
        return cls(rules, start, name)

    # -- views -------------------------------------------------------------

    def rules_of(self, form):
        return [r for r in self.rules if r.form == form]

    def terminal_ids(self, terminals):
        """Indices of a terminal string or sequence; ValueError on unknown ones."""
        if isinstance(terminals, str):
            terminals = list(terminals)
        index = self._terminal_index
        try:
            return np.fromiter((index[t] for t in terminals), dtype=np.intc, count=len(terminals))
        except KeyError as exc:
            raise ValueError(
                f"terminal {exc.args[0]!r} is not in grammar {self.name}: expected one of "
                f"{', '.join(sorted(self.terminals))}"
            ) from None
        except TypeError:  # no sequence, or an unhashable name
            raise ValueError(f"terminals must be a string or a sequence of terminal names, "
                             f"got {terminals!r:.80}") from None

    def encode(self, terminals):
        """``(ids, left_states, right_states)`` arrays for an input, cached for strings."""
        key = terminals if isinstance(terminals, str) else None
        hit = self._encoded.get(key) if key is not None else None
        if hit is None:
            ids = self.terminal_ids(terminals)
            hit = (ids, self.tables.term_left[ids], self.tables.term_right[ids])
            if key is not None:
                if len(self._encoded) >= 4096:
                    self._encoded.clear()
                self._encoded[key] = hit
        return hit

    @cached_property
    def _encoded(self):
        return {}

    @cached_property
    def _terminal_index(self):
        return {t: i for i, t in enumerate(self.terminals)}

    @cached_property
    def tables(self):
        """The grammar as integer :class:`Tables` (computed once)."""
        li = {b: i for i, b in enumerate(self.left_states)}
        ri = {c: i for i, c in enumerate(self.right_states)}
        fin = {}
        for r in self.rules_of("finish"):
            a, b, c = r.symbols
            fin.setdefault(a, []).append((li[b], ri[c]))
        left = [(li[b2], bd, li[b], cd) for r in self.rules_of("left")
                for (b2, a, b) in [r.symbols] for bd, cd in fin[a]]
        right = [(ri[c2], ri[c], bd, cd) for r in self.rules_of("right")
                 for (c2, c, a) in [r.symbols] for bd, cd in fin[a]]
        need_left = {(b, cd) for (_, _, b, cd) in left}
        need_right = {(bd, c) for (_, c, bd, _) in right}
        pairs = [(b, c, int((b, c) in need_left), int((b, c) in need_right))
                 for (b, c) in sorted(need_left | need_right)]
        terms = list(self.terminals.values())

        def arr(rows, width):
            return np.array(rows, dtype=np.intc).reshape(len(rows), width)

        return Tables(
            n_left=len(self.left_states),
            n_right=len(self.right_states),
            term_left=np.array([li[b] for b, _ in terms], dtype=np.intc),
            term_right=np.array([ri[c] for _, c in terms], dtype=np.intc),
            left_combos=arr(left, 4),
            right_combos=arr(right, 4),
            root=arr(fin.get(self.start, []), 2),
            pairs=arr(pairs, 4),
        )

    @cached_property
    def mirrored(self):
        """The grammar of the reversed strings: every rule with its left and
        right sides swapped (a left rule becomes a right rule, a state pair
        ``(b, c)`` becomes ``(c, b)``).  Its derivations of a reversed string
        are this grammar's derivations of the string, mirrored, with the same
        edges; the whole string is then headed by its last position, not its
        first (the chart's ``head_last``).  Terminals keep their ids."""
        swap = {"preterminal": lambda a, b, t: ("preterminal", (b, a, t)),
                "finish": lambda a, b, c: ("finish", (a, c, b)),
                "left": lambda b2, a, b: ("right", (b2, b, a)),
                "right": lambda c2, c, a: ("left", (c2, a, c))}
        rules = [Rule(*swap[r.form](*r.symbols), r.line, r.column) for r in self.rules]
        return Grammar(rules, self.start, f"{self.name} (mirrored)")

    def to_text(self):
        """The grammar in DSL notation (loads back to an equal grammar)."""
        return "\n".join([f"start {self.start}"] + [str(r) for r in self.rules]) + "\n"

    def __repr__(self):
        return (f"<Grammar {self.name}: {len(self.rules)} rules, terminals "
                f"{', '.join(self.terminals)}, start {self.start}>")


def plain_text(text):
    """``text`` without a leading byte order mark and with every line end
    (``\\r\\n``, a lone ``\\r``) made ``\\n``: the line ends the CoNLL-U
    reader accepts (:mod:`semiparse.treebank.conllu`), so that grammar and system
    files mean the same whichever they use, and line ``N`` of an error is the
    ``N``-th line as that reader counts them.  A lone ``\\r`` would otherwise
    be no line end at all (a ``#`` comment would run to the next ``\\n``)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _ordered(names):
    return tuple(dict.fromkeys(names))


def _syntax_error(exc, text):
    """``(reason, line, column)`` of a lark syntax error.  Statements are not
    bound to lines, so a name left over at the end of a statement shows only
    when the next line's first token does not continue it: that name is
    blamed, on its own line."""
    token = getattr(exc, "token", None)
    reason, line, column = _syntax_reason(exc, text), exc.line, exc.column
    if token is None or getattr(token, "type", None) == "$END" or token.start_pos is None:
        return reason, line, column
    before = re.sub(r"#[^\n]*", "", text[:token.start_pos]).rstrip()
    last = re.search(r"[A-Za-z0-9_'.]+$", before)
    if last is not None and before.count("\n") + 1 < line and reason.startswith("unexpected"):
        line = before.count("\n") + 1
        column = last.start() - before.rfind("\n")
        reason = (f"{last.group()!r} at the end of the line is followed by {str(token)!r} on the "
                  f"next: a name left over, or a missing '|'? ({reason})")
    return reason, line, column


def _syntax_reason(exc, text):
    token = getattr(exc, "token", None)
    lines = text.split("\n")
    if token is not None and 0 < exc.line <= len(lines):
        hint = _not_split(lines[exc.line - 1])
        if hint is not None:
            return hint
    if token is not None and getattr(token, "type", None) == "$END":
        return "unexpected end of file: a rule is incomplete"
    if token is not None and (str(token) == "start" or re.search(r"(^|[\s(])start\s*$",
                                                                text[:token.start_pos])):
        return (f"unexpected {str(token)!r}{'' if str(token) == 'start' else ' after start'}: "
                f"'start' is the keyword of the start declaration ('start A'), so no "
                f"constituent can be named start")
    if token is not None:
        return (f"unexpected {str(token)!r}: expected a rule of the form '(B, C) -> a', "
                "'A -> (B, C)', '(B2, _) -> A (B, _)', '(_, C2) -> (_, C) A' or 'start A'")
    char = text[exc.pos_in_stream] if exc.pos_in_stream is not None else "?"
    return f"unexpected character {char!r}"


def _not_split(line):
    """Why a rule line with too many children is not split (None if it is not that).

    A split rule takes one child: the bare names (outside the state pairs) of
    each right-hand alternative are its children.
    """
    _, arrow, rhs = line.partition("#")[0].partition("->")
    if not arrow:
        return None
    for alternative in rhs.split("|"):
        children = re.sub(r"\([^()]*\)", " ", alternative).split()
        if len(children) > 1 and all(_NAME.fullmatch(child) for child in children):
            return (f"'{alternative.strip()}' has {len(children)} children ({', '.join(children)}), "
                    "but a rule attaches one child on one side of a head: "
                    "'(B2, _) -> A (B, _)' or '(_, C2) -> (_, C) A'")
    return None


def _check(rules, starts, file, last_line):
    """Whole-grammar checks; returns the start symbol or raises GrammarError
    (at ``last_line`` when no rule is to blame)."""

    def fail(reason, rule=None, pos=None):
        line, col = (rule.line, rule.column) if rule is not None else (pos or (last_line, None))
        raise GrammarError(reason, file, line, col)

    if not starts:
        fail("no 'start' declaration (e.g. 'start S')")
    if len(starts) > 1:
        fail(f"several 'start' declarations ({', '.join(s[1] for s in starts)})", pos=starts[1][2])
    _, start, start_pos = starts[0]
    if start == "start":
        fail("'start' is the keyword of the start declaration: no constituent can be named "
             "start", pos=start_pos)

    seen_terms = {}
    for r in rules:
        if r.form == "preterminal":
            t = r.symbols[2]
            if t in seen_terms:
                fail(f"terminal {t!r} has a second preterminal rule (the first is on line "
                     f"{seen_terms[t].line}); a split grammar has exactly one per terminal", r)
            seen_terms[t] = r
    if not seen_terms:
        fail("no preterminal rule '(B, C) -> a': the grammar has no terminals")

    left_def = {r.symbols[0] for r in rules if r.form in ("preterminal", "left")}
    right_def = {r.symbols[1] for r in rules if r.form == "preterminal"} | {
        r.symbols[0] for r in rules if r.form == "right"}
    constituents = {r.symbols[0] for r in rules if r.form == "finish"}
    for r in rules:
        s = r.symbols
        if r.form == "finish":
            used = [("left state", s[1], left_def), ("right state", s[2], right_def)]
        elif r.form == "left":
            used = [("constituent", s[1], constituents), ("left state", s[2], left_def)]
        elif r.form == "right":
            used = [("right state", s[1], right_def), ("constituent", s[2], constituents)]
        else:
            used = []
        for kind, name, defined in used:
            if name not in defined:
                fail(f"undefined {kind} {name!r} in rule '{r}'", r)
    if start not in constituents:
        fail(f"start symbol {start!r} has no rule '{start} -> (B, C)'", pos=start_pos)
    seen = set()
    for r in rules:
        if r in seen:
            fail(f"rule '{r}' is given twice", r)
        seen.add(r)
    _warn_useless(rules, start, file)
    return start


def _productive(rules):
    """The constituents with some finish rule whose states are reachable.

    Each non-preterminal rule concludes one symbol (a constituent ``C``, a left
    state ``L`` or a right state ``R``) from two; a worklist visits each rule
    once per premise, so this is linear in the grammar (repeated passes over
    all rules until nothing changes were quadratic on long chains).
    """
    premises = {"finish": lambda s: (("C", s[0]), ("L", s[1]), ("R", s[2])),
                "left": lambda s: (("L", s[0]), ("C", s[1]), ("L", s[2])),
                "right": lambda s: (("R", s[0]), ("R", s[1]), ("C", s[2]))}
    waiting, missing, conclusion = {}, [], []
    for r in rules:
        if r.form in premises:
            head, *needs = premises[r.form](r.symbols)
            for need in set(needs):
                waiting.setdefault(need, []).append(len(missing))
            missing.append(len(set(needs)))
            conclusion.append(head)
    todo = [("L", r.symbols[0]) for r in rules if r.form == "preterminal"] + [
        ("R", r.symbols[1]) for r in rules if r.form == "preterminal"]
    known = set()
    while todo:
        symbol = todo.pop()
        if symbol in known:
            continue
        known.add(symbol)
        for k in waiting.get(symbol, ()):
            missing[k] -= 1
            if missing[k] == 0:
                todo.append(conclusion[k])
    return {name for kind, name in known if kind == "C"}


def _warn_useless(rules, start, file):
    """Warn about constituents that can never be used in a derivation of start."""
    productive = _productive(rules)
    children = {r.symbols[1] for r in rules if r.form == "left"} | {
        r.symbols[2] for r in rules if r.form == "right"}
    reachable = _reachable(rules, start)
    for r in rules:
        if r.form != "finish":
            continue
        a = r.symbols[0]
        if a not in productive:
            warnings.warn(f"{file}:{r.line}:{r.column}: constituent {a!r} derives no tree",
                          GrammarWarning, stacklevel=4)
        elif a not in reachable:
            why = ("only a child of constituents that are never used themselves" if a in children
                   else "not the start symbol, never a child")
            warnings.warn(f"{file}:{r.line}:{r.column}: constituent {a!r} is never used ({why})",
                          GrammarWarning, stacklevel=4)
    for r, side, state in _dead_states(rules):
        warnings.warn(f"{file}:{r.line}:{r.column}: {side} state {state!r} ends no constituent "
                      f"(no finish rule takes it, nor a state it leads to)", GrammarWarning,
                      stacklevel=4)


def _reachable(rules, start):
    """The constituents a derivation of start can contain: start, and the
    child of every rule that leads into a state some reachable constituent
    finishes from, directly or through further rules of the same side.
    Linear in the grammar (each state and constituent is visited once)."""
    finish, into = {}, {}
    for r in rules:
        s = r.symbols
        if r.form == "finish":
            finish.setdefault(s[0], []).append((("left", s[1]), ("right", s[2])))
        elif r.form == "left":   # (b2, _) -> A (b, _): reaching b2 reaches A and b
            into.setdefault(("left", s[0]), []).append((s[1], ("left", s[2])))
        elif r.form == "right":  # (_, c2) -> (_, c) A
            into.setdefault(("right", s[0]), []).append((s[2], ("right", s[1])))
    reached, states, todo = {start}, set(), [start]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found = [state for pair in finish.get(item, ()) for state in pair]
        else:
            found = [x for child, state in into.get(item, ()) for x in (child, state)]
        for x in found:
            seen = reached if isinstance(x, str) else states
            if x not in seen:
                seen.add(x)
                todo.append(x)
    return reached


def _dead_states(rules):
    """``(rule, side, state)`` for each rule that leads a head into a left or
    right state from which no finish rule can be reached: every derivation
    through it is lost (most likely a misspelt state)."""
    final = {"left": {r.symbols[1] for r in rules if r.form == "finish"},
             "right": {r.symbols[2] for r in rules if r.form == "finish"}}
    out = []
    for side, frm, to in (("left", 2, 0), ("right", 1, 0)):
        back = {}  # state -> the states a rule leads from into it
        for r in rules:
            if r.form == side:
                back.setdefault(r.symbols[to], []).append(r.symbols[frm])
        alive, todo = set(final[side]), list(final[side])
        while todo:  # the states that lead to a final one, linear in the rules
            for a in back.get(todo.pop(), ()):
                if a not in alive:
                    alive.add(a)
                    todo.append(a)
        out += [(r, side, r.symbols[to]) for r in rules
                if r.form == side and r.symbols[to] not in alive]
    return out


_CACHE = {}


def load_grammar(name_or_path):
    """Load a grammar: a shipped name (``"projective"``, a string), a path
    (a string with ``/`` or ending in ``.grammar``, or any path object), or
    a Grammar.

    Shipped grammars are cached; a path is read every time.
    """
    if isinstance(name_or_path, Grammar):
        return name_or_path
    return load_grammar_text(name_or_path)[0]


def load_grammar_text(name_or_path):
    """``(grammar, text)``: :func:`load_grammar` of a shipped name or a path,
    and the text it was read from (one read of the file, so that the two
    always agree)."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ValueError(f"a grammar is a shipped name, a path or a Grammar, got "
                         f"{name_or_path!r:.60} ({type(name_or_path).__name__})")
    text_name = os.fspath(name_or_path)
    if not isinstance(text_name, str):
        raise ValueError(f"a grammar path must be text, got {text_name!r:.60}")
    is_bare = (isinstance(name_or_path, str) and "/" not in text_name
               and not text_name.endswith(".grammar"))
    if is_bare and text_name in _CACHE:
        return _CACHE[text_name]
    shipped = data_dir("grammars") / f"{text_name}.grammar"
    if is_bare and shipped.is_file():
        text = _read_text(shipped, text_name)
        _CACHE[text_name] = Grammar.from_text(text, name=text_name), text
        return _CACHE[text_name]
    path = Path(name_or_path)
    if not path.is_file():
        if not isinstance(name_or_path, str):
            raise ValueError(f"no grammar file {text_name!r} (a shipped grammar is named by a "
                             f"string such as 'projective')")
        available = sorted(p.name[:-8] for p in data_dir("grammars").iterdir()
                           if p.name.endswith(".grammar"))
        raise ValueError(f"no grammar {text_name!r}: not a file, and not one of the shipped "
                         f"grammars ({', '.join(available)})")
    text = _read_text(path, str(path))
    return Grammar.from_text(text, name=str(path)), text


def byte_position(data, offset):
    """``(line, column)`` (1-based) of byte ``offset`` of ``data``, lines cut
    as :func:`plain_text` cuts them."""
    before = data[:offset]
    start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
    return len((before + b"x").splitlines()), offset - start + 1


def _read_text(path, name):
    """The UTF-8 text of a grammar file; GrammarError at the line of a bad byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = byte_position(data, exc.start)
        raise GrammarError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                           name, line, column) from None

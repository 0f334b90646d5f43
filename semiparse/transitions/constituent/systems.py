"""Top-down and in-order transition systems for constituent parsing.

Following the presentation of Fernández-González and Gómez-Rodríguez 2018,
section 2.

A configuration is ``<Σ, i, f, γ, α>``: the stack Σ, the buffer index ``i``
(the next word to shift), the in-order ``finished`` flag ``f``, the phrasal
constituents built so far γ (in build order) and the open non-terminals α
(the :class:`Open` items of the stack).  Stack items are

* :class:`Done` ``(l, r, label)``: a finished constituent over words ``[l, r)``
  (``label`` None for a shifted word);
* :class:`Open` ``(label, index, start)``: a non-terminal pushed when the
  buffer index was ``index``; ``start`` is the left end of the constituent it
  will build (``index`` in top-down, the first child's left end in in-order).

Top-down (Dyer et al. 2016): Shift, NT-X, Reduce.  In-order (Liu and Zhang
2017): Shift, NT-X, Reduce, Finish.  Legality constraints (``legal``):

top-down
    * Shift: the buffer is not empty and some non-terminal is open (so the
      first transition is an NT and every word gets a parent);
    * NT-X: the buffer is not empty (every constituent covers at least one word);
    * Reduce: the top of the stack is not an open non-terminal (no empty
      constituents), and the bottom non-terminal (the root) is closed only
      when the buffer is empty (a single root spanning the sentence).

in-order
    * Shift: the buffer is not empty and the stack is empty or holds an open
      non-terminal (a second finished node without a parent could never be
      attached);
    * NT-X: the top of the stack is a finished node (its first child) and the
      parse is not finished;
    * Reduce: some non-terminal is open;
    * Finish: the buffer is empty and the stack is one finished constituent
      (not a bare word) spanning the sentence.

Every public method checks its configuration first (:meth:`System.validate`):
a configuration the system cannot reach -- a buffer index outside ``0..n``,
stack items that do not cover the words before it in order, a non-integer
position -- is a ValueError saying what is wrong.

Neither system bounds unary chains (top-down: NTs in a row; in-order: NT-X,
Reduce pairs); a parser needs its own limit.  The exhaustive search bounds
them by the loss itself (see :mod:`semiparse.transitions.constituent.exhaustive`).
"""
import operator
import warnings
from typing import NamedTuple

from semiparse.transitions.systems.interface import SystemProtocol
from semiparse.treebank.brackets import Tree, check_label, from_constituents, traverse


class Done(NamedTuple):
    """A finished node on the stack: words ``[l, r)``; ``label`` None for a word."""
    l: int
    r: int
    label: object = None


class Open(NamedTuple):
    """An open non-terminal: ``label``, buffer ``index`` when pushed, left end ``start``."""
    label: str
    index: int
    start: int


class Transition(NamedTuple):
    """``kind`` one of SH, NT, RE, FI; ``label`` for NT (None: any label)."""
    kind: str
    label: object = None

    def __str__(self):
        return f"NT-{self.label}" if self.kind == "NT" else self.kind


SHIFT = Transition("SH")
REDUCE = Transition("RE")
FINISH = Transition("FI")


def NT(label):
    """The Non-Terminal-``label`` transition (``label`` None: any label, as
    :meth:`System.legal` gives it); ValueError for a label that is not a
    tree's (:func:`~semiparse.treebank.brackets.check_label`)."""
    return Transition("NT", None if label is None else check_label(label, "the label of NT"))


class Configuration(NamedTuple):
    """``<Σ, i, f, γ, α>`` for a sentence of ``n`` words (α: :attr:`open_nts`)."""
    stack: tuple
    i: int
    n: int
    built: tuple = ()
    finished: bool = False

    @property
    def open_nts(self):
        """α: the open non-terminals, bottom to top."""
        return [item for item in self.stack if type(item) is Open]

    def __str__(self):
        items = " ".join(
            f"{s.label}({s.index})" if type(s) is Open else
            (f"{s.label}[{s.l},{s.r})" if s.label is not None else f"w{s.l}")
            for s in self.stack)
        built = " ".join(f"{x}[{l},{r})" for x, l, r in self.built)
        return f"<[{items}], i={self.i}/{self.n}{', finished' if self.finished else ''}, γ={{{built}}}>"


def _integer(value, what):
    """``value`` as a Python int (any integer type; not a bool, float or string)."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise ValueError(f"{what} must be an integer, not {value!r}")


class System(SystemProtocol):
    """Common code; subclasses define the transitions.  The
    :class:`~semiparse.transitions.systems.interface.SystemProtocol` of the
    constituent kind: registered as ``top_down`` and ``in_order`` with their
    oracle (:func:`semiparse.transitions.constituent.oracle.oracle_of`).

    Public methods validate their configuration; the internal ones
    (:meth:`_legal_all`, :meth:`_step`, :meth:`_terminal`) trust it and are for
    configurations the system itself produced.
    """

    name = None
    kind = "constituent"
    kinds = ()  # the kinds of transitions, SH NT RE FI

    @property
    def transitions(self):
        """The names of the transitions (``NT`` for the family NT-X)."""
        return self.kinds

    def initial(self, n):
        """The initial configuration for ``n`` words."""
        n = _integer(n, "the number of words n")
        if n < 1:
            raise ValueError(f"a sentence needs at least one word, got n={n}")
        return Configuration((), 0, n)

    def validate(self, c):
        """``c`` with Python ints if this system can reach it, else ValueError
        saying what is wrong (items are checked in stack order)."""
        if not isinstance(c, Configuration):
            raise ValueError(f"expected a Configuration, got {type(c).__name__}")
        n = _integer(c.n, "the number of words n")
        i = _integer(c.i, "the buffer index i")
        if n < 1:
            raise ValueError(f"a sentence needs at least one word, got n={n}")
        if not 0 <= i <= n:
            raise ValueError(f"buffer index i={i} is outside 0..{n} (n={n} words)")
        if not isinstance(c.finished, bool):
            raise ValueError(f"finished must be True or False, not {c.finished!r}")
        if not isinstance(c.stack, (tuple, list)) or not isinstance(c.built, (tuple, list)):
            raise ValueError("the stack and the built constituents must be tuples")
        built = []
        for k, item in enumerate(c.built):
            if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str)):
                raise ValueError(f"built constituent {k} is {item!r}: expected (label, l, r)")
            l = _integer(item[1], f"the left end of built constituent {k}")
            r = _integer(item[2], f"the right end of built constituent {k}")
            if not 0 <= l < r <= i:
                raise ValueError(f"built constituent {k} {item!r} is not a span of words "
                                 f"before the buffer index {i}")
            built.append((item[0], l, r))
        made = set(built)
        stack, position = [], 0  # position: the words covered so far
        for k, item in enumerate(c.stack):
            if type(item) is Done:
                l = _integer(item.l, f"the left end of stack item {k}")
                r = _integer(item.r, f"the right end of stack item {k}")
                if l != position or not l < r <= i:
                    raise ValueError(f"stack item {k} {item!r}: expected a node over words "
                                     f"[{position}, r) with r <= the buffer index {i}")
                if item.label is None and r != l + 1:
                    raise ValueError(f"stack item {k} {item!r}: a word (label None) spans one position")
                if item.label is not None and (
                        not isinstance(item.label, str) or (item.label, l, r) not in made):
                    raise ValueError(f"stack item {k} {item!r}: a constituent on the stack must be "
                                     "one of the built constituents")
                stack.append(Done(l, r, item.label))
                position = r
            elif type(item) is Open:
                if not isinstance(item.label, str):
                    raise ValueError(f"stack item {k} {item!r}: the label must be a string")
                index = _integer(item.index, f"the index of stack item {k}")
                start = _integer(item.start, f"the start of stack item {k}")
                stack.append(Open(item.label, index, start))
                self._check_open(stack, position, n, k)
            else:
                raise ValueError(f"stack item {k} is {item!r}: expected a Done or an Open item")
        if position != i:
            raise ValueError(f"the stack covers words 0..{position}, not the {i} before the buffer index")
        c = Configuration(tuple(stack), i, n, tuple(built), c.finished)
        self._check_shape(c)
        return c

    def legal(self, c):
        """The legal transitions; NT with label None stands for every label."""
        return self._legal_all(self.validate(c))

    def is_legal(self, c, t):
        c, t = self.validate(c), _transition(t)
        return t.kind in self.kinds and self._legal(c, t.kind)

    def apply(self, c, t):
        """The configuration after transition ``t`` (ValueError if illegal)."""
        return self._step(self.validate(c), t)

    def is_final(self, c):
        """Whether ``c`` is final (the parse is over: no transition applies)."""
        return self._terminal(self.validate(c))

    def is_terminal(self, c):
        """Deprecated name of :meth:`is_final`, kept for one release."""
        warnings.warn("System.is_terminal is is_final; the old name will be removed in the next "
                      "release", DeprecationWarning, stacklevel=2)
        return self.is_final(c)

    def tree(self, c, leaves):
        """The tree of a terminal configuration over ``leaves`` ((tag, word) pairs)."""
        c = self.validate(c)
        if not self._terminal(c):
            raise ValueError(f"{self.name}: configuration {c} is not terminal")
        if not isinstance(leaves, (list, tuple)) or not all(
                isinstance(x, tuple) and len(x) == 2 and all(isinstance(y, str) for y in x)
                for x in leaves):
            raise ValueError(f"leaves must be a list of (tag, word) pairs of strings, got "
                             f"{leaves!r:.80}")
        if len(leaves) != c.n:
            raise ValueError(f"{len(leaves)} leaves for a configuration of {c.n} words")
        return from_constituents(list(c.built), leaves)

    def run(self, transitions, n):
        """Apply a transition sequence to the initial configuration."""
        c = self.initial(n)
        for t in transitions:
            c = self._step(c, t)
        return c

    def __repr__(self):
        return f"<System {self.name}: {', '.join(self.kinds)}>"

    def _legal_all(self, c):
        return [t for t in (SHIFT, NT(None), REDUCE, FINISH)
                if t.kind in self.kinds and self._legal(c, t.kind)]

    def _step(self, c, t):
        """:meth:`apply` for a configuration known to be valid."""
        t = _transition(t)
        if not (t.kind in self.kinds and self._legal(c, t.kind)):
            raise ValueError(f"{self.name}: transition {t} is not legal in {c}")
        if t.kind == "NT" and t.label is None:
            raise ValueError("NT needs a label")
        stack = c.stack
        if t.kind == "SH":
            return c._replace(stack=stack + (Done(c.i, c.i + 1),), i=c.i + 1)
        if t.kind == "NT":
            return c._replace(stack=stack + (Open(t.label, c.i, self.nt_start(c)),))
        if t.kind == "FI":
            return c._replace(finished=True)
        k = len(stack) - 1  # Reduce: the top open non-terminal
        while type(stack[k]) is not Open:
            k -= 1
        keep, made = self._reduced(stack, k)
        return c._replace(stack=stack[:keep] + (Done(made[1], made[2], made[0]),),
                          built=c.built + (made,))


class TopDown(System):
    """Shift, NT-X, Reduce (Fernández-González and Gómez-Rodríguez 2018, Figure 2)."""

    name = "top_down"
    kinds = ("SH", "NT", "RE")

    def _legal(self, c, kind):
        stack = c.stack
        if kind == "SH":
            return c.i < c.n and any(type(s) is Open for s in stack)
        if kind == "NT":
            return c.i < c.n
        if kind == "RE":
            if not stack or type(stack[-1]) is Open:
                return False
            for k in range(len(stack) - 1, -1, -1):
                if type(stack[k]) is Open:
                    return k > 0 or c.i == c.n
            return False
        return False

    def nt_start(self, c):
        """The left end of the constituent an NT pushed in ``c`` will build: the buffer index."""
        return c.i

    def _reduced(self, stack, k):
        """Reduce closes the open NT at ``k`` over the items above it: the
        stack items kept below the new node, and its constituent."""
        return k, (stack[k].label, stack[k].start, stack[-1].r)

    def _terminal(self, c):
        return (c.i == c.n and len(c.stack) == 1 and type(c.stack[0]) is Done
                and c.stack[0].label is not None)

    def _check_open(self, stack, position, n, k):
        item = stack[-1]
        if not item.index == item.start == position < n:
            raise ValueError(f"stack item {k} {item!r}: top-down pushes a non-terminal at the "
                             f"buffer index, so index = start = {position} (< n = {n})")

    def _check_shape(self, c):
        if c.finished:
            raise ValueError("top-down configurations are never 'finished' (in-order only)")
        if c.stack and type(c.stack[0]) is Done and not self._terminal(c):
            raise ValueError("the bottom of a top-down stack is an open non-terminal, unless the "
                             "stack is one constituent spanning the sentence")

    def static_oracle(self, t):
        """The canonical sequence building tree ``t``: pre-order, NT-X on entering
        a phrasal node, Shift for a word, Reduce on leaving."""
        check_rooted(t)
        out = []
        for node, entering in traverse(t):
            if entering is None or (node.is_preterminal and not entering):
                continue
            out.append(SHIFT if node.is_preterminal else NT(node.label) if entering else REDUCE)
        return out


class InOrder(System):
    """Shift, NT-X, Reduce, Finish (Fernández-González and Gómez-Rodríguez 2018, Figure 4)."""

    name = "in_order"
    kinds = ("SH", "NT", "RE", "FI")

    def _legal(self, c, kind):
        stack = c.stack
        if c.finished:
            return False
        if kind == "SH":
            return c.i < c.n and (not stack or any(type(s) is Open for s in stack))
        if kind == "NT":
            return bool(stack) and type(stack[-1]) is Done
        if kind == "RE":
            return any(type(s) is Open for s in stack)
        if kind == "FI":
            return (c.i == c.n and len(stack) == 1 and type(stack[0]) is Done
                    and stack[0].label is not None)
        return False

    def nt_start(self, c):
        """The left end of the constituent an NT pushed in ``c`` will build:
        that of its first child, the node on top of the stack."""
        return c.stack[-1].l

    def _reduced(self, stack, k):
        """Reduce closes the open NT at ``k`` over its first child (below it)
        and the items above it: the stack items kept below the new node, and
        its constituent."""
        first = stack[k - 1]
        return k - 1, (stack[k].label, first.l, stack[-1].r if k < len(stack) - 1 else first.r)

    def _terminal(self, c):
        return c.finished

    def _check_open(self, stack, position, n, k):
        item, below = stack[-1], stack[-2] if len(stack) > 1 else None
        if type(below) is not Done or item.start != below.l or item.index != position:
            raise ValueError(f"stack item {k} {item!r}: in-order pushes a non-terminal above its "
                             f"first child, so it follows a finished node, starts where that node "
                             f"starts and has index {position}")

    def _check_shape(self, c):
        first_open = next((k for k, s in enumerate(c.stack) if type(s) is Open), len(c.stack))
        if first_open > 1:
            raise ValueError("an in-order stack holds at most one finished node below its "
                             "first open non-terminal")
        if c.finished and not (c.i == c.n and len(c.stack) == 1 and c.stack[0].label is not None):
            raise ValueError("a finished in-order configuration holds one constituent spanning "
                             "the sentence")

    def static_oracle(self, t):
        """The canonical sequence building tree ``t``: for a phrasal node, the
        sequence of its first child, NT-X, those of the other children, Reduce;
        Shift for a word; Finish at the end."""
        check_rooted(t)
        out = []
        path = []  # the open nodes
        for node, entering in traverse(t):
            if entering is None:
                continue
            if entering:
                path.append(node)
                if node.is_preterminal:
                    out.append(SHIFT)
                continue
            path.pop()
            if not node.is_preterminal:
                out.append(REDUCE)
            if path and path[-1].children[0] is node:
                out.append(NT(path[-1].label))
        out.append(FINISH)
        return out


def _transition(t):
    """``t`` if it is a Transition of a known kind, else ValueError."""
    if not isinstance(t, Transition) or t.kind not in ("SH", "NT", "RE", "FI"):
        raise ValueError(f"expected a Transition (SHIFT, NT(label), REDUCE or FINISH), got {t!r}")
    if t.label is not None:
        check_label(t.label, "a transition's label")
    return t


def check_rooted(t):
    """ValueError unless ``t`` is a :class:`~semiparse.treebank.brackets.Tree`
    that a computation of the systems builds: not one without a phrasal
    node (a bare preterminal), nor one with a node without children (an
    empty constituent).  The static and dynamic oracles refuse them alike."""
    if not isinstance(t, Tree):
        raise ValueError(f"expected a Tree, got {type(t).__name__}")
    if t.is_preterminal:
        raise ValueError(f"tree {t} has no phrasal node: the systems build at least a root constituent")
    empty = next((node for node, entering in traverse(t) if entering and not node.children), None)
    if empty is not None:
        raise ValueError(f"the node ({empty.label}) of the tree has no children: the systems build no "
                         f"empty constituent")


SYSTEMS = {"top_down": TopDown, "in_order": InOrder}


def system(name):
    """The transition system ``"top_down"`` or ``"in_order"``."""
    if isinstance(name, System):
        return name
    try:
        return SYSTEMS[name]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown transition system {name!r}: expected 'top_down' or 'in_order'") from None

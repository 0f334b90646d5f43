"""Top-down and in-order transition systems for constituent parsing (seed 003 section 2).

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

Neither system bounds unary chains (top-down: NTs in a row; in-order: NT-X,
Reduce pairs); a parser needs its own limit.  The exhaustive search bounds
them by the loss itself (see :mod:`semiparse.constituency.exhaustive`).
"""
from typing import NamedTuple

from .trees import from_constituents


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
    """The Non-Terminal-``label`` transition."""
    return Transition("NT", label)


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


class System:
    """Common code; subclasses define the transitions."""

    name = None
    kinds = ()

    def initial(self, n):
        """The initial configuration for ``n`` words."""
        if n < 1:
            raise ValueError(f"a sentence needs at least one word, got n={n}")
        return Configuration((), 0, n)

    def legal(self, c):
        """The legal transitions; NT with label None stands for every label."""
        return [t for t in (SHIFT, NT(None), REDUCE, FINISH)
                if t.kind in self.kinds and self._legal(c, t.kind)]

    def is_legal(self, c, t):
        return t.kind in self.kinds and self._legal(c, t.kind)

    def apply(self, c, t):
        """The configuration after transition ``t`` (ValueError if illegal)."""
        if not self.is_legal(c, t):
            raise ValueError(f"{self.name}: transition {t} is not legal in {c}")
        if t.kind == "NT" and t.label is None:
            raise ValueError("NT needs a label")
        return self._apply(c, t)

    def tree(self, c, leaves):
        """The tree of a terminal configuration over ``leaves`` ((tag, word) pairs)."""
        if not self.is_terminal(c):
            raise ValueError(f"{self.name}: configuration {c} is not terminal")
        if len(leaves) != c.n:
            raise ValueError(f"{len(leaves)} leaves for a configuration of {c.n} words")
        return from_constituents(list(c.built), leaves)

    def run(self, transitions, n):
        """Apply a transition sequence to the initial configuration."""
        c = self.initial(n)
        for t in transitions:
            c = self.apply(c, t)
        return c


class TopDown(System):
    """Shift, NT-X, Reduce (Figure 2 of seed 003)."""

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

    def _apply(self, c, t):
        stack = c.stack
        if t.kind == "SH":
            return c._replace(stack=stack + (Done(c.i, c.i + 1),), i=c.i + 1)
        if t.kind == "NT":
            return c._replace(stack=stack + (Open(t.label, c.i, c.i),))
        k = len(stack) - 1
        while type(stack[k]) is not Open:
            k -= 1
        node = stack[k]
        made = (node.label, node.start, stack[-1].r)
        return c._replace(stack=stack[:k] + (Done(made[1], made[2], made[0]),), built=c.built + (made,))

    def is_terminal(self, c):
        return (c.i == c.n and len(c.stack) == 1 and type(c.stack[0]) is Done
                and c.stack[0].label is not None)

    def static_oracle(self, t):
        """The canonical sequence building tree ``t``: pre-order, NT-X on entering
        a phrasal node, Shift for a word, Reduce on leaving."""
        out = []

        def walk(node):
            if node.is_preterminal:
                out.append(SHIFT)
                return
            out.append(NT(node.label))
            for child in node.children:
                walk(child)
            out.append(REDUCE)

        _check_rooted(t)
        walk(t)
        return out


class InOrder(System):
    """Shift, NT-X, Reduce, Finish (Figure 4 of seed 003)."""

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

    def _apply(self, c, t):
        stack = c.stack
        if t.kind == "SH":
            return c._replace(stack=stack + (Done(c.i, c.i + 1),), i=c.i + 1)
        if t.kind == "NT":
            return c._replace(stack=stack + (Open(t.label, c.i, stack[-1].l),))
        if t.kind == "FI":
            return c._replace(finished=True)
        k = len(stack) - 1
        while type(stack[k]) is not Open:
            k -= 1
        node = stack[k]
        first = stack[k - 1]
        made = (node.label, first.l, stack[-1].r if k < len(stack) - 1 else first.r)
        return c._replace(stack=stack[:k - 1] + (Done(made[1], made[2], made[0]),),
                          built=c.built + (made,))

    def is_terminal(self, c):
        return c.finished

    def static_oracle(self, t):
        """The canonical sequence building tree ``t``: for a phrasal node, the
        sequence of its first child, NT-X, those of the other children, Reduce;
        Shift for a word; Finish at the end."""
        out = []

        def walk(node):
            if node.is_preterminal:
                out.append(SHIFT)
                return
            walk(node.children[0])
            out.append(NT(node.label))
            for child in node.children[1:]:
                walk(child)
            out.append(REDUCE)

        _check_rooted(t)
        walk(t)
        out.append(FINISH)
        return out


def _check_rooted(t):
    if t.is_preterminal:
        raise ValueError(f"tree {t} has no phrasal node: the systems build at least a root constituent")


SYSTEMS = {"top_down": TopDown, "in_order": InOrder}


def system(name):
    """The transition system ``"top_down"`` or ``"in_order"``."""
    if isinstance(name, System):
        return name
    try:
        return SYSTEMS[name]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown transition system {name!r}: expected 'top_down' or 'in_order'") from None

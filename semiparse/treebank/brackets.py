"""Penn-Treebank bracketed trees: reading, cleaning, writing, constituent sets.

A :class:`Tree` is a label and a list of children; a *preterminal* is a tree
whose only child is a word (a ``str``).  Words are numbered ``0..n-1`` from
left to right; the constituent of a phrasal node is ``(label, l, r)`` with the
half-open word span ``[l, r)`` (Fernández-González and Gómez-Rodríguez 2018,
section 2).  Preterminals are not constituents: the transition systems shift
tagged words.

Reading is strict: every problem is a :class:`TreeError` whose message starts
with ``FILE:LINE:``.  With ``on_error="skip"`` bad trees are dropped and
reported in :attr:`Treebank.skipped`.  Files are decoded line by line, so a
line that is not UTF-8 spoils only its own tree.

Nothing here recurses over the depth of a tree (reading, writing, cleaning,
comparing, constituent sets): :func:`traverse` walks trees of any depth.
"""
import re
from collections import Counter

from semiparse.treebank.outputs import open_output
from semiparse.errors import TreeError

ON_ERROR = ("fail", "skip")
OUTER_LABELS = ("", "TOP")  # PTB's unlabelled outer bracket, and evalb's name for it


class Tree:
    """A node: ``label`` and ``children`` (trees, or one word for a preterminal).

    ``line`` is the line of the opening bracket in the file read (or None).
    Labels and words are strings that bracketed text can hold: not empty,
    no spaces or brackets (a label ``""`` is PTB's unlabelled outer bracket,
    over trees); anything else is a ValueError.  A node may be made without
    children and given them later (the systems, the reader and the oracles
    need them).
    """

    __slots__ = ("label", "children", "line")

    def __init__(self, label, children, line=None):
        check_label(label, "a tree's label")
        if isinstance(children, (str, bytes)) or not hasattr(children, "__iter__"):
            raise ValueError(f"the children of ({label} ...) must be a list of trees or of one "
                             f"word, got {children!r:.60}")
        self.label = label
        self.children = children = list(children)
        self.line = line
        for child in children:
            if not isinstance(child, Tree):
                _check_word(label, child, len(children))

    @classmethod
    def _trusted(cls, label, children, line):
        """A node of parts known to be good (the reader's atoms and nodes, a
        cleaned copy's), made without the checks of ``Tree(...)``: they cost
        a tenth of the time of reading a treebank."""
        node = object.__new__(cls)
        node.label, node.children, node.line = label, children, line
        return node

    @property
    def is_preterminal(self):
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def leaves(self):
        """The ``(tag, word)`` pairs of the yield, left to right."""
        out = []
        stack = [self]
        while stack:
            node = stack.pop()
            if node.is_preterminal:
                out.append((node.label, node.children[0]))
            else:
                stack.extend(reversed(node.children))
        return out

    def words(self):
        return [word for _, word in self.leaves()]

    def __len__(self):
        """Number of words."""
        return len(self.leaves())

    def __eq__(self, other):
        if not isinstance(other, Tree):
            return NotImplemented
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a.label != b.label or len(a.children) != len(b.children):
                return False
            for x, y in zip(a.children, b.children):
                if isinstance(x, Tree) and isinstance(y, Tree):
                    pairs.append((x, y))
                elif isinstance(x, Tree) or isinstance(y, Tree) or x != y:
                    return False
        return True

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"Tree({self.to_string()!r})"

    def to_string(self):
        """One-line bracketed form, e.g. ``(S (NP (DT the) (NN dog)) (VP (VBD ran)))``;
        an unlabelled node as PTB writes its outer bracket, ``( (S ...) )``."""
        parts = ["(" + self.label]
        stack = [(self.label, iter(self.children))]  # the children left to write, per open node
        while stack:
            for child in stack[-1][1]:
                if isinstance(child, str):
                    parts.append(" " + child)
                else:
                    parts.append(" (" + child.label)
                    stack.append((child.label, iter(child.children)))
                    break
            else:
                parts.append(")" if stack.pop()[0] else " )")
        return "".join(parts)

    __str__ = to_string


def traverse(t):
    """The nodes of ``t`` in document order without recursion: ``(node, True)``
    on entering a Tree, ``(node, False)`` on leaving it, ``(word, None)`` for a
    word."""
    yield t, True
    stack = [(t, iter(t.children))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if isinstance(child, str):
                yield child, None
            else:
                yield child, True
                stack.append((child, iter(child.children)))
                break
        else:
            stack.pop()
            yield node, False


def tree(text):
    """Parse one bracketed tree from a string (no cleaning)."""
    trees = [t for t, _ in _parse(text.splitlines(True), "<string>", "fail")]
    if len(trees) != 1:
        raise ValueError(f"expected one bracketed tree, found {len(trees)}")
    return trees[0]


def strip_function_tags(label):
    """``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``; ``-NONE-``, ``-LRB-`` and
    other labels that start with ``-`` are kept intact."""
    if label.startswith("-"):
        return label
    for i, char in enumerate(label):
        if i > 0 and char in "-=":
            return label[:i]
    return label


def clean(node, remove_traces=True, strip_tags=True, drop_outer=True):
    """A cleaned copy of ``node`` (None if nothing is left).

    ``remove_traces``: delete ``-NONE-`` preterminals and the phrasal nodes
    left without children.  ``strip_tags``: :func:`strip_function_tags` on
    phrasal labels (POS tags are kept).  ``drop_outer``: a root labelled
    ``TOP`` (evalb's name for it) is the outer bracket; an outer bracket with
    a single phrasal child is replaced by that child (PTB's ``( (S ...) )``).
    One over a preterminal or several children stays, unlabelled: the
    transition systems need a phrasal root, and several roots need it.
    """
    done = [[]]  # the cleaned children of each open node (None: removed)
    for t, entering in traverse(node):
        if entering is None:
            done[-1].append(t)
            continue
        if entering:
            done.append([])
            continue
        children = done.pop()
        if t.is_preterminal:
            done[-1].append(None if remove_traces and t.label == "-NONE-"
                            else Tree._trusted(t.label, children, t.line))
        else:
            children = [c for c in children if c is not None]
            label = strip_function_tags(t.label) if strip_tags else t.label
            done[-1].append(Tree._trusted(label, children, t.line) if children else None)
    out = done[0][0]
    if drop_outer and out is not None and out.label in OUTER_LABELS and not out.is_preterminal:
        only = out.children[0] if len(out.children) == 1 else None
        out = (only if only is not None and not only.is_preterminal
               else Tree._trusted("", out.children, out.line))
    return out


class Treebank(list):
    """The trees of a file; ``skipped`` lists the errors of dropped trees."""

    def __init__(self, trees=(), skipped=()):
        super().__init__(trees)
        self.skipped = list(skipped)


def read_ptb(path, remove_traces=True, strip_tags=True, drop_outer=True, on_error="fail"):
    """Read a bracketed treebank file into a :class:`Treebank` of cleaned trees.

    Errors (unbalanced brackets, text outside a tree, empty trees, malformed
    nodes, a tree empty after trace removal) raise :class:`TreeError`
    ``FILE:LINE: reason``; with ``on_error="skip"`` the tree is dropped and
    the error kept in ``skipped``.  A ``(`` in the first column while a tree
    is still open ends that tree as unbalanced, so one bad tree does not
    swallow the rest of the file.
    """
    trees, skipped = [], []
    for out, error in iter_ptb(path, remove_traces, strip_tags, drop_outer, on_error):
        if error is None:
            trees.append(out)
        else:
            skipped.append(error)
    return Treebank(trees, skipped)


def iter_ptb(path, remove_traces=True, strip_tags=True, drop_outer=True, on_error="fail"):
    """``(tree, None)`` for each good tree of the file, ``(None, error)`` for
    each bad one (``on_error="skip"``; ``"fail"`` raises it), in file order."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    with open(path, "rb") as stream:
        for raw, error in _parse(_decoded(stream), str(path), on_error):
            if error is not None:
                yield None, error
                continue
            out = clean(raw, remove_traces, strip_tags, drop_outer)
            if out is None:
                error = TreeError(str(path), raw.line, "empty tree: nothing left after removing traces")
                if on_error == "fail":
                    raise error
                yield None, error
                continue
            yield out, None


class _Undecodable(str):
    """An atom holding bytes that are not UTF-8 (decoded as surrogates);
    ``reason`` says where."""

    reason = None


class _BadLine(str):
    """A line that is not UTF-8, decoded with surrogate escapes, and why."""

    reason = None


def _decoded(stream):
    """The lines of a binary stream as text (a line ends in LF, CR LF or CR;
    a byte-order mark at the start is dropped); a line that is not UTF-8
    becomes a :class:`_BadLine`."""
    encoding = "utf-8-sig"
    for chunk in stream:
        for raw in chunk.splitlines(True):
            try:
                yield raw.decode(encoding)
            except UnicodeDecodeError as exc:
                line = _BadLine(raw.decode(encoding, "surrogateescape"))
                line.reason = f"not valid UTF-8 ({exc.reason} at byte {exc.start})"
                yield line
            encoding = "utf-8"


def _tokens(lines):
    """``(token, line, column)`` for brackets and atoms; an atom of a
    :class:`_BadLine` with undecodable bytes is an :class:`_Undecodable`."""
    for number, text in enumerate(lines, 1):
        reason = getattr(text, "reason", None)
        i, size = 0, len(text)
        while i < size:
            char = text[i]
            if char in "()":
                yield char, number, i
                i += 1
            elif char.isspace():
                i += 1
            else:
                j = i
                while j < size and not text[j].isspace() and text[j] not in "()":
                    j += 1
                atom = text[i:j]
                if reason is not None and any("\udc80" <= ch <= "\udcff" for ch in atom):
                    atom = _Undecodable(atom)
                    atom.reason = reason
                yield atom, number, i
                i = j


def _parse(lines, name, on_error):
    """``(raw tree, None)`` or ``(None, error)`` for each tree of a token
    stream, with error recovery for ``skip``."""
    stack = []  # open nodes: [label or None, children, line]
    bad = None  # error of the tree being read, if any
    pending = None  # a tree read, given once the next token shows no ')' follows it on its line
    closed = 0  # the line of pending's last ')'
    stray = False  # the last token was a ')' without a '(' (more of them: the same error)

    def fail(line, reason):
        nonlocal bad
        error = TreeError(name, line, reason)
        if on_error == "fail":
            raise error
        if bad is None:
            bad = error

    def finish():
        nonlocal bad
        error, bad = bad, None
        return [(None, error)] if error is not None else []

    for token, line, column in _tokens(lines):
        if token == ")" and not stack:
            # a ')' on the line where a tree closed: that tree has more ')'
            # than '(', so it is the error (once, however many follow)
            if pending is not None and line == closed:
                fail(pending.line, f"unbalanced brackets: ')' at line {line} after the tree closed")
                pending, stray = None, True
                yield from finish()
            elif not stray:
                if pending is not None:
                    yield pending, None
                    pending = None
                fail(line, "unbalanced brackets: ')' without a matching '('")
                stray = True
                yield from finish()
            continue
        stray = False
        if pending is not None:
            yield pending, None
            pending = None
        if token == "(":
            if stack and column == 0:
                fail(stack[0][2], "unbalanced brackets: tree not closed before the next tree starts "
                     f"at line {line}")
                stack.clear()
                yield from finish()
            stack.append([None, [], line])
        elif token == ")":
            label, children, start = stack.pop()
            node = None
            if label is None and not children:
                fail(start, "empty tree '()'")
            elif not children:
                fail(start, f"node ({label}) has no children")
            elif any(isinstance(c, str) for c in children) and len(children) > 1:
                fail(start, f"node ({label or ''} ...) mixes words and brackets or has several words")
            elif label is None:
                label = ""
            if bad is None and label is not None:
                node = Tree._trusted(label, children, start)
            if stack:
                if node is not None:
                    stack[-1][1].append(node)
            else:
                if bad is None and node is not None:
                    if node.is_preterminal and node.label == "":
                        fail(start, "tree is a bare word")
                    else:
                        pending, closed = node, line
                yield from finish()
        else:
            if type(token) is _Undecodable:
                fail(line, token.reason)
            if not stack:
                fail(line, f"text {token!r} outside any tree")
                yield from finish()
            elif stack[-1][0] is None and not stack[-1][1]:
                stack[-1][0] = token
            else:
                stack[-1][1].append(token)
    if pending is not None:
        yield pending, None
    if stack:
        fail(stack[0][2], "unbalanced brackets: end of file inside a tree")
        yield from finish()


def write_ptb(trees, path, outer=True):
    """Write trees one per line, atomically; ``outer`` wraps each in PTB's
    unlabelled bracket ``( ... )`` (an unlabelled root is that bracket
    already); without ``outer`` an unlabelled root over one node is written
    as that node (over several it stays: they would read as several trees)."""
    with open_output(path) as out:
        for t in trees:
            _check_atoms(t)
            if t.label == "" and not outer and len(t.children) == 1:
                t = t.children[0]
            text = t.to_string()
            out.write((f"( {text} )" if outer and t.label != "" else text) + "\n")


def check_label(label, what="a label"):
    """``label`` if bracketed text can hold it: a string without spaces or
    brackets (``""``: PTB's unlabelled outer bracket); else ValueError
    naming ``what`` it is."""
    if not (isinstance(label, str) and (label == "" or _writable(label))):
        raise ValueError(f"{what} must be a string without spaces or brackets, got {label!r}")
    return label


def _writable(atom):
    """Whether bracketed text can hold ``atom`` as a label or word: not
    empty, no spaces or brackets (what the reader cuts atoms at)."""
    return bool(atom) and _UNWRITABLE.search(atom) is None


_UNWRITABLE = re.compile(r"[\s()]")  # \s: what str.isspace() is true of, as the reader cuts


def _check_word(label, word, siblings):
    """ValueError unless ``word`` is a word that can be the only child of a
    preterminal labelled ``label``."""
    if not isinstance(word, str):
        raise ValueError(f"child {word!r:.40} of ({label} ...) is neither a Tree nor a word (a string)")
    if siblings > 1:
        raise ValueError(f"({label} ...) mixes words and trees or has several words: a word is the "
                         f"only child of its preterminal")
    if not _writable(word):
        raise ValueError(f"word {word!r} of ({label} ...) is empty or holds spaces or brackets, "
                         f"which bracketed trees cannot hold")
    if not label:
        raise ValueError(f"the preterminal of {word!r} needs a label (an unlabelled node is PTB's "
                         f"outer bracket, over trees)")


def _check_atoms(t):
    for item, entering in traverse(t):
        if entering is False or (entering and not item.label):  # a label may be empty
            continue
        atom = item if entering is None else item.label
        if not _writable(atom):
            raise ValueError(f"cannot write {atom!r}: labels and words need characters "
                             "other than brackets and spaces")


def constituents(t):
    """Phrasal constituents ``(label, l, r)`` in pre-order (a parent before its
    children; in a unary chain the outer node first)."""
    out, open_nodes, position = [], [], 0  # open_nodes: (slot in out, start)
    for node, entering in traverse(t):
        if entering is None or node.is_preterminal:
            position += entering is False
        elif entering:
            open_nodes.append((len(out), position))
            out.append(None)
        else:
            slot, start = open_nodes.pop()
            out[slot] = (node.label, start, position)
    return out


def indexed_constituents(t):
    """Constituents ``(label, l, r, k)``: ``k`` numbers the repeats of an
    identical ``(label, l, r)`` (unary chains such as ``(NP (NP ...))``), outer
    first, so that the constituent set is a set."""
    seen = Counter()
    out = []
    for c in constituents(t):
        out.append(c + (seen[c],))
        seen[c] += 1
    return out


def from_constituents(built, leaves):
    """The tree with phrasal constituents ``built`` (in build order: for equal
    spans the one built first is the inner one) over ``leaves`` ((tag, word)
    pairs).  Raises ValueError if they do not form one tree."""
    n = len(leaves)
    order = sorted(range(len(built)), key=lambda k: (built[k][1], -built[k][2], -k))
    roots, stack = [], []  # stack: (node, end) of the open ancestors

    def attach(item, start, end):
        while stack and stack[-1][1] <= start:
            stack.pop()
        if stack and stack[-1][1] < end:
            raise ValueError(f"constituents cross at word {stack[-1][1]}")
        (stack[-1][0].children if stack else roots).append(item)

    position = 0
    for k in order:
        label, l, r = built[k]
        if not 0 <= l < r <= n:
            raise ValueError(f"constituent {built[k]} is outside the sentence of {n} words")
        while position < l:
            attach(Tree(leaves[position][0], [leaves[position][1]]), position, position + 1)
            position += 1
        node = Tree(label, [])
        attach(node, l, r)
        stack.append((node, r))
    while position < n:
        attach(Tree(leaves[position][0], [leaves[position][1]]), position, position + 1)
        position += 1
    if len(roots) != 1 or roots[0].is_preterminal:
        raise ValueError("the constituents do not form a single rooted tree")
    return roots[0]

"""Label encodings that let a projective parser undo optimal projectivization.

After :func:`semiparse.projectivize` some words hang from a new head ``p``
instead of their gold head ``g``.  :func:`encode` writes into the DEPREL of
each such word (and, for ``path``, of the words on its way down to ``g``)
what is needed to find ``g`` again in the projective tree;
:func:`decode` reads it back on gold or parser output.  Labels are plain
strings, ``labels[0]`` (the root) is ignored.  The encodings are defined in
docs/treebanks.md ("Encodings"); in short, with ``||`` as separator:

``head``
    ``dep||L``: ``L`` is the label of ``g`` (empty when ``g`` is the root).
    Decoding searches breadth-first below ``p``, then below ``p``'s head,
    and so on up to the root, for the first word labelled ``L``.
``path``
    ``dep||^u``: ``g`` is reached from ``p`` by ``u`` steps up to the
    lowest common ancestor ``a`` of ``p`` and ``g``, then down along the
    words marked ``x||*`` (every word on the way from ``a`` down to ``g``).
``head+path``
    ``dep||L^u``: up ``u`` steps, then the first word labelled ``L`` among
    ``a`` and the marked words below it (breadth-first, ends of marked paths
    first), then the ``head`` search; ``dep||L^u#k`` when ``g`` is the
    ``k``-th word so found (counting from 0), so that decoding the gold is
    always exact.  A gold head at the root is written as for ``head``.

MaltParser's encodings (Nivre and Nilsson 2005) only ever move arcs up;
optimal projectivization may move them up or sideways, hence the search
upwards (``head``) and the steps up (``path``).  The separator is spaCy's.
"""
import re
from collections import namedtuple
from itertools import islice

from semiparse.heads import check_tree, find_cycle
from semiparse.errors import EncodingError

SEPARATOR = "||"
PATH_MARK = "*"
ENCODINGS = ("head", "path", "head+path")
# The tie-break of optimal projectivization that restores the most arcs,
# measured per encoding with ``compare-pseudo --round-trip`` on the shared
# dev and test files (docs/treebanks.md): ``closest`` for ``head`` and
# ``path``; ``head+path`` restores every arc with any, and needs the fewest
# labels with ``closest``.  The default of ``projectivize --encode``.
ENCODE_TIE_BREAK = "closest"

_FIELD = re.compile(r"([^^#]*)(?:\^([0-9]+))?(?:#([0-9]+))?")
_RESERVED = ("^", "#")
_EDGE = SEPARATOR[0]  # 'a|' + '||x' would read as 'a' + '||' + '|x'


Label = namedtuple("Label", "base head_label up index marked")
Label.__doc__ = """A parsed DEPREL: the plain label ``base``; ``head_label`` the
label of the original head ("" for the root, None if not given); ``up`` the
steps up of ``path`` (None if not given); ``index`` which word so labelled
(0: the first); ``marked``: the word lies on a path (``||*``)."""

Decoded = namedtuple("Decoded", "heads labels moved left bad")
Decoded.__doc__ = """What :func:`decode` gives: the decoded ``heads`` and plain
``labels``; ``moved``, the words given back another head; ``left``, the
encoded words whose arc was left where it was (no word fits the label, or
the arc would close a cycle); ``bad``, ``(word, reason)`` for labels that
do not parse or point nowhere (left exactly as they were)."""


def _ancestors(heads, x):
    """``x`` and its ancestors, nearest first (0 last)."""
    chain = [x]
    while chain[-1] > 0:
        chain.append(heads[chain[-1]])
    return chain


def encode(gold, heads, labels, encoding):
    """The labels of the projective tree ``heads`` encoding how to get back
    to the gold tree ``gold`` (see the module doc).

    ``labels[d]`` is the gold DEPREL of word ``d``.  EncodingError if a label
    already holds the separator (an encoded file) or cannot be written in a
    field (empty, ``*``, holding ``^`` or ``#``, or ending in ``|``, which
    would read as a separator followed by ``|``)."""
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    gold, heads, labels = check_tree(gold), check_tree(heads), _label_list(labels)
    if len(gold) != len(heads) or len(labels) != len(heads):
        raise ValueError(f"gold, heads and labels must have the same length, got "
                         f"{len(gold)}, {len(heads)} and {len(labels)}")
    for d in range(1, len(labels)):
        label = labels[d]
        if SEPARATOR in label:
            raise EncodingError(d, f"DEPREL {label!r} of word {d} already contains {SEPARATOR!r}: "
                                f"the file is encoded already (decode it with semiparse deprojectivize)")
        if label in ("", PATH_MARK) or any(c in label for c in _RESERVED) or label.endswith(_EDGE):
            raise EncodingError(d, f"DEPREL {label!r} of word {d} cannot be encoded (empty, "
                                f"{PATH_MARK!r}, containing '^' or '#', or ending in {_EDGE!r})")
    out = list(labels)
    marked = set()
    moved = [d for d in range(1, len(heads)) if gold[d] != heads[d]]
    for d in moved:
        g, p = gold[d], heads[d]
        field = (labels[g] if g else "") if encoding != "path" else ""
        if encoding == "path" or (encoding == "head+path" and g):
            up = _ancestors(heads, p)
            down = _ancestors(heads, g)
            common = next(a for a in up if a in set(down))
            marked.update(down[:down.index(common)])
            field += f"^{up.index(common)}"
        out[d] = labels[d] + SEPARATOR + field
    for c in marked:
        out[c] += SEPARATOR + PATH_MARK
    if encoding == "head+path":
        view = _View(heads, [None] + [parse_label(x) for x in out[1:]])
        for d in moved:
            if view.find(d) != gold[d]:
                label = view.labels[d]
                k = list(view.candidates(d, label.head_label, label.up)).index(gold[d])
                field, mark = (out[d].split(SEPARATOR) + [""])[1:3]
                out[d] = SEPARATOR.join([label.base, f"{field}#{k}"] + ([mark] if mark else []))
    return out


def _label_list(labels):
    """``labels`` as a list whose entries after the root's are strings, or ValueError."""
    try:
        out = None if isinstance(labels, (str, bytes)) else list(labels)
    except TypeError:
        out = None
    if out is None:
        raise ValueError(f"labels must be a sequence of DEPRELs (the root's first), got {labels!r:.80}")
    d = next((d for d in range(1, len(out)) if not isinstance(out[d], str)), None)
    if d is not None:
        raise ValueError(f"labels[{d}], the DEPREL of word {d}, must be a string, got {out[d]!r}")
    return out


def parse_label(label):
    """The :class:`Label` of a DEPREL; ValueError (the reason) if it does
    not parse."""
    parts = label.split(SEPARATOR)
    marked = len(parts) > 1 and parts[-1] == PATH_MARK
    if marked:
        parts.pop()
    base = parts[0]
    if not base or len(parts) > 2:
        raise ValueError(f"DEPREL {label!r} is not LABEL, LABEL{SEPARATOR}FIELD or either "
                         f"followed by {SEPARATOR}{PATH_MARK}")
    if len(parts) == 1:
        return Label(base, None, None, 0, marked)
    match = _FIELD.fullmatch(parts[1])
    if match is None or (match[3] is not None and not match[1]):
        raise ValueError(f"DEPREL {label!r}: field {parts[1]!r} is not HEADLABEL, ^STEPS, "
                         f"HEADLABEL^STEPS or one of these with #INDEX after a HEADLABEL")
    head_label, up, index = match.groups()
    up = None if up is None else int(up)
    if up is not None and not head_label:
        head_label = None
    return Label(base, head_label, up, int(index or 0), marked)


class _View:
    """An encoded tree as decoding reads it (``labels[d]`` a :class:`Label`,
    or None for a label that does not parse)."""

    def __init__(self, heads, labels):
        self.heads, self.labels = heads, labels
        self.children = [[] for _ in heads]
        for d in range(1, len(heads)):
            self.children[heads[d]].append(d)
        self.base = [None] + [x.base if x else None for x in labels[1:]]

    def marked_below(self, x):
        return [c for c in self.children[x] if self.labels[c] and self.labels[c].marked]

    def find(self, d):
        """The original head of ``d`` as its label says, or None."""
        label = self.labels[d]
        chain = _ancestors(self.heads, self.heads[d])
        if label.head_label is None:  # path: follow the marks, at a fork the branch nearest to d
            a = chain[label.up]
            while below := self.marked_below(a):
                a = min(below, key=lambda c: (abs(c - d), c))
            return a
        return next(islice(self.candidates(d, label.head_label, label.up), label.index, None), None)

    def candidates(self, d, head_label, up):
        """The words other than ``d`` labelled ``head_label`` (the root for
        ""), in the order decoding tries them: with ``up``, ``up`` steps
        above ``d``'s head and the marked words below, breadth-first, ends of
        marked paths first; then breadth-first below ``d``'s head, then
        below each of its ancestors in turn."""
        if head_label == "":
            yield 0
            return
        chain = _ancestors(self.heads, self.heads[d])
        seen = set()
        if up is not None:
            queue, inner = [chain[up]], []
            for x in queue:
                below = self.marked_below(x)
                if x != d and self.base[x] == head_label:
                    if below:
                        inner.append(x)
                    else:
                        seen.add(x)
                        yield x
                queue.extend(below)
            for x in inner:
                seen.add(x)
                yield x
        done = set()
        for top in chain:
            queue = [top]
            for x in queue:
                if x in done:
                    continue
                done.add(x)
                if x != d and x not in seen and self.base[x] == head_label:
                    yield x
                queue.extend(self.children[x])


def decode(heads, labels, strict=True, single_root=False):
    """Undo :func:`encode` on ``heads`` (gold or parser output, any tree):
    a :class:`Decoded` with plain labels and the heads found.

    The labels are decoded all at once on the encoded tree; an arc whose
    label no word fits is left where it is, and if the heads found close a
    cycle, the arcs of the cycle are left one by one (the rightmost word
    first) until none remains, so the result is always a tree.  A label
    that does not parse, whose steps up go above the root or whose ``#k``
    goes beyond the other words of the sentence raises EncodingError when
    ``strict``; otherwise it is left as it was and listed in ``bad``.  With
    ``single_root`` (UD), so is a label that attaches its word to the root
    when the decoded tree would then have several words there."""
    heads, labels = check_tree(heads), _label_list(labels)
    if len(labels) != len(heads):
        raise ValueError(f"heads and labels must have the same length, got {len(heads)} and {len(labels)}")
    n = len(heads) - 1
    parsed, bad = [None] * (n + 1), []
    for d in range(1, n + 1):
        try:
            parsed[d] = parse_label(labels[d])
        except ValueError as exc:
            bad.append((d, f"word {d}: {exc}"))
            continue
        up = parsed[d].up
        if up is not None and up >= len(_ancestors(heads, heads[d])):
            depth = len(_ancestors(heads, heads[d])) - 1
            bad.append((d, f"word {d}: DEPREL {labels[d]!r} goes {up} steps up from word "
                           f"{heads[d]}, which is {depth} below the root"))
            parsed[d] = None
        elif 0 < parsed[d].index >= n - 1:  # the candidates are the other words, at most n - 1
            bad.append((d, f"word {d}: DEPREL {labels[d]!r} asks for word #{parsed[d].index} so "
                           f"labelled, but the sentence has {n - 1} other words"))
            parsed[d] = None
    if strict and bad:
        raise EncodingError(*min(bad))
    view = _View(heads, parsed)
    found = {d: view.find(d) for d in range(1, n + 1)
             if parsed[d] is not None and not (parsed[d].head_label is None and parsed[d].up is None)}
    result, left = _settled(heads, found)
    roots = [d for d in range(1, n + 1) if result[d] == 0]
    if single_root and len(roots) > 1 and any(heads[d] for d in roots):
        listed = ", ".join(map(str, roots))
        for d in (d for d in roots if heads[d]):
            bad.append((d, f"word {d}: DEPREL {labels[d]!r} attaches word {d} to the root: "
                           f"{len(roots)} words attached to 0 (words {listed}); UD allows one"))
            del found[d]
        if strict:
            raise EncodingError(*min(bad))
        result, left = _settled(heads, found)
    unread = {d for d, _ in bad}
    out_labels = [labels[0]] + [labels[d] if d in unread else parsed[d].base for d in range(1, n + 1)]
    moved = [d for d in range(1, n + 1) if result[d] != heads[d]]
    return Decoded(result, out_labels, moved, sorted(left), sorted(bad))


def _settled(heads, found):
    """``(result, left)``: ``heads`` with each word of ``found`` given its
    head found (None: left where it is), then the arcs of each cycle left
    one by one, the rightmost word first."""
    result, left = list(heads), [d for d, g in found.items() if g is None]
    for d, g in found.items():
        if g is not None:
            result[d] = g
    while (cycle := find_cycle(result)) is not None:
        d = max(x for x in cycle if result[x] != heads[x])
        result[d] = heads[d]
        left.append(d)
    return result, left


def round_trip(gold, heads, labels, encoding):
    """``(lost, restored, encoded_labels)`` for one tree: the gold arcs that
    the projective ``heads`` lose, how many of them decoding the encoded
    labels gives back exactly, and the encoded labels."""
    encoded = encode(gold, heads, labels, encoding)
    decoded = decode(heads, encoded).heads
    lost = [d for d in range(1, len(gold)) if heads[d] != gold[d]]
    return len(lost), sum(decoded[d] == gold[d] for d in lost), encoded

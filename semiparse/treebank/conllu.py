"""Streaming CoNLL-U reading and writing that changes nothing but HEADs.

A file is read one sentence at a time (memory does not grow with the number
of sentences).  Lines may end in ``\\n``, ``\\r\\n`` or a lone ``\\r``, even
mixed.  Every sentence keeps its raw bytes, so writing it back reproduces
the input byte for byte -- comments, multiword-token ranges, empty nodes,
DEPS, MISC, labels, line endings, blank lines -- except the HEAD
column of the words whose head was changed (and, with ``mark=True``, an
``OrigHead=H`` entry in their MISC column so that the change can be undone).

Blocks are cut, and the ID and HEAD columns of plain word lines read, in C
(:mod:`semiparse.treebank._conllu`); any other line is read here, its values parsed
with the ``conllu`` package's field parsers (``parse_id_value``,
``parse_int_value``), which the C code follows.  Columns are split on tabs
only, as the CoNLL-U format says (``conllu.parse_line`` would also split on
runs of spaces, which may occur inside a FORM).  ``semiparse projectivize``
reads with ``passthrough=True``: a tree that it would not change is never
made a :class:`Sentence`, only copied.
:meth:`Sentence.tokenlist` gives the full ``conllu.TokenList`` when wanted.

Problems in the input are :class:`ConlluError` (a ``ValueError``) whose text
is ``FILE:LINE: reason``.  The reader never raises them itself: it records
them on the sentence (``Sentence.errors``) and :func:`apply_policy` decides
(``fail``: raise the first one, ``skip``: drop the sentence, ``keep``: copy
it unchanged), so one bad tree need not stop a whole treebank.
"""
import contextlib
import functools
import io
import os
import re
import sys
from dataclasses import dataclass, field

import conllu
import numpy as np
from conllu.parser import ParseException, parse_id_value, parse_int_value

from semiparse.treebank._conllu import NOT_SINGLE_TREE, PROJECTIVE, BlockScanner, parse_words
from semiparse.heads import int_tuple, is_tree, tree_problems
from semiparse.treebank.partial import partial_flag, partial_problems
from semiparse.treebank.outputs import open_output as atomic_output  # the name documented before outputs.py existed
from semiparse.treebank.columns import COLUMN_NAMES, DEPREL, DEPS, HEAD, MISC, moved_deps
from semiparse.errors import ConlluError, UnknownHead

# The same few IDs and heads recur on every sentence: remember the parses.
_id_value = functools.lru_cache(maxsize=4096)(parse_id_value)
_int_value = functools.lru_cache(maxsize=4096)(parse_int_value)

ON_ERROR = ("fail", "skip", "keep")
MARK_KEY = "OrigHead"


@dataclass
class Sentence:
    """One sentence as read: its raw bytes plus the basic tree.

    ``raw`` holds the exact input bytes (line endings included) from the
    first line of the sentence up to and including the blank line(s) after
    it, as one block: a sentence with a million comment lines costs the
    size of those lines, not a Python string for each.  ``spans[d - 1]`` is
    the byte range of word ``d``'s line without its line ending, and
    ``word_lines[d - 1]`` the index of that line in :attr:`lines`.
    ``heads`` (``heads[0] == -1``) is ``None`` when the tree is unusable;
    ``errors`` then says why.  ``warnings`` are problems that do not stop
    processing.

    Text is decoded as UTF-8 with ``surrogateescape``: a sentence that is
    not valid UTF-8 (an error) still gives back its exact bytes when
    encoded the same way.
    """

    file: str
    first_line: int
    raw: bytes
    spans: list
    word_lines: list
    heads: list = None
    errors: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def __len__(self):
        """Number of words (not counting the root)."""
        return len(self.word_lines)

    @property
    def lines(self):
        """The input lines (line endings included), decoded; built on demand."""
        return [_decode(line) for line in self.raw.splitlines(keepends=True)]

    def line_of(self, word):
        """1-based line number in the file of word ``word`` (1..n)."""
        return self.first_line + self.word_lines[self._index(word)]

    def _index(self, word):
        """``word - 1``, or ValueError unless ``word`` is an integer 1..n."""
        if (isinstance(word, (bool, np.bool_)) or not isinstance(word, (int, np.integer))
                or not 1 <= word <= len(self)):
            raise ValueError(f"word must be an integer 1..{len(self)} (a word of "
                             f"{self.file}:{self.first_line}), got {word!r}")
        return word - 1

    def text(self):
        """The sentence exactly as read."""
        return _decode(self.raw)

    def _body_lines(self):
        """``(line number, start, line)`` of each line of :attr:`raw` (line
        ending kept), the byte-order mark that may open a file left out."""
        for number, match in enumerate(_LINE.finditer(self.raw), self.first_line):
            start, line = match.start(), match.group()
            if number == 1 and line.startswith(BOM):
                start, line = start + 3, line[3:]
            yield number, start, line

    @property
    def start_line(self):
        """The line number of the sentence's first line that is not blank
        (:attr:`first_line` may be a blank line that opens a file)."""
        return next((number for number, _, line in self._body_lines() if line.strip()),
                    self.first_line)

    def comments(self):
        """The comment lines before the first word line, without line endings
        (blank lines that open a file skipped)."""
        for _, _, line in self._body_lines():
            line = line.rstrip(b"\r\n")
            if line.startswith(b"#"):
                yield _decode(line)
            elif line.strip():
                return

    def tokenlist(self):
        """The sentence parsed by ``conllu`` (all columns, metadata)."""
        return conllu.parse_token_and_metadata(_decode(b"".join(line for *_, line in self._body_lines())))

    def columns(self, word):
        """The 10 columns of word ``word`` (1..n)."""
        start, stop = self.spans[self._index(word)]
        return _decode(self.raw[start:stop]).split("\t")

    def deprels(self):
        """The DEPREL of every word, ``deprels[d]`` for word ``d`` (index 0: None)."""
        return [None] + [self.columns(d)[DEPREL] for d in range(1, len(self) + 1)]

    def relabeled(self, heads, deprels, metadata=None):
        """The sentence's bytes with the HEAD and DEPREL of each word set to
        ``heads[d]`` and ``deprels[d]`` where they differ; every other byte
        as read (the one CoNLL-U writer of parsers: ``semiparse parse``).

        The words' HEAD column may be unusable as read (``_``, a cycle: the
        input of a parser).  ``metadata`` (``{key: value}``) sets comment
        lines ``# key = value``: each replaces the sentence's comment of that
        key, or comes before the sentence's first line (after a byte order
        mark and the blank lines before it), with the sentence's own line
        ending.

        ValueError unless ``heads`` and ``deprels`` hold an entry for the
        root (not read) and one per word: a head 0..n (or -1 where
        :attr:`heads` has -1, an unknown head kept) and a label that is not
        empty and holds no tab or line break; nor may a metadata key or
        value hold a line break."""
        heads = self._checked_heads(heads)
        deprels = self._checked_deprels(deprels)
        changed = {}
        for d in range(1, len(self) + 1):
            cols = self.columns(d)
            head = str(heads[d])
            moved = self.heads is None or heads[d] != self.heads[d]
            if (moved and cols[HEAD] != head) or deprels[d] != cols[DEPREL]:
                if moved:
                    cols[HEAD] = head
                cols[DEPREL] = deprels[d]
                changed[d] = cols
        return self._with_columns(changed, metadata)

    def _checked_heads(self, heads):
        """``heads`` as a tuple of ints, or ValueError (see :meth:`relabeled`)."""
        where = f"{self.file}:{self.first_line}"
        heads = int_tuple(heads, f"{where}: heads must be a sequence of integer heads")
        if len(heads) != len(self) + 1:
            raise ValueError(f"{where}: {len(heads) - 1} heads given for a sentence of "
                             f"{len(self)} words")
        for d in range(1, len(heads)):
            kept_unknown = heads[d] == -1 and self.heads is not None and self.heads[d] == -1
            if not (0 <= heads[d] <= len(self) or kept_unknown):
                raise ValueError(f"{self.file}:{self.line_of(d)}: head {heads[d]} of word {d} "
                                 f"is out of range 0..{len(self)}")
        return heads

    def _checked_deprels(self, deprels):
        """``deprels`` as a list, or ValueError (see :meth:`relabeled`)."""
        try:
            labels = None if isinstance(deprels, (str, bytes)) else list(deprels)
        except TypeError:
            labels = None
        if labels is None or len(labels) != len(self) + 1:
            raise ValueError(f"{self.file}:{self.first_line}: deprels must be a sequence of "
                             f"{len(self) + 1} labels (the root's, not read, then one per word), "
                             f"got {deprels!r:.80}")
        for d in range(1, len(labels)):
            if not isinstance(labels[d], str) or not labels[d] or _BREAK_OR_TAB.search(labels[d]):
                raise ValueError(f"{self.file}:{self.line_of(d)}: the DEPREL of word {d} must be a "
                                 f"non-empty string without tabs or line breaks, got {labels[d]!r}")
        return labels

    def _with_columns(self, changed, metadata=None):
        """The sentence's bytes with the words in ``changed`` (word -> columns)
        rewritten and the ``metadata`` comments set (see :meth:`relabeled`);
        every other byte as read."""
        edits = [(*self.spans[d - 1], _encode_text("\t".join(cols))) for d, cols in changed.items()]
        if metadata:
            edits += self._metadata_edits(metadata)
        pieces, done = [], 0
        for start, stop, text in sorted(edits, key=lambda edit: edit[:2]):
            pieces += [self.raw[done:start], text]
            done = stop
        pieces.append(self.raw[done:])
        return b"".join(pieces)

    def _metadata_edits(self, metadata):
        """``(start, stop, bytes)`` edits of the raw block that set each
        ``# key = value`` comment of ``metadata``."""
        for key, value in metadata.items():
            if _BREAK.search(f"{key}{value}"):
                raise ValueError(f"{self.file}:{self.first_line}: metadata {key!r}: {value!r} holds "
                                 f"a line break (a comment is one line)")
        first = eol = None
        found = {}
        for _, start, line in self._body_lines():
            body = line.rstrip(b"\r\n")
            if first is None and body.strip():
                first = start
            if eol is None and len(body) < len(line):
                eol = line[len(body):]
            for key in metadata:
                if key not in found and body.startswith(_encode_text(f"# {key} =")):
                    found[key] = (start, start + len(body))
        lines = {key: _encode_text(f"# {key} = {value}") for key, value in metadata.items()}
        edits = [(*found[key], line) for key, line in lines.items() if key in found]
        new = b"".join(line + (eol or b"\n") for key, line in lines.items() if key not in found)
        if new:
            at = len(self.raw) if first is None else first
            edits.append((at, at, new))
        return edits

    def render(self, heads=None, mark=False, deps=False):
        """The sentence's text with the HEADs of words whose head differs in
        ``heads`` replaced; with ``mark`` each changed word also gets
        ``OrigHead=<old head>`` appended to MISC; with ``deps`` its DEPS
        entry for the old head moves to the new one (:func:`moved_deps`).
        ``heads`` is checked as by :meth:`relabeled` (a sentence whose tree
        is unusable is given as read, whatever ``heads``)."""
        return _decode(self.render_bytes(heads, mark, deps))

    def render_bytes(self, heads=None, mark=False, deps=False):
        """:meth:`render` as bytes (what a binary output takes as it is)."""
        if heads is None or self.heads is None:
            return self.raw
        heads = self._checked_heads(heads)
        changed = {}
        for d in range(1, len(heads)):
            if heads[d] == self.heads[d]:
                continue
            cols = self.columns(d)
            cols[HEAD] = str(heads[d])
            if deps:
                cols[DEPS] = moved_deps(cols[DEPS], cols[DEPREL], self.heads[d], heads[d])
            if mark:
                entries = [] if cols[MISC] == "_" else cols[MISC].split("|")
                if any(e.split("=", 1)[0] == MARK_KEY for e in entries):
                    raise ConlluError(
                        self.file, self.line_of(d),
                        f"MISC already holds {MARK_KEY} (run with --unmark first)",
                    )
                cols[MISC] = "|".join(entries + [f"{MARK_KEY}={self.heads[d]}"])
            changed[d] = cols
        return self._with_columns(changed)

    def unmarked(self, on_error="fail", warn=None, partial=False, multiple_roots="error"):
        """``(text, heads)``: every word with ``OrigHead=H`` in MISC gets HEAD
        ``H`` back and loses that entry (MISC becomes ``_`` when that was its
        only entry; an empty MISC, marked as ``|OrigHead=H``, becomes empty again).

        A bad ``OrigHead`` value, or restored heads that are not a tree
        (cycle, self-loop), is an error of this sentence under ``on_error``
        as in :func:`apply_policy`: ``fail`` raises it, ``keep`` gives the
        sentence unchanged, ``skip`` gives ``("", None)``.  So is an
        ``OrigHead`` given twice, and a word restored to the root beside
        another (with ``multiple_roots="warn"``, a warning).  ``partial``:
        words whose HEAD is ``_`` (``-1``) keep their unknown head, and the
        restored heads must form a partial tree."""
        _check_policies(on_error, multiple_roots)
        partial = partial_flag(partial)
        heads = None if self.heads is None else list(self.heads)
        changed, errors = {}, []
        for d in range(1, len(self) + 1):
            cols = self.columns(d)
            if len(cols) != 10 or MARK_KEY not in cols[MISC]:
                continue
            entries = cols[MISC].split("|")
            marks = [e for e in entries if e.split("=", 1)[0] == MARK_KEY]
            if not marks:
                continue
            if len(marks) > 1:
                errors.append(ConlluError(self.file, self.line_of(d),
                                          f"{MARK_KEY} given {len(marks)} times in MISC {cols[MISC]!r}"))
                continue
            kept = [e for e in entries if e not in marks]
            value = marks[0].split("=", 1)
            try:
                original = parse_int_value(value[1] if len(value) == 2 else "")
            except ParseException:
                original = None
            if original is None or not 0 <= original <= len(self):
                errors.append(ConlluError(self.file, self.line_of(d), f"bad {MARK_KEY} value in MISC {cols[MISC]!r}"))
                continue
            cols[HEAD] = str(original)
            cols[MISC] = "|".join(kept) if kept else "_"  # [""]: MISC was empty, not "_"
            changed[d] = cols
            if heads is not None:
                heads[d] = original
        # A word restored to the root: several there is an error with multiple_roots="error".
        rooted = heads is not None and any(heads[d] == 0 != self.heads[d] for d in changed)
        if not errors and heads is not None and (partial or rooted or not is_tree(heads)):
            problems = [
                (ConlluError(self.file, self.line_of(word), f"after restoring {MARK_KEY}: {reason}"),
                 roots_only)
                for word, reason, roots_only in (partial_problems if partial else tree_problems)(heads)
                if rooted or not roots_only
            ]
            errors = [p for p, roots_only in problems if not roots_only or multiple_roots == "error"]
            for problem in (p for p, roots_only in problems if roots_only and multiple_roots == "warn"):
                (warn or _stderr)(f"{problem.file}:{problem.line}: warning: {problem.reason}")
        if errors and not _tolerated(errors, on_error, warn):
            return "", None
        if errors:
            return self.text(), self.heads
        return _decode(self._with_columns(changed)), heads


_LINE = re.compile(rb"[^\r\n]+(?:\r\n|\r|\n)?|\r\n|\r|\n")  # one line, as bytes.splitlines cuts
_BREAK = re.compile(r"[\r\n]")
_BREAK_OR_TAB = re.compile(r"[\t\r\n]")


def _decode(data):
    return data.decode("utf-8", "surrogateescape")


def _encode_text(text):
    return text.encode("utf-8", "surrogateescape")


def read_conllu(source, name=None, multiple_roots="error", passthrough=False, partial=False):
    """Yield the :class:`Sentence` objects of a CoNLL-U file, one at a time.

    ``source``: a path, ``"-"`` (standard input), a binary or text file
    object or an iterable of byte strings (not a bytes object itself:
    ``io.BytesIO(data)``).  ``name`` is the file name used in messages.  ``multiple_roots``:
    ``"error"`` (UD: exactly one word attached to 0) or ``"warn"`` (accept
    the tree -- every algorithm here handles a root with several children --
    and record a warning).  ``passthrough``: yield a sentence that no
    projectivization would change (valid UTF-8, a projective tree with one
    word on the root, or no words) as its raw bytes, without building a
    :class:`Sentence` (what ``semiparse projectivize`` copies as read).
    ``partial``: a HEAD of ``_`` is an unknown head, ``-1`` in
    ``Sentence.heads``, and the known heads must form a partial tree
    (:mod:`semiparse.treebank.partial`); otherwise ``_`` is an error.
    """
    _check_policies("fail", multiple_roots)
    partial = partial_flag(partial)
    with _open_binary(source) as (chunks, default_name):
        yield from _sentences(chunks, name or default_name, multiple_roots, passthrough, partial)


@contextlib.contextmanager
def _open_binary(source):
    if source == "-" or source is None:
        yield _chunks(sys.stdin.buffer), "<stdin>"
    elif isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as stream:
            yield _chunks(stream), str(source)
    elif isinstance(source, io.TextIOBase):
        binary = getattr(source, "buffer", None)
        chunks = _chunks(binary) if binary is not None else (line.encode("utf-8", "surrogateescape") for line in source)
        yield chunks, getattr(source, "name", "<stream>")
    elif hasattr(source, "read"):
        yield _chunks(source), getattr(source, "name", "<stream>")
    elif isinstance(source, (bytes, bytearray, memoryview)) or not hasattr(source, "__iter__"):
        raise ValueError(f"source must be a path, '-', a file object or an iterable of byte "
                         f"strings, got {type(source).__name__} (for data in memory: io.BytesIO(data))")
    else:
        yield _byte_strings(source), getattr(source, "name", "<stream>")


def _byte_strings(chunks):
    """The items of ``chunks``, or ValueError at the first that is not bytes."""
    for chunk in chunks:
        if not isinstance(chunk, (bytes, bytearray)):
            raise ValueError(f"source must give byte strings, got {type(chunk).__name__} "
                             f"{chunk!r:.40} (a text file object is read as UTF-8)")
        yield chunk


CHUNK = 1 << 16


def _chunks(stream):
    """Blocks of bytes as they become available (``read1`` does not wait
    for a full block, so a pipe is processed as it is written)."""
    read = getattr(stream, "read1", None) or stream.read
    return iter(lambda: read(CHUNK), b"")


def _blocks(chunks):
    """``(raw, first_line)`` of each block of a byte stream given in pieces:
    a sentence's lines and the blank lines after it (blank lines at the
    start of the file go with the first sentence).  Lines end in ``\\n``,
    ``\\r\\n`` or a lone ``\\r`` (old Mac files), as ``bytes.splitlines`` cuts
    them.  A block is given as soon as the first line of the next one has
    been read."""
    scanner = BlockScanner()
    for chunk in chunks:
        scanner.feed(chunk)
        while (block := scanner.next()) is not None:
            yield block
    while (block := scanner.next(eof=True)) is not None:
        yield block


def count_sentences(path):
    """Sentences in a file, cheaply: the blocks :func:`read_conllu` yields
    (for progress bars, so nothing is checked)."""
    with open(path, "rb") as stream:
        return sum(1 for _ in _blocks(_chunks(stream)))


BOM = b"\xef\xbb\xbf"


def _sentences(chunks, name, multiple_roots, passthrough=False, partial=False):
    """The :class:`Sentence` of each block; with ``passthrough``, the raw
    bytes instead for a block that nothing would change: valid UTF-8, a
    projective tree with one word on the root, or no words.

    Word lines are read in C (:func:`semiparse.treebank._conllu.parse_words`); a block
    it does not take (anything unusual, every error) is read line by line
    here.  A block costs about its size in memory whatever its number of
    lines."""
    for raw, first in _blocks(chunks):
        words = None if first == 1 and raw.startswith(BOM) else parse_words(raw)
        if words is None:
            block = _Block(name, first, partial)
            for number, match in enumerate(_LINE.finditer(raw), first):
                line = match.group()
                text = line[3:] if number == 1 and line.startswith(BOM) else line
                if text.strip() and not text.startswith(b"#"):
                    block.word(number, match.end() - len(text), text)
            yield block.build(raw, multiple_roots)
            continue
        heads, spans, word_lines, kind = words
        if passthrough and kind == PROJECTIVE and _is_utf8(raw):
            yield raw
            continue
        block = _Block(name, first, partial)
        block.spans, block.word_lines, block.heads = spans, word_lines, heads
        yield block.build(raw, multiple_roots, single_tree=kind != NOT_SINGLE_TREE)


def rendered(item, heads=None, mark=False, deps=False):
    """The bytes to write for ``item``, a :class:`Sentence` (rendered with
    ``heads`` as :meth:`Sentence.render` does) or the raw bytes of a block
    passed through by ``read_conllu(..., passthrough=True)`` (as read)."""
    return item if isinstance(item, bytes) else item.render_bytes(heads, mark, deps)


def _is_utf8(raw):
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _empty_column(k):
    return f"column {k + 1} ({COLUMN_NAMES[k]}) is empty: CoNLL-U writes _ for no value"


class _Block:
    """The word lines of a sentence being read, parsed as they come."""

    def __init__(self, name, first, partial=False):
        self.name, self.first, self.partial = name, first, partial
        self.spans, self.word_lines, self.heads, self.errors = [], [], [-1], []
        self.unknown = set()  # words whose HEAD is _ (read with partial)
        self.last_range = None  # (line, A, B) of the multiword range that ends last

    def word(self, number, start, text):
        """Line ``number`` (``text``, at byte ``start`` of the block): a word,
        multiword range or empty node."""
        body = text.rstrip(b"\r\n")
        if body.startswith(BOM):  # invisible: name it (two files joined?)
            return self._error(number, "the line starts with a byte-order mark (U+FEFF), which "
                                       "only the first line of a file may have")
        cols = body.decode("utf-8", "surrogateescape").split("\t")
        if len(cols) != 10:
            return self._error(number, f"expected 10 tab-separated columns, found {len(cols)}")
        # A column may be empty in MISC alone (kept as it is); an empty HEAD or
        # DEPREL of a word is a problem of its tree only (parse replaces both)
        empty = next((k for k in range(MISC) if not cols[k] and (k < HEAD or k == DEPS)), None)
        if empty is not None:
            return self._error(number, _empty_column(empty))
        try:
            token_id = _id_value(cols[0])
        except ParseException:
            token_id = None
        if token_id is None:
            return self._error(number, f"bad ID {cols[0]!r}")
        heads = self.heads
        if not isinstance(token_id, int):  # multiword range or empty node: no basic head
            if not cols[HEAD] or not cols[DEPREL]:
                return self._error(number, _empty_column(HEAD if not cols[HEAD] else DEPREL))
            if token_id[1] == "-":
                if token_id[0] != len(heads):
                    return self._error(number, f"multiword token {cols[0]} must come right before "
                                               f"word {token_id[0]} (the next word is {len(heads)})")
                if self.last_range is None or token_id[2] > self.last_range[2]:
                    self.last_range = (number, token_id[0], token_id[2])
            return
        if token_id != len(heads):
            return self._error(number, f"word ID {token_id} out of sequence (expected {len(heads)})")
        self.spans.append((start, start + len(body)))
        self.word_lines.append(number - self.first)
        if not cols[DEPREL]:
            self._error(number, f"DEPREL of word {token_id} is empty: CoNLL-U writes _ for no label")
        head = cols[HEAD]
        try:
            heads.append(_int_value(head) if head != "_" else -1)
        except ParseException:
            heads.append(-1)
            return self._error(number, f"HEAD {head!r} of word {token_id} is not an integer")
        if head == "_":
            if self.partial:
                self.unknown.add(token_id)
            else:
                self.errors.append(UnknownHead(self.name, number, token_id))

    def _error(self, number, reason):
        self.errors.append(ConlluError(self.name, number, reason))

    def build(self, raw, multiple_roots, single_tree=False):
        """The :class:`Sentence` of the block's bytes ``raw`` (``single_tree``:
        its heads are known to be a tree with one word on the root)."""
        sentence = Sentence(self.name, self.first, raw, self.spans, self.word_lines)
        errors, heads = self.errors, self.heads
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            errors.append(self._utf8_error(raw, exc))
            errors.sort(key=lambda e: e.line)
        if self.last_range is not None and self.last_range[2] >= len(heads):
            number, a, b = self.last_range
            errors.append(ConlluError(self.name, number, f"multiword token {a}-{b} ends after the "
                                                         f"last word ({len(heads) - 1})"))
            errors.sort(key=lambda e: e.line)
        if self.unknown:
            problems = [(d, f"HEAD -1 of word {d} is out of range 0..{len(heads) - 1}", False)
                        for d in range(1, len(heads)) if heads[d] == -1 and d not in self.unknown]
            problems = problems or partial_problems(heads)
        elif not (errors or single_tree) and len(heads) > 1 and not (is_tree(heads) and heads.count(0) == 1):
            problems = tree_problems(heads)
        else:
            problems = []
        if not errors:
            for word, reason, roots_only in problems:
                problem = ConlluError(self.name, sentence.line_of(word), reason)
                if roots_only and multiple_roots == "warn":
                    sentence.warnings.append(problem)
                else:
                    errors.append(problem)
        sentence.errors = errors
        if not errors:
            sentence.heads = heads
        return sentence

    def _utf8_error(self, raw, exc):
        """The first invalid byte as ``FILE:LINE: not valid UTF-8 (...)``."""
        before = (raw[:exc.start] + b"x").splitlines()
        return ConlluError(
            self.name, self.first + len(before) - 1,
            f"not valid UTF-8 ({exc.reason} at byte {len(before[-1]) - 1})",
        )


def apply_policy(sentences, on_error="fail", warn=None):
    """Yield ``(sentence, usable)`` under the ``--on-error`` policy (raw
    bytes from ``read_conllu(..., passthrough=True)`` come as ``(raw, False)``).

    ``fail`` raises the first error; ``skip`` drops bad sentences; ``keep``
    yields them with ``usable`` False (to be copied unchanged).  Errors that
    are not raised and all warnings go to ``warn`` (a callable taking the
    message; default: print to standard error).
    """
    _check_policies(on_error, "error")
    warn = warn or _stderr
    for sentence in sentences:
        if isinstance(sentence, bytes):  # passed through by the reader: copied unchanged
            yield sentence, False
            continue
        for problem in sentence.warnings:
            warn(f"{problem.file}:{problem.line}: warning: {problem.reason}")
        if sentence.errors and not _tolerated(sentence.errors, on_error, warn):
            continue
        yield sentence, not sentence.errors


def _check_policies(on_error, multiple_roots):
    """ValueError unless ``on_error`` is one of :data:`ON_ERROR` and
    ``multiple_roots`` ``"error"`` or ``"warn"``."""
    if not (isinstance(on_error, str) and on_error in ON_ERROR):
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    if not (isinstance(multiple_roots, str) and multiple_roots in ("error", "warn")):
        raise ValueError(f"multiple_roots must be 'error' or 'warn', not {multiple_roots!r}")


def _tolerated(errors, on_error, warn=None):
    """Whether a sentence with ``errors`` is kept (copied unchanged) under
    ``on_error``: ``fail`` raises the first error, ``skip`` and ``keep``
    pass each one to ``warn``."""
    if on_error == "fail":
        raise errors[0]
    action = "sentence skipped" if on_error == "skip" else "sentence copied unchanged"
    for problem in errors:
        (warn or _stderr)(f"{problem} ({action})")
    return on_error == "keep"


def _stderr(message):
    print(message, file=sys.stderr)

"""Streaming CoNLL-U reading and writing that changes nothing but HEADs.

A file is read one sentence at a time (memory does not grow with the number
of sentences).  Every sentence keeps its raw lines, so writing it back
reproduces the input byte for byte -- comments, multiword-token ranges, empty
nodes, DEPS, MISC, labels, line endings, blank lines -- except the HEAD
column of the words whose head was changed (and, with ``mark=True``, an
``OrigHead=H`` entry in their MISC column so that the change can be undone).

Column values are parsed with the ``conllu`` package's field parsers
(``parse_id_value``, ``parse_int_value``); the columns themselves are split
on tabs only, as the CoNLL-U format says (``conllu.parse_line`` would also
split on runs of spaces, which may occur inside a FORM).
:meth:`Sentence.tokenlist` gives the full ``conllu.TokenList`` when wanted.

Problems in the input are :class:`ConlluError` (a ``ValueError``) whose text
is ``FILE:LINE: reason``.  The reader never raises them itself: it records
them on the sentence (``Sentence.errors``) and :func:`apply_policy` decides
(``fail``: raise the first one, ``skip``: drop the sentence, ``keep``: copy
it unchanged), so one bad tree need not stop a whole treebank.
"""
import contextlib
import io
import os
import sys
from dataclasses import dataclass, field

import conllu
from conllu.parser import ParseException, parse_id_value, parse_int_value

from .outputs import open_output as atomic_output  # the name documented before outputs.py existed

ON_ERROR = ("fail", "skip", "keep")
MARK_KEY = "OrigHead"
HEAD, MISC = 6, 9  # column indices


class ConlluError(ValueError):
    """A problem in a CoNLL-U file: ``FILE:LINE: reason``."""

    def __init__(self, file, line, reason):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}:{line}: {reason}")


@dataclass
class Sentence:
    """One sentence as read: raw lines plus the basic tree.

    ``lines`` are the exact input lines (line endings included) from the
    first line of the sentence up to and including the blank line(s) after
    it.  ``word_lines[d - 1]`` is the index in ``lines`` of word ``d``.
    ``heads`` (``heads[0] == -1``) is ``None`` when the tree is unusable;
    ``errors`` then says why.  ``warnings`` are problems that do not stop
    processing.
    """

    file: str
    first_line: int
    lines: list
    word_lines: list
    heads: list = None
    errors: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def __len__(self):
        """Number of words (not counting the root)."""
        return len(self.word_lines)

    def line_of(self, word):
        """1-based line number in the file of word ``word`` (1..n)."""
        return self.first_line + self.word_lines[word - 1]

    def text(self):
        """The sentence exactly as read."""
        return "".join(self.lines)

    def tokenlist(self):
        """The sentence parsed by ``conllu`` (all columns, metadata)."""
        return conllu.parse_token_and_metadata(self.text())

    def render(self, heads=None, mark=False):
        """The sentence's text with the HEADs of words whose head differs in
        ``heads`` replaced; with ``mark`` each changed word also gets
        ``OrigHead=<old head>`` appended to MISC."""
        if heads is None or self.heads is None:
            return self.text()
        if len(heads) != len(self.heads):
            raise ValueError(
                f"{self.file}:{self.first_line}: {len(heads) - 1} heads given "
                f"for a sentence of {len(self)} words"
            )
        lines = list(self.lines)
        for d in range(1, len(heads)):
            if heads[d] == self.heads[d]:
                continue
            index = self.word_lines[d - 1]
            body, eol = _split_eol(lines[index])
            cols = body.split("\t")
            cols[HEAD] = str(int(heads[d]))
            if mark:
                entries = [] if cols[MISC] == "_" else cols[MISC].split("|")
                if any(e.split("=", 1)[0] == MARK_KEY for e in entries):
                    raise ConlluError(
                        self.file, self.line_of(d),
                        f"MISC already holds {MARK_KEY} (run with --unmark first)",
                    )
                cols[MISC] = "|".join(entries + [f"{MARK_KEY}={self.heads[d]}"])
            lines[index] = "\t".join(cols) + eol
        return "".join(lines)

    def unmarked(self):
        """``(text, heads)``: every word with ``OrigHead=H`` in MISC gets HEAD
        ``H`` back and loses that entry (MISC becomes ``_`` when empty)."""
        lines = list(self.lines)
        heads = None if self.heads is None else list(self.heads)
        for d in range(1, len(self) + 1):
            index = self.word_lines[d - 1]
            body, eol = _split_eol(lines[index])
            cols = body.split("\t")
            if len(cols) != 10 or MARK_KEY not in cols[MISC]:
                continue
            entries = cols[MISC].split("|")
            kept = [e for e in entries if e.split("=", 1)[0] != MARK_KEY]
            if len(kept) == len(entries):
                continue
            value = [e for e in entries if e.split("=", 1)[0] == MARK_KEY][-1].split("=", 1)
            try:
                original = parse_int_value(value[1] if len(value) == 2 else "")
            except ParseException:
                original = None
            if original is None or not 0 <= original <= len(self):
                raise ConlluError(
                    self.file, self.line_of(d), f"bad {MARK_KEY} value in MISC {cols[MISC]!r}"
                )
            cols[HEAD] = str(original)
            cols[MISC] = "|".join(kept) or "_"
            lines[index] = "\t".join(cols) + eol
            if heads is not None:
                heads[d] = original
        return "".join(lines), heads


def _split_eol(line):
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def is_tree(heads):
    """Quick check: every word's head chain reaches 0 (any number of words
    may be attached to 0).  ``heads`` a list of ints with ``heads[0] == -1``;
    see :func:`tree_problems` for what is wrong when it is not a tree."""
    m = len(heads)
    if m > 1 and (min(heads[1:]) < 0 or max(heads[1:]) >= m):
        return False
    seen = [0] * m  # the walk that first reached each node
    seen[0] = -1
    for start in range(1, m):
        d = start
        while not seen[d]:
            seen[d] = start
            d = heads[d]
        if seen[d] == start:  # this walk closed a loop
            return False
    return True


def tree_problems(heads):
    """Problems of a head list as ``(word, reason, is_multiple_roots)``.

    Checks range, self-loops, cycles and the number of words attached to 0
    (exactly one in UD); ``word`` is the word the problem is reported at.
    """
    n = len(heads) - 1
    problems = []
    for d in range(1, n + 1):
        h = heads[d]
        if not 0 <= h <= n:
            problems.append((d, f"HEAD {h} of word {d} is out of range 0..{n}", False))
        elif h == d:
            problems.append((d, f"word {d} is headed by itself", False))
    if problems:
        return problems
    roots = [d for d in range(1, n + 1) if heads[d] == 0]
    # Follow heads from every word; state 1 = on the current path, 2 = done.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        d = start
        while state[d] == 0:
            state[d] = 1
            path.append(d)
            d = heads[d]
        if state[d] == 1:  # closed a cycle through d
            cycle = path[path.index(d):]
            first = min(cycle)
            at = cycle.index(first)
            cycle = cycle[at:] + cycle[:at]
            shown = " -> ".join(str(x) for x in cycle + [first])
            problems.append((first, f"cycle {shown} (each arrow goes from a word to its head)", False))
        for x in path:
            state[x] = 2
    if len(roots) > 1:
        listed = ", ".join(str(r) for r in roots)
        problems.append(
            (roots[1], f"{len(roots)} words attached to 0 (words {listed}); UD allows one", True)
        )
    return problems


def read_conllu(source, name=None, multiple_roots="error"):
    """Yield the :class:`Sentence` objects of a CoNLL-U file, one at a time.

    ``source``: a path, ``"-"`` (standard input) or a binary or text file
    object.  ``name`` is the file name used in messages.  ``multiple_roots``:
    ``"error"`` (UD: exactly one word attached to 0) or ``"warn"`` (accept
    the tree -- every algorithm here handles a root with several children --
    and record a warning).
    """
    if multiple_roots not in ("error", "warn"):
        raise ValueError(f"multiple_roots must be 'error' or 'warn', not {multiple_roots!r}")
    with _open_binary(source) as (stream, default_name):
        yield from _sentences(stream, name or default_name, multiple_roots)


@contextlib.contextmanager
def _open_binary(source):
    if source == "-" or source is None:
        yield sys.stdin.buffer, "<stdin>"
    elif isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as stream:
            yield stream, str(source)
    elif isinstance(source, io.TextIOBase):
        yield getattr(source, "buffer", None) or _encode(source), getattr(source, "name", "<stream>")
    else:
        yield source, getattr(source, "name", "<stream>")


def _encode(text_stream):
    for line in text_stream:
        yield line.encode("utf-8")


def _sentences(stream, name, multiple_roots):
    """Blocks of lines: a sentence's lines and the blank lines after it
    (blank lines at the start of the file go with the first sentence)."""
    lines, first, after_blank, content = [], 1, False, False
    for number, raw in enumerate(stream, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConlluError(name, number, f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
        blank = not line.strip()
        if not blank and after_blank and content:
            yield _build(name, first, lines, multiple_roots)
            lines, first, content = [], number, False
        lines.append(line)
        after_blank = blank
        content = content or not blank
    if lines:
        yield _build(name, first, lines, multiple_roots)


def _build(name, first, lines, multiple_roots):
    sentence = Sentence(name, first, lines, [])
    heads = [-1]
    errors = sentence.errors
    for index, line in enumerate(lines):
        text = line.lstrip("\ufeff") if index == 0 and first == 1 else line
        if not text.strip() or text.startswith("#"):
            continue
        number = first + index
        cols = text.rstrip("\r\n").split("\t")
        if len(cols) != 10:
            errors.append(ConlluError(name, number, f"expected 10 tab-separated columns, found {len(cols)}"))
            continue
        try:
            token_id = parse_id_value(cols[0])
        except ParseException:
            errors.append(ConlluError(name, number, f"bad ID {cols[0]!r}"))
            continue
        if not isinstance(token_id, int):  # multiword range or empty node: no basic head
            continue
        expected = len(heads)
        if token_id != expected:
            errors.append(ConlluError(name, number, f"word ID {token_id} out of sequence (expected {expected})"))
            continue
        sentence.word_lines.append(index)
        if cols[HEAD] == "_":
            errors.append(ConlluError(name, number, f"HEAD of word {token_id} is '_' (no basic tree)"))
            heads.append(-1)
            continue
        try:
            heads.append(parse_int_value(cols[HEAD]))
        except ParseException:
            errors.append(ConlluError(name, number, f"HEAD {cols[HEAD]!r} of word {token_id} is not an integer"))
            heads.append(-1)
    if not errors and len(heads) > 1 and not (is_tree(heads) and heads.count(0) == 1):
        for word, reason, roots_only in tree_problems(heads):
            problem = ConlluError(name, sentence.line_of(word), reason)
            if roots_only and multiple_roots == "warn":
                sentence.warnings.append(problem)
            else:
                errors.append(problem)
    if not errors:
        sentence.heads = heads
    return sentence


def apply_policy(sentences, on_error="fail", warn=None):
    """Yield ``(sentence, usable)`` under the ``--on-error`` policy.

    ``fail`` raises the first error; ``skip`` drops bad sentences; ``keep``
    yields them with ``usable`` False (to be copied unchanged).  Errors that
    are not raised and all warnings go to ``warn`` (a callable taking the
    message; default: print to standard error).
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    warn = warn or (lambda message: print(message, file=sys.stderr))
    for sentence in sentences:
        for problem in sentence.warnings:
            warn(f"{problem.file}:{problem.line}: warning: {problem.reason}")
        if sentence.errors:
            if on_error == "fail":
                raise sentence.errors[0]
            action = "sentence skipped" if on_error == "skip" else "sentence copied unchanged"
            for problem in sentence.errors:
                warn(f"{problem} ({action})")
            if on_error == "skip":
                continue
        yield sentence, not sentence.errors

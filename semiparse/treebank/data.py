"""Treebank input for training and parsing: CoNLL-U sentences as arrays.

Reading goes through :mod:`semiparse.treebank.conllu` (messages ``FILE:LINE:
reason``), and so does writing a parse: each tree keeps the sentence it was
read from, whose :meth:`~semiparse.treebank.conllu.Sentence.relabeled` gives its
bytes with new heads and labels.  Words and tags are hashed with a stable
64-bit hash (not Python's salted ``hash``), so a model's feature keys mean
the same in every process.
"""
import contextlib
import os
import zlib
from dataclasses import dataclass

from semiparse.treebank import conllu
from semiparse.treebank.columns import DEPREL, FORM, UPOS


def stable_hash(text):
    """A 64-bit hash of a string that is the same in every run."""
    data = text.encode("utf-8")
    return ((zlib.crc32(data) & 0x7FFFFFFF) << 32) | zlib.adler32(data)


ROOT_WORD = stable_hash("<root>")


@dataclass
class Tree:
    """One sentence: word forms, UPOS tags, gold heads / labels (strings)."""

    forms: list
    tags: list
    heads: list          # heads[0] == -1; None for words without a usable HEAD
    labels: list         # labels[0] == None
    source: object = None  # the conllu.Sentence read (for writing output)

    def __len__(self):
        return len(self.forms) - 1

    def line_of(self, word):
        return self.source.line_of(word) if self.source is not None else 0

    @property
    def where(self):
        if self.source is None:
            return "<tree>"
        return f"{self.source.file}:{self.source.start_line}"


def read_trees(source, need_heads=True, name=None, keep_empty=False, partial=False):
    """The sentences of a CoNLL-U file as :class:`Tree` objects.

    ``source``: what :func:`semiparse.treebank.conllu.read_conllu` reads (a path,
    ``"-"``, a binary file object); ``name`` names it in messages.  With
    ``need_heads`` every sentence must have a well-formed basic tree
    (otherwise the first problem is raised as ``FILE:LINE: reason``); without
    it HEAD may be ``_`` (input to be parsed).  With ``keep_empty`` a block
    without words (comments alone) is kept as a tree of no words, so that
    writing every tree's ``source`` back
    (:meth:`~semiparse.treebank.conllu.Sentence.relabeled`) reproduces the whole
    file.  With ``partial`` a HEAD of ``_`` is an unknown head (``-1``, a
    partial tree: :mod:`semiparse.treebank.partial`), not an error.  A file
    without words is an error.
    """
    return [_tree(s) for s in read_sentences(source, need_heads, name, keep_empty, partial)]


def read_sentences(source, need_heads=True, name=None, keep_empty=False, partial=False):
    """The :class:`~semiparse.treebank.conllu.Sentence` of each tree that
    :func:`read_trees` gives, one at a time, read and checked as it reads
    them (ValueError ``FILE:LINE: reason``, ``FILE: cannot read: reason``):
    for callers that need the heads alone, not the words' columns."""
    if name is None:
        name = "<stdin>" if source == "-" else (
            str(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "<stream>"))
    words = False
    try:
        for sentence in conllu.read_conllu(source, name=name, multiple_roots="warn", partial=partial):
            structural = [e for e in sentence.errors if not _tree_only(e.reason)]
            if structural or (need_heads and sentence.errors):
                raise (structural or sentence.errors)[0]
            if sentence.word_lines or keep_empty:
                words = words or bool(sentence.word_lines)
                yield sentence
    except OSError as exc:  # missing file, a directory, unreadable: PATH: reason
        raise ValueError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if not words:
        raise ValueError(f"{name}:1: no sentences")


def complete_trees(source, why):
    """:func:`read_trees` for a caller that takes no partial trees: a HEAD
    ``_`` is an error saying ``why``, not suggesting ``--partial``."""
    with complete_only(why):
        return read_trees(source)


@contextlib.contextmanager
def complete_only(why):
    """Within it, a HEAD ``_`` read (:class:`~semiparse.treebank.conllu.UnknownHead`)
    is an error saying ``why`` (what reads complete trees only)."""
    try:
        yield
    except conllu.UnknownHead as exc:
        raise conllu.UnknownHead(exc.file, exc.line, exc.word, why) from None


def _tree(sentence):
    forms, tags, labels = ["<root>"], ["<root>"], [None]
    for d in range(1, len(sentence) + 1):
        cols = sentence.columns(d)
        forms.append(cols[FORM])
        tags.append(cols[UPOS])
        labels.append(cols[DEPREL])
    return Tree(forms, tags, sentence.heads, labels, sentence)


def _tree_only(reason):
    """Whether a reading problem concerns only the HEAD column (harmless for input to parse)."""
    return not reason.startswith(("expected 10", "bad ID", "word ID", "not valid UTF-8", "column ",
                                  "multiword token", "the line starts with a byte-order mark"))

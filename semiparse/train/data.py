"""Treebank input for training and parsing: CoNLL-U sentences as arrays.

Reading goes through :mod:`semiparse.conllu_io` (messages ``FILE:LINE:
reason``).  Words and tags are hashed with a stable 64-bit hash (not Python's
salted ``hash``), so a model's feature keys mean the same in every process.
"""
import zlib
from dataclasses import dataclass

from .. import conllu_io

FORM, UPOS, HEAD, DEPREL = 1, 3, 6, 7


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
    source: object = None  # the conllu_io.Sentence read (for writing output)

    def __len__(self):
        return len(self.forms) - 1

    def line_of(self, word):
        return self.source.line_of(word) if self.source is not None else 0

    @property
    def where(self):
        if self.source is None:
            return "<tree>"
        return f"{self.source.file}:{self.source.first_line}"


def read_trees(path, need_heads=True):
    """The sentences of a CoNLL-U file as :class:`Tree` objects.

    With ``need_heads`` every sentence must have a well-formed basic tree
    (otherwise the first problem is raised as ``FILE:LINE: reason``); without
    it HEAD may be ``_`` (input to be parsed).
    """
    try:
        return _read_trees(path, need_heads)
    except OSError as exc:  # missing file, a directory, unreadable: PATH: reason
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _read_trees(path, need_heads):
    trees = []
    for sentence in conllu_io.read_conllu(path, multiple_roots="warn"):
        structural = [e for e in sentence.errors if not _tree_only(e.reason)]
        if structural or (need_heads and sentence.errors):
            raise (structural or sentence.errors)[0]
        forms, tags, labels = ["<root>"], ["<root>"], [None]
        for index in sentence.word_lines:
            cols = sentence.lines[index].rstrip("\r\n").split("\t")
            forms.append(cols[FORM])
            tags.append(cols[UPOS])
            labels.append(cols[DEPREL])
        if not sentence.word_lines:
            continue
        heads = sentence.heads if sentence.heads is not None else None
        trees.append(Tree(forms, tags, heads, labels, sentence))
    if not trees:
        raise ValueError(f"{path}:1: no sentences")
    return trees


def _tree_only(reason):
    """Whether a reading problem concerns only the HEAD column (harmless for input to parse)."""
    return not reason.startswith(("expected 10", "bad ID", "word ID", "not valid UTF-8"))


def render(tree, heads, labels):
    """The sentence's CoNLL-U text with HEAD and DEPREL replaced."""
    source = tree.source
    lines = list(source.lines)
    for d in range(1, len(tree) + 1):
        index = source.word_lines[d - 1]
        body = lines[index].rstrip("\r\n")
        eol = lines[index][len(body):]
        cols = body.split("\t")
        cols[HEAD] = str(int(heads[d]))
        cols[DEPREL] = labels[d]
        lines[index] = "\t".join(cols) + eol
    text = "".join(lines)
    if not text.endswith("\n\n") and not text.endswith("\r\n\r\n"):
        text = text.rstrip("\r\n") + "\n\n"
    return text


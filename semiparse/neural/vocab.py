"""Vocabularies of the neural parser: words, characters, lemmas, UPOS, XPOS, FEATS, labels.

Built from the training trees (:class:`semiparse.treebank.data.Tree`) and
stored in the model file as plain lists, so a model needs nothing else to
map its input to ids.  Ids 0, 1 and 2 of every symbol table are padding,
unknown and the artificial root (position 0); a sentence's root gets the
root id in every column and the one-character word of the root character.
Lemmas seen once in training are left out of their table, so the unknown
lemma is trained too.  No torch here: the encoder turns these ids into
tensors.
"""
import re
from collections import Counter

PAD, UNK, ROOT = 0, 1, 2
SPECIALS = ("<pad>", "<unk>", "<root>")
LEMMA, XPOS, FEATS = 2, 4, 5  # CoNLL-U columns (0-based) read from a tree's source sentence
# What no CoNLL-U field holds (the line ends the reader takes, and the column separator)
_BREAK_OR_TAB = re.compile(r"[\t\r\n]")


def check_symbols(table, symbols, single=False):
    """ValueError unless ``symbols`` (a model file's list of ``table``) is a
    list of distinct non-empty strings without tabs or line breaks, as
    CoNLL-U fields are (one character each with ``single``): a damaged
    vocabulary would load, and its symbols be written into the output."""
    if not isinstance(symbols, list):
        raise ValueError(f"its vocab's {table} are not a list: {symbols!r:.60}")
    seen = set()
    for symbol in symbols:
        if (not isinstance(symbol, str) or not symbol or _BREAK_OR_TAB.search(symbol)
                or (single and len(symbol) != 1)):
            what = "a character" if single else "a non-empty string without tabs or line breaks"
            raise ValueError(f"its vocab's {table} hold {symbol!r:.60}, which is not {what}")
        if symbol in seen:
            raise ValueError(f"its vocab's {table} hold {symbol!r:.60} twice")
        seen.add(symbol)


class Symbols:
    """A symbol table: ``id(symbol)`` (UNK for unseen ones), with counts."""

    def __init__(self, symbols, counts=None):
        self.symbols = list(SPECIALS) + [s for s in symbols if s not in SPECIALS]
        self.index = {s: i for i, s in enumerate(self.symbols)}
        self.counts = list(counts) if counts is not None else [0] * len(self.symbols)
        if len(self.counts) != len(self.symbols):
            raise ValueError(f"{len(self.symbols)} symbols but {len(self.counts)} counts")

    @classmethod
    def from_counter(cls, counter, min_count=1):
        ordered = sorted((s for s in counter if counter[s] >= min_count),
                         key=lambda s: (-counter[s], s))
        table = cls(ordered)
        table.counts = [0] * len(SPECIALS) + [counter[s] for s in table.symbols[len(SPECIALS):]]
        return table

    def __len__(self):
        return len(self.symbols)

    def id(self, symbol):
        return self.index.get(symbol, UNK)

    def to_dict(self):
        return {"symbols": self.symbols[len(SPECIALS):], "counts": self.counts}

    @classmethod
    def from_dict(cls, data, table="symbols", single=False):
        """The table of a model file (``table``: its name, for messages;
        ``single``: its symbols are characters)."""
        if not isinstance(data, dict):
            raise ValueError(f"its vocab's {table} table is not a JSON object: {data!r:.60}")
        check_symbols(table, data["symbols"], single)
        counts = data["counts"]
        if not isinstance(counts, list) or not all(
                type(c) is int and c >= 0 for c in counts):
            raise ValueError(f"its vocab's {table} counts are not whole numbers >= 0")
        if any(s in SPECIALS for s in data["symbols"]):
            raise ValueError(f"its vocab's {table} hold a reserved symbol "
                             f"({next(s for s in data['symbols'] if s in SPECIALS)})")
        return cls(data["symbols"], counts)


def _column(tree, d, column):
    """Column ``column`` of word ``d`` in the tree's source line ("_" without one)."""
    return tree.source.columns(d)[column] if tree.source is not None else "_"


class Vocab:
    """The symbol tables of one model and the label list."""

    def __init__(self, words, chars, upos, xpos, feats, labels, lemmas):
        self.words, self.chars, self.upos, self.xpos, self.feats = words, chars, upos, xpos, feats
        self.lemmas = lemmas
        self.labels = list(labels)
        self.label_index = {label: i for i, label in enumerate(self.labels)}

    @classmethod
    def build(cls, trees):
        """The vocabularies of the training trees (labels sorted; ValueError if none)."""
        words, chars, upos, xpos, feats, labels, lemmas = (Counter() for _ in range(7))
        for tree in trees:
            for d in range(1, len(tree) + 1):
                form = tree.forms[d]
                words[form] += 1
                chars.update(form)
                lemmas[_column(tree, d, LEMMA)] += 1
                upos[tree.tags[d]] += 1
                xpos[_column(tree, d, XPOS)] += 1
                feats[_column(tree, d, FEATS)] += 1
                labels[tree.labels[d]] += 1
        if not labels:
            raise ValueError("no labelled words in the training trees")
        return cls(Symbols.from_counter(words), Symbols.from_counter(chars),
                   Symbols.from_counter(upos), Symbols.from_counter(xpos),
                   Symbols.from_counter(feats), sorted(labels),
                   Symbols.from_counter(lemmas, min_count=2))

    def to_dict(self):
        return {"words": self.words.to_dict(), "chars": self.chars.to_dict(),
                "upos": self.upos.to_dict(), "xpos": self.xpos.to_dict(),
                "feats": self.feats.to_dict(), "labels": self.labels,
                "lemmas": self.lemmas.to_dict()}

    @classmethod
    def from_dict(cls, data):
        """The vocabularies of a model file (one written before lemmas were
        read has an empty lemma table: its network has no lemma embedding)."""
        if not isinstance(data, dict):
            raise ValueError(f"its vocab is not a JSON object: {data!r:.60}")
        check_symbols("labels", data["labels"])
        lemmas = data.get("lemmas")
        return cls(*(Symbols.from_dict(data[k], k, single=k == "chars")
                     for k in ("words", "chars", "upos", "xpos", "feats")),
                   data["labels"],
                   Symbols([]) if lemmas is None else Symbols.from_dict(lemmas, "lemmas"))

    def sentence(self, tree):
        """The ids of a tree's positions 0..n: ``words``, ``chars`` (one list
        per word), ``lemmas``, ``upos``, ``xpos``, ``feats``, and the word counts in
        training (for word dropout; the root counts as frequent)."""
        n = len(tree)
        words, chars, counts = [ROOT], [(ROOT,)], [0]
        lemmas, upos, xpos, feats = [ROOT], [ROOT], [ROOT], [ROOT]
        for d in range(1, n + 1):
            form = tree.forms[d]
            w = self.words.id(form)
            words.append(w)
            counts.append(self.words.counts[w] if w != UNK else 0)
            chars.append(tuple(self.chars.id(c) for c in form) or (UNK,))
            lemmas.append(self.lemmas.id(_column(tree, d, LEMMA)))
            upos.append(self.upos.id(tree.tags[d]))
            xpos.append(self.xpos.id(_column(tree, d, XPOS)))
            feats.append(self.feats.id(_column(tree, d, FEATS)))
        return {"words": words, "chars": chars, "lemmas": lemmas, "upos": upos, "xpos": xpos,
                "feats": feats, "counts": counts}

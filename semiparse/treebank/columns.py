"""The CoNLL-U columns: their indices (defined here only), and the DEPREL
and DEPS helpers of the treebank commands.

``projectivize --only`` picks words by the universal part of their DEPREL;
a changed HEAD leaves the word's DEPS entry for its old head behind (the
basic tree is meant to be part of the enhanced graph), which
``--update-deps`` moves to the new head.
"""
ID, FORM, LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS, MISC = range(10)  # column indices
COLUMN_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


def universal(deprel):
    """The universal part of a relation: ``nmod`` for ``nmod:poss``."""
    return deprel.split(":", 1)[0]


def parse_deprels(text):
    """The relations of ``DEPREL[,DEPREL...]`` as a frozenset (ValueError if one is empty)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise ValueError(f"--only {text!r}: expected DEPREL[,DEPREL...] with no empty relation")
    return frozenset(names)


def words_with(sentence, deprels):
    """Words (1..n) of ``sentence`` whose DEPREL's universal part is in ``deprels``."""
    return [d for d in range(1, len(sentence) + 1) if universal(sentence.columns(d)[DEPREL]) in deprels]


def _entry_head(entry):
    return entry.split(":", 1)[0]


def _basic_entry(entries, head, deprel):
    """Index of the entry of ``entries`` for basic head ``head``: one whose
    relation is ``deprel`` or a subtype of it if there is one, else the first
    with that head; None if no entry names ``head``."""
    found = [i for i, e in enumerate(entries) if _entry_head(e) == str(head)]
    for i in found:
        relation = entries[i].split(":", 1)[1] if ":" in entries[i] else ""
        if universal(relation) == universal(deprel):
            return i
    return found[0] if found else None


def lists_head(deps, head):
    """Whether the DEPS value ``deps`` has an entry for head ``head``."""
    return deps != "_" and any(_entry_head(e) == str(head) for e in deps.split("|"))


def bare_entry(deps, deprel, head):
    """The entry of ``deps`` for the basic head ``head`` when it names no
    relation (``4`` rather than ``4:obj``), else None: :func:`moved_deps`
    leaves such an entry where it is, having no relation to carry over."""
    if deps == "_":
        return None
    entries = deps.split("|")
    i = _basic_entry(entries, head, deprel)
    return entries[i] if i is not None and ":" not in entries[i] else None


def moved_deps(deps, deprel, old, new):
    """``deps`` with the entry for the basic head ``old`` (relation kept)
    moved to ``new``: placed before the first entry with a higher head (CoNLL-U
    sorts DEPS by head), dropped if the same entry is already there.  Every
    other entry stays as it was, in its order.  ``deps`` without an entry
    for ``old``, or whose entry names no relation (:func:`bare_entry`),
    comes back unchanged."""
    if deps == "_" or bare_entry(deps, deprel, old) is not None:
        return deps
    entries = deps.split("|")
    i = _basic_entry(entries, old, deprel)
    if i is None:
        return deps
    moved = f"{new}:{entries[i].split(':', 1)[1]}"
    rest = [e for k, e in enumerate(entries) if k != i]
    if moved not in rest:
        where = next((k for k, e in enumerate(rest) if _head_key(_entry_head(e)) > _head_key(str(new))), len(rest))
        rest.insert(where, moved)
    return "|".join(rest)


def _head_key(head):
    """Sort key of a DEPS head: ``8`` before ``8.1`` before ``9``."""
    return tuple(int(part) if part.isascii() and part.isdigit() else -1 for part in head.split("."))


def stale_deps(sentence, heads):
    """Words whose HEAD changes in ``heads`` while their DEPS lists the old head."""
    return [
        d for d in range(1, len(heads))
        if heads[d] != sentence.heads[d] and lists_head(sentence.columns(d)[DEPS], sentence.heads[d])
    ]

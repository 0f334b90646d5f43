"""spaCy's pseudo-projective lifting (Nivre and Nilsson 2005, as spaCy's
``nonproj`` implements it) on our trees, for comparisons with optimal
projectivization: head conversions both ways, the lifted tree, and the
round trip of its ``dep||headlabel`` labels.  spaCy is optional (the extra
``compare``)."""


def nonproj_module():
    """spaCy's ``nonproj`` module, or an ImportError saying how to get it."""
    try:
        from spacy.pipeline._parser_internals import nonproj
    except ImportError as exc:
        raise ImportError(f"spaCy is needed for its pseudo-projective lifting ({exc}): "
                          "pip install 'semiparse[compare]'") from None
    return nonproj


def to_spacy(heads):
    """Our heads (1-based, 0 = root) -> spaCy's (0-based, a root heads itself)."""
    return [d - 1 if h == 0 else h - 1 for d, h in enumerate(heads) if d]


def from_spacy(spacy_heads):
    """spaCy's heads -> ours (the inverse of :func:`to_spacy`)."""
    return [-1] + [0 if h == i else h + 1 for i, h in enumerate(spacy_heads)]


def lifted(heads):
    """spaCy's pseudo-projective tree of ``heads`` (in our convention)."""
    nonproj = nonproj_module()
    spacy_heads, _ = nonproj.projectivize(to_spacy(heads), ["dep"] * (len(heads) - 1))
    return from_spacy(spacy_heads)


def spacy_round_trip(heads, labels):
    """``(lost, restored, encoded labels)`` of spaCy's lifting with its
    ``dep||headlabel`` labels, decoded by spaCy's ``deprojectivize``."""
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    nonproj = nonproj_module()
    spacy_heads, encoded = nonproj.projectivize(to_spacy(heads), labels[1:])
    doc = nonproj.deprojectivize(Doc(Vocab(), words=["_"] * len(encoded), heads=spacy_heads, deps=encoded))
    lifted_heads, decoded = from_spacy(spacy_heads), from_spacy([t.head.i for t in doc])
    lost = [d for d in range(1, len(heads)) if lifted_heads[d] != heads[d]]
    return len(lost), sum(decoded[d] == heads[d] for d in lost), [None] + list(encoded)

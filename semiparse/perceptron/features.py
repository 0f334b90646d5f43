"""Feature templates in the style of Zhang & Nivre (2011), as data.

A template is a space-separated list of atoms ``<slot><attribute>``: slots are
the top three stack nodes ``s0 s1 s2``, the first three buffer nodes
``b0 b1 b2``, the head and grand-head of ``s0`` (``s0h``, ``s0h2``) and the
leftmost / rightmost two children of ``s0``, ``s1`` and ``b0`` (``s0l``,
``s0l2``, ``s0r``, ``s0r2``, ...); attributes are the word ``w``, the
part-of-speech tag ``p``, the arc label ``l``, the left / right valency ``vl`` /
``vr``, the left / right label sets ``sl`` / ``sr`` and the distance to ``s0``
``d``.  The Cython extractor hashes the values of each template's atoms into
one 64-bit key.  The set below is Zhang & Nivre's (whose ``N0`` is our ``b0``)
extended with the same templates over ``s1``, which plays the role of ``N0``
for arc-standard.
"""
import re

import numpy as np

from semiparse.perceptron._core import ATTRIBUTES, SLOTS

ZHANG_NIVRE = [
    # single words
    "s0w s0p", "s0w", "s0p", "b0w b0p", "b0w", "b0p", "b1w b1p", "b1w", "b1p",
    "b2w b2p", "b2w", "b2p", "s1w s1p", "s1w", "s1p", "s2p", "s2w s2p",
    # word pairs
    "s0w s0p b0w b0p", "s0w s0p b0w", "s0w b0w b0p", "s0w s0p b0p", "s0p b0w b0p",
    "s0w b0w", "s0p b0p", "b0p b1p",
    "s0w s0p s1w s1p", "s0w s0p s1w", "s0w s1w s1p", "s0w s0p s1p", "s0p s1w s1p",
    "s0w s1w", "s0p s1p",
    # three words
    "b0p b1p b2p", "s0p b0p b1p", "s0hp s0p b0p", "s0p s0lp b0p", "s0p s0rp b0p",
    "s0p b0p b0lp", "s1p s0p b0p", "s2p s1p s0p", "s1p s1lp s0p", "s1p s1rp s0p",
    "s1p s0p s0lp", "s1p s0p s0rp",
    # distance
    "s0w b0d", "s0p b0d", "b0w b0d", "b0p b0d", "s0w b0w b0d", "s0p b0p b0d",
    "s1w s1d", "s1p s1d", "s0w s1w s1d", "s0p s1p s1d",
    # valency
    "s0w s0vr", "s0p s0vr", "s0w s0vl", "s0p s0vl", "b0w b0vl", "b0p b0vl",
    "s1w s1vr", "s1p s1vr", "s1w s1vl", "s1p s1vl",
    # unigrams of heads and children
    "s0hw", "s0hp", "s0l", "s0lw", "s0lp", "s0ll", "s0rw", "s0rp", "s0rl",
    "b0lw", "b0lp", "b0ll", "s1lw", "s1lp", "s1ll", "s1rw", "s1rp", "s1rl",
    # third order
    "s0h2w", "s0h2p", "s0hl", "s0l2w", "s0l2p", "s0l2l", "s0r2w", "s0r2p", "s0r2l",
    "b0l2w", "b0l2p", "b0l2l", "s0p s0lp s0l2p", "s0p s0rp s0r2p", "s0p s0hp s0h2p",
    "b0p b0lp b0l2p", "s1p s1lp s1l2p", "s1p s1rp s1r2p",
    # label sets
    "s0w s0sr", "s0p s0sr", "s0w s0sl", "s0p s0sl", "b0w b0sl", "b0p b0sl",
    "s1w s1sr", "s1p s1sr", "s1w s1sl", "s1p s1sl",
]

_ATOM = re.compile(r"^(%s)(%s)$" % (
    "|".join(sorted(SLOTS, key=len, reverse=True)),
    "|".join(sorted(ATTRIBUTES, key=len, reverse=True)),
))


def compile_templates(templates=ZHANG_NIVRE):
    """The int32 matrix the extractor reads: one row per template,
    ``[n_atoms, slot, attr, slot, attr, ...]`` (zero padded)."""
    rows = []
    for template in templates:
        atoms = template.split()
        if not atoms:
            raise ValueError("empty feature template")
        row = [len(atoms)]
        for atom in atoms:
            m = _ATOM.match(atom)
            if m is None:
                raise ValueError(f"bad feature atom {atom!r} in template {template!r}")
            row += [SLOTS[m.group(1)], ATTRIBUTES[m.group(2)]]
        rows.append(row)
    width = 1 + 2 * max(r[0] for r in rows)
    out = np.zeros((len(rows), width), dtype=np.int32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out

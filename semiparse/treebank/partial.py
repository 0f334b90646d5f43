"""Partial gold trees: trees in which some words' heads are unknown.

Annotation projects and treebanks with gaps give a head to some words only.
A partial tree is a head list like a tree (``heads[0] == -1``) in which a
word's head may be ``-1`` (``_`` in the CoNLL-U HEAD column): unknown.  Its
known edges must be completable to a tree: every known head is a position
``0..n`` other than the word itself, and they form no cycle.  They may
cross, and a word with an unknown head may head others.  Every function
that takes partial trees does so only when the caller says so
(``partial=True``); elsewhere ``-1`` is refused as before.
"""
import numpy as np

from semiparse.heads import int_tuple, tree_problems

UNKNOWN = -1


def partial_flag(partial):
    """``partial`` as a bool, or ValueError if it is not True or False (a
    string such as ``"no"`` would otherwise read as true)."""
    if not isinstance(partial, (bool, np.bool_)):
        raise ValueError(f"partial must be True or False, got {partial!r:.40}")
    return bool(partial)


def unknown_words(heads):
    """The words of ``heads`` whose head is unknown, ascending."""
    return [d for d in range(1, len(heads)) if heads[d] == UNKNOWN]


def partial_problems(heads):
    """Problems of a partial tree as ``(word, reason, is_multiple_roots)``,
    as :func:`semiparse.heads.tree_problems` gives them for a tree: range,
    self-loops and cycles of the known edges, and more than one word known
    to be attached to 0."""
    heads = int_tuple(heads, "heads must be a sequence of integer heads")
    if not heads:
        raise ValueError("heads is empty: expected -1 for the root, then a head per word")
    # An unknown head can always be the root: the known edges are completable
    # exactly when the tree with every unknown head set to 0 is a tree.
    filled = heads[:1] + tuple(0 if h == UNKNOWN else h for h in heads[1:])
    problems = [p for p in tree_problems(filled) if not p[2]]
    roots = [d for d in range(1, len(heads)) if heads[d] == 0]
    if not problems and len(roots) > 1:
        listed = ", ".join(map(str, roots))
        problems.append((roots[1], f"{len(roots)} words attached to 0 (words {listed}); UD "
                         f"allows one", True))
    return problems


def check_partial_tree(heads):
    """``heads`` as a tuple of Python ints, or ValueError if it is not a
    partial tree rooted in 0 (any number of words may be attached to 0)."""
    heads = int_tuple(heads, "heads must be a sequence of integer heads")
    if not heads or heads[0] != -1:
        raise ValueError(f"heads must start with -1 for the root 0, got {list(heads[:1])}")
    reason = next((r for _, r, roots_only in partial_problems(heads) if not roots_only), None)
    if reason is not None:
        raise ValueError(f"heads is not a partial tree: {reason}")
    return heads

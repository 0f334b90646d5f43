"""The training trees every trainer takes: checked, and after the policy for
non-projective trees (``--nonproj``); their labels and the root label.

With ``partial``, trees may have unknown heads (-1): the dynamic oracle is
exact for them and counts their known edges.
"""
from collections import Counter

from semiparse.heads import check_tree
from semiparse.treebank.partial import check_partial_tree

NONPROJ = ("skip", "projectivize", "oracle")
# What a training tree whose only fault is unknown heads (-1) is told (check_heads)
PARTIAL_HINT = "train on partial trees with partial=True"


def check_heads(trees, partial=False, partial_hint=PARTIAL_HINT):
    """ValueError naming the first of ``trees`` whose heads are not a tree (a
    partial tree with ``partial``): its index, FILE:LINE and sent_id; where
    unknown heads (-1) are all that is wrong, it adds ``partial_hint`` (by
    default the perceptron trainers' ``partial=True``)."""
    for i, tree in enumerate(trees):
        try:
            (check_partial_tree if partial else check_tree)(tree.heads)
        except ValueError as exc:
            hint = (f"; -1 is an unknown head: {partial_hint}"
                    if not partial and _is_partial_tree(tree.heads) else "")
            raise ValueError(f"{_tree_name(tree, i)}: {exc}{hint}") from None


def _is_partial_tree(heads):
    try:
        check_partial_tree(heads)
    except ValueError:
        return False
    return True


def _tree_name(tree, index):
    """``training tree INDEX``, with its FILE:LINE and sent_id where known."""
    if tree.source is None:
        return f"training tree {index}"
    ids = [c.split("=", 1)[1].strip() for c in tree.source.comments()
           if c.startswith("# sent_id") and "=" in c]
    return f"training tree {index} ({tree.where}" + (f", sent_id {ids[0]}" if ids else "") + ")"


def prepare(trees, nonproj, oracle, log=None, partial=False, partial_hint=PARTIAL_HINT,
            builds_any_tree=False):
    """The training trees after the ``--nonproj`` policy (new list; heads may
    change).  ``builds_any_tree``: the system builds non-projective trees
    (the swap systems), so its static oracle follows them too.  With ``partial``, a tree with unknown heads (-1) is kept as it
    is, whatever the policy: the dynamic oracle is exact for it, projective
    or not, and counts its known edges.  Heads that are not a tree are a
    ValueError naming the tree (:func:`check_heads`, with ``partial_hint``)."""
    from semiparse.treebank.projectivity import is_projective, projectivize

    if nonproj not in NONPROJ:
        raise ValueError(f"nonproj must be one of {', '.join(NONPROJ)}, not {nonproj!r}")
    if nonproj == "oracle" and oracle == "static" and not builds_any_tree:
        raise ValueError("the static oracle needs projective trees: use --nonproj skip or projectivize")
    if partial and oracle == "static":
        raise ValueError("the static oracle needs complete trees: use --oracle dynamic or nondet "
                         "with --partial")
    if not trees:
        raise ValueError("no training trees given")
    check_heads(trees, partial, partial_hint)
    out, n_nonproj, n_partial = [], 0, 0
    for tree in trees:
        if partial and any(h < 0 for h in tree.heads[1:]):
            n_partial += 1
            out.append(tree)
            continue
        if is_projective(tree.heads):
            out.append(tree)
            continue
        n_nonproj += 1
        if nonproj == "skip":
            continue
        if nonproj == "projectivize":
            heads = projectivize(tuple(tree.heads), tie_break="closest")
            tree = type(tree)(tree.forms, tree.tags, list(heads), tree.labels, tree.source)
        out.append(tree)
    if log:
        action = {"skip": "skipped", "projectivize": "projectivized", "oracle": "kept"}[nonproj]
        log(f"{len(trees)} training trees, {n_nonproj} non-projective ({action})"
            + (f", {n_partial} partial (kept)" if partial else ""))
    if not out:
        # the policy is skip (subset for the neural trainer); every trainer projectivizes
        raise ValueError("no training trees left: all are non-projective and skipped (--nonproj "
                         "projectivize keeps them)")
    return out


def known_labels(trees):
    """The labels of the training words, counted: in a partial tree the
    DEPREL ``_`` of a word whose head is unknown says that its label is
    unknown too, so it is no label to learn (a known head's ``_`` is one:
    unlabelled treebanks round-trip).  ValueError if there are none."""
    labels = Counter(t.labels[d] for t in trees for d in range(1, len(t) + 1)
                     if t.heads[d] >= 0 or t.labels[d] != "_")
    if not labels:
        raise ValueError("no word of the training trees has a known head or label: nothing "
                         "to learn" if any(len(t) for t in trees)
                         else "the training trees have no words")
    return labels


def root_label(trees):
    """The label parses give the words they attach to the root
    (:attr:`Model.root_label`): the most common label of the training words
    whose head is 0; where no head 0 is known (partial trees), ``root`` (UD's)
    if a training word has it, else the most common of :func:`known_labels`."""
    roots = Counter(t.labels[d] for t in trees for d in range(1, len(t) + 1) if t.heads[d] == 0)
    if not roots:
        roots = known_labels(trees)
        if "root" in roots:
            return "root"
    return roots.most_common(1)[0][0]

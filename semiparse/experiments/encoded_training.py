"""Projectivization a parser can undo: train on encoded trees, decode the output.

The labelled arc-standard greedy averaged perceptron (dynamic oracle) on the
shared UD Greek, Gothic and Hungarian training sets, three ways, scored on
the test sets without punctuation -- LAS overall and on the words whose gold
arc is non-projective (a word between head and dependent that the head does
not dominate), mean and standard deviation over seeds:

  optimal+head      optimal projectivization (tie-break closest), the changed
                    arcs' labels in the ``head`` encoding; the parser's output
                    decoded by ``semiparse.treebank.encoding.decode``
  lifting+head      spaCy's pseudo-projective lifting with its own
                    ``dep||headlabel`` encoding, decoded by spaCy's
                    ``deprojectivize`` (Nivre and Nilsson 2005)
  unchanged+oracle  the trees as they are, the non-projective (grammar)
                    dynamic oracle; nothing to decode
"""
from semiparse.experiments.common import (GOLD_UPOS, LANGUAGES, cpu_seconds, job_fields, markdown_table,
                                          mean_sd, read_parts, table_rows, timed, ud_files, ud_jobs)

TITLE = "Parsing with undoable projectivization: encodings and decoding"
SUMMARY = "optimal projectivization + head encoding vs spaCy lifting + its encoding vs the non-projective oracle"
SYSTEMS = ("arc_standard",)
DEFAULTS = {"epochs": 3, "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
SETUPS = ("optimal+head", "lifting+head", "unchanged+oracle")


files = ud_files


def jobs(settings):
    return ud_jobs(settings, SETUPS)


def nonprojective_words(heads):
    """The words whose arc is non-projective: some word strictly between head
    and dependent is not a descendant of the head."""
    out = []
    for d in range(1, len(heads)):
        h = heads[d]
        for x in range(min(h, d) + 1, max(h, d)):
            while x not in (h, 0):
                x = heads[x]
            if x != h:
                out.append(d)
                break
    return out


def encoded_tree(tree, setup):
    """The training tree of a set-up that encodes."""
    from semiparse.treebank.spacy import from_spacy, nonproj_module, to_spacy
    from semiparse.treebank.encoding import encode
    from semiparse.treebank.projectivity import projectivize
    from semiparse.perceptron import Tree

    if setup == "optimal+head":
        heads = list(projectivize(tree.heads, "closest"))
        labels = encode(tree.heads, heads, tree.labels, "head")
    else:
        spacy_heads, encoded = nonproj_module().projectivize(to_spacy(tree.heads), tree.labels[1:])
        heads, labels = from_spacy(spacy_heads), [None] + list(encoded)
    return Tree(tree.forms, tree.tags, heads, labels, tree.source)


def decoded_parse(heads, labels, setup):
    """A parse with its encoded labels undone."""
    from semiparse.treebank.spacy import from_spacy, nonproj_module, to_spacy
    from semiparse.treebank.encoding import decode

    if setup == "optimal+head":
        decoded = decode(heads, labels, strict=False)
        return decoded.heads, decoded.labels
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    doc = nonproj_module().deprojectivize(Doc(Vocab(), words=["_"] * (len(heads) - 1),
                                              heads=to_spacy(heads), deps=list(labels[1:])))
    return from_spacy([t.head.i for t in doc]), [None] + [t.dep_ for t in doc]


def run_job(job):
    from semiparse.perceptron import Trainer, attachment_scores

    data, lang, system, setup, seed, epochs, limit = job
    train, test = read_parts(data, lang, limit)
    trees = train if setup == "unchanged+oracle" else [encoded_tree(t, setup) for t in train]
    model, seconds = timed(lambda: Trainer(
        system=system, epochs=epochs, seed=seed, progress=False,
        oracle="dynamic").run(trees, nonproj="oracle" if setup == "unchanged+oracle" else "skip"))
    predicted = [model.parse(t)[:2] for t in test]
    if setup != "unchanged+oracle":
        predicted = [decoded_parse(heads, labels, setup) for heads, labels in predicted]
    right = total = 0
    for tree, (heads, labels) in zip(test, predicted):
        for d in nonprojective_words(tree.heads):
            if tree.tags[d] != "PUNCT":
                total += 1
                right += heads[d] == tree.heads[d] and labels[d] == tree.labels[d]
    return {**job_fields(job, "setup"),
            "train_labels": len({label for t in trees for label in t.labels[1:]}),
            "nonprojective_words": total,
            "las_nonprojective": round(100.0 * right / total, 2) if total else None,
            "train_cpu_seconds": seconds, **attachment_scores(test, predicted)}


def table(results, settings):
    return markdown_table(
        "Greedy averaged perceptron (arc-standard, dynamic oracle), test sets, scores without "
        "punctuation (UPOS PUNCT), mean ± standard deviation over seeds.  `non-proj. LAS`: LAS "
        "on the words whose gold arc is non-projective (`words`: how many).  `labels`: distinct "
        "training labels after encoding (the classes the parser learns).",
        ["language", "set-up", "labels", "LAS", "UAS", "non-proj. LAS", "words", "train CPU s/run"],
        [[lang, setup, runs[0]["train_labels"], mean_sd([r["las_nopunct"] for r in runs]),
          mean_sd([r["uas_nopunct"] for r in runs]), _nonprojective_las(runs),
          runs[0]["nonprojective_words"], cpu_seconds(runs)]
         for lang, _, setup, runs in table_rows(results, settings, "setup", SETUPS)])


def _nonprojective_las(runs):
    """The mean LAS on non-projective words of the runs that had any ('-' if none had)."""
    scores = [r["las_nonprojective"] for r in runs if r["las_nonprojective"] is not None]
    return mean_sd(scores) if scores else "-"

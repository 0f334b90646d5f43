"""Training on partial trees (issue: declared systems; the oracle of the known
edges).

Greedy averaged perceptron, arc-standard by default, dynamic oracle with
exploration, on the Greek training set with a share of the heads (and their
labels) hidden at random, word by word: the partial trees trained on as they
are (``Trainer.run(partial=True)``: sigma counts the known gold edges),
against dropping every sentence with a hidden head (what a trainer that
needs complete trees must do), and against the complete trees.  Test LAS and
UAS without punctuation, mean over seeds; the hidden heads are drawn anew
for each seed.
"""

from semiparse._support.seeds import seeded
from semiparse.experiments.common import LANGUAGES  # noqa: F401  (read by semiparse.experiments)
from semiparse.experiments.common import (GOLD_UPOS, job_fields, markdown_table, mean_sd, read_parts,
                                          table_rows, ud_files, ud_jobs)

TITLE = "Training on partial trees: the dynamic oracle of the known edges"
SUMMARY = "heads hidden at random: partial trees vs dropping them vs complete trees, perceptron, dynamic oracle"
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
DEFAULTS = {"epochs": 3, "seeds": [1, 2, 3], "languages": ["el"], "systems": ["arc_standard"]}
POS_TAGS = GOLD_UPOS
VARIANTS = ("complete", "partial 25%", "drop 25%", "partial 50%", "drop 50%")
files = ud_files


def jobs(settings):
    return ud_jobs(settings, VARIANTS)


def hide(trees, share, seed):
    """``trees`` with each head (and its label) hidden with probability
    ``share`` (-1 and ``_``), the hidden heads drawn by ``seed``."""
    from semiparse.perceptron import Tree

    rng, out = seeded(seed), []
    for tree in trees:
        heads, labels = list(tree.heads), list(tree.labels)
        for d in range(1, len(tree) + 1):
            if rng.random() < share:
                heads[d], labels[d] = -1, "_"
        out.append(Tree(tree.forms, tree.tags, heads, labels, tree.source))
    return out


def training_set(trees, variant, seed):
    """``(trees, partial)`` of a variant: the complete trees, the partial ones,
    or the sentences left without a hidden head."""
    if variant == "complete":
        return trees, False
    kind, share = variant.split()
    hidden = hide(trees, int(share.rstrip("%")) / 100, seed)
    if kind == "partial":
        return hidden, True
    return [t for t in hidden if -1 not in t.heads[1:]], False


def run_job(job):
    from semiparse.perceptron import Trainer, evaluate_model

    data, lang, system, variant, seed, epochs, limit = job
    train, test = read_parts(data, lang, limit)
    trees, partial = training_set(train, variant, seed)
    known = sum(h >= 0 for t in trees for h in t.heads[1:])
    result = {**job_fields(job, "variant"), "train_sentences": len(trees), "known_heads": known}
    if not trees:  # every sentence had a hidden head
        return {**result, "las_nopunct": 0.0, "uas_nopunct": 0.0, "untrained": True}
    model = Trainer(system=system, oracle="dynamic", epochs=epochs, seed=seed, progress=False).run(
        trees, nonproj="projectivize", partial=partial)
    return {**result, **evaluate_model(model, test)}


def table(results, settings):
    return markdown_table(
        "Greedy averaged perceptron, dynamic oracle with exploration; non-projective complete "
        "trees projectivized, partial trees kept as they are; test set without punctuation, mean "
        "± standard deviation over seeds.  `known heads`: gold heads trained on (mean over "
        "seeds); `drop`: only the sentences left without a hidden head (a run with none left "
        "is not trained and scores 0).",
        ["language", "system", "training trees", "sentences", "known heads", "UAS", "LAS"],
        [[lang, system, variant, f"{sum(r['train_sentences'] for r in runs) / len(runs):,.0f}",
          f"{sum(r['known_heads'] for r in runs) / len(runs):,.0f}",
          mean_sd([r["uas_nopunct"] for r in runs]), mean_sd([r["las_nopunct"] for r in runs])]
         for lang, system, variant, runs in table_rows(results, settings, "variant", VARIANTS)])

"""What the benchmarks read: the CoNLL-U files named, else every UD file of
the shared data (``$SEMIPARSE_DATA/ud``), their trees and the long ones among
them; a shared treebank's training file.

Every benchmark reads its CoNLL-U files as training does
(:func:`semiparse.treebank.data.read_sentences`), before it times anything: a
file that cannot be read, a bad line or a bad tree stops it with ``FILE:LINE:
reason`` (``FILE: reason``), and so does a file without words."""
from pathlib import Path

from semiparse.bench import missing_data
from semiparse.cli import UserError
from semiparse.resources import data_root

# Why a HEAD _ stops a benchmark (its trees are timed as gold trees)
COMPLETE = "the benchmarks read complete trees"


def ud_files(named=None):
    """Paths of the files ``named`` (a directory: its ``*.conllu`` files, as
    the treebank commands take it; not ``-``), else of every
    ``ud/*/*.conllu`` of the shared data; UserError when there is none."""
    from semiparse.cli._treebank import expand_inputs

    if "-" in (named or ()):
        raise UserError("-: the benchmarks read files, not standard input")
    if named:
        return [Path(f) for f in expand_inputs(named)]
    root = data_root() / "ud"
    files = sorted(root.glob("*/*.conllu"))
    if not files:
        raise UserError(missing_data(root, "holds no ud/*/*.conllu files"))
    return files


def ud_train_file(folder, prefix):
    """The training file ``ud/FOLDER/PREFIX-ud-train.conllu`` of the shared
    data; UserError when it is missing."""
    path = data_root() / "ud" / folder / f"{prefix}-ud-train.conllu"
    if not path.is_file():
        raise UserError(missing_data(path))
    return path


def read_heads(files):
    """The trees (heads lists) of every sentence with words of the CoNLL-U
    ``files``, read as a training file is; ValueError ``FILE:LINE: reason``
    at the first problem (see the module's docstring)."""
    from semiparse.treebank.data import complete_only, read_sentences

    with complete_only(COMPLETE):
        return [s.heads for f in files for s in read_sentences(f)]


def long_trees(files, longest):
    """The ``longest`` longest trees of at least 9 words in ``files``, and an
    even sample of the rest."""
    trees = [h for h in read_heads(files) if len(h) > 9]
    trees.sort(key=len, reverse=True)
    return trees[:longest] + trees[longest::max(1, len(trees) // longest)]


def walk(system, trees, rng, explore=0.0):
    """``(configs, golds)``: every configuration ``system`` (from
    ``semiparse.system``) passes through on ``trees``, not the final ones,
    taking an optimal transition of its oracle (drawn among the optimal ones)
    or, with probability ``explore``, any legal one; ``golds`` repeats each
    sentence's tree object, so that a batch prepares it once."""
    oracle = system.oracle()
    configs, golds = [], []
    for heads in trees:
        config = system.initial(len(heads) - 1)
        while not config.is_final():
            configs.append(config)
            golds.append(heads)
            if rng.random() < explore:
                name = rng.choice(config.legal())
            else:
                scores = oracle.scores(config, heads)
                best = max(scores.values())
                name = rng.choice(sorted(t for t, v in scores.items() if v == best))
            config = config.apply(name)
    return configs, golds

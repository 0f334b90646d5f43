"""Training data the trainers cannot use as it is: a fallback where one is
sensible, else a ValueError naming the sentence (exit status 2 on the
command line)."""
import numpy as np
import pytest

from semiparse.cli import main
from semiparse.perceptron import Model, Trainer, Tree, read_trees

# the only root word's head is unknown
NO_KNOWN_ROOT = """# sent_id = 1
1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_
2\tb\tb\tNOUN\t_\t_\t_\troot\t_\t_
3\tc\tc\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def _tree(heads, labels):
    n = len(heads)
    return Tree([None] + [f"w{d}" for d in range(1, n + 1)], [None] + ["X"] * n, [-1] + heads,
                [None] + labels)


def test_partial_training_without_a_known_root_word(tmp_path, capsys):
    path, model = tmp_path / "p.conllu", tmp_path / "m.npz"
    path.write_text(NO_KNOWN_ROOT)
    assert main(["train", str(path), "--partial", "--epochs", "1", "--quiet", "-o", str(model)]) == 0
    assert Model.load(model).root_label == "root"
    # no label root: the most common label
    trees = [_tree([2, -1, 2], ["dep", "top", "dep"]), _tree([-1, 1], ["top", "dep"])]
    trained = Trainer(epochs=1, progress=False).run(trees, partial=True)
    assert trained.root_label == "dep"
    # a known head 0 decides
    trees.append(_tree([0], ["top"]))
    assert Trainer(epochs=1, progress=False).run(trees, partial=True).root_label == "top"


def test_training_trees_without_words():
    with pytest.raises(ValueError, match="^the training trees have no words$"):
        Trainer(epochs=1, progress=False).run([_tree([], [])])


def test_heads_that_are_not_a_tree_name_the_training_tree(tmp_path):
    path = tmp_path / "p.conllu"
    path.write_text(NO_KNOWN_ROOT.replace("sent_id = 1", "sent_id = s2") * 2)
    trees = read_trees(path, partial=True)
    with pytest.raises(ValueError, match=rf"^training tree 0 \({path}:1, sent_id s2\): heads is not "
                                         r"a tree: HEAD -1 of word 2 .*; -1 is an unknown head: "
                                         r"train on partial trees with partial=True"):
        Trainer(epochs=1, progress=False).run(trees)
    # not only unknown heads: no hint
    trees = [_tree([0], ["root"]), _tree([2, 1, -1], ["dep"] * 3)]
    with pytest.raises(ValueError, match=r"^training tree 1: heads is not a tree: [^;]*$"):
        Trainer(epochs=1, progress=False).run(trees)
    with pytest.raises(ValueError, match=r"^training tree 1: heads is not a partial tree: cycle"):
        Trainer(epochs=1, progress=False).run(trees, partial=True)


# words 2 and 3 have unknown heads, and so DEPREL `_`, as in UD's partial files
UNKNOWN_DEPREL = """1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_
2\tb\tb\tNOUN\t_\t_\t_\t_\t_\t_
3\tc\tc\tVERB\t_\t_\t_\t_\t_\t_
4\td\td\tPUNCT\t_\t_\t3\tpunct\t_\t_

1\te\te\tVERB\t_\t_\t0\troot\t_\t_
2\tf\tf\tNOUN\t_\t_\t1\tobj\t_\t_

"""


def test_an_unknown_heads_deprel_is_no_label(tmp_path, capsys):
    """`train --partial` made `_` a label (and the root label of a file with
    no known head), which parse then wrote out."""
    path, model, out = tmp_path / "p.conllu", tmp_path / "m.npz", tmp_path / "out.conllu"
    path.write_text(UNKNOWN_DEPREL)
    assert main(["train", str(path), "--partial", "--epochs", "2", "--quiet", "-o", str(model)]) == 0
    assert Model.load(model).labels == ["det", "obj", "punct", "root"]
    assert main(["parse", str(model), str(path), "-o", str(out), "--quiet"]) == 0
    assert "_" not in {t.labels[d] for t in read_trees(out) for d in range(1, len(t) + 1)}
    unknown = tmp_path / "unknown.conllu"
    unknown.write_text("1\ta\ta\tX\t_\t_\t_\t_\t_\t_\n2\tb\tb\tX\t_\t_\t_\t_\t_\t_\n\n")
    assert main(["train", str(unknown), "--partial", "-o", str(model), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no word of the training trees has a known head or label: nothing to learn" in err


def test_numpy_numbers_are_numbers_and_labels_a_list_of_strings(tmp_path):
    """numpy ints passed the checks, then failed: the seed in random's
    TypeError, the beam and a numpy meta value only at save, after the
    training (JSON knows no numpy); a string was taken as its letters."""
    trees = [_tree([2, 0], ["det", "root"])]
    model = Trainer(seed=np.int64(3), epochs=np.int64(1), progress=False).run(trees)
    model.meta["score"] = np.float32(0.5)
    model.save(tmp_path / "m.npz")
    loaded = Model.load(tmp_path / "m.npz")
    assert loaded.meta["seed"] == 3 and loaded.meta["score"] == 0.5
    Model("arc_standard", ["a"], beam=np.int64(2)).save(tmp_path / "b.npz")
    assert Model.load(tmp_path / "b.npz").beam == 2
    with pytest.raises(ValueError, match="meta data must be JSON"):
        Model("arc_standard", ["a"], meta={"x": object()}).save(tmp_path / "x.npz")
    for labels in ("abc", ["a", None], ["a", 1]):
        with pytest.raises(ValueError, match="labels must be a non-empty list of distinct strings"):
            Model("arc_standard", labels)


def test_a_model_file_needs_a_path(tmp_path):
    """save(None) wrote the zip archive to standard output; a bytes path was
    refused by the wrong part (a regular expression), and load said "not found"."""
    model = Model("arc_standard", ["a"])
    for path in (None, 3.5):
        with pytest.raises(ValueError, match="a model file's path must be a str or path object"):
            model.save(path)
        with pytest.raises(ValueError, match="a model file's path must be a str or path object"):
            Model.load(path)
    model.save(bytes(tmp_path / "m.npz"))
    assert Model.load(bytes(tmp_path / "m.npz")).labels == ["a"]

"""Training, parsing and evaluation refuse bad settings, paths and files up
front with one clear line, and model files are written safely."""
import os
import threading

import numpy as np
import pytest

from semiparse.cli import main
from semiparse.perceptron import (BeamOptions, Model, ModelError, PerceptronOptions, RDAOptions, Trainer,
                             options_for, read_trees)

from support import cli_error


@pytest.fixture(scope="module")
def small(shared_data, tmp_path_factory):
    """A 40-sentence treebank file and a model trained on it in one epoch."""
    dev = shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"
    folder = tmp_path_factory.mktemp("small")
    treebank = folder / "small.conllu"
    treebank.write_text("\n\n".join(dev.read_text(encoding="utf-8").split("\n\n")[:40]) + "\n\n",
                        encoding="utf-8")
    model = Trainer(epochs=1, progress=False).run(read_trees(treebank))
    path = folder / "m.npz"
    model.save(path)
    return treebank, path, model


# -- output paths ------------------------------------------------------------

def test_train_to_a_missing_directory_fails_before_training(small, tmp_path, capsys):
    treebank, _, _ = small
    output = tmp_path / "missing_dir" / "m.npz"
    err = cli_error(capsys, ["train", str(treebank), "--epochs", "1", "--quiet", "-o", str(output)])
    assert str(output) in err and "does not exist" in err
    # one line: no "N training trees" or "epoch=" log, so nothing was trained
    assert "epoch=" not in err and "training trees" not in err
    assert not output.parent.exists()


def test_train_refuses_to_overwrite_its_inputs(small, tmp_path, capsys):
    treebank, _, _ = small
    train = tmp_path / "t.conllu"
    train.write_bytes(treebank.read_bytes())
    dev = tmp_path / "d.conllu"
    dev.write_bytes(treebank.read_bytes())
    before = train.read_bytes()
    err = cli_error(capsys, ["train", str(train), "--epochs", "1", "--quiet", "-o", str(train)])
    assert "is also an input" in err and "epoch=" not in err
    err = cli_error(capsys, ["train", str(train), "--dev", str(dev), "--epochs", "1", "--quiet",
                          "-o", str(dev)])
    assert "is also an input" in err
    assert train.read_bytes() == before and dev.read_bytes() == before


def test_parse_refuses_to_overwrite_the_model(small, tmp_path, capsys):
    treebank, path, _ = small
    model = tmp_path / "m.npz"
    model.write_bytes(path.read_bytes())
    before = model.read_bytes()
    err = cli_error(capsys, ["parse", str(model), str(treebank), "--quiet", "-o", str(model)])
    assert f"{model}: is also an input" in err
    assert model.read_bytes() == before
    Model.load(model)


@pytest.mark.parametrize("kind", ["directory", "file"])
def test_model_save_leaves_a_stale_fixed_temporary_name_alone(small, tmp_path, kind):
    _, _, model = small
    stale = tmp_path / ".m.npz.tmp"
    if kind == "directory":
        stale.mkdir()
        (stale / "keep").write_text("x")
    else:
        stale.write_text("someone else's file")
    model.save(tmp_path / "m.npz")
    assert Model.load(tmp_path / "m.npz").labels == model.labels
    if kind == "directory":
        assert (stale / "keep").read_text() == "x"
    else:
        assert stale.read_text() == "someone else's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".m.npz.tmp", "m.npz"]


def test_two_threads_saving_one_model_path_both_succeed(small, tmp_path):
    _, _, model = small
    target = tmp_path / "m.npz"
    barrier = threading.Barrier(2)
    errors = []

    def save():
        barrier.wait()
        try:
            for _ in range(3):
                model.save(target)
        except Exception as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=save) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Model.load(target).n_nonzero() == model.n_nonzero()
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


# -- model files ---------------------------------------------------------------

def _with_weights(path, out, change):
    with np.load(path) as archive:
        weights = archive["weights"].copy()
        change(weights)
        np.savez(out, meta=archive["meta"], keys=archive["keys"], weights=weights)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_model_with_non_finite_weights_is_refused(small, tmp_path, capsys, value):
    treebank, path, _ = small
    bad = tmp_path / "bad.npz"
    _with_weights(path, bad, lambda w: w.__setitem__((len(w) // 2, 1), value))
    with pytest.raises(ModelError, match="bad.npz: .*not all finite"):
        Model.load(bad)
    err = cli_error(capsys, ["parse", str(bad), str(treebank), "--quiet"])
    assert "bad.npz" in err and "finite" in err


def test_model_file_that_is_a_directory(small, tmp_path, capsys):
    treebank, _, _ = small
    folder = tmp_path / "m.npz"
    folder.mkdir()
    err = cli_error(capsys, ["parse", str(folder), str(treebank), "--quiet"])
    assert f"{folder}: is a directory, not a model file" in err


def test_model_file_that_is_a_fifo_is_refused_without_blocking(small, tmp_path, capsys):
    # parse opened it to look at its first bytes and waited for a writer forever
    treebank, _, _ = small
    fifo = tmp_path / "m.npz"
    os.mkfifo(fifo)
    err = cli_error(capsys, ["parse", str(fifo), str(treebank), "--quiet"])
    assert f"{fifo}: not a regular file (a FIFO or a device), so not a model file" in err


# -- hyper-parameters ------------------------------------------------------------

BAD_SETTINGS = [
    ({"rho": -1.0}, "rho (--rho)"),
    ({"rho": float("nan")}, "rho (--rho)"),
    ({"alpha": 0.0}, "alpha (--alpha)"),
    ({"alpha": float("inf")}, "alpha (--alpha)"),
    ({"lam": float("nan")}, "lam (--l1)"),
    ({"lam": -0.5}, "lam (--l1)"),
    ({"epochs": 0}, "epochs (--epochs)"),
    ({"epochs": 2.5}, "epochs (--epochs)"),
    ({"beam": 0}, "beam (--beam)"),
    ({"explore_p": 1.5}, "explore_p (--explore-p)"),
    ({"explore_p": -0.1}, "explore_p (--explore-p)"),
    ({"explore_p": float("nan")}, "explore_p (--explore-p)"),
    ({"explore_after": -1}, "explore_after (--explore-after)"),
    ({"seed": 1.5}, "seed (--seed)"),
    ({"epochs": True}, "epochs (--epochs)"),
]


@pytest.mark.parametrize("settings,name", BAD_SETTINGS)
def test_trainer_rejects_bad_hyper_parameters(settings, name):
    with pytest.raises(ValueError, match=rf"^{name.replace('(', '[(]').replace(')', '[)]')} must be"):
        if set(settings) <= {"epochs", "seed"}:
            Trainer(progress=False, **settings)
        else:
            options_for("rda", **settings)


def test_trainer_accepts_the_edges_of_each_range():
    edges = Trainer(epochs=1, seed=0, progress=False, options=options_for(
        "rda", beam=1, explore_after=0, explore_p=0.0, rho=0.0, alpha=1e-9, lam=0.0))
    assert edges.options == RDAOptions(explore_after=0, rho=0.0, alpha=1e-9, lam=0.0)
    assert (edges.trainer, edges.epochs, edges.seed) == ("rda", 1, 0)
    numpy = Trainer(epochs=np.int64(2), seed=np.int32(-5), progress=False,
                    options=options_for(beam=np.int32(3), explore_p=1, lam=None))
    # options_for makes the perceptron's options: beam and lam are checked, not kept
    assert numpy.options == PerceptronOptions(explore_after=1, explore_p=1)
    assert numpy.trainer == "perceptron"
    # numpy's integers become Python ints, as the model's JSON keeps them
    assert (numpy.epochs, numpy.seed) == (2, -5)
    assert type(numpy.epochs) is int and type(numpy.seed) is int
    beam = options_for("beam-maxv", beam=np.int32(1), restart="none")
    assert beam == BeamOptions(size=1, update="maxv", restart="none") and beam.name == "beam-maxv"
    assert Trainer(epochs=1, progress=False, options=beam).options is beam


@pytest.mark.parametrize("make,name", [
    (lambda: RDAOptions(alpha=0.0), "alpha (--alpha)"),
    (lambda: RDAOptions(lam=float("nan")), "lam (--l1)"),
    (lambda: PerceptronOptions(explore_p=1.5), "explore_p (--explore-p)"),
    (lambda: BeamOptions(size=0), "beam (--beam)"),
    (lambda: BeamOptions(update="max"), "update"),
    (lambda: BeamOptions(restart="both"), "restart"),
])
def test_option_objects_refuse_bad_settings(make, name):
    with pytest.raises(ValueError, match=rf"^{name.replace('(', '[(]').replace(')', '[)]')} must be"):
        make()


def test_the_previous_keywords_warn_and_give_the_same_options():
    with pytest.warns(DeprecationWarning, match="RDAOptions"):
        trainer = Trainer(trainer="rda", rho=0.5, beam=3, progress=False)
    assert trainer.options == RDAOptions(rho=0.5) and trainer.trainer == "rda"
    with pytest.warns(DeprecationWarning):
        trainer = Trainer(trainer="beam-maxv", beam=3, restart="none", progress=False)
    assert trainer.options == BeamOptions(3, "maxv", "none") and trainer.trainer == "beam-maxv"
    assert Trainer(progress=False).options == PerceptronOptions()
    with pytest.raises(ValueError, match="needs --oracle dynamic"):
        Trainer(oracle="static", options=BeamOptions(restart="negative"), progress=False)


@pytest.mark.parametrize("option,value", [
    ("--rho", "-1"), ("--alpha", "0"), ("--l1", "nan"), ("--l1", "inf"), ("--epochs", "0"),
    ("--beam", "0"), ("--explore-p", "2"), ("--explore-after", "-1"),
])
def test_cli_rejects_bad_hyper_parameters_before_reading_data(tmp_path, capsys, option, value):
    # the training file does not exist: the setting must be refused first
    err = cli_error(capsys, ["train", str(tmp_path / "absent.conllu"), "--trainer", "rda",
                          option, value, "--quiet", "-o", str(tmp_path / "m.npz")])
    assert f"({option}) must be" in err and value in err
    assert not (tmp_path / "m.npz").exists()


# -- parse and evaluate ------------------------------------------------------------

def test_parse_beam_must_be_positive(small, tmp_path, capsys):
    treebank, path, model = small
    with pytest.raises(ValueError, match="beam size must be an integer >= 1, got 0"):
        model.parse(read_trees(treebank)[0], beam=0)
    # checked before the model is even read
    err = cli_error(capsys, ["parse", str(tmp_path / "absent.npz"), str(treebank), "--beam", "0"])
    assert "beam size must be an integer >= 1, got 0" in err
    err = cli_error(capsys, ["parse", str(path), str(treebank), "--beam", "-3", "--quiet"])
    assert "got -3" in err


def test_unreadable_inputs_are_named(small, tmp_path, capsys):
    treebank, path, _ = small
    absent = tmp_path / "absent.conllu"
    err = cli_error(capsys, ["train", str(absent), "--quiet", "-o", str(tmp_path / "m.npz")])
    assert f"{absent}: cannot read: No such file or directory" in err
    err = cli_error(capsys, ["parse", str(path), str(tmp_path), "--quiet"])
    assert f"{tmp_path}: cannot read: Is a directory" in err
    err = cli_error(capsys, ["evaluate", str(treebank), str(absent)])
    assert f"{absent}: cannot read" in err


def test_empty_training_file(tmp_path, capsys):
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    err = cli_error(capsys, ["train", str(empty), "--quiet", "-o", str(tmp_path / "m.npz")])
    assert f"{empty}:1: no sentences" in err


def test_no_training_trees_is_named_as_such():
    with pytest.raises(ValueError, match="^no training trees given$"):
        Trainer(progress=False).run([])


@pytest.fixture(scope="module")
def with_probabilities(small, tmp_path_factory):
    """Output of ``parse --probabilities`` on the small treebank (text)."""
    treebank, path, _ = small
    out = tmp_path_factory.mktemp("probabilities") / "out.conllu"
    assert main(["parse", str(path), str(treebank), "--probabilities", "--quiet", "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", ["nan", "1.5", "-0.25", "inf", "high", ""])
def test_calibration_bad_probability_gives_file_and_line(small, with_probabilities, tmp_path,
                                                         capsys, bad):
    treebank, _, _ = small
    lines = with_probabilities.split("\n")
    # the steps comment of the second sentence
    index = [i for i, line in enumerate(lines) if line.startswith("# semiparse_steps =")][1]
    first, rest = lines[index].split(" = ", 1)[1].split(" ", 1)
    name = first.rpartition("=")[0]
    lines[index] = f"# semiparse_steps = {name}={bad} {rest}"
    out = tmp_path / "out.conllu"
    out.write_text("\n".join(lines), encoding="utf-8")
    err = cli_error(capsys, ["evaluate", str(treebank), str(out), "--calibration"])
    assert f"{out}:{index + 1}: bad step '{name}={bad}' in semiparse_steps" in err
    assert "[0, 1]" in err

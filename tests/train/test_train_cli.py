"""Training learns, models round-trip, bad models fail cleanly, metrics are right.

Uses small samples of the shared UD Greek files so the whole file stays
within a few CPU-seconds per trainer.
"""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.perceptron import (
    Model,
    RDAOptions,
    Trainer,
    Tree,
    attachment_scores,
    evaluate_model,
    options_for,
    read_trees,
)
from semiparse.perceptron.calibration import calibration
from semiparse.transitions import load_system
from semiparse.treebank.projectivity import is_projective

from support import SYSTEMS, cli_error


@pytest.fixture(scope="module")
def greek(shared_data):
    folder = shared_data / "ud" / "UD_Greek-GDT"
    train = read_trees(folder / "el_gdt-ud-train.conllu")
    dev = read_trees(folder / "el_gdt-ud-dev.conllu")
    return train, dev, folder


def chain_baseline(trees):
    """UAS of attaching every word to the word before it (the root for word 1)."""
    predicted = [([-1] + list(range(len(t))), [None] * (len(t) + 1)) for t in trees]
    return attachment_scores(trees, predicted)["uas"]


@pytest.mark.parametrize("system,oracle,trainer,n_train", [
    ("arc_standard", "static", "perceptron", 200),
    ("arc_standard", "dynamic", "perceptron", 120),
    ("arc_hybrid", "nondet", "perceptron", 120),
    ("arc_eager", "dynamic", "rda", 120),
    ("arc_standard", "dynamic", "beam-early", 40),
    ("arc_hybrid", "static", "beam-maxv", 40),
    ("lr_spine", "static", "perceptron", 200),
    ("lr_spine", "dynamic", "perceptron", 40),
])
def test_training_learns(greek, system, oracle, trainer, n_train):
    train, dev, _ = greek
    sample = [t for t in train if len(t) <= 30][:n_train]
    dev = [t for t in dev if len(t) <= 30][:60]
    run = Trainer(system=system, oracle=oracle, options=options_for(trainer, beam=4, oracle=oracle),
                  epochs=3, seed=1, progress=False)
    model = run.run(sample, nonproj="projectivize" if oracle != "static" else "skip")
    accuracy = [h["train_accuracy"] for h in run.history]
    assert accuracy[-1] > accuracy[0] + 5, accuracy
    scores = evaluate_model(model, dev)
    assert scores["uas"] > chain_baseline(dev) + 15, scores
    assert scores["las"] <= scores["uas"]
    assert model.n_nonzero() > 0


def test_rda_l1_makes_sparser_models(greek):
    train, _, _ = greek
    sample = [t for t in train if len(t) <= 25][:80]
    sizes = []
    for lam in (1e-6, 1e-2):
        model = Trainer(oracle="static", options=RDAOptions(lam=lam), epochs=2, progress=False).run(
            sample, nonproj="skip")
        sizes.append(model.n_nonzero())
    assert sizes[1] < sizes[0] / 2, sizes


def test_nonproj_policies(greek):
    train, _, _ = greek
    sample = train[:150]
    n_nonproj = sum(not is_projective(t.heads) for t in sample)
    assert n_nonproj > 0
    from semiparse.perceptron import prepare

    assert len(prepare(sample, "skip", "static")) == len(sample) - n_nonproj
    projectivized = prepare(sample, "projectivize", "dynamic")
    assert len(projectivized) == len(sample) and all(is_projective(t.heads) for t in projectivized)
    assert prepare(sample, "oracle", "dynamic") == sample
    with pytest.raises(ValueError, match="static oracle needs projective"):
        prepare(sample, "oracle", "static")
    with pytest.raises(ValueError, match="LR-spine oracle is exact for projective trees only"):
        Trainer(system="lr_spine", progress=False).run(sample, nonproj="oracle")


@pytest.fixture(scope="module")
def small_model(greek, tmp_path_factory):
    train, _, _ = greek
    model = Trainer(oracle="dynamic", options=RDAOptions(), epochs=2, progress=False).run(
        [t for t in train if len(t) <= 25][:80])
    path = tmp_path_factory.mktemp("model") / "m.npz"
    model.save(path)
    return model, path


def test_model_round_trip(greek, small_model):
    _, dev, _ = greek
    model, path = small_model
    loaded = Model.load(path)
    assert loaded.system == model.system and loaded.labels == model.labels
    assert loaded.classes == model.classes and loaded.root_label == model.root_label
    for tree in dev[:40]:
        assert loaded.parse(tree)[:2] == model.parse(tree)[:2]
    # float32 storage keeps every non-zero weight
    assert loaded.n_nonzero() == model.n_nonzero()


def test_bad_model_files(greek, small_model, tmp_path, capsys):
    _, _, folder = greek
    _, path = small_model
    dev = str(folder / "el_gdt-ud-dev.conllu")
    err = cli_error(capsys, ["parse", str(tmp_path / "missing.npz"), dev, "--quiet"])
    assert "missing.npz: model file not found" in err
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert "truncated.npz: not a readable semiparse model" in cli_error(
        capsys, ["parse", str(truncated), dev, "--quiet"])
    garbage = tmp_path / "garbage.npz"
    garbage.write_text("hello\n")
    assert "garbage.npz" in cli_error(capsys, ["parse", str(garbage), dev, "--quiet"])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.arange(3))
    assert "not a semiparse parser model" in cli_error(capsys, ["parse", str(foreign), dev, "--quiet"])
    err = cli_error(capsys, ["parse", str(path), dev, "--system", "arc_eager", "--quiet"])
    assert "model is for the arc_standard system, not arc_eager" in err
    # a readable archive whose class list does not fit its labels
    tampered = tmp_path / "tampered.npz"
    with np.load(path) as archive:
        meta = json.loads(str(archive["meta"]))
        meta["classes"][0] = "shove"
        np.savez(tampered, meta=np.array(json.dumps(meta)), keys=archive["keys"],
                 weights=archive["weights"])
    assert "inconsistent model" in cli_error(capsys, ["parse", str(tampered), dev, "--quiet"])
    # templates reordered (parses lost most of their accuracy), a user system's recorded
    # grammar edited (a shipped system's is not read)
    user = tmp_path / "user.npz"
    Model(str(SYSTEMS / "arc_standard_root_end.toml"), ["root", "dep"]).save(user)
    for key, model, edit, message in (
            ("templates", path, lambda meta: meta["templates"].reverse(),
             "inconsistent model: its feature templates do not match their sha256"),
            ("system_grammar", user,
             lambda meta: meta.update(system_grammar=meta["system_grammar"] + "#"),
             "the recorded completion grammar does not match its sha256")):
        edited = tmp_path / f"{key}.npz"
        with np.load(model) as archive:
            meta = json.loads(str(archive["meta"]))
            edit(meta)
            np.savez(edited, meta=np.array(json.dumps(meta)), keys=archive["keys"],
                     weights=archive["weights"])
        assert message in cli_error(capsys, ["parse", str(edited), dev, "--quiet"])


def test_unseen_labels(greek, small_model, tmp_path, capsys):
    _, _, folder = greek
    _, path = small_model
    text = (folder / "el_gdt-ud-dev.conllu").read_text(encoding="utf-8").split("\n\n")[0] + "\n\n"
    lines = text.splitlines()
    first_word = next(i for i, l in enumerate(lines) if l and l[0].isdigit())
    cols = lines[first_word].split("\t")
    cols[7] = "nosuchlabel"
    lines[first_word] = "\t".join(cols)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    err = cli_error(capsys, ["parse", str(path), str(bad), "--strict-labels", "--quiet"])
    assert f"bad.conllu:{first_word + 1}: label 'nosuchlabel' was not seen in training" in err
    assert main(["parse", str(path), str(bad), "--quiet", "-o", str(tmp_path / "out.conllu")]) == 0
    assert "nosuchlabel" in capsys.readouterr().err


def test_cli_train_parse_evaluate_calibration(greek, tmp_path, capsys):
    _, _, folder = greek
    dev = folder / "el_gdt-ud-dev.conllu"
    small = tmp_path / "small.conllu"
    small.write_text("\n\n".join(dev.read_text(encoding="utf-8").split("\n\n")[:60]) + "\n\n",
                     encoding="utf-8")
    model = tmp_path / "m.npz"
    assert main(["train", str(small), "--dev", str(small), "--trainer", "rda", "--oracle", "dynamic",
                 "--epochs", "2", "--quiet", "-o", str(model)]) == 0
    err = capsys.readouterr().err
    assert "non-zero parameters" in err and "epoch=2" in err
    out = tmp_path / "out.conllu"
    assert main(["parse", str(model), str(small), "-o", str(out), "--threads", "2"]) == 2
    assert "--threads is for neural models" in capsys.readouterr().err and not out.exists()
    assert main(["parse", str(model), str(small), "-o", str(out), "--probabilities", "--quiet"]) == 0
    assert main(["evaluate", str(small), str(out), "--calibration", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    gold, system = read_trees(small), read_trees(out)
    assert report["uas"] == attachment_scores(gold, [(s.heads, s.labels) for s in system])["uas"]
    steps = sum(2 * len(t) for t in gold)  # arc-standard: n shifts and n arcs
    assert sum(row["count"] for row in report["calibration"]) == steps
    # the correct counts agree with a recount by exhaustive search on short sentences
    short = [(g, s) for g, s in zip(gold, system) if len(g) <= 7]
    assert short
    table = calibration([g for g, _ in short], [s for _, s in short],
                        oracle_factory=lambda name: semiparse.oracle(name, method="exhaustive"))
    fast = calibration([g for g, _ in short], [s for _, s in short])
    assert table == fast
    # a system given by its file must be the one the output names
    renamed = tmp_path / "renamed.toml"
    renamed.write_text(load_system("arc_standard").text.replace('name = "arc_standard"',
                                                               'name = "renamed"'))
    assert main(["evaluate", str(small), str(out), "--calibration", "--json", "--system",
                 str(load_system("arc_standard").path)]) == 0
    assert json.loads(capsys.readouterr().out)["calibration"] == report["calibration"]
    assert "made with system 'arc_standard', not 'renamed'" in cli_error(
        capsys, ["evaluate", str(small), str(out), "--calibration", "--system", str(renamed)])
    assert "--system applies to --calibration only" in cli_error(
        capsys, ["evaluate", str(small), str(out), "--system", str(renamed)])
    # output without recorded probabilities cannot be calibrated
    plain = tmp_path / "plain.conllu"
    assert main(["parse", str(model), str(small), "-o", str(plain), "--quiet"]) == 0
    assert "semiparse_steps" in cli_error(capsys, ["evaluate", str(small), str(plain), "--calibration"])
    # mismatching files
    other = tmp_path / "other.conllu"
    other.write_text("\n\n".join(dev.read_text(encoding="utf-8").split("\n\n")[1:61]) + "\n\n",
                     encoding="utf-8")
    assert "words differ" in cli_error(capsys, ["evaluate", str(small), str(other)])


@settings(max_examples=60)
@given(data=st.data())
def test_attachment_scores_against_brute_force(data):
    n_sent = data.draw(st.integers(1, 4))
    gold, predicted = [], []
    for _ in range(n_sent):
        n = data.draw(st.integers(1, 7))
        heads = [-1] + [data.draw(st.integers(0, n)) for _ in range(n)]
        labels = [None] + [data.draw(st.sampled_from("abc")) for _ in range(n)]
        tags = ["<root>"] + [data.draw(st.sampled_from(["PUNCT", "NOUN"])) for _ in range(n)]
        gold.append(Tree(["<root>"] + ["w"] * n, tags, heads, labels))
        predicted.append(([-1] + [data.draw(st.integers(0, n)) for _ in range(n)],
                          [None] + [data.draw(st.sampled_from("abc")) for _ in range(n)]))
    scores = attachment_scores(gold, predicted)
    for punct in (True, False):
        words = [(i, d) for i, t in enumerate(gold) for d in range(1, len(t) + 1)
                 if punct or t.tags[d] != "PUNCT"]
        gold_u = {(i, d, gold[i].heads[d]) for i, d in words}
        gold_l = {(i, d, gold[i].heads[d], gold[i].labels[d]) for i, d in words}
        pred_u = {(i, d, predicted[i][0][d]) for i, d in words}
        pred_l = {(i, d, predicted[i][0][d], predicted[i][1][d]) for i, d in words}
        suffix = "" if punct else "_nopunct"
        total = len(words)
        assert scores["words" + suffix] == total
        expect_u = 100.0 * len(gold_u & pred_u) / total if total else 0.0
        expect_l = 100.0 * len(gold_l & pred_l) / total if total else 0.0
        assert scores["uas" + suffix] == pytest.approx(expect_u)
        assert scores["las" + suffix] == pytest.approx(expect_l)


class _Terminal:
    """A text stream that says it is a terminal."""

    def __init__(self):
        import io

        self.buffer = io.StringIO()

    def write(self, text):
        return self.buffer.write(text)

    def flush(self):
        pass

    def isatty(self):
        return True


TOY = ("1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
       "1\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n2\ta\ta\tDET\t_\t_\t1\tdet\t_\t_\n\n") * 4
NEURAL = ["--model", "bilstm", "--word-dim", "4", "--char-dim", "0", "--upos-dim", "2",
          "--lstm-dim", "4", "--lstm-layers", "1", "--hidden-dim", "4", "--label-hidden-dim", "4",
          "--threads", "1", "--batch-size", "2"]


@pytest.mark.parametrize("model", ["perceptron", "bilstm"])
def test_progress_bars_only_on_a_terminal(model, tmp_path, monkeypatch):
    """With stderr a file (a log, CI), training wrote its progress bars as
    carriage-return updates (about 1 MB a run) and parse its bar too: there
    each epoch is one line, and the bars are kept for a terminal."""
    if model == "bilstm":
        pytest.importorskip("torch")
    train = tmp_path / "t.conllu"
    train.write_text(TOY)
    argv = ["train", str(train), "--epochs", "3", "-o", str(tmp_path / "m")]
    argv += NEURAL if model == "bilstm" else []
    parse = ["parse", str(tmp_path / "m"), str(train), "-o", str(tmp_path / "o.conllu")]
    with open(tmp_path / "log", "w") as log:
        monkeypatch.setattr("sys.stderr", log)
        assert main(argv) == 0
        assert main(parse) == 0
    text = (tmp_path / "log").read_text()
    assert "\r" not in text and "epoch 1/3" not in text and "parse:" not in text, text
    assert [line.split()[0] for line in text.splitlines() if line.startswith("epoch=")] == [
        "epoch=1", "epoch=2", "epoch=3"]
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(argv[:3] + ["1"] + argv[4:]) == 0
    assert main(parse) == 0
    assert "\repoch 1/1" in terminal.buffer.getvalue() and "\rparse" in terminal.buffer.getvalue()

"""``python -m semiparse.experiments``: every experiment runs at a tiny scale and
says what it ran (command, commit or version, data checksums, POS tags)."""
import hashlib
import json
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse import experiments
from semiparse.experiments import common
from semiparse.testing import gold_trees
from semiparse.treebank.projectivity import is_projective

from support import REPO


def _cuda():
    """Whether torch is installed and finds a CUDA device."""
    try:
        import torch
    except ModuleNotFoundError:
        return False
    return torch.cuda.is_available()

TINY = ["--limit", "4", "--epochs", "1", "--seeds", "1"]
GREEK = ["ud/UD_Greek-GDT/el_gdt-ud-train.conllu", "ud/UD_Greek-GDT/el_gdt-ud-test.conllu"]
GREEK_DEV = [*GREEK, "ud/UD_Greek-GDT/el_gdt-ud-dev.conllu"]  # the neural experiments select on dev
# experiment -> (options, data files read, runs per system at one seed)
RUNS = {
    "nonprojective-training": (["--languages", "el"], GREEK, 3),
    "oracle-comparison": (["--languages", "el"], GREEK, 3),
    "calibration": (["--languages", "el"], GREEK, 1),
    "beam-global": (["--languages", "el"], GREEK, 10),
    "exploration": (["--languages", "el"], GREEK, 2),
    "constituency": ([], ["ptb/wsj_sample_combined.mrg"], 2),
    "encoded-training": (["--languages", "el"], GREEK, 3),
    "partial-training": (["--languages", "el"], GREEK, 5),
    "neural-accuracy": (["--languages", "el"], GREEK_DEV, 5),
    "neural-nonprojective": (["--languages", "el"], GREEK_DEV, 3),
    "neural-oracles": ([], GREEK_DEV, 3),
    "neural-systems": ([], GREEK_DEV, 1),
    "nonprojective-systems": (["--languages", "el"], GREEK, 5),
}


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(name, tmp_path, data, *extra):
    argv = [name, "--data", str(data), *TINY, *RUNS[name][0], "--out", str(tmp_path / "out"), *extra]
    assert experiments.main(argv) == 0
    md = (tmp_path / "out.md").read_text(encoding="utf-8")
    return argv, md, json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))


# experiments whose results are not parser scores per system, run at a tiny
# scale by their own module's tests
TESTED_ELSEWHERE = {"biaffine-crf": "tests/test_torch.py",
                    "peers": "tests/experiments/test_peers.py"}


def test_every_experiment_is_tested():
    assert set(RUNS) | set(TESTED_ELSEWHERE) == set(experiments.EXPERIMENTS)
    assert not set(RUNS) & set(TESTED_ELSEWHERE)
    for name, module in TESTED_ELSEWHERE.items():
        assert f"def test_{name.replace('-', '_')}_experiment_runs" in (REPO / module).read_text()


@pytest.mark.parametrize("name", sorted(RUNS))
def test_tiny_run_says_what_it_ran(name, tmp_path, shared_data):
    argv, md, doc = run(name, tmp_path, shared_data)
    command = "python -m semiparse.experiments " + " ".join(argv)
    assert md.startswith("# ") and f"Command: `{command}`" in md
    assert doc["experiment"] == name and doc["command"] == command
    assert doc["version"] == semiparse.__version__
    if doc["commit"] is None:
        assert f"Commit: semiparse {semiparse.__version__} (not a git checkout)" in md
    else:  # the checkout's own commit
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
        assert doc["commit"] == head.strip() and re.search(f"^Commit: `{doc['commit']}`", md, re.M)
    options, used, runs = RUNS[name]
    assert set(doc["data"]) == set(used)
    for rel in used:  # each file read, with its checksum, in both outputs
        digest = sha256(shared_data / rel)
        assert doc["data"][rel] == digest and f"- `{rel}` {digest}" in md
    assert "POS tags: gold" in md and doc["pos_tags"].startswith("gold")
    module = experiments.experiment(name)
    variants = {"variants": list(module.VARIANTS)} if hasattr(module, "VARIANTS") else {}
    device = {"device": "cpu"} if name.startswith("neural-") else {}  # the torch device, recorded
    assert doc["settings"] == {"epochs": 1, "seeds": [1], "languages": options[1:] or module.DEFAULTS["languages"],
                               "systems": module.DEFAULTS["systems"], "limit": 4, **variants, **device}
    assert "Torch device" not in md  # said only when it is not the CPU
    assert "only the first 4 sentences of each training and test set" in md
    systems = module.DEFAULTS["systems"]
    assert len(doc["results"]) == runs * len(systems)
    for result in doc["results"]:
        assert result["seed"] == 1 and result["epochs"] == 1 and result["system"] in systems
        score, bound = ("f1", "f1") if name == "constituency" else ("las_nopunct", "uas_nopunct")
        assert 0 <= result[score] <= result[bound] <= 100
    # one table row per run at a single seed (calibration: one row per probability bin)
    rows = [line for line in md.splitlines() if line.split(" ")[1:2] in (["el"], *[[s] for s in systems])]
    assert len(rows) == (runs * len(systems) if name != "calibration" else 0)


def test_calibration_bins_every_test_decision(tmp_path, shared_data):
    _, md, doc = run("calibration", tmp_path, shared_data)
    (result,) = doc["results"]
    bins = result["calibration"]
    assert [b["low"] for b in bins] == pytest.approx([i / 10 for i in range(10)])
    # arc-standard makes 2n decisions for n words
    assert sum(b["count"] for b in bins) == 2 * result["words"]
    assert all(0 <= b["correct"] <= b["count"] for b in bins)
    assert len(re.findall(r"^\| \d\.\d-\d\.\d \|", md, re.M)) == 10


def test_parallel_jobs_give_the_same_document(tmp_path, shared_data):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    _, _, one = run("exploration", tmp_path / "a", shared_data, "--systems", "arc_standard")
    _, _, two = run("exploration", tmp_path / "b", shared_data, "--systems", "arc_standard", "--jobs", "2")
    assert [r["las"] for r in one["results"]] == [r["las"] for r in two["results"]]


def test_outside_a_checkout_the_version_is_given(tmp_path, shared_data, monkeypatch):
    def no_git(*args):
        raise OSError("git not found")

    monkeypatch.setattr(common, "_git", no_git)
    _, md, doc = run("oracle-comparison", tmp_path, shared_data)
    assert doc["commit"] is None
    assert f"Commit: semiparse {semiparse.__version__} (not a git checkout)" in md


def test_uncommitted_changes_are_marked(monkeypatch):
    answers = {"ls-files": "common.py\n", "rev-parse": "ab" * 20 + "\n", "status": " M semiparse/cli/__init__.py\n"}
    monkeypatch.setattr(common, "_git", lambda *args: answers[args[0]])
    assert common.provenance() == ("ab" * 20, f"`{'ab' * 20}` with uncommitted changes")
    answers["status"] = ""
    assert common.provenance() == ("ab" * 20, f"`{'ab' * 20}`")


def test_list_names_every_experiment(capsys):
    assert experiments.main(["--list"]) == 0
    out = capsys.readouterr().out
    for name in experiments.EXPERIMENTS:
        assert re.search(rf"^{name} ", out, re.M)


@pytest.mark.parametrize("argv, message", [
    (["--systems", "lr_spine"], "--systems: 'lr_spine' is not one of 'arc_standard', 'arc_hybrid', 'arc_eager'"),
    (["--languages", "xx"], "--languages: 'xx' is not one of 'el', 'got', 'hu'"),
    (["--variants", "x"], "this experiment has no variants to choose from"),
    (["--device", "cuda"], "--device: this experiment trains no neural parser"),
    (["--seeds", "1", "1"], "--seeds: 1 is given twice"),  # its runs counted twice in the means
    (["--languages", "el", "el"], "--languages: 'el' is given twice"),
])
def test_bad_settings_are_one_line_errors(argv, message, tmp_path, shared_data, capsys):
    assert experiments.main(["beam-global", "--data", str(shared_data), *argv,
                             "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"semiparse experiments beam-global: error: {message}\n"
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("device, message", [
    ("tpu", "device must be cpu or cuda[:N], not 'tpu'"),
    *([("cuda", "device cuda: torch finds no CUDA devices")] if not _cuda() else []),
])
def test_device_is_checked_before_any_run(device, message, tmp_path, shared_data, capsys):
    """A neural experiment's ``--device`` is one torch can use (cpu, or
    cuda[:N] where there is such a device), refused before anything is
    written."""
    assert experiments.main(["neural-systems", "--data", str(shared_data), "--device", device,
                             "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"semiparse experiments neural-systems: error: --device: {message}\n"
    assert not list(tmp_path.iterdir())


def _mps():
    """What check_device says of mps here (torch's build and machine)."""
    import torch

    if not torch.backends.mps.is_built():
        return "this build of PyTorch has no MPS support"
    if not torch.backends.mps.is_available():
        return "torch finds no MPS device on this machine"
    return "torch has it, but semiparse does not run its networks on MPS"


@pytest.mark.parametrize("device", ["mps", "cuda", "tpu"])
def test_device_of_an_experiment_that_trains_on_the_cpu(device, tmp_path, shared_data, capsys):
    """biaffine-crf trains a network (on the CPU): --device mps said "this
    experiment trains no neural parser".  What is wrong with the device is
    said instead, or that the experiment runs on the CPU only."""
    pytest.importorskip("torch")
    message = {
        "mps": f"--device: device mps: {_mps()}; the neural parsers run on cpu or cuda[:N]",
        "cuda": ("--device cuda: this experiment trains its networks on the CPU only (--device "
                 "cpu, or no --device)" if _cuda() else
                 "--device: device cuda: torch finds no CUDA devices"),
        "tpu": "--device: device must be cpu or cuda[:N], not 'tpu'",
    }[device]
    assert experiments.main(["biaffine-crf", "--data", str(shared_data), "--device", device,
                             "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"semiparse experiments biaffine-crf: error: {message}\n"
    assert not list(tmp_path.iterdir())


def test_variants_choose_the_runs(tmp_path, shared_data, capsys):
    """``--variants`` runs only the variants named, and refuses others."""
    out = tmp_path / "out"
    assert experiments.main(["partial-training", "--data", str(shared_data), "--limit", "20",
                             "--epochs", "1", "--seeds", "1", "--variants", "complete",
                             "drop 50%", "--out", str(out)]) == 0
    runs = json.loads((tmp_path / "out.json").read_text())["results"]
    assert sorted(r["variant"] for r in runs) == ["complete", "drop 50%"]
    assert experiments.main(["partial-training", "--data", str(shared_data), "--variants", "half",
                             "--out", str(tmp_path / "bad")]) == 2
    assert "--variants: 'half' is not one of 'complete'," in capsys.readouterr().err
    assert not (tmp_path / "bad.md").exists()


def test_missing_data_is_a_one_line_error(tmp_path, capsys):
    assert experiments.main(["calibration", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("semiparse experiments calibration: error: ") and "data file not found" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "out.md").exists()


def test_data_defaults_to_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEMIPARSE_DATA", str(tmp_path / "elsewhere"))
    assert experiments.main(["exploration", "--out", str(tmp_path / "out")]) == 2
    assert str(tmp_path / "elsewhere") in capsys.readouterr().err


# -- the constituent parser trainer the constituency experiment uses ---------------------------

@pytest.fixture(scope="module")
def ptb_trees(shared_data):
    from semiparse.experiments.constituency import split

    train, test = split(shared_data, 30)
    return train, test


@pytest.mark.parametrize("system", ["top_down", "in_order"])
@pytest.mark.parametrize("favoured", ["NT", "RE"])
def test_parser_stops_even_when_it_favours_unary_chains(system, favoured, ptb_trees):
    """Neither system bounds unary chains: a parser that always prefers NT-X
    (or Reduce) must still finish every sentence, with its words."""
    from semiparse.constituency.train import Parser

    parser = Parser(system, ["NP", "S", "VP"])
    parser.weights["bias"] = np.array([1.0 if t.kind == favoured else 0.0 for t in parser.classes])
    for tree in ptb_trees[1][:5]:
        out = parser.parse(tree.leaves())
        assert out.leaves() == tree.leaves()


@pytest.mark.parametrize("system", ["top_down", "in_order"])
@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_parser_learns_its_training_trees(system, oracle, ptb_trees):
    from semiparse.constituency import evaluate
    from semiparse.constituency.train import train

    trees = ptb_trees[0][:15]
    parser = train(trees, system, oracle=oracle, epochs=8, seed=1)
    # a parser with zero weights scores 0 here
    assert evaluate(trees, [parser.parse(t.leaves()) for t in trees]).f1 > 0.8


def test_trainer_settings_are_checked(ptb_trees):
    from semiparse.constituency.train import train

    with pytest.raises(ValueError, match="oracle must be 'static' or 'dynamic', not 'nondet'"):
        train(ptb_trees[0], "top_down", oracle="nondet")
    with pytest.raises(ValueError, match="no training trees"):
        train([], "in_order")
    with pytest.raises(ValueError, match="unknown transition system"):
        train(ptb_trees[0], "arc_eager")


@settings(max_examples=100)
@given(heads=gold_trees(1, 9))
def test_nonprojective_words_are_those_of_crossing_arcs(heads):
    from semiparse.experiments.encoded_training import nonprojective_words

    words = nonprojective_words(heads)
    assert (not words) == is_projective(heads)
    for d in words:  # the arc into d is crossed by another arc
        lo, hi = sorted((heads[d], d))
        assert any((lo < x < hi) != (lo < heads[x] < hi) and not {x, heads[x]} & {lo, hi}
                   for x in range(1, len(heads)))


# -- what the neural experiments share ----------------------------------------------------------

@pytest.fixture(scope="module")
def greek_test(shared_data):
    from semiparse.perceptron import read_trees

    return read_trees(shared_data / "ud/UD_Greek-GDT/el_gdt-ud-test.conllu")[:12]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_counted_scores_are_the_official_scorers(data, greek_test):
    """On gold words the CoNLL 2018 scorer's LAS/UAS are the shares counted by
    ``counted_scores``: checked on random single-root trees, some labels with
    subtypes, some wrong."""
    from semiparse.experiments.neural_common import counted_scores, score_test_set

    predicted = []
    for tree in greek_test:
        n = len(tree)
        order = data.draw(st.permutations(range(1, n + 1)))  # a random tree: each word's head comes before it
        heads = [-1] + [0] * n
        for k, d in enumerate(order[1:], 1):
            heads[d] = data.draw(st.sampled_from(order[:k]))
        labels = [None] + [data.draw(st.sampled_from([tree.labels[d], tree.labels[d] + ":x", "dep"]))
                           for d in range(1, n + 1)]
        predicted.append((heads, labels))
    counted = counted_scores(greek_test, predicted)
    assert counted["multiroot_sentences"] == 0
    scores = score_test_set(greek_test, predicted)  # by the official scorer
    assert scores["scorer"] == "conll18"
    assert (scores["las"], scores["uas"]) == pytest.approx((counted["las"], counted["uas"]))


def test_several_roots_are_counted_the_scorers_way(greek_test):
    """The official scorer refuses a sentence with several root words (arc-eager's
    leftovers): the scores are counted here instead, and say so."""
    from semiparse.experiments.neural_common import counted_scores, score_test_set

    predicted = [([-1] + [0] * len(t), [None] + list(t.labels[1:])) for t in greek_test]
    scores = score_test_set(greek_test, predicted)
    assert scores["scorer"].startswith("refused (") and "roots" in scores["scorer"]
    expected = counted_scores(greek_test, predicted)
    assert scores["multiroot_sentences"] == sum(len(t) > 1 for t in greek_test) == expected["multiroot_sentences"]
    roots = sum(t.heads[d] == 0 for t in greek_test for d in range(1, len(t) + 1))
    words = sum(len(t) for t in greek_test)
    assert scores["uas"] == pytest.approx(100.0 * roots / words) == pytest.approx(expected["uas"])


def test_perceptron_keeps_the_epoch_with_the_best_dev_las(shared_data):
    from semiparse.experiments.common import read_ud
    from semiparse.experiments.neural_common import _selected_trainer
    from semiparse.perceptron import evaluate_model

    train = read_ud(shared_data, "hu", "train", 40)
    dev = read_ud(shared_data, "hu", "dev", 60)
    trainer = _selected_trainer()(system="arc_standard", oracle="dynamic", epochs=6, seed=1, progress=False)
    model = trainer.run(train, dev=dev, nonproj="projectivize")
    las = [r["las"] for r in trainer.history]
    assert trainer.best_epoch == las.index(max(las)) + 1
    assert evaluate_model(model, dev)["las"] == pytest.approx(max(las))


def test_partial_training_hides_the_share_asked_and_drops_what_it_says(shared_data):
    from semiparse.experiments import partial_training as pt
    from semiparse.experiments.common import read_ud

    trees = read_ud(shared_data, "el", "train", 300)
    words = sum(len(t) for t in trees)
    for share in (25, 50):
        partial, flag = pt.training_set(trees, f"partial {share}%", seed=1)
        hidden = sum(h == -1 for t in partial for h in t.heads[1:])
        assert flag and abs(hidden / words - share / 100) < 0.03
        assert all((h == -1) == (l == "_") for t in partial for h, l in zip(t.heads[1:], t.labels[1:]))
        assert all(h in (-1, g) for t, u in zip(partial, trees) for h, g in zip(t.heads, u.heads))
        dropped, flag = pt.training_set(trees, f"drop {share}%", seed=1)
        assert not flag and all(-1 not in t.heads[1:] for t in dropped)
        assert len(dropped) == sum(-1 not in t.heads[1:] for t in partial)
    assert pt.training_set(trees, "complete", seed=1) == (trees, False)


@pytest.mark.parametrize("out", [".", "..", "sub/", "DIR"])
def test_out_must_be_a_prefix_not_a_folder(tmp_path, capsys, monkeypatch, out):
    """--out . wrote the hidden files ..md and ..json."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DIR").mkdir()
    assert experiments.main(["oracle-comparison", "--out", out]) == 2
    assert "a prefix names the files PREFIX.md and PREFIX.json" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DIR"]


def test_a_run_that_fails_keeps_the_files_of_the_last_one(tmp_path, shared_data, capsys):
    """Both outputs are checked before any work, and an earlier run's files
    stay until the first job is done: a new run whose .md could not be
    written had replaced the .json with an empty one."""
    out = tmp_path / "run"
    out.with_suffix(".json").write_text("{}\n")
    out.with_suffix(".md").mkdir()
    assert experiments.main(["beam-global", "--data", str(shared_data), "--limit", "2",
                             "--epochs", "1", "--seeds", "1", "--out", str(out)]) == 2
    assert "run.md: is a directory" in capsys.readouterr().err
    assert out.with_suffix(".json").read_text() == "{}\n"


def test_bad_numbers_name_the_option(capsys):
    with pytest.raises(SystemExit):
        experiments.main(["beam-global", "--limit", "nan"])
    assert "argument --limit: expected an integer >= 1, not 'nan'" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_a_run_quietly(tmp_path, shared_data, jobs):
    """Ctrl-C printed a KeyboardInterrupt traceback (from the workers too),
    and with --jobs 2 waited for the runs started to end (a run of 60 epochs
    here: a minute, where stopping takes a second)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "semiparse.experiments", "oracle-comparison", "--data",
         str(shared_data), "--limit", "300", "--epochs", "60", "--seeds", "1", "--jobs", jobs,
         "--out", str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path)
    time.sleep(3)  # past the imports, into the training
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 130 and b"Traceback" not in err, err.decode()

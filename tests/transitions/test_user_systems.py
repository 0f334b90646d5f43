"""Training, parsing, checking and benchmarking with a user's own system
declaration: a TOML file or a system object named ``module:attr``; a model
records the definition it was trained with."""
import json
import re

import numpy as np
import pytest

from semiparse.cli import main
from semiparse.resources import data_dir
from semiparse.perceptron import Model, ModelError, Trainer, read_trees
from semiparse.perceptron.model import SYSTEM_KEYS
from semiparse.transitions.systems.loading import load_system

from support import SYSTEMS, cli_error

SHIPPED = data_dir("systems")

# Arc-eager that ends with only the root on the stack: a headless stack node
# may also be attached to the node below it and popped.
ATTACH_BELOW = '''
[[transition]]
name = "attach_below"
stack = ["*", "s1", "s0"]
buffer = ["*"]
require = ["s0 != root", "s0 has no head"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"
'''


def strict_eager_text(extra_require=""):
    text = (SHIPPED / "arc_eager.toml").read_text(encoding="utf-8")
    text = text.replace('name = "arc_eager"', 'name = "strict_eager"', 1)
    text = text.replace('final = { stack = "any", buffer = "empty" }',
                        'final = { stack = "root", buffer = "empty" }')
    text = text.replace('static_order = ["left_arc", "right_arc", "reduce", "shift"]',
                        'static_order = ["left_arc", "right_arc", "reduce", "attach_below", '
                        '"shift"]')
    return text.replace("\n[completion]", ATTACH_BELOW.replace(
        'require = ["s0 != root"', f'require = [{extra_require}"s0 != root"') + "\n[completion]")


def careful_standard_text():
    """Arc-standard with an extra (redundant) requirement on right_arc."""
    text = (SHIPPED / "arc_standard.toml").read_text(encoding="utf-8")
    text = text.replace('name = "arc_standard"', 'name = "careful_standard"', 1)
    return text.replace('stack_after = ["*", "s1"]\nbuffer_after = ["*"]\nedge = "s1 -> s0"',
                        'require = ["s0 != root"]\nstack_after = ["*", "s1"]\n'
                        'buffer_after = ["*"]\nedge = "s1 -> s0"', 1)


@pytest.fixture
def systems(tmp_path):
    strict, careful = tmp_path / "strict_eager.toml", tmp_path / "careful.toml"
    strict.write_text(strict_eager_text(), encoding="utf-8")
    careful.write_text(careful_standard_text(), encoding="utf-8")
    assert load_system(str(strict)).transitions[-1] == "attach_below"
    assert load_system(str(careful))._rule_of["right_arc"].not_root
    return strict, careful


@pytest.fixture
def small(shared_data, tmp_path):
    dev = shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"
    path = tmp_path / "small.conllu"
    path.write_text("\n\n".join(dev.read_text(encoding="utf-8").split("\n\n")[:60]) + "\n\n",
                    encoding="utf-8")
    return path


def _uas(gold_path, out_path):
    gold, out = read_trees(gold_path), read_trees(out_path)
    right = sum(g.heads[d] == o.heads[d] for g, o in zip(gold, out) for d in range(1, len(g) + 1))
    return right / sum(len(g) for g in gold)


@pytest.mark.parametrize("which, oracle, trainer", [
    (0, "static", "perceptron"), (0, "dynamic", "beam-early"),
    (1, "dynamic", "perceptron"), (1, "static", "beam-maxv"), (1, "nondet", "rda"),
])
def test_train_and_parse_with_a_declared_system_file(systems, small, tmp_path, capsys,
                                                     which, oracle, trainer):
    path = systems[which]
    model = tmp_path / "m.npz"
    assert main(["train", str(small), "--system", str(path), "--oracle", oracle,
                 "--trainer", trainer, "--epochs", "1", "--beam", "2", "--quiet",
                 "-o", str(model)]) == 0
    text = path.read_text(encoding="utf-8")
    path.unlink()  # the model records the definition: the file is no longer needed
    out = tmp_path / "out.conllu"
    assert main(["parse", str(model), str(small), "-o", str(out), "--quiet"]) == 0
    assert _uas(small, out) > 0.3  # learnt something (attaching to the root scores far less)
    loaded = Model.load(model)
    assert loaded.system == ("strict_eager", "careful_standard")[which]
    assert loaded.meta == {k: v for k, v in loaded.meta.items() if k not in SYSTEM_KEYS}
    with np.load(model) as archive:
        meta = json.loads(str(archive["meta"]))
    assert meta["system_definition"] == text and len(meta["system_sha256"]) == 64
    # the same definition, written elsewhere, is accepted
    path.write_text(text, encoding="utf-8")
    assert main(["parse", str(model), str(small), "--system", str(path), "--quiet",
                 "-o", str(out)]) == 0


def test_classes_come_from_the_transitions(systems):
    labels = ["root", "nsubj"]
    strict = Model(str(systems[0]), labels)
    assert [strict.class_name(i) for i in range(len(strict.classes))] == [
        "shift", "left_arc:root", "left_arc:nsubj", "right_arc:root", "right_arc:nsubj",
        "reduce", "attach_below:root", "attach_below:nsubj"]
    careful = Model(str(systems[1]), labels)
    assert careful.classes == Model("arc_standard", labels).classes
    # the shipped arc-eager keeps its layout (reduce with a label) for its old models
    assert ("reduce", "nsubj") in Model("arc_eager", labels).classes


def test_another_definition_of_the_same_name_is_refused(systems, small, tmp_path, capsys):
    strict, careful = systems
    model = tmp_path / "m.npz"
    assert main(["train", str(small), "--system", str(strict), "--oracle", "static",
                 "--epochs", "1", "--quiet", "-o", str(model)]) == 0
    capsys.readouterr()
    other = tmp_path / "other.toml"
    other.write_text(strict_eager_text('"s1 != root", '), encoding="utf-8")
    assert load_system(str(other)).name == "strict_eager"
    err = cli_error(capsys, ["parse", str(model), str(small), "--system", str(other)])
    assert "another definition of the strict_eager system" in err
    with pytest.raises(ModelError, match="another definition"):
        Model.load(model, system=str(other))
    err = cli_error(capsys, ["parse", str(model), str(small), "--system", "arc_eager"])
    assert "model is for the strict_eager system, not arc_eager" in err
    # a recorded definition that does not match its recorded hash is a damaged file
    with np.load(model) as archive:
        meta = json.loads(str(archive["meta"]))
        keys, weights = archive["keys"], archive["weights"]
    meta["system_definition"] = other.read_text(encoding="utf-8")
    np.savez_compressed(model, meta=np.array(json.dumps(meta)), keys=keys, weights=weights)
    assert "damaged model file" in cli_error(capsys, ["parse", str(model), str(small)])


def test_models_without_a_recorded_definition_load_as_the_shipped_system(small, tmp_path):
    path = tmp_path / "old.npz"
    trainer = Trainer(system="arc_eager", oracle="static", epochs=1, progress=False)
    trainer.run(read_trees(small)[:10]).save(path)
    with np.load(path) as archive:
        meta = json.loads(str(archive["meta"]))
        keys, weights = archive["keys"], archive["weights"]
    assert meta["system_sha256"]
    for key in ("system_definition", "system_sha256"):
        del meta[key]
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), keys=keys, weights=weights)
    model = Model.load(path, system="arc_eager")
    assert model.system == "arc_eager" and model.transition_system is load_system("arc_eager")
    assert ("reduce", "root") in model.classes
    meta["system"] = "strict_eager"
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), keys=keys, weights=weights)
    with pytest.raises(ModelError, match="unknown transition system 'strict_eager'"):
        Model.load(path)


MODULE = '''
from semiparse.transitions.systems.loading import load_system

CAREFUL = load_system({path!r})
NOT_A_SYSTEM = 42
'''


def test_check_and_train_take_module_attr_and_paths(systems, small, tmp_path, monkeypatch,
                                                    capsys):
    strict, careful = systems
    (tmp_path / "anysys_plugin.py").write_text(MODULE.format(path=str(careful)))
    monkeypatch.syspath_prepend(str(tmp_path))
    for argv in (["anysys_plugin:CAREFUL"], ["--system", str(careful)]):
        assert main(["check", *argv, "--examples", "30", "--max-n", "5"]) == 0
        assert "ok    careful_standard strategy=none" in capsys.readouterr().out
    model = tmp_path / "m.npz"
    assert main(["train", str(small), "--system", "anysys_plugin:CAREFUL", "--epochs", "1",
                 "--quiet", "-o", str(model)]) == 0
    capsys.readouterr()
    assert Model.load(model, system="anysys_plugin:CAREFUL").system == "careful_standard"
    assert "SYSTEM or --system" in cli_error(capsys, ["check", "arc_standard",
                                                   "--system", "arc_standard"])


@pytest.mark.parametrize("spec, message", [
    ("anysys_no_such_module:SYSTEM", "cannot import module 'anysys_no_such_module'"),
    ("anysys_plugin:MISSING", "module 'anysys_plugin' has no attribute 'MISSING'"),
    ("anysys_plugin:NOT_A_SYSTEM", "NOT_A_SYSTEM is of type int, not a transition system"),
])
def test_bad_module_attr_is_one_line(systems, small, tmp_path, monkeypatch, capsys,
                                     spec, message):
    (tmp_path / "anysys_plugin.py").write_text(MODULE.format(path=str(systems[1])))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert message in cli_error(capsys, ["check", spec])
    assert message in cli_error(capsys, ["train", str(small), "--system", spec, "--quiet",
                                      "-o", str(tmp_path / "m.npz")])
    assert message in cli_error(capsys, ["bench", "oracle", str(small), "--systems", spec])


def test_bench_oracle_takes_system_files(systems, small, capsys):
    assert main(["bench", "oracle", str(small), "--systems", str(systems[0]), str(systems[1]),
                 "--sizes", "10", "--per-size", "1", "--seconds", "0.001"]) == 0
    out = capsys.readouterr().out
    assert "strict_eager, strategy none" in out and "careful_standard, strategy none" in out
    assert "disagreed" not in out and "failed" not in out


def test_bench_oracle_compares_a_declared_system_with_its_shipped_equivalent(small, capsys):
    """``--system FILE``: both systems timed on the configurations of the same
    sentences (each batch row checked against the single call first), and the
    ratios printed; the equivalent is found by name or given."""
    root_end = str(SYSTEMS / "arc_standard_root_end.toml")
    assert main(["bench", "oracle", str(small), "--system", root_end, "--sentences", "3",
                 "--threads", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()
            if len(line.split()) > 1 and line.split()[1].isdigit()]
    assert [r[0] for r in rows] == ["arc_standard_root_end", "arc_standard"]
    assert all(int(r[1]) > 0 for r in rows)
    ratios = re.search(r"arc_standard_root_end / arc_standard: scores ([\d.]+)x, batch ([\d.]+)x, "
                       r"batch on 2 threads ([\d.]+)x", out)
    assert ratios and all(float(x) > 0 for x in ratios.groups())
    assert main(["bench", "oracle", str(small), "--system", root_end, "--against", "arc_hybrid",
                 "--sentences", "2"]) == 0
    assert "arc_standard_root_end / arc_hybrid:" in capsys.readouterr().out


def test_bench_oracle_needs_a_shipped_equivalent(systems, small, capsys):
    err = cli_error(capsys, ["bench", "oracle", str(small), "--system", str(systems[0]),
                             "--sentences", "2"])
    assert "no shipped equivalent of the system 'strict_eager'" in err and "--against" in err

"""Neural model files and training checkpoints that are damaged, tampered
with or made on other data are refused with one line naming the file
(ModelError in Python, exit status 2 on the command line), never loaded
silently or with a traceback."""
import hashlib
import json
import struct
import zipfile

import pytest

torch = pytest.importorskip("torch")

from semiparse.cli import main  # noqa: E402
from semiparse.neural import io, load  # noqa: E402
from semiparse.neural.features import parse_positions  # noqa: E402
from semiparse.perceptron import ModelError  # noqa: E402

from support import SYSTEMS as SUPPORT_SYSTEMS, cli_error  # noqa: E402

FLAGS = ["--model", "bilstm", "--word-dim", "4", "--char-dim", "0", "--upos-dim", "2",
         "--lstm-dim", "4", "--lstm-layers", "1", "--hidden-dim", "4", "--label-hidden-dim", "4",
         "--threads", "1", "--quiet"]
SENTENCES = ["1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
             "3\tc\tc\tVERB\t_\t_\t0\troot\t_\t_\n\n",
             "1\tc\tc\tVERB\t_\t_\t0\troot\t_\t_\n2\ta\ta\tDET\t_\t_\t3\tdet\t_\t_\n"
             "3\tb\tb\tNOUN\t_\t_\t1\tobj\t_\t_\n\n",
             "1\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n\n"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of one epoch on SENTENCES: its TRAIN file, checkpoint and model."""
    folder = tmp_path_factory.mktemp("run")
    train = folder / "train.conllu"
    train.write_text("".join(SENTENCES))
    checkpoint, model = folder / "ck.pt", folder / "m.pt"
    assert main(["train", str(train), *FLAGS, "--epochs", "1", "--checkpoint", str(checkpoint),
                 "-o", str(model)]) == 0
    return train, checkpoint, model


def _resume(train, checkpoint, out):
    return ["train", str(train), *FLAGS, "--epochs", "2", "--resume", str(checkpoint), "-o", str(out)]


def _error(capsys, argv):
    """The error line of a train command line that must exit with status 2
    (after its log lines)."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("error:") == 1, err
    return err.splitlines()[-1]


def _named(path):
    return f"{path} (3 sentences, sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]})"


def test_resume_refuses_other_training_data(run, tmp_path, capsys):
    """The checkpoint records the sha256 of its training sentences: the same
    words and labels in another order or with other heads were resumed
    silently (order numbers the examples); the same sentences in another
    file resume.  A checkpoint of an earlier semiparse (no record) is still
    checked by its vocabulary and number of sentences only."""
    train, checkpoint, _ = run
    files = {name: tmp_path / f"{name}.conllu" for name in ("reordered", "heads", "copy", "words")}
    files["reordered"].write_text("".join(reversed(SENTENCES)))
    files["heads"].write_text("".join(SENTENCES).replace("\t2\tdet\t", "\t3\tdet\t", 1))
    files["copy"].write_text("".join(SENTENCES))
    files["words"].write_text("".join(SENTENCES).replace("\tb\tb\t", "\tz\tz\t"))
    capsys.readouterr()
    for name in ("reordered", "heads"):
        err = _error(capsys, _resume(files[name], checkpoint, tmp_path / "x.pt"))
        assert err == (f"semiparse train: error: {checkpoint}: the checkpoint was made with other "
                       f"training data: {_named(train)}, now {_named(files[name])}")
    assert not (tmp_path / "x.pt").exists()
    assert main(_resume(files["copy"], checkpoint, tmp_path / "copy.pt")) == 0
    payload = torch.load(checkpoint, weights_only=True)
    del payload["train"]
    old = tmp_path / "old.pt"
    torch.save(payload, old)
    assert main(_resume(files["reordered"], old, tmp_path / "old_reordered.pt")) == 0
    assert _error(capsys, _resume(files["words"], old, tmp_path / "x.pt")) == (
        f"semiparse train: error: {old}: the checkpoint was made with other training data")


SYSTEMS = SUPPORT_SYSTEMS  # arc_standard_no_root.toml and the grammar it names, copied


@pytest.fixture(scope="module")
def system_run(tmp_path_factory):
    """A run of one epoch with a system file, its completion grammar and a
    dev set: the folder of its inputs and its checkpoint."""
    folder = tmp_path_factory.mktemp("system_run")
    for name in ("arc_standard_no_root.toml", "arc_standard_no_root.grammar"):
        (folder / name).write_text((SYSTEMS / name).read_text())
    (folder / "train.conllu").write_text("".join(SENTENCES))
    (folder / "dev.conllu").write_text("".join(SENTENCES[:2]))
    checkpoint = folder / "ck.pt"
    assert main(_system_args(folder) + ["--epochs", "1", "--checkpoint", str(checkpoint),
                                        "-o", str(folder / "m.pt")]) == 0
    return folder, checkpoint


def _system_args(folder, *extra):
    return ["train", str(folder / "train.conllu"), *FLAGS, "--system",
            str(folder / "arc_standard_no_root.toml"), "--dev", str(folder / "dev.conllu"), *extra]


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _change_grammar(folder, original):
    grammar = folder / "arc_standard_no_root.grammar"
    grammar.write_text(grammar.read_text().replace("S -> (S, S) | (P, S)", "S -> (P, S)"))
    return (f"another completion grammar of arc_standard_no_root, which gives the dynamic oracle: "
            f"sha256 {_digest(SYSTEMS / grammar.name)}, now {grammar.resolve()} (sha256 "
            f"{_digest(grammar)})")


def _change_system(folder, original):
    toml = folder / "arc_standard_no_root.toml"
    toml.write_text(toml.read_text().replace('static_order = ["left_arc", "right_arc", "shift"]',
                                             'static_order = ["right_arc", "left_arc", "shift"]'))
    return ("another transition system: arc_standard_no_root (sha256 ", f"now arc_standard_no_root "
            f"({toml}, sha256 ")


def _change_data(folder, name, original):
    path = folder / f"{name}.conllu"
    before = f"{original / path.name} ({len(path.read_text().split(chr(10) * 2)) - 1} sentences, sha256 {_digest(path)})"
    path.write_text(path.read_text().replace("\tb\tb\t", "\tz\tz\t"))
    sentences = len(path.read_text().split("\n\n")) - 1
    return (f"other training data: {before}" if name == "train" else
            f"another dev set (--dev), which chooses the best epoch: {before}",
            f"now {path} ({sentences} sentences, sha256 {_digest(path)})")


# Each input of a run that a checkpoint records: how to change it (the changed
# files are the run's own, copied), the options to resume with, and what the
# refusal says (a string it ends with, or pieces it holds)
CHANGED = {
    "system file": (_change_system, []),
    "completion grammar": (_change_grammar, []),  # was resumed silently
    "training data": (lambda folder, original: _change_data(folder, "train", original), []),
    "dev set": (lambda folder, original: _change_data(folder, "dev", original), []),
    "no dev set": (lambda folder, original: (folder / "dev.conllu").unlink() or (
        "another dev set (--dev), which chooses the best epoch: ", ", now none"), []),
    "features": (lambda folder, original: "other options: features [] (now ['s1', 's0', 'b0'])",
                 ["--features", "s1,s0,b0"]),
    "lr": (lambda folder, original: "other options: lr 0.001 (now 0.5)", ["--lr", "0.5"]),
    "seed": (lambda folder, original: "other options: seed 0 (now 1)", ["--seed", "1"]),
    "oracle": (lambda folder, original: "other options: oracle 'dynamic' (now 'nondet')",
               ["--oracle", "nondet"]),
    "nonproj": (lambda folder, original: "other options: nonproj 'projectivize' (now 'oracle')",
                ["--nonproj", "oracle"]),
    "sizes": (lambda folder, original: "other options: hidden_dim 4 (now 5)", ["--hidden-dim", "5"]),
    "loss": (lambda folder, original: "other options: loss 'hinge' (now 'nll')", ["--loss", "nll"]),
}


@pytest.mark.parametrize("case", CHANGED)
def test_resume_refuses_every_changed_input(system_run, tmp_path, capsys, case):
    """A run resumes only with every input its checkpoint records as it was:
    the system file, the completion grammar it names (its digest was recorded
    but not compared: a replaced grammar trained the next epochs on another
    dynamic oracle), the training data, the dev set and the options.  Each
    change is one line naming the checkpoint (and the changed file), exit 2,
    and no model written."""
    folder, checkpoint = system_run
    copy = tmp_path / "inputs"
    copy.mkdir()
    for name in ("arc_standard_no_root.toml", "arc_standard_no_root.grammar", "train.conllu",
                 "dev.conllu"):
        (copy / name).write_bytes((folder / name).read_bytes())
    change, options = CHANGED[case]
    said = change(copy, folder)
    argv = _system_args(copy, "--epochs", "2", "--resume", str(checkpoint), *options,
                        "-o", str(tmp_path / "x.pt"))
    if case == "no dev set":
        argv[argv.index("--dev"):argv.index("--dev") + 2] = []
    err = _error(capsys, argv)
    assert err.startswith(f"semiparse train: error: {checkpoint}: the checkpoint was made with "), err
    for piece in [said] if isinstance(said, str) else said:
        assert piece in err, err
    if isinstance(said, str):
        assert err.endswith(said), err
    assert not (tmp_path / "x.pt").exists()


def test_resume_takes_the_same_inputs_in_other_files(system_run, tmp_path, capsys):
    """The same system, grammar (a comment and blank lines added), training
    data and dev set copied elsewhere resume."""
    folder, checkpoint = system_run
    for name in ("arc_standard_no_root.toml", "train.conllu", "dev.conllu"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    grammar = (folder / "arc_standard_no_root.grammar").read_text()
    (tmp_path / "arc_standard_no_root.grammar").write_text("# a comment\n\n" + grammar + "\n\n")
    assert main(_system_args(tmp_path, "--epochs", "2", "--resume", str(checkpoint),
                             "-o", str(tmp_path / "m.pt"))) == 0
    assert "resuming" in capsys.readouterr().err
    assert load(tmp_path / "m.pt").meta["history"][-1]["epoch"] == 2


def test_resume_names_the_checkpoint(run, tmp_path, capsys):
    """It said "model file" of a --resume file."""
    train = run[0]
    for path, reason in ((tmp_path / "missing.pt", "training checkpoint (--resume) not found"),
                         (tmp_path, "is a directory, not a training checkpoint (--resume)")):
        assert _error(capsys, _resume(train, path, tmp_path / "x.pt")) == (
            f"semiparse train: error: {path}: {reason}")


def _data_start(data, info):
    """Where a zip member's bytes start (its local header's extra field, as
    torch pads it, is not the central directory's)."""
    name, extra = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + name + extra


def test_damaged_bytes_are_refused(run, tmp_path, capsys):
    """torch.load does not check the zip's CRC-32: damaged weights (still
    finite numbers) or a damaged digit of the meta data loaded and parsed
    silently.  Damaged zip headers (a name that is not UTF-8, an unknown zip
    version) gave tracebacks from the first look at the file."""
    train, _, model = run
    good = model.read_bytes()
    with zipfile.ZipFile(model) as archive:
        weights = max((i for i in archive.infolist() if "/data/" in i.filename),
                      key=lambda i: i.file_size)
    at = _data_start(good, weights) + 2  # the high bits of a float's mantissa: still finite
    loss = good.index(b'"loss": ') + len(b'"loss": ')  # a digit of the history's first loss
    directory = good.index(b"PK\x01\x02")  # the first central directory entry
    crc = "truncated or corrupt: {} fails its CRC-32 check"
    cases = {  # {offset: new byte}, the reason given
        "weights": ({at: good[at] ^ 0x10}, crc.format(weights.filename)),
        "meta": ({loss: good[loss] ^ 0x01}, crc.format("archive/data.pkl")),
        "name": ({directory + 9: good[directory + 9] | 0x08, directory + 46: 0xff},  # UTF-8?
                 "truncated or corrupt zip archive"),
        "version": ({directory + 6: 0xff}, "truncated or corrupt zip archive"),
    }
    for name, (changes, reason) in cases.items():
        damaged = bytearray(good)
        for offset, byte in changes.items():
            damaged[offset] = byte
        path = tmp_path / f"{name}.pt"
        path.write_bytes(damaged)
        assert io.is_neural_model(path) == (name in ("weights", "meta"))
        with pytest.raises(ModelError) as info:
            load(path)
        assert str(info.value) == f"{path}: not a readable semiparse model ({reason})"
    for name in ("weights", "meta"):
        err = cli_error(capsys, ["parse", str(tmp_path / f"{name}.pt"), str(train),
                                 "-o", str(tmp_path / "o.conllu")])
        assert err.endswith(f"({cases[name][1]})\n") and not (tmp_path / "o.conllu").exists()


@pytest.mark.parametrize("case, reason", [
    ("labels", "inconsistent model: its vocab has no labels"),  # labels[0] raised IndexError
    ("vocab", "inconsistent model: its vocab is not a JSON object: []"),  # AttributeError
    ("deep", "inconsistent model: its meta data is nested too deeply"),  # RecursionError
    ("version", "model format version '1' (this semiparse reads 1)"),  # printed as 1
])
def test_tampered_model_meta_is_an_inconsistent_model(run, tmp_path, capsys, case, reason):
    train, _, model = run
    payload = torch.load(model, weights_only=True)
    meta = json.loads(payload["meta"])
    if case == "labels":
        meta["vocab"]["labels"] = []
    if case == "vocab":
        meta["vocab"] = []
    payload["meta"] = json.dumps(meta) if case != "deep" else "[" * 100000 + "]" * 100000
    if case == "version":
        payload["version"] = "1"
    path = tmp_path / "tampered.pt"
    torch.save(payload, path)
    err = cli_error(capsys, ["parse", str(path), str(train), "-o", str(tmp_path / "o.conllu")])
    assert err == f"semiparse parse: error: {path}: {reason}\n"


VOCAB = {  # case: (change to the model's vocab, reason given)
    "label with a tab": (lambda v: v["labels"].__setitem__(0, "de\tt"),
                         "its vocab's labels hold 'de\\tt', which is not a non-empty string "
                         "without tabs or line breaks"),
    "empty label": (lambda v: v["labels"].__setitem__(0, ""),
                    "its vocab's labels hold '', which is not a non-empty string without tabs or "
                    "line breaks"),
    "label twice": (lambda v: v["labels"].__setitem__(1, v["labels"][0]),
                    "its vocab's labels hold 'det' twice"),
    "label not text": (lambda v: v["labels"].__setitem__(0, 7),
                       "its vocab's labels hold 7, which is not a non-empty string without tabs "
                       "or line breaks"),
    "word with a line break": (lambda v: v["words"]["symbols"].__setitem__(0, "a\nb"),
                               "its vocab's words hold 'a\\nb', which is not a non-empty string "
                               "without tabs or line breaks"),
    "upos with a carriage return": (lambda v: v["upos"]["symbols"].__setitem__(0, "N\r"),
                                    "its vocab's upos hold 'N\\r', which is not a non-empty "
                                    "string without tabs or line breaks"),
    "xpos not a list": (lambda v: v["xpos"].__setitem__("symbols", "_"),
                        "its vocab's xpos are not a list: '_'"),
    "feats reserved": (lambda v: v["feats"]["symbols"].__setitem__(0, "<unk>"),
                       "its vocab's feats hold a reserved symbol (<unk>)"),
    "chars of two characters": (lambda v: v["chars"]["symbols"].__setitem__(0, "ab"),
                                "its vocab's chars hold 'ab', which is not a character"),
    "lemma counts": (lambda v: v["lemmas"].__setitem__("counts", [-1] * len(v["lemmas"]["counts"])),
                     "its vocab's lemmas counts are not whole numbers >= 0"),
}


@pytest.mark.parametrize("case", VOCAB)
def test_damaged_vocabulary_is_an_inconsistent_model(run, tmp_path, capsys, case):
    """A model file re-saved consistently (its CRCs intact) with a label
    holding a tab loaded, and parse then blamed the input: ``input.conllu:2:
    the DEPREL of word 1 must be ...``.  Every vocabulary the file holds is
    checked when it is read: one line naming the model file."""
    train, _, model = run
    tamper, reason = VOCAB[case]
    payload = torch.load(model, weights_only=True)
    meta = json.loads(payload["meta"])
    if case in ("chars of two characters", "lemma counts"):  # the run has neither table filled
        meta["vocab"]["chars"] = {"symbols": ["a", "b"], "counts": [0, 0, 0, 1, 1]}
        meta["vocab"]["lemmas"] = {"symbols": ["a"], "counts": [0, 0, 0, 2]}
    tamper(meta["vocab"])
    payload["meta"] = json.dumps(meta)
    path = tmp_path / "tampered.pt"
    torch.save(payload, path)
    with pytest.raises(ModelError) as info:
        load(path)
    assert str(info.value) == f"{path}: inconsistent model: {reason}"
    err = cli_error(capsys, ["parse", str(path), str(train), "-o", str(tmp_path / "o.conllu")])
    assert err == f"semiparse parse: error: {path}: inconsistent model: {reason}\n"
    assert not (tmp_path / "o.conllu").exists()


TAMPERED = {  # case: (change to the checkpoint, reason given); what it gave before, if not a message
    "order missing": (lambda p: p.pop("order"), "order is missing"),  # KeyError
    "order out of range": (lambda p: p.update(order=[100] * len(p["order"])),  # IndexError
                           "order is not an order of the training examples (0, 1, ... each once)"),
    "order short": (lambda p: p.update(order=[1, 0]),
                    "order numbers 2 training examples, its training data make 3"),
    "epoch text": (lambda p: p.update(epoch="1"),  # TypeError
                   "epoch must be a whole number >= 1, got '1'"),
    "epoch fraction": (lambda p: p.update(epoch=1.5),  # TypeError
                       "epoch must be a whole number >= 1, got 1.5"),
    "torch_random size": (lambda p: p.update(torch_random=torch.zeros(3, dtype=torch.uint8)),
                          "torch_random is not a state of torch's random generator (Expected a "
                          "CPUGeneratorImplState of size"),  # RuntimeError
    "random": (lambda p: p.update(random="x"), "random is not a state of Python's random "
               "generator (state with version x passed to Random.setstate() of version 3)"),
    "optimizer empty": (lambda p: p.update(optimizer={}),  # KeyError
                        "optimizer is not the state of Adam on its network (no state and "
                        "param_groups)"),
    "optimizer shape": (lambda p: p["optimizer"]["state"][0].update(exp_avg=torch.zeros(1, 2, 3)),
                        "optimizer is not the state of Adam on its network (The size of "
                        "tensor"),  # RuntimeError at the first step
    "best_score text": (lambda p: p.update(best_score="a"),  # TypeError
                        "best_score must be a finite number, got 'a'"),
    "best_state keys": (lambda p: p.update(best_state={"x": torch.zeros(1)}),
                        "best_state is not weights of its network (Error(s) in loading "
                        "state_dict for Network: Missing key(s)"),  # RuntimeError at the end
    "dev list": (lambda p: p.update(dev="[1]"), "dev is neither null nor a record of a file, its "
                 "number of sentences and their sha256"),  # AttributeError
    "history not JSON": (lambda p: p.update(history="x"), "history is not JSON text (Expecting "
                         "value: line 1 column 1 (char 0))"),
    "history short": (lambda p: p.update(history="[]"),
                      "history does not hold one record per epoch done (1)"),
}


@pytest.mark.parametrize("case", TAMPERED)
def test_tampered_checkpoint_is_an_inconsistent_checkpoint(run, tmp_path, capsys, case):
    """Each field restore_checkpoint reads is checked before the run, with
    a message naming the file and the field."""
    train, checkpoint, _ = run
    tamper, reason = TAMPERED[case]
    payload = torch.load(checkpoint, weights_only=True)
    tamper(payload)
    path = tmp_path / "tampered.pt"
    torch.save(payload, path)
    err = _error(capsys, _resume(train, path, tmp_path / "x.pt"))
    assert err.startswith(f"semiparse train: error: {path}: inconsistent checkpoint: {reason}"), err


@pytest.mark.parametrize("spec", ["s٣", ["s0\n"], "s01", "s1,s01"])
def test_feature_positions_take_ascii_digits_only(spec):
    """\\d took s٣ (saved as a position of its own, s3 by int()); $ took a final newline;
    s01 was s1 under another name (and both could be given)."""
    with pytest.raises(ValueError, match="bad feature position"):
        parse_positions(spec)
    assert parse_positions("s10,b0.lc") == ("s10", "b0.lc")

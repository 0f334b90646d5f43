"""A damaged perceptron model file is refused when read, naming the file and
what is wrong (exit status 2 on the command line), rather than parsing with
other weights."""
import json

import numpy as np
import pytest

from semiparse.perceptron import Model, ModelError, Trainer, Tree

from support import cli_error

SENTENCE = "1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n\n"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    trees = [Tree([None, "a", "b"], [None, "DET", "NOUN"], [-1, 2, 0], [None, "det", "root"])]
    path = tmp_path_factory.mktemp("model") / "m.npz"
    Trainer(epochs=1, progress=False).run(trees).save(path)
    return path


@pytest.mark.parametrize("change", [
    lambda keys: keys[::-1],  # each key now names another key's weights
    lambda keys: np.concatenate([keys[:1], keys[:-1]]),  # one key twice
])
def test_feature_keys_must_be_strictly_increasing(model_file, tmp_path, capsys, change):
    with np.load(model_file) as archive:
        arrays = dict(archive)
    assert len(arrays["keys"]) > 2
    arrays["keys"] = np.ascontiguousarray(change(arrays["keys"]))
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    with pytest.raises(ModelError, match=r"bad\.npz: inconsistent model: its feature keys are "
                                         r"not strictly increasing"):
        Model.load(bad)
    text = tmp_path / "in.conllu"
    text.write_text(SENTENCE)
    err = cli_error(capsys, ["parse", str(bad), str(text), "--quiet", "-o", str(tmp_path / "o.conllu")])
    assert "bad.npz: inconsistent model: its feature keys are not strictly increasing" in err
    assert not (tmp_path / "o.conllu").exists()


@pytest.mark.parametrize("content", [b"hello\n", b"", b"\x93NUMPY"])
def test_a_file_that_is_no_zip_archive_is_not_a_model(tmp_path, content):
    """np.load would read such a file as a pickle (or a .npy array) and say
    so; the loader says what a model file is instead."""
    path = tmp_path / "m.npz"
    path.write_bytes(content)
    with pytest.raises(ModelError, match=r"m\.npz: not a semiparse model \(a model file is a zip archive\)$"):
        Model.load(path)


@pytest.mark.parametrize("offset, byte", [(6, 0xff), (10, 0x63)], ids=["zip-version", "compression"])
def test_a_damaged_zip_header_is_a_corrupt_model_not_a_traceback(model_file, tmp_path, offset, byte):
    """The first central directory entry asks for a zip version or a
    compression method zipfile does not know: NotImplementedError inside
    np.load, which the loader reported as a traceback."""
    data = bytearray(model_file.read_bytes())
    data[data.index(b"PK\x01\x02") + offset] = byte
    path = tmp_path / "m.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"m\.npz: not a readable semiparse model \(truncated or "
                                         r"corrupt: .*(version|compression)"):
        Model.load(path)


def test_a_version_of_another_type_is_shown_as_it_is(model_file, tmp_path):
    """A version "1" (a string) is not version 1: the message shows which."""
    with np.load(model_file) as archive:
        arrays = dict(archive)
    meta = json.loads(str(arrays["meta"]))
    meta["version"] = str(meta["version"])
    arrays["meta"] = np.array(json.dumps(meta))
    path = tmp_path / "v.npz"
    np.savez(path, **arrays)
    with pytest.raises(ModelError, match=r"model format version '1' \(this semiparse reads 1\)"):
        Model.load(path)

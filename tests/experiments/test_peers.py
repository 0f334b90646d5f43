"""``python -m semiparse.experiments peers``: UDPipe 1 and semiparse's BiLSTM
parser trained on 20 sentences, scored by the same scorer; and what the
experiment says when UDPipe 1 is not installed."""
import json
import math
import sys

import pytest

from semiparse import experiments
from semiparse.experiments import peers

HUNGARIAN = ["ud/UD_Hungarian-Szeged/hu_szeged-ud-train.conllu",
             "ud/UD_Hungarian-Szeged/hu_szeged-ud-dev.conllu",
             "ud/UD_Hungarian-Szeged/hu_szeged-ud-test.conllu"]
SMOKE = ["--languages", "hu", "--limit", "20", "--epochs", "1", "--iterations", "1", "--seeds", "1"]
# small networks: the smoke run checks the plumbing, not the parsers
TINY_SEMIPARSE = ("--word-dim", "16", "--char-dim", "0", "--lstm-dim", "16", "--hidden-dim", "16",
                  "--label-hidden-dim", "16")
TINY_UDPIPE = {**peers.UDPIPE_OPTIONS, "hidden_layer": 16, "embedding_form": 16}


def test_peers_experiment_runs(tmp_path, shared_data, monkeypatch):
    """Both parsers train on 20 sentences (1 iteration, 1 epoch), parse the
    first 20 test sentences, and the table has a finite LAS and UAS for each."""
    monkeypatch.setattr(peers, "SEMIPARSE_FLAGS", TINY_SEMIPARSE)
    monkeypatch.setattr(peers, "UDPIPE_OPTIONS", TINY_UDPIPE)
    out = tmp_path / "out"
    argv = ["peers", "--data", str(shared_data), *SMOKE, "--variants", "udpipe-projective",
            "semiparse-bilstm", "--out", str(out)]
    assert experiments.main(argv) == 0
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    md = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.md"]  # nothing else left
    assert doc["experiment"] == "peers" and set(doc["data"]) == set(HUNGARIAN)
    assert doc["settings"]["iterations"] == 1 and doc["settings"]["epochs"] == 1
    udpipe, semiparse = doc["results"]
    assert (udpipe["parser"], semiparse["parser"]) == ("udpipe-projective", "semiparse-bilstm")
    for result in (udpipe, semiparse):
        assert result["train_sentences"] == result["dev_sentences"] == result["test_sentences"] == 20
        assert result["test_part"] == "test" and result["scorer"] == "conll18"
        assert all(math.isfinite(result[k]) and 0 <= result[k] <= 100 for k in ("las", "uas"))
        assert result["las"] <= result["uas"]
        assert result["train_cpu_seconds"] > 0 and result["sentences_per_cpu_second"] > 0
        # the breakdowns count every scored word, and agree with the scorer's LAS and UAS
        for key in ("relations", "lengths"):
            words, heads, both = (sum(c[i] for c in result[key].values()) for i in range(3))
            assert words == result["words"]
            assert 100 * heads / words == pytest.approx(result["uas"])
            assert 100 * both / words == pytest.approx(result["las"])
    # UDPipe 1 parsed the sentences it was given (parsing copies would score the gold trees: 100)
    assert udpipe["las"] < 100 and udpipe["best_epoch"] == 1
    assert "iterations=1" in udpipe["trainer"] and "hidden_layer=16" in udpipe["trainer"]
    assert semiparse["trainer"] == ("semiparse train TRAIN --model bilstm --dev DEV --epochs 1 "
                                    "--seed 1 " + " ".join(TINY_SEMIPARSE) + " --quiet -o MODEL")
    assert semiparse["options"]["word_dim"] == 16 and semiparse["seed"] == 1
    rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| hu | ")]
    assert [row[1] for row in rows] == ["UDPipe 1, projective, dynamic oracle", "semiparse BiLSTM"]
    for row, result in zip(rows, (udpipe, semiparse)):
        assert float(row[3]) == pytest.approx(result["las"], abs=0.006)
        assert float(row[4]) == pytest.approx(result["uas"], abs=0.006)
    assert "## hu: UAS / LAS by gold relation" in md and "| root | 20 | " in md
    assert "## hu: UAS / LAS by gold dependency length" in md


def test_missing_udpipe_says_how_to_install_it(tmp_path, shared_data, monkeypatch, capsys):
    """Without ufal.udpipe: status 2, one line naming the extra, nothing written."""
    monkeypatch.setitem(sys.modules, "ufal.udpipe", None)  # its import fails
    with pytest.raises(ImportError):
        import ufal.udpipe  # noqa: F401
    assert experiments.main(["peers", "--data", str(shared_data), *SMOKE,
                             "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"semiparse experiments peers: error: {peers.MISSING_UDPIPE}\n"
    assert 'pip install "semiparse[peers]"' in captured.err and 'pip install ".[peers]"' in captured.err
    assert "Traceback" not in captured.out + captured.err
    assert not list(tmp_path.iterdir())


def test_iterations_belong_to_peers(tmp_path, shared_data, capsys):
    """--iterations is UDPipe 1's; another experiment refuses it."""
    assert experiments.main(["exploration", "--data", str(shared_data), "--iterations", "3",
                             "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == ("semiparse experiments exploration: error: --iterations: "
                                       "this experiment trains no UDPipe model\n")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("dependent, head, name", [
    (3, 0, "root"), (3, 4, "1"), (4, 3, "1"), (1, 7, "6"), (1, 8, "7-10"), (11, 1, "7-10"),
    (1, 12, "11+"), (40, 2, "11+"),
])
def test_length_bins(dependent, head, name):
    assert peers.length_bin(dependent, head) == name
    assert name in peers.length_bins()

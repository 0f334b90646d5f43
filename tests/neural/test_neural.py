"""The neural parser (semiparse.neural): lockstep training against the
per-sentence loop, exploration, losses, features, model files, the command
line.  Tiny networks and few sentences keep each test to a few seconds."""
import hashlib
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import REPO

torch = pytest.importorskip("torch")

import semiparse  # noqa: E402
from semiparse.cli import main  # noqa: E402
from semiparse.heads import is_tree  # noqa: E402
from semiparse.neural import io, load, parse_sentences  # noqa: E402
from semiparse.neural.features import FeatureReader, default_positions, parse_positions  # noqa: E402
from semiparse.neural.lockstep import (  # noqa: E402
    Policy,
    TrainingOracle,
    lockstep_loss,
    parse_batch,
    sentence_loss,
)
from semiparse.neural.model import label_loss, transition_loss  # noqa: E402
from semiparse.neural.options import Options  # noqa: E402
from semiparse.neural.parser import NeuralModel  # noqa: E402
from semiparse.neural.trainer import NeuralTrainer  # noqa: E402
from semiparse.neural.vocab import ROOT, SPECIALS, UNK, Vocab  # noqa: E402
from semiparse.resources import data_dir  # noqa: E402
from semiparse.testing import gold_trees  # noqa: E402
from semiparse.perceptron import ModelError, Tree, read_trees  # noqa: E402
from semiparse.treebank.scoring import attachment_scores  # noqa: E402
from semiparse.transitions.oracles.viability import Viability  # noqa: E402
from semiparse.treebank.projectivity import is_projective  # noqa: E402

USER_SYSTEMS = sorted(str(p) for p in (REPO / "tests" / "systems").glob("*.toml"))
SYSTEMS = ["arc_standard", "arc_hybrid", "arc_eager"] + USER_SYSTEMS
# (no dropout: the lockstep batch and the loop over its sentences draw their
# masks differently, and the overfitting test needs the whole network)
TINY = dict(word_dim=8, char_dim=4, char_hidden=4, upos_dim=4, feats_dim=4, lemma_dim=4,
            lstm_dim=8, lstm_layers=1, hidden_dim=16, label_hidden_dim=8, dropout=0.0)
TINY_FLAGS = ["--word-dim", "8", "--char-dim", "4", "--char-hidden", "4", "--upos-dim", "4",
              "--feats-dim", "4", "--lemma-dim", "4", "--dropout", "0",
              "--lstm-dim", "8", "--lstm-layers", "1", "--hidden-dim", "16",
              "--label-hidden-dim", "8", "--threads", "1", "--quiet"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The tests share the machine: one torch thread."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tree_of(heads, rng):
    """A Tree over ``heads`` with words, tags and labels drawn from small sets
    (words repeat, so the vocabulary has frequent and rare words)."""
    n = len(heads) - 1
    forms = ["<root>"] + [rng.choice(["a", "bb", "ccc", "Dd", "e", "ff"]) for _ in range(n)]
    tags = ["<root>"] + [rng.choice(["N", "V", "X"]) for _ in range(n)]
    labels = [None] + [rng.choice(["nsubj", "obj", "root"]) for _ in range(n)]
    return Tree(forms, tags, list(heads), labels)


def model_for(trees, system, seed=0, **options):
    torch.manual_seed(seed)
    return NeuralModel(system, Vocab.build(trees), Options(**{**TINY, "word_dropout": 0.0, **options}),
                       {"root_label": trees[0].labels[1]})


def gothic(shared_data, count, max_words=12):
    """``count`` projective Gothic dev sentences of at most ``max_words`` words."""
    path = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    trees = [t for t in read_trees(path) if len(t) <= max_words and is_projective(t.heads)]
    return trees[:count]


# -- the lockstep pass is the per-sentence loop --------------------------------------------


@pytest.mark.slow
@settings(max_examples=25)
@given(heads=st.lists(gold_trees(1, 7), min_size=1, max_size=4),
       system=st.sampled_from(SYSTEMS), kind=st.sampled_from(["static", "nondet", "dynamic"]),
       loss=st.sampled_from(["hinge", "nll"]), seed=st.integers(0, 2 ** 16),
       threads=st.sampled_from([1, 2]))
def test_lockstep_equals_sentence_loop(heads, system, kind, loss, seed, threads):
    """One lockstep minibatch (one scores_batch call per step) gives the loss
    and the gradients of the loop over its sentences and configurations with
    one oracle.scores call each; projective and non-projective gold trees,
    shipped and user systems, with exploration that always follows a wrong
    prediction (explore_p = 1: no random draw, so both follow the same path);
    the lockstep oracle on one or two threads."""
    rng = random.Random(seed)
    trees = [tree_of(h, rng) for h in heads]
    model = model_for(trees, system, seed=seed, loss=loss)
    examples = NeuralTrainer().examples(model, trees)
    oracle = TrainingOracle(model.api, model.transitions, kind, threads=threads)
    results = []
    for batched in (True, False):
        model.net.zero_grad()
        policy = Policy(kind, 1.0, random.Random(0))
        policy.explore = kind == "dynamic"
        if batched:
            out = lockstep_loss(model.net, examples, model.transitions, oracle, model.reader, policy,
                                loss)
            total, configurations, correct = out.loss, out.configurations, out.correct
        else:
            parts = [sentence_loss(model.net, e, model.transitions, oracle, model.reader, policy, loss)
                     for e in examples]
            total = sum(p.loss for p in parts)
            configurations = sum(p.configurations for p in parts)
            correct = sum(p.correct for p in parts)
        total.backward()
        grads = {k: p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                 for k, p in model.net.named_parameters()}
        results.append((float(total.detach()), configurations, correct, grads))
    (l1, c1, r1, g1), (l2, c2, r2, g2) = results
    assert (c1, r1) == (c2, r2)
    assert c1 >= sum(len(t) for t in trees)  # every word is shifted once at least
    assert l1 == pytest.approx(l2, rel=1e-5, abs=1e-6)
    for k in g1:
        assert torch.allclose(g1[k], g2[k], rtol=1e-4, atol=1e-6), k


# -- exploration and decoding never take a move the oracle rules out ----------------------

DEAD_END = "dead_end_eager"


@pytest.fixture(scope="module")
def dead_end_system(tmp_path_factory):
    """Arc-eager that must end with only the root on the stack and has no way
    to attach a headless stack node at the end: shifting the last word while
    a word on the stack is headless is legal but leads nowhere (sigma -inf).
    No completion grammar: its oracle is the exhaustive search."""
    text = (REPO / "systems" / "arc_eager.toml").read_text()
    text = text.replace('name = "arc_eager"', f'name = "{DEAD_END}"').replace(
        'final = { stack = "any", buffer = "empty" }', 'final = { stack = "root", buffer = "empty" }')
    text = text[:text.index("[completion]")]
    path = tmp_path_factory.mktemp("systems") / "dead_end_eager.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.slow
@settings(max_examples=15)
@given(heads=st.lists(gold_trees(2, 6), min_size=1, max_size=4), seed=st.integers(0, 2 ** 16))
def test_exploration_never_follows_a_dead_end(dead_end_system, heads, seed):
    """A model that always prefers shift, trained with exploration that
    follows every wrong prediction: where shift is legal but scores -inf it
    follows an optimal transition instead; every followed transition has a
    finite sigma, and some step had a legal -inf shift (the case is met)."""
    rng = random.Random(seed)
    trees = [tree_of(h, rng) for h in heads]
    model = model_for(trees, dead_end_system, seed=seed)
    shift = model.transitions.names.index("shift")
    with torch.no_grad():
        model.net.transitions[-1].bias[shift] = 1000.0
    oracle = TrainingOracle(model.api, model.transitions, "dynamic", method="exhaustive")
    policy = Policy("dynamic", 1.0, random.Random(0))
    policy.explore = True
    seen = {"dead_shift": 0}

    def trace(configs, sigma, follow):
        legal = model.transitions.legal(configs)
        assert np.isfinite(sigma[np.arange(len(follow)), follow]).all()
        assert legal[np.arange(len(follow)), follow].all()
        seen["dead_shift"] += int((legal[:, shift] & ~np.isfinite(sigma[:, shift])).sum())

    lockstep_loss(model.net, NeuralTrainer().examples(model, trees), model.transitions, oracle,
                  model.reader, policy, trace=trace)
    trees_long = [t for t in trees if len(t) >= 2]
    assert not trees_long or seen["dead_shift"] > 0


def test_decoding_into_a_dead_end_finishes_the_tree(dead_end_system):
    """Greedy decoding takes legal transitions only; a parse that reaches a
    dead end (not final, no legal transition) stops there and its headless
    words go to the root with the root label, so the output is a tree, and
    the model counts the dead end (as the perceptron's parse does)."""
    trees = [tree_of([-1, 2, 0, 2], random.Random(1)), tree_of([-1, 0], random.Random(2))]
    model = model_for(trees, dead_end_system)
    with torch.no_grad():
        model.net.transitions[-1].bias[model.transitions.names.index("shift")] = 1000.0
    parsed = model.parse(trees, root="any")  # shift until the stack is [0, 1, ..., n]: stuck
    assert parsed == [([-1, 0, 0, 0], [None] + [model.root_label] * 3),
                      ([-1, 0], [None, model.root_label])]
    assert model.dead_ends == 2
    # by default the root keeps one of the headless words, the others go under it
    assert all(heads.count(0) == 1 and is_tree(heads) for heads, _ in model.parse(trees))


def test_decoding_into_a_dead_end_parses_again_with_viable_transitions(monkeypatch):
    """A system with a completion grammar (arc-hybrid whose root may be shifted
    onto words): the greedy parse that shifts into the dead end is parsed
    again with the transitions that can still finish, and ends final."""
    system = str(REPO / "tests" / "systems" / "arc_hybrid_root_end_deadend.toml")
    trees = [tree_of([-1, 2, 0, 2], random.Random(1)), tree_of([-1, 0], random.Random(2))]
    model = model_for(trees, system)
    with torch.no_grad():
        model.net.transitions[-1].bias[model.transitions.names.index("shift")] = 1000.0
    from semiparse.neural import parser as parser_module

    calls = []

    def spy(*args, **kwargs):
        out = parse_batch(*args, **kwargs)
        calls.append((len(args) > 4, [finished for _, _, finished in out]))
        return out

    monkeypatch.setattr(parser_module, "parse_batch", spy)
    parsed = model.parse(trees, root="any")
    assert model.dead_ends == 2
    assert calls == [(False, [False, False]), (True, [True, True])]  # stuck, then final
    again = parse_batch(model.net, [model.vocab.sentence(t) for t in trees], model.transitions,
                        model.reader, Viability(system))
    assert all(finished for _, _, finished in again)
    assert [heads for heads, _ in parsed] == [[-1] + [h if h >= 0 else 0 for h in arcs[1:]]
                                              for arcs, _, _ in again]
    assert all(is_tree(heads) for heads, _ in parsed)


@pytest.mark.slow
@settings(max_examples=20)
@given(heads=st.lists(gold_trees(1, 8), min_size=1, max_size=5),
       system=st.sampled_from(SYSTEMS), seed=st.integers(0, 2 ** 16))
def test_decoding_builds_what_the_system_allows(heads, system, seed):
    """Batched greedy decoding (untrained model) gives every sentence a tree
    (no cycle, position 0 the only root of it; also at a dead end), the same
    as decoding the sentences one at a time, with the labels of the model."""
    rng = random.Random(seed)
    trees = [tree_of(h, rng) for h in heads]
    model = model_for(trees, system, seed=seed)
    together = parse_sentences(model, trees)
    alone = [parse_sentences(model, [t])[0] for t in trees]
    assert together == alone
    for tree, (h, labels) in zip(trees, together):
        assert semiparse.heads.is_tree(h) and len(h) == len(tree) + 1
        assert labels[0] is None and set(labels[1:]) <= set(model.labels)


# -- losses and features against their definitions ---------------------------------------

def test_dropout_acts_in_training_only():
    """With ``dropout`` the encoder's vectors change from one training pass
    to the next and not in evaluation; every configuration of a pass reads
    the same ones (they are computed once per minibatch)."""
    rng = random.Random(0)
    trees = [tree_of((-1, 2, 0, 2), rng) for _ in range(3)]
    model = model_for(trees, "arc_standard", dropout=0.5, lstm_layers=2)
    ids = [model.vocab.sentence(t) for t in trees]
    model.net.train()
    first, second = model.net.encode(ids)[0], model.net.encode(ids)[0]
    assert not torch.equal(first, second) and (first == 0).any()
    model.net.eval()
    assert torch.equal(model.net.encode(ids)[0], model.net.encode(ids)[0])


@pytest.mark.slow
@settings(max_examples=60)
@given(data=st.data(), t=st.integers(1, 6), rows=st.integers(1, 4))
def test_losses_match_their_definitions(data, t, rows):
    """Hinge (best optimal vs best non-optimal legal transition, 0 when all
    legal ones are optimal) and the negative log-likelihood of the set of
    optimal transitions, row by row against the formulas in plain Python."""
    scores, legal, optimal = [], [], []
    for _ in range(rows):
        scores.append(data.draw(st.lists(st.floats(-5, 5), min_size=t, max_size=t)))
        legal.append(data.draw(st.lists(st.booleans(), min_size=t, max_size=t).filter(any)))
        chosen = data.draw(st.lists(st.sampled_from([i for i in range(t) if legal[-1][i]]),
                                    min_size=1, unique=True))
        optimal.append([i in chosen for i in range(t)])
    hinge = transition_loss("hinge", torch.tensor(scores, dtype=torch.float64), torch.tensor(legal),
                            torch.tensor(optimal))
    nll = transition_loss("nll", torch.tensor(scores, dtype=torch.float64), torch.tensor(legal),
                          torch.tensor(optimal))
    for i, s in enumerate(scores):
        best = max(s[k] for k in range(t) if optimal[i][k])
        wrong = [s[k] for k in range(t) if legal[i][k] and not optimal[i][k]]
        assert float(hinge[i]) == pytest.approx(max(0.0, 1 - best + max(wrong)) if wrong else 0.0,
                                                abs=1e-9)
        p_optimal = (sum(np.exp(s[k]) for k in range(t) if optimal[i][k])
                     / sum(np.exp(s[k]) for k in range(t) if legal[i][k]))
        assert float(nll[i]) == pytest.approx(-np.log(p_optimal), abs=1e-9)


def test_label_losses():
    scores = torch.tensor([[2.0, 0.5, -1.0], [0.0, 3.0, 1.0]], dtype=torch.float64)
    gold = [0, 2]
    assert label_loss("hinge", scores, gold).tolist() == pytest.approx([0.0, 3.0])
    expected = [-(2.0 - np.log(np.exp(2) + np.exp(0.5) + np.exp(-1))),
                -(1.0 - np.log(1 + np.exp(3) + np.exp(1)))]
    assert label_loss("nll", scores, gold).tolist() == pytest.approx(expected)


@pytest.mark.slow
@settings(max_examples=30)
@given(heads=gold_trees(1, 8), system=st.sampled_from(SYSTEMS), seed=st.integers(0, 2 ** 16))
def test_feature_positions_follow_the_configuration(heads, system, seed):
    """Along a random computation, each feature position is the stack or
    buffer element it names (from the top / the front), or that element's
    leftmost / rightmost child so far, or empty (-1)."""
    rng = random.Random(seed)
    api = semiparse.system(system)
    reader = FeatureReader(parse_positions("s0,s1,s3,b0,b2,s0.lc,s1.rc,b0.lc"))
    config = api.initial(len(heads) - 1)
    while True:
        stack, buffer, arcs = config.stack, config.buffer, config.arcs

        def at(items, k):
            return items[k] if k < len(items) else -1

        def child(x, last):
            kids = [d for d in range(len(arcs)) if arcs[d] == x and x >= 0]
            return (kids[-1] if last else kids[0]) if kids else -1

        top = stack[::-1]
        expected = [at(top, 0), at(top, 1), at(top, 3), at(buffer, 0), at(buffer, 2),
                    child(at(top, 0), False), child(at(top, 1), True), child(at(buffer, 0), False)]
        assert reader.positions_of(config) == expected
        assert reader.rows([config], [10], 99).tolist() == [[10 + x if x >= 0 else 99 for x in expected]]
        if not config.legal():  # final, or a dead end
            break
        config = config.apply(rng.choice(config.legal()))


def test_feature_positions_checked():
    assert default_positions(semiparse.system("arc_hybrid").definition) == ("s2", "s1", "s0", "b0")
    for bad in ("s0,x1", "s0,s0", "", "s0.lcc"):
        with pytest.raises(ValueError, match="position"):
            parse_positions(bad)
    with pytest.raises(ValueError, match="fixed set of transitions"):
        NeuralTrainer("lr_spine")


# -- training ----------------------------------------------------------------------------------


def test_overfits_twenty_sentences(shared_data):
    """The dynamic oracle with exploration fits 20 projective sentences to
    at least 99% UAS."""
    trees = gothic(shared_data, 20)
    assert len(trees) == 20
    torch.manual_seed(0)
    model = NeuralTrainer("arc_hybrid", Options(**{**TINY, "lstm_dim": 32, "hidden_dim": 32},
                                                word_dropout=0.0, epochs=30, batch_size=5, lr=0.01,
                                                oracle="dynamic", seed=1), progress=False).run(trees)
    scores = attachment_scores(trees, parse_sentences(model, trees))
    assert scores["uas"] >= 99.0, scores


def test_a_diverging_run_stops_with_a_clear_error(shared_data):
    # it saved a model of NaN weights with status 0, which parse refused; a step too
    # large for a float was a RuntimeError traceback
    from semiparse.neural.trainer import _check_finite

    trees = gothic(shared_data, 8)
    with pytest.raises(ValueError, match="training diverged in epoch 1: the loss is inf"):
        NeuralTrainer("arc_hybrid", Options(**TINY, epochs=2, batch_size=2, lr=1e38, seed=1),
                      progress=False).run(trees)
    net = torch.nn.Linear(2, 2)
    _check_finite(net, 1.0, 0)
    with torch.no_grad():
        net.weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="epoch 3: a weight is not finite"):
        _check_finite(net, 1.0, 2)


def test_model_selection_and_resume(shared_data, tmp_path):
    """The model kept is the epoch of best dev LAS; a run stopped after one
    epoch and resumed from its checkpoint ends with the weights and history
    of the run that was not stopped."""
    trees = gothic(shared_data, 12)
    options = dict(TINY, epochs=3, batch_size=4, seed=3)
    straight = NeuralTrainer("arc_standard", Options(**options), progress=False,
                             checkpoint=tmp_path / "a.ckpt").run(trees, dev=trees[:4])
    history = straight.meta["history"]
    best = max(history, key=lambda r: r["las"])
    assert straight.meta["best_epoch"] == min(r["epoch"] for r in history if r["las"] == best["las"])
    assert attachment_scores(trees[:4], straight.parse(trees[:4]))["las"] == pytest.approx(best["las"])
    NeuralTrainer("arc_standard", Options(**{**options, "epochs": 1}), progress=False,
                  checkpoint=tmp_path / "b.ckpt").run(trees, dev=trees[:4])
    resumed = NeuralTrainer("arc_standard", Options(**options), progress=False,
                            resume=tmp_path / "b.ckpt").run(trees, dev=trees[:4])
    for key, value in straight.net.state_dict().items():
        assert torch.equal(value, resumed.net.state_dict()[key]), key
    drop = ("seconds", "oracle_seconds")
    assert ([{k: v for k, v in r.items() if k not in drop} for r in resumed.meta["history"]]
            == [{k: v for k, v in r.items() if k not in drop} for r in history])
    with pytest.raises(ModelError, match="other options"):
        NeuralTrainer("arc_standard", Options(**{**options, "lr": 0.5}), progress=False,
                      resume=tmp_path / "b.ckpt").run(trees)
    # another system, even one with as many transitions, or another definition of it
    edited = tmp_path / "arc_standard.toml"
    edited.write_text((data_dir("systems") / "arc_standard.toml").read_text()
                      .replace('static_order = ["left_arc", "right_arc", "shift"]',
                               'static_order = ["right_arc", "left_arc", "shift"]'))
    for system in ("arc_hybrid", "arc_eager", str(edited)):
        with pytest.raises(ModelError, match="another transition system"):
            NeuralTrainer(system, Options(**options), progress=False,
                          resume=tmp_path / "b.ckpt").run(trees)


def test_resume_needs_the_dev_set_of_its_checkpoint(shared_data, tmp_path, capsys):
    """The dev set chooses the best epoch: a run resumed with another one,
    without the one it had or with one it had not is refused (one line,
    status 2 on the command line); the same sentences in another file are
    the same dev set.  A checkpoint of an earlier semiparse (no dev record)
    is resumed with a warning, or refused when its history shows a dev set
    and --dev is missing."""
    trees = gothic(shared_data, 12)
    files = {}
    for name, part in (("train", trees[:8]), ("dev", trees[8:10]), ("copy", trees[8:10]),
                       ("other", trees[10:])):
        files[name] = tmp_path / f"{name}.conllu"
        files[name].write_bytes(b"".join(t.source.raw for t in part))

    def train(checkpoint, dev, epochs):
        return main(["train", str(files["train"]), "--model", "bilstm", "--epochs", str(epochs),
                     "-o", str(tmp_path / "m.pt"), *TINY_FLAGS]
                    + (["--dev", str(files[dev])] if dev else [])
                    + [f"--{checkpoint[0]}", str(checkpoint[1])])

    scored, unscored = tmp_path / "scored.ckpt", tmp_path / "unscored.ckpt"
    assert train(("checkpoint", scored), "dev", 1) == 0
    assert train(("checkpoint", unscored), None, 1) == 0
    capsys.readouterr()
    named = lambda dev: "none" if dev is None else (
        f"{files[dev]} (2 sentences, sha256 {hashlib.sha256(files[dev].read_bytes()).hexdigest()[:12]})")
    for checkpoint, then, dev in ((scored, "dev", "other"), (scored, "dev", None),
                                  (unscored, None, "dev")):
        assert train(("resume", checkpoint), dev, 2) == 2
        assert capsys.readouterr().err.splitlines()[-1] == (
            f"semiparse train: error: {checkpoint}: the checkpoint was made with another dev set "
            f"(--dev), which chooses the best epoch: {named(then)}, now {named(dev)}")
    for checkpoint, dev in ((scored, "copy"), (unscored, None)):
        assert train(("resume", checkpoint), dev, 2) == 0
        assert "resuming" in capsys.readouterr().err
    # an earlier semiparse's checkpoint
    payload = torch.load(scored, weights_only=True)
    del payload["dev"]
    old = tmp_path / "old.ckpt"
    torch.save(payload, old)
    resume = lambda dev: NeuralTrainer("arc_standard", Options(**TINY, epochs=2), progress=False,
                                       resume=old).run(read_trees(files["train"]), dev=dev)
    with pytest.warns(UserWarning, match=f"^{old}: the checkpoint does not record its dev set"):
        assert resume(read_trees(files["other"])).meta["history"][0]["epoch"] == 1
    with pytest.raises(ModelError, match=f"^{old}: the checkpoint was made with a dev set "
                                         r"\(--dev\), which chooses the best epoch; resume it "
                                         "with the same one$"):
        resume(None)


def test_nonprojective_policies(shared_data):
    """--nonproj: subset drops the non-projective trees, projectivize and
    encode train on projective trees (encode's labels say how to undo it, and
    its parses are decoded: no encoded label comes out), oracle keeps them."""
    path = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    trees = [t for t in read_trees(path) if len(t) <= 15][:40]
    nonproj = sum(not is_projective(t.heads) for t in trees)
    assert nonproj > 0
    for policy in ("subset", "projectivize", "encode", "oracle"):
        model = NeuralTrainer("arc_hybrid", Options(**TINY, epochs=1, nonproj=policy,
                                                    oracle="static" if policy != "oracle" else "dynamic"),
                              progress=False).run(trees)
        assert model.meta["train_sentences"] == len(trees) - (nonproj if policy == "subset" else 0)
        encoded = any("||" in label for label in model.labels)
        assert encoded == (policy == "encode")
        assert not any("||" in l for _, labels in model.parse(trees) for l in labels[1:])


def test_encode_models_know_the_plain_labels_of_their_encoded_ones(tmp_path, capsys):
    """A --nonproj encode model's parses are decoded: it predicts appos,
    which it saw only encoded (appos||obj, word 2 lifted to word 3), so
    parse warns of no appos in its input, only of a label never seen."""
    train = tmp_path / "train.conllu"
    train.write_text("1\ta\ta\tX\t_\t_\t3\tdet\t_\t_\n2\tb\tb\tX\t_\t_\t4\tappos\t_\t_\n"
                     "3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n4\td\td\tX\t_\t_\t3\tobj\t_\t_\n\n")
    model_path = tmp_path / "m.pt"
    assert main(["train", str(train), "--model", "bilstm", "--nonproj", "encode", "--epochs", "1",
                 "-o", str(model_path)] + TINY_FLAGS) == 0
    assert load(model_path).labels == ["appos||obj", "det", "obj", "root"]
    source = tmp_path / "in.conllu"
    source.write_text(train.read_text().replace("\tdet\t", "\tweird\t"))
    capsys.readouterr()
    assert main(["parse", str(model_path), str(source), "-o", str(tmp_path / "out.conllu"),
                 "--quiet"]) == 0
    assert capsys.readouterr().err == (
        f"semiparse parse: warning: {source}:1: label 'weird' was not seen in training (the model "
        f"knows 4 labels and cannot predict it)\n")


# -- model files, parsing ----------------------------------------------------------------------


@pytest.mark.parametrize("system", USER_SYSTEMS + ["arc_eager"])
def test_user_system_trains_parses_and_round_trips(shared_data, tmp_path, system):
    """A declared system (tests/systems/*.toml) trains and parses; the model
    file holds its definition, parses identically after loading, and is
    refused for another definition of the same name."""
    trees = gothic(shared_data, 8)
    model = NeuralTrainer(system, Options(**TINY, epochs=1), progress=False).run(trees)
    path = tmp_path / "model.pt"
    io.save(model, path)
    assert io.is_neural_model(path)
    again = load(path, system=system)
    assert parse_sentences(again, trees) == parse_sentences(model, trees)
    for key, value in model.net.state_dict().items():
        assert torch.equal(value, again.net.state_dict()[key])
    if system != "arc_eager":  # the same name, another definition
        changed = tmp_path / Path(system).name
        changed.write_text(Path(system).read_text().replace('description = "', 'description = "x', 1))
        for grammar in Path(system).parent.glob("*.grammar"):
            (tmp_path / grammar.name).write_text(grammar.read_text())
        with pytest.raises(ModelError, match="another definition"):
            load(path, system=str(changed))


def test_lemma_table_keeps_lemmas_seen_twice(tmp_path):
    """Lemmas seen once in training are unknown (so the unknown lemma is
    trained); a model file from before lemmas were read loads with an empty
    lemma table; a lemma-embedding model round-trips with identical parses."""
    lines = ["1\ta\tx\tN\t_\t_\t0\troot\t_\t_", "2\tb\tx\tN\t_\t_\t1\tobj\t_\t_",
             "3\tc\ty\tV\t_\t_\t1\tobj\t_\t_", ""]
    source = tmp_path / "in.conllu"
    source.write_text("\n".join(lines) + "\n")
    trees = read_trees(source)
    vocab = Vocab.build(trees)
    ids = vocab.sentence(trees[0])["lemmas"]
    assert ids[0] == ROOT and ids[1] == ids[2] == vocab.lemmas.id("x") > UNK and ids[3] == UNK
    old = vocab.to_dict()
    del old["lemmas"]
    assert len(Vocab.from_dict(old).lemmas) == len(SPECIALS)
    model = NeuralTrainer("arc_hybrid", Options(**{**TINY, "lemma_dim": 3}, epochs=2),
                          progress=False).run(trees * 4)
    path = tmp_path / "lemma.pt"
    io.save(model, path)
    again = load(path)
    assert again.options.lemma_dim == 3
    assert parse_sentences(again, trees) == parse_sentences(model, trees)


def test_model_files_refused_clearly(tmp_path, shared_data):
    trees = gothic(shared_data, 4)
    model = NeuralTrainer("arc_hybrid", Options(**TINY, epochs=1), progress=False).run(trees)
    good = tmp_path / "good.pt"
    io.save(model, good)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:2000])
    text = tmp_path / "text.pt"
    text.write_text("not a model\n")
    perceptron, small = tmp_path / "perceptron.npz", tmp_path / "small.conllu"
    small.write_bytes(b"".join(t.source.raw for t in trees))
    assert main(["train", str(small), "--epochs", "1", "--quiet", "-o", str(perceptron)]) == 0
    for path, reason in ((truncated, "truncated or corrupt"), (text, "not a semiparse neural model"),
                         (perceptron, r"not a semiparse neural model \(it is a perceptron model\)"),
                         (tmp_path / "missing.pt", "not found"), (tmp_path, "directory")):
        assert not io.is_neural_model(path)
        with pytest.raises(ModelError, match=reason) as info:
            load(path)
        assert str(info.value).startswith(str(path))
    with pytest.raises(ModelError, match="arc_hybrid system, not arc_standard"):
        load(good, system="arc_standard")


def test_parse_output_keeps_other_columns(tmp_path, shared_data):
    """Parsing a file with comments, a multiword token, an empty node and
    CRLF line ends changes HEAD and DEPREL only: every other byte is the
    input's (through the CoNLL-U reader and writer of semiparse parse)."""
    lines = ["# sent_id = 1", "# text = ab c", "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_",
             "1\ta\ta\tN\tXa\tCase=Nom\t0\troot\t_\tSpaceAfter=No",
             "2\tbb\tb\tV\tXb\t_\t1\tobj\t2:obj\t_", "2.1\tzz\tz\tX\t_\t_\t_\t_\t1:dep\t_",
             "3\tccc\tc\tX\t_\tA=B|C=D\t1\tnsubj\t_\tGloss=x", ""]
    source = tmp_path / "in.conllu"
    source.write_bytes(("\r\n".join(lines) + "\r\n").encode() * 3)
    trees = read_trees(source)
    model = NeuralTrainer("arc_hybrid", Options(**{**TINY, "feats_dim": 2, "lemma_dim": 2},
                                                epochs=1, xpos_dim=2), progress=False).run(trees)
    parsed = parse_sentences(model, read_trees(source, need_heads=False))
    out = b"".join(t.source.relabeled(h, l) for t, (h, l) in zip(trees, parsed))
    other = tmp_path / "other.conllu"
    other.write_bytes(source.read_bytes().replace(b"\tnsubj\t", b"\tweird\t", 1))
    assert model.unseen_labels(read_trees(other)[0]) == [
        f"{other}:7: label 'weird' was not seen in training (the model knows 3 labels and "
        f"cannot predict it)"]
    original = source.read_bytes().split(b"\r\n")
    written = out.split(b"\r\n")
    assert len(written) == len(original)
    for a, b in zip(original, written):
        ca, cb = a.split(b"\t"), b.split(b"\t")
        if len(ca) == 10 and ca[0].isdigit():
            assert ca[:6] + ca[8:] == cb[:6] + cb[8:]
        else:
            assert a == b


# -- the command line --------------------------------------------------------------------------


def test_cli_train_and_errors(tmp_path, shared_data, capsys, monkeypatch):
    train = tmp_path / "train.conllu"
    train.write_bytes(b"".join(t.source.raw for t in gothic(shared_data, 6)))
    out = tmp_path / "m.pt"
    assert main(["train", str(train), "--model", "bilstm", "--system", "arc_hybrid", "--epochs", "1",
                 "--dev", str(train), "-o", str(out)] + TINY_FLAGS) == 0
    assert io.is_neural_model(out) and "best dev LAS" in capsys.readouterr().err
    model = load(out)
    assert model.options.word_dim == 8 and model.system == "arc_hybrid"
    empty = tmp_path / "empty.conllu"
    empty.write_text("# only a comment\n\n")
    for args, message in (
            (["--lr", "0"], "lr (--lr) must be > 0"),
            (["--dropout", "1"], "dropout (--dropout) must be in [0, 1)"),
            (["--beam", "3"], "--beam is an option of --model perceptron"),
            (["--features", "s0,q0"], "bad feature position 'q0'"),
            (["--system", "lr_spine"], "fixed set of transitions"),
            (["--oracle", "static", "--nonproj", "oracle"], "static oracle needs projective"),
            (["--oracle-threads", "0"], "oracle_threads (--oracle-threads) must be >= 1"),
            (["--device", "cuda:x"], "device must be cpu or cuda[:N], not 'cuda:x'"),
            (["--device", "cuda"] if not torch.cuda.is_available() else ["--threads", "0"],
             "torch finds no CUDA device" if not torch.cuda.is_available() else "--threads must be")):
        assert main(["train", str(train), "--model", "bilstm", "-o", str(tmp_path / "x.pt")] + args) == 2
        assert message in capsys.readouterr().err
    for data, message in ((empty, "no sentences"), (tmp_path / "missing.conllu", "cannot read")):
        assert main(["train", str(data), "--model", "bilstm", "-o", str(tmp_path / "x.pt")]
                    + TINY_FLAGS) == 2
        assert f"{data}" in capsys.readouterr().err
    assert main(["train", str(train), "--lr", "0.1", "-o", str(tmp_path / "x.pt")]) == 2
    assert "--lr is an option of --model bilstm" in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["train", str(train), "--model", "bilstm", "-o", str(tmp_path / "x.pt")]) == 2
    assert 'pip install "semiparse[neural]"' in capsys.readouterr().err



def test_cli_parse_writes_the_models_parses(tmp_path, shared_data, capsys):
    """semiparse parse on a neural model: HEAD and DEPREL are the model's own
    batched parses, every other byte (comment-only blocks, CR line ends) the
    input's; perceptron-only options and another system are refused."""
    train = tmp_path / "train.conllu"
    train.write_bytes(b"".join(t.source.raw for t in gothic(shared_data, 6)))
    model_path = tmp_path / "m.pt"
    assert main(["train", str(train), "--model", "bilstm", "--system", "arc_hybrid", "--epochs", "1",
                 "-o", str(model_path), "--quiet"] + TINY_FLAGS) == 0
    source = tmp_path / "in.conllu"
    source.write_bytes(b"# newdoc id = d1\r\r" + train.read_bytes().replace(b"\n", b"\r")
                       + b"# trailing comment\r")
    out = tmp_path / "out.conllu"
    threads = torch.get_num_threads()
    assert main(["parse", str(model_path), str(source), "-o", str(out), "--quiet"]) == 0
    assert torch.get_num_threads() == threads  # parse's one thread is given back
    two = tmp_path / "two.conllu"
    assert main(["parse", str(model_path), str(source), "-o", str(two), "--quiet", "--threads", "2"]) == 0
    assert two.read_bytes() == out.read_bytes()
    model = load(model_path)
    trees = read_trees(source, need_heads=False, keep_empty=True)
    words = [tree for tree in trees if len(tree)]
    expected = iter(parse_sentences(model, words))
    want = b"".join(tree.source.relabeled(*next(expected)) if len(tree) else tree.source.raw
                    for tree in trees)
    assert out.read_bytes() == want
    assert read_trees(out)[0].heads == parse_sentences(model, words[:1])[0][0]
    original, written = source.read_bytes().split(b"\r"), out.read_bytes().split(b"\r")
    assert len(original) == len(written)
    for a, b in zip(original, written):
        ca, cb = a.split(b"\t"), b.split(b"\t")
        assert (ca[:6] + ca[8:] == cb[:6] + cb[8:]) if len(ca) == 10 else a == b
    capsys.readouterr()
    for args, message in ((["--beam", "2"], "--beam is for perceptron models"),
                          (["--probabilities"], "--probabilities is for perceptron models"),
                          (["--system", "arc_standard"], "arc_hybrid system, not arc_standard")):
        assert main(["parse", str(model_path), str(source), "-o", str(tmp_path / "x.conllu")]
                    + args) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "x.conllu").exists()
    with pytest.raises(SystemExit) as stop:
        main(["parse", str(model_path), str(source), "-o", str(tmp_path / "x.conllu"),
              "--threads", "0"])
    assert stop.value.code == 2
    assert "--threads: expected an integer from 1 to 1024" in capsys.readouterr().err


def test_nothing_else_imports_torch(tmp_path):
    """semiparse, its commands and is_neural_model work without importing torch."""
    code = ("import sys, semiparse, semiparse.cli, semiparse.neural, semiparse.neural.io as io; "
            "semiparse.cli.build_parser(); io.is_neural_model(sys.argv[1]); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, cwd=tmp_path)


def test_docs_example_loop_runs(capsys):
    """The training loop of docs/neural.md (scores_batch used directly) runs
    and parses its first sentence right."""
    import re

    text = (REPO / "docs" / "neural.md").read_text()
    code = re.search(r"## A training loop of your own.*?```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "docs/neural.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip() == "(-1, 2, 3, 0)"


def test_bench_neural_smoke(tmp_path, shared_data, capsys):
    """semiparse bench neural runs on a few sentences and prints its table."""
    path = shared_data / "ud" / "UD_Gothic-PROIEL" / "got_proiel-ud-dev.conllu"
    assert main(["bench", "neural", str(path), "--sentences", "6", "--loop-sentences", "2",
                 "--batch-size", "3", "--small", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    for row in ("train, lockstep", "train, one at a time", "parse, batched", "oracle share",
                "encoder, batched", "encoder, one at a time", "the encoder's forward and backward"):
        assert row in out


@pytest.mark.parametrize("args, message", [
    (["--device", "tpu"], "--device: device must be cpu or cuda[:N], not 'tpu'"),
    (["--device", "cuda:x"], "--device: device must be cpu or cuda[:N], not 'cuda:x'"),
    (["--oracle-threads", "0"], "--oracle-threads must be >= 1"),
    *([(["--device", "cuda"], "--device: device cuda: torch finds no CUDA devices")]
      if not torch.cuda.is_available() else []),
])
def test_bench_neural_refuses_bad_settings_before_reading(args, message, tmp_path, capsys):
    """A device torch cannot use, or no oracle thread: one line, status 2,
    before any data is read (the file named does not exist)."""
    assert main(["bench", "neural", str(tmp_path / "missing.conllu"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err

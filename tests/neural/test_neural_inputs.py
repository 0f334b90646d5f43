"""The neural trainer and its commands refuse what they cannot use with one
clear line (ValueError in Python, exit status 2 on the command line)."""
import re

import pytest

pytest.importorskip("torch")

import semiparse.neural as neural  # noqa: E402
from semiparse.heads import is_tree  # noqa: E402
from semiparse.perceptron import Tree  # noqa: E402

from support import cli_error, late_loop  # noqa: E402

SMALL = dict(epochs=1, word_dim=4, char_dim=0, upos_dim=2, lstm_dim=4, lstm_layers=1, hidden_dim=4,
             label_hidden_dim=4)


def _tree(heads, labels):
    n = len(heads)
    return Tree([None] + [f"w{d}" for d in range(1, n + 1)], [None] + ["X"] * n, [-1] + heads,
                [None] + labels)


def test_training_trees_without_words():
    with pytest.raises(ValueError, match="^the training trees have no words$"):
        neural.train([_tree([], [])], **SMALL)


@pytest.mark.parametrize("threads", ["0", "-1", "1025", "1000000000"])
def test_bench_neural_threads_must_be_positive(tmp_path, capsys, threads):
    # refused before the (absent) training file is read
    err = cli_error(capsys, ["bench", "neural", str(tmp_path / "absent.conllu"), "--small",
                             "--threads", threads])
    assert f"--threads must be from 1 to 1024, got {threads}" in err


def test_bench_neural_static_oracle_names_the_policies_it_takes(tmp_path, capsys):
    """It suggested --nonproj encode, which bench neural does not take."""
    err = cli_error(capsys, ["bench", "neural", str(tmp_path / "absent.conllu"), "--small",
                             "--oracle", "static", "--nonproj", "oracle"])
    assert err.endswith("the static oracle needs projective trees: use --nonproj projectivize "
                        "or subset\n")


def test_any_integer_seed_trains():
    """As for the perceptron: torch takes the seed modulo 2**64."""
    trees = [_tree([2, 0], ["det", "root"])]
    for seed in (10**23, -(2**70)):
        assert neural.train(trees, seed=seed, **SMALL).options.seed == seed


@pytest.mark.parametrize("nonproj", ["oracle", "encode"])
def test_partial_trees_are_named_with_a_hint(nonproj):
    """The hint is the neural trainer's: not partial=True, which it does not take."""
    trees = [_tree([2, 0], ["det", "root"]), _tree([-1, 0], ["det", "root"])]
    with pytest.raises(ValueError, match=r"^training tree 1: heads is not a tree: HEAD -1 of word 1 "
                                         r".*; -1 is an unknown head: the neural trainer reads "
                                         r"complete trees$"):
        neural.train(trees, nonproj=nonproj, **SMALL)


@pytest.mark.parametrize("model", ["perceptron", "bilstm"])
def test_hints_name_only_what_the_model_takes(tmp_path, capsys, model):
    """HEAD _ in TRAIN suggests --partial to the perceptron only (bilstm
    refuses it), in --dev to neither (--partial reads TRAIN); trees all
    skipped as non-projective suggest --nonproj projectivize, which every
    trainer takes (bilstm's policy is subset; bench neural's --nonproj has
    no skip), and which works."""
    from semiparse.cli import main

    complete, partial, crossing = (tmp_path / f"{name}.conllu" for name in ("c", "p", "x"))
    complete.write_text("1\ta\ta\tX\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n")
    partial.write_text(complete.read_text().replace("\t2\tdet", "\t_\tdet"))
    crossing.write_text("1\ta\ta\tX\t_\t_\t3\tdet\t_\t_\n2\tb\tb\tX\t_\t_\t4\tdep\t_\t_\n"
                        "3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n4\td\td\tX\t_\t_\t3\tobj\t_\t_\n\n")
    options = ["--model", model, "--epochs", "1", "--quiet", "-o", str(tmp_path / "m")] + (
        ["--word-dim", "4", "--char-dim", "0", "--lstm-dim", "4", "--lstm-layers", "1",
         "--hidden-dim", "4"] if model == "bilstm" else [])
    unknown = f"{partial}:1: HEAD of word 1 is '_' (no basic tree; "
    train_hint = ("the neural trainer reads complete trees" if model == "bilstm"
                  else "an unknown head needs partial trees: --partial, partial=True")
    for args, message in (
            ([partial], unknown + train_hint + ")"),
            ([complete, "--dev", partial] + (["--partial"] if model == "perceptron" else []),
             unknown + "the dev set is scored against complete trees)"),
            ([crossing, "--nonproj", "subset"], "no training trees left: all are non-projective "
                                                "and skipped (--nonproj projectivize keeps them)")):
        assert main(["train", *map(str, args), *options]) == 2
        err = capsys.readouterr().err
        assert err.endswith(f"semiparse train: error: {message}\n") and "Traceback" not in err, err
    assert main(["train", str(crossing), "--nonproj", "projectivize", *options]) == 0
    capsys.readouterr()
    if model == "bilstm":
        for args, message in (([partial], unknown + "the benchmarks read complete trees)"),
                              ([crossing, "--nonproj", "subset"], "no training trees left")):
            assert message in cli_error(capsys, ["bench", "neural", *map(str, args), "--small",
                                                 "--threads", "1"])


def test_a_checkpoint_given_as_a_model_says_how_to_get_the_model(tmp_path, capsys):
    from semiparse.cli import main
    from semiparse.perceptron import Model, ModelError

    train = tmp_path / "t.conllu"
    train.write_text("1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    options = ["--model", "bilstm", "--epochs", "1", "--word-dim", "4", "--char-dim", "0",
               "--lstm-dim", "4", "--lstm-layers", "1", "--hidden-dim", "4", "--quiet"]
    checkpoint, model = tmp_path / "ck.pt", tmp_path / "m.pt"
    assert main(["train", str(train), *options, "--checkpoint", str(checkpoint),
                 "-o", str(tmp_path / "first.pt")]) == 0
    capsys.readouterr()
    advice = (f"{checkpoint}: is a training checkpoint (semiparse train --checkpoint), not a model; "
              f"resuming its run writes the model: semiparse train TRAIN.conllu --model bilstm "
              f"--resume {checkpoint} -o MODEL")
    err = cli_error(capsys, ["parse", str(checkpoint), str(train), "-o", str(tmp_path / "o.conllu")])
    assert advice in err and not (tmp_path / "o.conllu").exists()
    with pytest.raises(ModelError, match="^" + re.escape(advice)):
        neural.load(checkpoint)
    with pytest.raises(ModelError, match=r"a PyTorch file \(a neural model or a training "
                                         r"checkpoint\), not a perceptron model"):
        Model.load(checkpoint)
    # the advice works
    assert main(["train", str(train), *options, "--resume", str(checkpoint), "-o", str(model)]) == 0
    # a checkpoint of more epochs than asked saved a model of more; one file for both lost one
    capsys.readouterr()
    two = [o if o != "1" or options[i - 1] != "--epochs" else "2" for i, o in enumerate(options)]
    assert main(["train", str(train), *two, "--checkpoint", str(tmp_path / "ck2.pt"),
                 "-o", str(tmp_path / "second.pt")]) == 0
    capsys.readouterr()
    assert main(["train", str(train), *options, "--resume", str(tmp_path / "ck2.pt"),
                 "-o", str(model)]) == 2
    assert ("the checkpoint has 2 epochs done: --epochs must be at least that, got 1"
            in capsys.readouterr().err)
    err = cli_error(capsys, ["train", str(train), *options, "--checkpoint", str(tmp_path / "new.pt"),
                             "-o", str(tmp_path / "new.pt")])
    assert "it names the model's file (-o)" in err and not (tmp_path / "new.pt").exists()
    assert main(["parse", str(model), str(train), "--quiet", "-o", str(tmp_path / "o.conllu")]) == 0


def test_a_system_whose_grammar_misdescribes_it_is_named_with_the_configuration(tmp_path):
    """Arc-hybrid with its stack and buffer terminals swapped: no
    configuration has a completion, so the first step finds no optimal
    transition; training says so, not a RuntimeError's traceback."""
    from semiparse.resources import data_dir

    text = (data_dir("systems") / "arc_hybrid.toml").read_text()
    text = text[:text.index("[completion.projective]")].replace('name = "arc_hybrid"', 'name = "swapped"')
    text = text.replace('{ node = "stack", terminal = "p" },\n    { node = "buffer", terminal = "s" },',
                        '{ node = "stack", terminal = "s" },\n    { node = "buffer", terminal = "p" },')
    (tmp_path / "swapped.toml").write_text(text)
    (tmp_path / "arc_hybrid.grammar").write_text((data_dir("grammars") / "arc_hybrid.grammar").read_text())
    with pytest.raises(ValueError, match=r"^swapped: the oracle scores every transition -inf in the "
                                         r"configuration stack \[0\], buffer \[1, 2\], which is not "
                                         r"final: .*semiparse check"):
        neural.train([_tree([2, 0], ["det", "root"])], system=str(tmp_path / "swapped.toml"), **SMALL)


def _two_node_shift(folder):
    """Arc-standard whose shift needs two stack nodes: the initial
    configuration (stack [0]) of every sentence is a dead end, no transition
    applies there; its completion grammar is arc-standard's."""
    from semiparse.resources import data_dir

    text = (data_dir("systems") / "arc_standard.toml").read_text()
    text = text[:text.index("# Strategies restrict")].replace('name = "arc_standard"',
                                                              'name = "two_node_shift"')
    shift = 'stack = ["*", "s0"]\nbuffer = ["b", "*"]\nstack_after = ["*", "s0", "b"]'
    assert shift in text
    text = text.replace(shift, 'stack = ["*", "s1", "s0"]\nbuffer = ["b", "*"]\n'
                               'stack_after = ["*", "s1", "s0", "b"]')
    (folder / "two_node_shift.toml").write_text(text + '[strategy.none]\ndescription = "all"\n')
    (folder / "arc_standard.grammar").write_text(
        (data_dir("grammars") / "arc_standard.grammar").read_text())
    return folder / "two_node_shift.toml"


def test_dead_ends_are_not_blamed_on_a_correct_grammar(tmp_path, capsys):
    """A system whose every initial configuration is a dead end passes
    `semiparse check` (with a dead-end warning); training it said that its
    completion grammar does not describe its moves.  It says what the
    perceptron trainer says: every training sentence reached a dead end,
    with one such configuration."""
    from semiparse.cli import main

    system = _two_node_shift(tmp_path)
    train = tmp_path / "t.conllu"
    train.write_text("1\ta\ta\tX\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n"
                     "1\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n")
    options = ["--epochs", "1", "--quiet", "--system", str(system)]
    neural_options = ["--model", "bilstm", "--word-dim", "4", "--char-dim", "0", "--lstm-dim", "4",
                      "--lstm-layers", "1", "--hidden-dim", "4", "--label-hidden-dim", "4"]
    errors = []
    for model in ([], neural_options):
        assert main(["train", str(train), *options, *model, "-o", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "completion grammar" not in err, err
        errors.append(err.splitlines()[-1])
    assert errors[0] == ("semiparse train: error: two_node_shift: every training sentence (2) "
                         "reached a dead end, a configuration from which no final one is "
                         "reachable: nothing was learnt (semiparse check on the system's file "
                         "shows such a configuration)")
    assert errors[1] == ("semiparse train: error: two_node_shift: every training sentence (2) "
                         "reached a dead end, a configuration from which no final one is "
                         "reachable, e.g. stack [0], buffer [1, 2] (the initial configuration): "
                         "nothing was learnt (semiparse check on the system's file shows such "
                         "configurations)")
    assert not (tmp_path / "m").exists()


def test_sentences_that_start_in_a_dead_end_are_left_out(monkeypatch):
    """As the perceptron trainer abandons them: the others train, each
    epoch's record counts them, and a warning says so at the end.  (The
    oracle is made to score the initial configuration of every one-word
    sentence -inf throughout.)"""
    import numpy as np

    from semiparse.neural.lockstep import TrainingOracle
    from semiparse.errors import DeadEndWarning

    rows = TrainingOracle.rows

    def rows_with_dead_ends(self, configs, golds):
        sigma = rows(self, configs, golds)
        for i, config in enumerate(configs):
            if config.n == 1 and tuple(config.buffer) == (1,):  # the initial configuration
                sigma[i] = -np.inf
        return sigma

    monkeypatch.setattr(TrainingOracle, "rows", rows_with_dead_ends)
    monkeypatch.setattr(TrainingOracle, "dead_end", lambda self, config, heads: True)
    trees = [_tree([2, 0], ["det", "root"]), _tree([0], ["root"]), _tree([0, 1], ["root", "obj"])]
    with pytest.warns(DeadEndWarning, match=r"^2 training sentence\(s\), counted once per epoch, "
                                            r"started in a dead end of arc_standard"):
        model = neural.train(trees, **{**SMALL, "epochs": 2})
    assert [r["dead_ends"] for r in model.meta["history"]] == [1, 1]


def test_nonproj_skip_is_subset_for_bilstm(tmp_path, capsys):
    """The help gives skip and subset as one policy: bilstm takes both."""
    from semiparse.cli import main

    train = tmp_path / "t.conllu"
    train.write_text("1\ta\ta\tX\t_\t_\t3\tdep\t_\t_\n2\tb\tb\tX\t_\t_\t4\tdep\t_\t_\n"
                     "3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n4\td\td\tX\t_\t_\t3\tdep\t_\t_\n\n"
                     "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n\n")
    options = ["--model", "bilstm", "--epochs", "1", "--word-dim", "4", "--char-dim", "0",
               "--lstm-dim", "4", "--lstm-layers", "1", "--hidden-dim", "4", "--quiet"]
    for policy in ("skip", "subset"):
        assert main(["train", str(train), *options, "--nonproj", policy,
                     "-o", str(tmp_path / f"{policy}.pt")]) == 0
        assert capsys.readouterr().err.startswith("2 training trees, 1 non-projective (skipped)\n")


def test_training_and_parsing_a_system_whose_moves_loop(tmp_path, monkeypatch):
    """A loop the loader's search misses (an unshift that needs 6 stack
    nodes) stops training with a clear error where it went on forever; a
    parse stops after max_steps moves (here 2, for the shipped arc-standard,
    so that every sentence runs into it) as at a dead end."""
    from semiparse.neural import lockstep

    system = late_loop(tmp_path)
    chain = _tree(list(range(0, 8)), ["root"] + ["dep"] * 7)  # all on the stack at once
    with pytest.raises(ValueError, match="400 transitions on a sentence of 8 words .* can loop"):
        neural.train([chain], system=str(system), oracle="nondet", **SMALL)
    model = neural.train([chain], **SMALL)
    monkeypatch.setattr(lockstep, "max_steps", lambda n: 2)
    [(heads, labels, dead_end)] = neural.parse_sentences(model, [chain], with_dead_ends=True,
                                                         root="any")
    assert dead_end and model.dead_ends == 1
    assert is_tree(heads) and heads.count(0) >= 6  # the unfinished words on the root
    [(heads, _, dead_end)] = neural.parse_sentences(model, [chain], with_dead_ends=True)
    assert dead_end and is_tree(heads) and heads.count(0) == 1  # by default, one root child



def test_parse_save_and_load_check_batch_size_path_and_device(tmp_path):
    """batch_size=-1 parsed nothing, 0 or 1.5 raised from range(); a device
    torch does not have gave torch's RuntimeError or AssertionError."""
    trees = [_tree([2, 0], ["det", "root"])]
    model = neural.train(trees, **SMALL)
    for size in (-1, 0, 1.5, None, True):
        with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
            neural.parse_sentences(model, trees, batch_size=size)
    path = tmp_path / "m.pt"
    neural.io.save(model, path)
    for device in ("gpu", "cuda:99"):
        with pytest.raises(ValueError, match="device"):
            neural.load(path, device=device)
    with pytest.raises(ValueError, match="a model file's path must be a str or path object"):
        neural.io.save(model, None)  # it wrote the archive to standard output


@pytest.mark.parametrize("option, value, message", [
    ("lstm_dim", 10**9, "lstm_dim (--lstm-dim) must be at most 4096"),  # torch's allocator died
    ("word_dim", 4097, "word_dim (--word-dim) must be at most 4096"),
    ("lstm_layers", 10**9, "lstm_layers (--lstm-layers) must be at most 32"),  # it hung
    ("oracle_threads", 5000, "oracle_threads (--oracle-threads) must be at most 1024"),
])
def test_network_sizes_have_bounds(option, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        neural.train([_tree([2, 0], ["det", "root"])], **{**SMALL, option: value})

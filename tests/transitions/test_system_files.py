"""Grammar and system files, declared transitions and dead ends (issue 23).

- line ends: a grammar or system file means the same, and its errors name
  the same lines, whichever line ends it uses (``\\n``, ``\\r\\n``, a lone
  ``\\r``, as the CoNLL-U reader accepts them) and with a byte order mark;
- second heads: a declared transition that can give a word that already has
  a head a new one is refused with FILE:LINE by the loader, ``check``,
  ``train``, the API and a model recording it; on random small systems, one
  the loader accepts never does so (brute force over every reachable
  configuration);
- nesting: system files nested hundreds deep (arrays, inline tables, dotted
  keys) and model files with deeply nested meta data are one FILE(:LINE)
  error, not a RecursionError; grammar files and bracketed trees 100,000
  deep too, or read;
- dead ends (tests/systems/arc_hybrid_root_end_deadend.toml): ``check``
  warns, training abandons the sentence and goes on, parsing finishes the
  tree, and none of them raises.

Fuzzing of the same readers is in test_files_fuzz.py.
"""
import itertools
import random
import re
import shutil
import warnings
from collections import deque
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.grammar import Grammar, GrammarError, load_grammar
from semiparse.heads import is_tree
from semiparse.resources import data_dir
from semiparse.perceptron import Model, ModelError, Trainer, Tree, options_for, read_trees
from semiparse.errors import DeadEndWarning
from semiparse.transitions.systems.loading import (
    definition_sha256,
    load_system,
    system_from_text,
)
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import SYSTEMS, random_system_texts, short_hint_trial  # noqa: F401 (a fixture)

DEAD_END = SYSTEMS / "arc_hybrid_root_end_deadend.toml"
SHIPPED_GRAMMARS = sorted(p.stem for p in data_dir("grammars").glob("*.grammar"))
SHIPPED_SYSTEMS = sorted(p.stem for p in data_dir("systems").glob("*.toml"))
TEST_SYSTEMS = sorted(SYSTEMS.glob("*.toml"))
NEWLINES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def _line_ends(text, newline, bom=False):
    return ("\ufeff" if bom else "") + text.replace("\n", newline)


def _error(capsys, argv):
    """Run the CLI expecting exit 2 with one line on stderr; return that line."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def _line(text, needle):
    """Line (1-based) of the first ``needle`` in ``text``."""
    return text[:text.index(needle)].count("\n") + 1


# -- 1. line ends ------------------------------------------------------------------

def _counts(grammar):
    """Number of trees of every terminal string of length 1..3 (uniform weights)."""
    return {names: semiparse.parse(grammar, list(names), np.zeros((m, m)),
                                   semiring="counting").value
            for m in (1, 2, 3) for names in itertools.product(grammar.terminals, repeat=m)}


@pytest.mark.parametrize("newline", NEWLINES)
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("name", SHIPPED_GRAMMARS)
def test_a_grammar_means_the_same_with_every_line_end(tmp_path, name, newline, bom):
    clean = load_grammar(name)
    text = (data_dir("grammars") / f"{name}.grammar").read_text(encoding="utf-8")
    path = tmp_path / "g.grammar"
    path.write_bytes(_line_ends(text, NEWLINES[newline], bom).encode("utf-8"))
    for grammar in (load_grammar(path), Grammar.from_text(_line_ends(text, NEWLINES[newline],
                                                                     bom))):
        assert (grammar.rules, grammar.start) == (clean.rules, clean.start)
        assert [(r.line, r.column) for r in grammar.rules] == [
            (r.line, r.column) for r in clean.rules]
    if name == "projective":  # the issue's example: 2 rules of 4 and no tree with a lone \r
        assert _counts(load_grammar(path)) == _counts(clean)


@pytest.mark.parametrize("newline", NEWLINES)
def test_grammar_errors_name_the_same_line_with_every_line_end(tmp_path, newline):
    text = "# a comment\nstart S\n(S, S) -> s\nS -> (S, X)\n"
    with pytest.raises(GrammarError, match=r"^g:4:\d+: undefined right state 'X'"):
        Grammar.from_text(_line_ends(text, NEWLINES[newline]), "g")
    path = tmp_path / "g.grammar"
    path.write_bytes(_line_ends("start S\n(S, S) -> s\n# \xff\n", NEWLINES[newline])
                     .encode("latin-1"))
    with pytest.raises(GrammarError, match=rf"^{re.escape(str(path))}:3:3: not valid UTF-8"):
        load_grammar(path)


def _system_files(tmp_path, source, text):
    """``source``'s text written as ``tmp_path/x.toml``, with its grammar beside it."""
    path = tmp_path / "x.toml"
    path.write_bytes(text.encode("utf-8"))
    grammar = source.with_suffix(".grammar")
    if grammar.is_file():
        shutil.copy(grammar, tmp_path / grammar.name)
    return path


@pytest.mark.parametrize("newline", NEWLINES)
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("source", [data_dir("systems") / f"{n}.toml" for n in SHIPPED_SYSTEMS]
                         + TEST_SYSTEMS, ids=lambda p: p.stem)
def test_a_system_file_means_the_same_with_every_line_end(tmp_path, source, newline, bom):
    clean = load_system(str(source))
    text = _line_ends(source.read_text(encoding="utf-8"), NEWLINES[newline], bom)
    for system in (load_system(str(_system_files(tmp_path, source, text))),
                   system_from_text(text, "x.toml", clean.grammar_text)):
        assert system._data == clean._data
        assert definition_sha256(system) == definition_sha256(clean)
        assert system.grammar_text == clean.grammar_text


@pytest.mark.parametrize("newline", NEWLINES)
def test_system_file_errors_name_the_same_line_with_every_line_end(tmp_path, newline):
    clean = (data_dir("systems") / "arc_hybrid.toml").read_text(encoding="utf-8")
    text = clean.replace('require = ["s0 != root"]', 'requires = ["s0 != root"]')
    line = _line(text, "requires")
    path = _system_files(tmp_path, data_dir("systems") / "arc_hybrid.toml",
                         _line_ends(text, NEWLINES[newline]))
    with pytest.raises(SystemFileError, match=rf"^{re.escape(str(path))}:{line}: unknown key "
                                              r"'requires' in transition\.1"):
        load_system(str(path))
    bad = clean.replace("arc-hybrid: shift", "arc-hybrid: \xff shift")
    path.write_bytes(_line_ends(bad, NEWLINES[newline]).encode("latin-1"))
    with pytest.raises(SystemFileError, match=rf"^{re.escape(str(path))}:"
                                              rf"{_line(bad, chr(255))}: not valid UTF-8"):
        load_system(str(path))
    text = clean + "x = [1,\n2 3]\ny = 1\n"  # tomllib's own line and column
    with pytest.raises(SystemFileError, match=rf"^x.toml:{_line(text, '2 3')}:3: "):
        system_from_text(_line_ends(text, NEWLINES[newline]), "x.toml")


# -- 2. a second head for a word ------------------------------------------------------

ARC_EAGER = (data_dir("systems") / "arc_eager.toml").read_text(encoding="utf-8")
# the non-monotonic arc-eager of Honnibal, Goldberg and Johnson (2013): left_arc
# may overwrite the head right_arc gave
NON_MONOTONIC = ARC_EAGER.replace('require = ["s0 != root", "s0 has no head"]',
                                  'require = ["s0 != root"]')
SECOND_HEAD = "transition left_arc can give a word that already has a head a new one"


def _conllu(trees):
    """CoNLL-U text of ``(heads, labels)`` pairs."""
    blocks = []
    for heads, labels in trees:
        blocks.append("".join(f"{d}\tw{d}\t_\tX\t_\t_\t{heads[d]}\t{labels[d]}\t_\t_\n"
                              for d in range(1, len(heads))))
    return "\n".join(blocks) + "\n"


def _random_trees(count, seed=0, max_n=7):
    """``count`` random trees ``(heads, labels)`` (projective or not)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(1, max_n)
        order = rng.sample(range(1, n + 1), n)
        heads = [-1] * (n + 1)
        for i, d in enumerate(order):
            heads[d] = 0 if i == 0 else order[rng.randrange(i)]
        labels = [None] + ["root" if h == 0 else rng.choice(["nsubj", "obj", "det"])
                           for h in heads[1:]]
        out.append((heads, labels))
    return out


def _trees(pairs):
    return [Tree(["<root>"] + [f"w{d}" for d in range(1, len(h))],
                 ["<root>"] + ["X"] * (len(h) - 1), h, l) for h, l in pairs]


def test_a_transition_that_may_overwrite_a_head_is_refused_everywhere(tmp_path, capsys):
    path = tmp_path / "eager.toml"
    path.write_text(NON_MONOTONIC, encoding="utf-8")
    line = _line(NON_MONOTONIC, 'name = "left_arc"')
    where = f"{path}:{line}: {SECOND_HEAD}: s0 "
    for load in (load_system, semiparse.system, semiparse.oracle, load_system):
        with pytest.raises(ValueError) as info:
            load(str(path))
        assert str(info.value).startswith(where) and 'require "s0 has no head"' in str(info.value)
    assert _error(capsys, ["check", str(path)]).startswith(f"semiparse check: error: {where}")
    treebank, model = tmp_path / "t.conllu", tmp_path / "m.npz"
    treebank.write_text(_conllu(_random_trees(5)), encoding="utf-8")
    assert _error(capsys, ["train", str(treebank), "--system", str(path), "-o", str(model),
                           "--quiet"]).startswith(f"semiparse train: error: {where}")
    assert not model.exists()
    with pytest.raises(ValueError, match=re.escape(where)):
        Trainer(system=str(path))


def test_a_model_recording_a_system_that_may_overwrite_a_head_is_refused(tmp_path, capsys):
    path, model = tmp_path / "eager.toml", tmp_path / "m.npz"
    path.write_text(NON_MONOTONIC.replace('name = "arc_eager"', 'name = "eager2"'),
                    encoding="utf-8")
    with mock.patch("semiparse.transitions.systems.declared.second_head", return_value=None):
        Model(str(path), ["root", "dep"]).save(model)  # as an older semiparse wrote it
    with pytest.raises(ModelError, match=rf"^{re.escape(str(model))}: its recorded system "
                                         rf"definition is invalid: .*{SECOND_HEAD}"):
        Model.load(model)
    treebank = tmp_path / "t.conllu"
    treebank.write_text(_conllu(_random_trees(2)), encoding="utf-8")
    assert SECOND_HEAD in _error(capsys, ["parse", str(model), str(treebank)])


@pytest.mark.parametrize("path", [None] + TEST_SYSTEMS, ids=lambda p: "shipped" if p is None
                         else p.stem)
def test_shipped_and_test_systems_still_load(path):
    for spec in SHIPPED_SYSTEMS if path is None else [str(path)]:
        assert load_system(spec).transitions


# Rewrites like shift, unshift, arcs that pop or keep their dependent, and
# reduce (stack, buffer, stack_after, buffer_after, possible edges).
_SHAPES = [
    (["s0"], ["b"], ["s0", "b"], [], [None, "s0 -> b"]),
    (["s0"], ["b"], [], ["b"], ["b -> s0"]),
    (["s0"], ["b"], ["s0"], ["b"], ["s0 -> b", "b -> s0"]),
    (["s1", "s0"], [], ["s0"], [], ["s0 -> s1"]),
    (["s1", "s0"], [], ["s1"], [], ["s1 -> s0"]),
    (["s1", "s0"], [], ["s1", "s0"], [], ["s1 -> s0", "s0 -> s1"]),
    (["s1", "s0"], [], ["s1"], ["s0"], [None, "s1 -> s0"]),
    (["s0"], [], [], [], [None]),
]


def _second_heads(system, n):
    """The steps ``(configuration, transition)`` reachable from ``initial(n)``
    whose edge goes into a node that already has a head (breadth first)."""
    start = system.initial(n)
    seen, todo, out = {start}, deque([start]), []
    while todo:
        config = todo.popleft()
        for name, stack, buffer, arcs, edge in system.successors(*config):
            if edge is not None and config[2][edge[1]] >= 0:
                out.append((config, name))
            if (stack, buffer, arcs) not in seen:
                seen.add((stack, buffer, arcs))
                todo.append((stack, buffer, arcs))
    return out


@settings(max_examples=150, deadline=None)
@given(text=random_system_texts(_SHAPES, finals=("any",)))
def test_a_system_the_loader_accepts_never_overwrites_a_head(text):
    try:
        system = system_from_text(text, "r.toml")
    except SystemFileError as exc:
        if "already has a head" not in str(exc):
            return  # refused for another reason (a loop, a rewrite that changes nothing)
        m = re.match(r"r\.toml:(\d+): transition (\w+) can give", str(exc))
        assert m and int(m.group(1)) == _line(text, f'name = "{m.group(2)}"')
        return
    for n in range(4):
        assert _second_heads(system, n) == []


def test_the_issues_overwrite_is_reachable_and_now_refused():
    """right_arc builds 0 -> 1, then left_arc would give 1 a second head."""
    with mock.patch("semiparse.transitions.systems.declared.second_head", return_value=None):
        loose = system_from_text(NON_MONOTONIC, "x.toml")
    assert (((0, 1), (2,), (-1, 0, -1)), "left_arc") in _second_heads(loose, 2)
    with pytest.raises(SystemFileError, match=SECOND_HEAD):
        system_from_text(NON_MONOTONIC, "x.toml")


# -- 3. nesting --------------------------------------------------------------------

HEAD = 'name = "x"\nfinal = { stack = "root", buffer = "empty" }\n'


@pytest.mark.parametrize("deep, line", [
    (HEAD + "static_order = " + "[" * 500 + "]" * 500 + "\n", 3),
    (HEAD + "description = 1\n" + "x = " + "{a = " * 500 + "1" + "}" * 500 + "\n", 4),
    (HEAD + "\n" * 3 + "a." * 3000 + "b = 1\n", 6),
    (HEAD + "[" + "a." * 3000 + "b]\n", 3),
    (HEAD + "static_order = [\n" + "[\n" * 500 + "]\n" * 500 + "]\n", 35),
], ids=["array", "inline-table", "dotted-key", "table-header", "array-on-lines"])
def test_deeply_nested_system_files_are_one_error(tmp_path, capsys, deep, line):
    path = tmp_path / "deep.toml"
    path.write_text(deep, encoding="utf-8")
    message = (rf"^{re.escape(str(path))}:{line}: arrays, tables and dotted keys nested more "
               r"than 32 deep")
    for load in (load_system, semiparse.system):
        with pytest.raises(ValueError, match=message):
            load(str(path))
    assert re.match(r"semiparse check: error: " + message[1:],
                    _error(capsys, ["check", str(path)]))
    with pytest.raises(SystemFileError, match=message.replace(re.escape(str(path)), "m")):
        system_from_text(deep, "m")


def test_a_model_file_with_deeply_nested_meta_data_is_one_error(tmp_path, capsys):
    path, treebank = tmp_path / "deep.npz", tmp_path / "t.conllu"
    np.savez(path, meta=np.array("[" * 100_000 + "]" * 100_000),
             keys=np.zeros(0, dtype=np.uint64), weights=np.zeros((0, 1)))
    message = f"{path}: not a semiparse parser model (its meta data is nested too deeply)"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Model.load(path)
    treebank.write_text(_conllu(_random_trees(1)), encoding="utf-8")
    assert _error(capsys, ["parse", str(path), str(treebank)]) == f"semiparse parse: error: {message}"


def test_nesting_inside_strings_and_comments_does_not_count():
    text = (data_dir("systems") / "arc_hybrid.toml").read_text(encoding="utf-8")
    for extra in ('x = "' + "[" * 500 + '"', "# " + "{" * 500, "x = '''" + "[\n" * 500 + "'''",
                  'x = """' + "[" * 500 + '\\" """""', "x = 'a.b." + "." * 500 + "'"):
        # accepted by the depth check: the next error is the unknown key x
        with pytest.raises(SystemFileError, match=r"unknown key 'x' in the file"):
            system_from_text(extra.replace("# ", "x = 1 # ") + "\n" + text, "x.toml")
    assert system_from_text(text.replace("arc-hybrid: shift", "[[[[" * 100 + " shift"),
                            "x.toml").description.startswith("[[[[")


def test_deeply_nested_grammar_text_is_one_error():
    text = "start S\n(S, S) -> s\nS -> " + "(" * 100_000 + "S, S" + ")" * 100_000 + "\n"
    with pytest.raises(GrammarError, match=r"^g:3:7: unexpected"):
        Grammar.from_text(text, "g")


def test_bracketed_trees_100000_deep_are_read(tmp_path, capsys):
    depth = 100_000
    path, out = tmp_path / "deep.mrg", tmp_path / "out.mrg"
    path.write_text("(S " + "(A " * depth + "(X x)" + ")" * depth + ")\n", encoding="utf-8")
    assert main(["ptb-convert", str(path), "-o", str(out)]) == 0
    assert main(["evalb", str(path), str(out)]) == 0
    report = capsys.readouterr().out
    assert f"brackets: gold {depth + 1}, test {depth + 1}, matched {depth + 1}" in report


# -- 4. dead ends ------------------------------------------------------------------

def _dead_end(system, stack, buffer, arcs):
    """Not final, and no final configuration reachable (the exhaustive search)."""
    if system.is_final(stack, buffer, arcs):
        return False
    heads = (-1,) + (0,) * (len(arcs) - 1)
    scores = semiparse.oracle(system, method="exhaustive").scores(stack, buffer, heads, arcs)
    return all(v == float("-inf") for v in scores.values())


# Arc-hybrid whose root never takes a child: no sentence of a word or more can
# finish, though every configuration but the last of a computation has legal
# moves; its grammar derives nothing for a string of one word or more.
NO_FINISH = (data_dir("systems") / "arc_hybrid.toml", 'name = "right_arc"',
             'require = ["s1 != root"]\n')
NO_FINISH_GRAMMAR = """start P
(N, R0) -> p
(L, R1) -> s
P -> (N, R0)
S -> (L, R1)
(L, _) -> S (L, _)
(_, R1) -> (_, R1) S
"""


def _no_finish(tmp_path):
    path, after, extra = NO_FINISH
    text = path.read_text()
    start = text.index(after)
    at = text.index("stack_after", start)
    text = text[:at] + extra + text[at:]
    text = text.replace('grammar = "arc_hybrid.grammar"', 'grammar = "no_finish.grammar"')
    # arc-hybrid's projective form is not this system's: check would fail it
    text = text[:text.index("[completion.projective]")]
    (tmp_path / "no_finish.grammar").write_text(NO_FINISH_GRAMMAR)
    (tmp_path / "no_finish.toml").write_text(text)
    return tmp_path / "no_finish.toml"


def test_check_counts_dead_ends_that_still_have_legal_moves(tmp_path, capsys):
    """Every example of this system is a dead end with legal moves: check
    used to count only configurations without any (10 of 100 here), and
    training saved a model that had learnt nothing."""
    path = _no_finish(tmp_path)
    assert main(["check", str(path), "--examples", "60", "--max-n", "5"]) == 0
    err = capsys.readouterr().err
    assert "60 of the 60 examples of strategy none are at or one step before a dead end" in err
    trees = _trees(_random_trees(6, seed=2))
    with pytest.raises(ValueError, match=r"every training sentence \(6\) reached a dead end"):
        Trainer(system=str(path), epochs=1, progress=False).run(trees)


def test_check_warns_about_the_dead_ends_it_sees(capsys, short_hint_trial):
    assert main(["check", str(DEAD_END), "--examples", "200", "--max-n", "5"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ok    arc_hybrid_root_end_deadend strategy=none")
    m = re.fullmatch(r"semiparse check: warning: arc_hybrid_root_end_deadend: (\d+) of the "
                     r"(\d+) examples of strategy none are at or one step before a dead end, a "
                     r"configuration that is not final and from which no final one is reachable, "
                     r"e\.g\. "
                     r"stack (\[.*?\]) buffer (\[.*?\]) arcs (\[.*?\]), reached by ([\w ]+); .*",
                     err.strip())
    assert m and 0 < int(m.group(1)) <= int(m.group(2)), err
    system = load_system(str(DEAD_END))
    config = tuple(tuple(int(x) for x in re.findall(r"-?\d+", m.group(i))) for i in (3, 4, 5))
    assert _dead_end(system, *config)
    replayed = system.initial(len(config[2]) - 1)
    for t in m.group(6).split():
        replayed = system.apply(*replayed, t)[:3]
    assert replayed == config
    main(["check", "arc_hybrid", "--examples", "50"])
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("trainer", ["perceptron", "rda", "beam-early", "beam-maxv"])
def test_training_abandons_a_sentence_at_a_dead_end_and_goes_on(trainer):
    trees = _trees(_random_trees(12, seed=1))
    options = options_for(trainer, explore_after=0, explore_p=1.0, beam=2, restart="negative")
    run = Trainer(system=str(DEAD_END), options=options, epochs=2, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = run.run(trees)
    dead = sum(record.get("dead_ends", 0) for record in run.history)
    assert dead == run.dead_ends
    assert [str(w.message).startswith(f"{dead} training sentence(s)") for w in caught
            if w.category is DeadEndWarning] == ([True] if dead else [])
    if trainer in ("perceptron", "rda"):  # exploration follows only viable moves
        assert dead == 0
    if trainer == "beam-maxv":  # the beam dies only after the gold path fell off it
        restarted = Trainer(system=str(DEAD_END), epochs=2, progress=False,
                            options=options_for(trainer, beam=2, restart="none"))
        restarted.run(trees)
        assert restarted.dead_ends == 0  # the max-violation update was lost with the sentence
    for tree in trees:
        heads, labels, _ = model.parse(tree)
        assert is_tree(heads) and None not in labels[1:]


@pytest.mark.parametrize("trainer", ["perceptron", "rda"])
def test_exploration_never_follows_a_move_into_a_dead_end(trainer, monkeypatch):
    """With zero weights the prediction is the first legal class, shift, which
    shifts the root onto words (a dead end) unless the oracle's -inf stops
    it: every move taken must leave a final configuration reachable."""
    from semiparse.perceptron import model as model_module
    from semiparse.transitions.oracles.viability import Viability

    viability, taken = Viability(str(DEAD_END)), []
    apply = model_module.Model.apply

    def checked_apply(self, state, cls):
        move = self.classes[cls][0]
        taken.append(move in viability.names(state.stack, state.buffer, state.arcs, state.n))
        apply(self, state, cls)

    monkeypatch.setattr(model_module.Model, "apply", checked_apply)
    run = Trainer(system=str(DEAD_END), options=options_for(trainer, explore_after=0, explore_p=1.0),
                  epochs=1, progress=False)
    run.run(_trees(_random_trees(8, seed=4)))
    assert taken and all(taken) and run.dead_ends == 0


def test_train_on_the_command_line_keeps_out_of_dead_ends_and_saves_the_model(tmp_path, capsys):
    treebank, out = tmp_path / "t.conllu", tmp_path / "m.npz"
    treebank.write_text(_conllu(_random_trees(12, seed=2)), encoding="utf-8")
    assert main(["train", str(treebank), "--system", str(DEAD_END), "--explore-after", "0",
                 "--explore-p", "1", "--epochs", "2", "--quiet", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"epoch=2 train_accuracy=", err), err
    assert "dead_end" not in err and "warning" not in err, err
    assert Model.load(out).system == "arc_hybrid_root_end_deadend"


def test_parsing_into_a_dead_end_parses_again_with_viable_moves():
    # with zero weights the first legal class, shift, is always taken: every
    # sentence of a word or more shifts the root onto its words, a dead end;
    # parsed again with the viable moves only, it ends in a final configuration
    model = Model(str(DEAD_END), ["root", "dep"])
    trees = _trees(_random_trees(10, seed=3))
    for options in ({}, {"with_probabilities": True}):
        model.dead_ends = 0
        for tree in trees:
            heads, labels, steps = model.parse(tree, root="any", **options)
            assert heads == [-1] + [0] * len(tree) and labels[1:] == ["root"] * len(tree)
            state, _ = model._viable_parse(model.sentence(tree))
            assert state.is_final() and list(state.arcs)[1:] == [0] * len(tree)
            if options:  # the steps of the parse given: shifts, shift_root-free left arcs
                assert [name for name, _ in steps].count("shift") == len(tree) + 1
        assert model.dead_ends == len(trees)
    model.dead_ends = 0
    for tree in trees:  # a beam keeps the computations that can finish
        heads, _, _ = model.parse(tree, beam=4)
        assert is_tree(heads)


def test_parse_on_the_command_line_finishes_dead_ends_and_counts_them(tmp_path, capsys):
    model, treebank, out = tmp_path / "m.npz", tmp_path / "t.conllu", tmp_path / "out.conllu"
    labels = ["root", "nsubj", "obj", "det"]
    Model(str(DEAD_END), labels).save(model)  # zero weights: shift into a dead end (and loads)
    pairs = _random_trees(6, seed=5)
    treebank.write_text(_conllu(pairs), encoding="utf-8")
    assert main(["parse", str(model), str(treebank), "-o", str(out), "--quiet",
                 "--root", "any"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"semiparse parse: warning: the parse of 6 sentence(s) reached a dead end of "
                   f"arc_hybrid_root_end_deadend (a configuration that is not final and from which "
                   f"no final one is reachable) or went round a loop of its moves, the first at "
                   f"{treebank}:1; they were parsed again with the transitions that can still "
                   f"finish, and words left without a head attached to the root (docs/training.md)"]
    parsed = read_trees(out)
    assert [t.heads for t in parsed] == [[-1] + [0] * (len(h) - 1) for h, _ in pairs]


def test_a_beam_whose_every_configuration_dead_ends_finishes_the_tree(tmp_path):
    path = tmp_path / "shift_only.toml"
    path.write_text('name = "shift_only"\ninitial = { root = "buffer_end" }\n'
                    'final = { stack = "root", buffer = "empty" }\n'
                    '[[transition]]\nname = "shift"\nstack = ["*"]\nbuffer = ["b", "*"]\n'
                    'stack_after = ["*", "b"]\nbuffer_after = ["*"]\n', encoding="utf-8")
    model = Model(str(path), ["root"])
    tree = _trees(_random_trees(1, seed=4, max_n=5))[0]
    for beam in (1, 2, 5):
        heads, labels, _ = model.parse(tree, beam=beam, root="any")
        assert heads == [-1] + [0] * len(tree) and labels[1:] == ["root"] * len(tree)
    assert model.dead_ends == 3


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 8), beam=st.sampled_from([1, 2, 3, "p"]))
def test_parses_with_random_weights_are_trees(seed, n, beam):
    """Random weights (updates on the features of random configurations) lead
    into dead ends or not; the output is a tree either way, and a dead end
    is counted exactly when the search did not end in a final configuration."""
    system = load_system(str(DEAD_END))
    model = Model(system, ["root", "dep"])
    rng = random.Random(seed)
    tree = _trees([([-1] + [0] * n, [None] + ["root"] * n)])[0]
    sentence = model.sentence(tree)
    for _ in range(3):
        state = model.state(sentence)
        while legal := system.legal(tuple(state.stack), tuple(state.buffer), tuple(state.arcs)):
            model.weights.perceptron_update(state.features(model.templates),
                                            rng.randrange(len(model.classes)),
                                            rng.uniform(-1, 1), 1.0)
            t = rng.choice(legal)
            model.apply(state, model.class_of[t, "dep" if system.adds_edge(t) else None])
    heads, labels, _ = model.parse(tree, beam=1 if beam == "p" else beam,
                                   with_probabilities=beam == "p")
    assert is_tree(heads) and None not in labels[1:]
    assert model.dead_ends in (0, 1)

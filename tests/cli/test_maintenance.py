"""What treebank maintainers hit: CoNLL 2018 scores in ``evaluate``, words in
``count``, ``projectivize --only`` (checked against brute force), the plot and
``--sort`` of ``count``, and DEPS entries left behind by a changed HEAD."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.treebank.projectivity import (
    NoProjectiveTree,
    count_optimal_projectivizations,
    projectivize,
)

from brute_force import all_projective, projective_optima
from support import trees

# -- projectivize(only=...) against brute force ------------------------------------

@settings(max_examples=300)
@given(st.data())
def test_only_is_optimal_among_trees_keeping_the_other_heads(data):
    heads = data.draw(trees(max_words=7))
    only = data.draw(st.sets(st.integers(1, len(heads) - 1)))
    single = data.draw(st.booleans()) and heads.count(0) == 1
    tie_break = data.draw(st.sampled_from(["first", "closest", "random"]))
    optima, best = projective_optima(heads, single, only)
    count = len(optima)
    if best is None:
        with pytest.raises(NoProjectiveTree):
            projectivize(heads, tie_break, seed=1, single_root=single, only=only)
        with pytest.raises(NoProjectiveTree):
            count_optimal_projectivizations(heads, single_root=single, only=only)
        return
    tree = projectivize(heads, tie_break, seed=1, single_root=single, only=only)
    assert any((row == tree).all() for row in all_projective(len(heads) - 1))
    assert all(tree[d] == heads[d] for d in range(1, len(heads)) if d not in only)
    assert sum(a == b for a, b in zip(tree[1:], heads[1:])) == best
    assert not single or tree.count(0) == 1
    assert count_optimal_projectivizations(heads, single_root=single, only=only) == (best, count)


def test_only_moves_just_the_named_words():
    heads = [-1, 3, 4, 0, 3]  # 4 -> 2 crosses 0 -> 3 and 3 -> 1: only moving word 2 helps
    assert projectivize(heads, only={2}) == [-1, 3, 3, 0, 3]
    assert projectivize(heads, only=[1, 2], tie_break="random", seed=3)[1] == 3
    with pytest.raises(NoProjectiveTree, match="only the heads of words 1, 4: the edges of the other words cross"):
        projectivize(heads, only={1, 4})
    assert projectivize([-1, 2, 0], only=()) == [-1, 2, 0]  # projective: nothing to move
    with pytest.raises(NoProjectiveTree, match="no word may change head"):
        projectivize(heads, only=())


@pytest.mark.parametrize("only, message", [
    ("12", "collection of word positions"), ({0}, "not a word position"), ({5}, "not a word position"),
    ({True}, "not a word position"), ({1.0}, "not a word position"),
])
def test_bad_only_is_a_value_error(only, message):
    with pytest.raises(ValueError, match=message):
        projectivize([-1, 3, 4, 0, 3], only=only)


# -- projectivize --only and DEPS ------------------------------------------------

def word(i, form, deprel, head, deps="_", upos="X"):
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{deprel}\t{deps}\t_\n"


# The comma's edge 4 -> 2 crosses 0 -> 3 and 3 -> 1: moving the comma fixes the tree.
PUNCT_FIXES = (
    "# sent_id = fixable\n"
    + word(1, "A", "nsubj", 3, "3:nsubj") + word(2, ",", "punct", 4, "1:orphan|4:punct|5:dep", "PUNCT")
    + word(3, "C", "root", 0, "0:root") + word(4, "D", "obj", 3, "3:obj") + word(5, "E", "dep", 3, "3:dep")
    + "\n"
)
# The same tree with no punctuation: no word that --only punct may move.
NO_PUNCT = (
    "# sent_id = stuck\n"
    + word(1, "A", "nsubj", 3) + word(2, "B", "obj", 4) + word(3, "C", "root", 0) + word(4, "D", "obl:x", 3)
    + "\n"
)


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_only_punct_moves_the_comma_and_counts_the_stale_deps(tmp_path, capsys):
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_text(PUNCT_FIXES, encoding="utf-8")
    assert main(["projectivize", str(src), "-o", str(out), "--only", "punct"]) == 0
    before, after = lines_of(src), lines_of(out)
    assert [a for a, b in zip(after, before) if a != b] == [
        "2\t,\t,\tPUNCT\t_\t_\t3\tpunct\t1:orphan|4:punct|5:dep\t_"  # DEPS still names head 4
    ]
    assert "1 words changed HEAD and had a DEPS entry for the old head" in capsys.readouterr().err


def test_update_deps_moves_the_old_head_entry(tmp_path, capsys):
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_text(PUNCT_FIXES, encoding="utf-8")
    assert main(["projectivize", str(src), "-o", str(out), "--only", "punct", "--update-deps"]) == 0
    changed = [a for a, b in zip(lines_of(out), lines_of(src)) if a != b]
    assert changed == ["2\t,\t,\tPUNCT\t_\t_\t3\tpunct\t1:orphan|3:punct|5:dep\t_"]
    assert "moved to the new head (--update-deps)" in capsys.readouterr().err


def test_only_without_a_solution_follows_on_error(tmp_path, capsys):
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_text(NO_PUNCT + PUNCT_FIXES, encoding="utf-8")
    assert main(["projectivize", str(src), "-o", str(out), "--only", "punct,nsubj"]) == 2
    err = capsys.readouterr().err
    assert f"semiparse projectivize: error: {src}:1: --only punct,nsubj: no projective tree changes only the heads of words 1:" in err
    assert "Traceback" not in err and not out.exists()

    assert main(["projectivize", str(src), "-o", str(out), "--only", "punct", "--on-error", "skip"]) == 0
    assert "sentence skipped" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").startswith("# sent_id = fixable")

    assert main(["projectivize", str(src), "-o", str(out), "--only", "punct", "--on-error", "keep"]) == 0
    assert "sentence copied unchanged" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").startswith(NO_PUNCT)


def test_only_uses_the_universal_part_of_the_deprel(tmp_path):
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_text(NO_PUNCT.replace("\tobj\t", "\tobj:x\t"), encoding="utf-8")
    assert main(["projectivize", str(src), "-o", str(out), "--only", "obj"]) == 0
    assert [a.split("\t")[6] for a in lines_of(out)[1:5]] == ["3", "3", "0", "3"]


@pytest.mark.parametrize("argv, message", [
    (["--only", "punct,"], "no empty relation"),
    (["--unmark", "--update-deps"], "--unmark restores"),
    (["--unmark", "--only", "punct"], "--unmark restores"),
])
def test_bad_only_and_deps_options(tmp_path, capsys, argv, message):
    src = tmp_path / "in.conllu"
    src.write_text(PUNCT_FIXES, encoding="utf-8")
    assert main(["projectivize", str(src), *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("deps, deprel, old, new, expected", [
    ("4:punct", "punct", 4, 3, "3:punct"),
    ("1:orphan|4:punct|5:dep", "punct", 4, 3, "1:orphan|3:punct|5:dep"),
    ("1:a|4:punct", "punct", 4, 7, "1:a|7:punct"),
    ("4:nsubj|4:obl:in", "obl", 4, 2, "2:obl:in|4:nsubj"),  # the entry of the basic relation
    ("3:punct|4:punct", "punct", 4, 3, "3:punct"),  # already there: not twice
    ("8:x|8.1:nsubj|9:y", "obj", 9, 8, "8:x|8:y|8.1:nsubj"),
    ("2:nsubj", "nsubj", 4, 3, "2:nsubj"),  # no entry for the old head
    ("_", "nsubj", 4, 3, "_"),
])
def test_moved_deps(deps, deprel, old, new, expected):
    from semiparse.treebank.columns import moved_deps

    assert moved_deps(deps, deprel, old, new) == expected


# -- count: words, --sort, --plot -------------------------------------------------

# 5 syntactic words: the multiword token line "2-3" and the empty node "5.1" are not words.
WITH_MWT = (
    "# sent_id = mwt\n"
    "1\tA\ta\tX\t_\t_\t3\tnsubj\t_\t_\n"
    "2-3\tBC\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tB\tb\tX\t_\t_\t4\tobj\t_\t_\n"
    "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n"
    "4\tD\td\tX\t_\t_\t3\tobl\t_\t_\n"
    "5\tE\te\tX\t_\t_\t3\tdep\t_\t_\n"
    "5.1\tF\tf\tX\t_\t_\t_\t_\t3:dep\t_\n"
    "\n"
)


def test_count_says_words_and_counts_syntactic_words_only(tmp_path, capsys):
    src = tmp_path / "in.conllu"
    src.write_text(WITH_MWT, encoding="utf-8")
    assert main(["count", str(src)]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert header.split()[1:3] == ["sentences", "words"] and "tokens" not in header
    assert row.split()[1:3] == ["1", "5"]
    assert main(["count", "--json", str(src)]) == 0
    stats = json.loads(capsys.readouterr().out)
    for entry in (stats["files"][0], stats["total"]):
        assert entry["words"] == 5 and entry["tokens"] == 5  # tokens: the old, deprecated name
        assert entry["edges_lost_percent"] == 20.0


def test_count_per_sentence_sort(tmp_path, capsys):
    # three non-projective sentences: (lost, optimal trees) = (1, 2), (2, ...), (1, ...)
    one = "".join(word(i, "w", "dep", h) for i, h in enumerate([3, 4, 0, 3], 1)) + "\n"
    two = "".join(word(i, "w", "dep", h) for i, h in enumerate([3, 5, 0, 6, 3, 3], 1)) + "\n"
    src = tmp_path / "in.conllu"
    src.write_text(one + two + PUNCT_FIXES, encoding="utf-8")

    def rows(*extra):
        assert main(["count", "--per-sentence", "--root", "any", str(src), *extra]) == 0
        out = capsys.readouterr().out.split("file:line\tsent_id\tlength\tlost\toptimal_trees\n")[1]
        return [line.split("\t") for line in out.splitlines()]

    in_order = rows()
    assert [r[0].rsplit(":", 1)[1] for r in in_order] == ["1", "6", "13"]
    by_count = rows("--sort", "count")
    assert [int(r[4]) for r in by_count] == sorted((int(r[4]) for r in in_order), reverse=True)
    by_loss = rows("--sort", "loss")
    assert [int(r[3]) for r in by_loss] == sorted((int(r[3]) for r in in_order), reverse=True)
    assert by_loss != in_order and sorted(by_loss) == sorted(in_order)
    assert main(["count", "--sort", "loss", str(src)]) == 2
    assert "--sort orders the lines of --per-sentence" in capsys.readouterr().err


@pytest.mark.parametrize("root", ["single", "any"])
def test_count_plot_labels_the_curve_and_keeps_small_bins(tmp_path, monkeypatch, root):
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    src = tmp_path / "in.conllu"
    src.write_text(PUNCT_FIXES, encoding="utf-8")  # one non-projective sentence: a bin of one
    assert main(["count", "--root", root, "--plot", str(tmp_path / "plot.png"), str(src)]) == 0
    assert (tmp_path / "plot.png").read_bytes().startswith(b"\x89PNG")
    (ax,) = figures[0].axes
    assert f"--root {root}" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "in: geometric mean per 10 words" in labels
    (line,) = ax.get_lines()
    assert len(line.get_xdata()) == 1  # the bin of a single sentence is drawn


# -- evaluate: CoNLL 2018 metrics ----------------------------------------------------

def full(i, form, lemma, upos, feats, head, deprel):
    return f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{deprel}\t_\t_\n"


GOLD = "".join([
    full(1, "The", "the", "DET", "Definite=Def|PronType=Art", 2, "det"),
    full(2, "dog", "dog", "NOUN", "Number=Sing", 3, "nsubj"),
    full(3, "barks", "bark", "VERB", "Mood=Ind", 0, "root"),
    full(4, "at", "at", "ADP", "_", 5, "case"),
    full(5, "cats", "cat", "NOUN", "Number=Plur", 3, "obl:at"),
    full(6, ".", ".", "PUNCT", "_", 3, "punct"),
]) + "\n"
SYSTEM = "".join([
    full(1, "The", "the", "DET", "Definite=Def|PronType=Art", 3, "det"),  # wrong head
    full(2, "dog", "dog", "NOUN", "Number=Plur|Foo=Bar", 3, "nsubj:pass"),  # subtype; Number wrong
    full(3, "barks", "barkx", "VERB", "Mood=Ind", 0, "root"),  # lemma wrong; gains a det child
    full(4, "at", "at", "ADP", "_", 5, "case"),
    full(5, "cats", "cat", "NOUN", "Number=Plur|Foo=Baz", 3, "obl"),  # Foo is not universal
    full(6, ".", ".", "PUNCT", "_", 3, "dep"),  # a content relation in the system only
]) + "\n"


def evaluate_json(tmp_path, capsys, gold, system):
    g, s = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    g.write_text(gold, encoding="utf-8")
    s.write_text(system, encoding="utf-8")
    assert main(["evaluate", str(g), str(s), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_evaluate_conll18_metrics_by_hand(tmp_path, capsys):
    scores = evaluate_json(tmp_path, capsys, GOLD, SYSTEM)
    # today's scores: full labels, punctuation by UPOS
    assert scores["uas"] == pytest.approx(500 / 6) and scores["las"] == pytest.approx(200 / 6)
    assert scores["uas_nopunct"] == pytest.approx(80.0) and scores["las_nopunct"] == pytest.approx(40.0)
    assert (scores["words"], scores["words_nopunct"]) == (6, 5)
    official = scores["conll18"]
    # UAS: all but word 1.  LAS by the universal relation: not word 6 (dep for punct) either.
    assert official["uas"]["correct"] == 5 and official["uas"]["f1"] == pytest.approx(500 / 6)
    assert official["las"]["correct"] == 4 and official["las"]["f1"] == pytest.approx(400 / 6)
    # content words: gold 2, 3, 5; system also 6.  CLAS: all three right.
    assert [official["clas"][k] for k in ("correct", "gold", "system")] == [3, 3, 4]
    assert official["clas"]["f1"] == pytest.approx(600 / 7)
    assert official["clas"]["precision"] == pytest.approx(75.0) and official["clas"]["recall"] == 100.0
    # MLAS: 2 has the wrong Number, 3 a functional child too many; only 5 (Foo ignored).
    assert official["mlas"]["correct"] == 1 and official["mlas"]["f1"] == pytest.approx(200 / 7)
    # BLEX: 3 has the wrong lemma.
    assert official["blex"]["correct"] == 2 and official["blex"]["f1"] == pytest.approx(400 / 7)


def test_evaluate_text_labels_each_line_and_adds_conll18(tmp_path, capsys):
    g, s = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    g.write_text(GOLD, encoding="utf-8")
    s.write_text(SYSTEM.rstrip("\n") + "\n", encoding="utf-8")  # no blank line at the end: still read
    assert main(["evaluate", str(g), str(s)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "full DEPREL: UAS 83.33  LAS 33.33  (6 words)",
        "full DEPREL, without punctuation: UAS 80.00  LAS 40.00  (5 words)",
        "CoNLL 2018 shared task (F1, universal DEPREL: the official scores): UAS 83.33  LAS 66.67  CLAS 85.71  MLAS 28.57  BLEX 57.14",
    ]


def test_evaluate_aligns_multiword_tokens_and_ignores_empty_nodes(tmp_path, capsys):
    gold = (
        "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
        + full(1, "de", "de", "ADP", "_", 2, "case") + full(2, "el", "el", "DET", "_", 3, "det")
        + full(3, "mar", "mar", "NOUN", "_", 0, "root")
        + "3.1\tes\tser\tAUX\t_\t_\t_\t_\t3:cop\t_\n\n"
    )
    system = gold.replace("\t2\tcase\t", "\t3\tcase\t").replace("3.1\tes\tser\tAUX\t_\t_\t_\t_\t3:cop\t_\n", "")
    official = evaluate_json(tmp_path, capsys, gold, system)["conll18"]
    assert [official[m]["correct"] for m in ("uas", "las", "clas", "mlas", "blex")] == [2, 2, 1, 0, 1]
    assert official["uas"]["gold"] == official["uas"]["system"] == 3


def test_evaluate_scorer_errors_name_the_file(tmp_path, capsys):
    g, s = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    g.write_text(GOLD, encoding="utf-8")
    # same words, but a multiword token whose text is not theirs: the scorer cannot align the texts
    s.write_text("1-2\tTheDog\t_\t_\t_\t_\t_\t_\t_\t_\n" + GOLD, encoding="utf-8")
    assert main(["evaluate", str(g), str(s)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"semiparse evaluate: error: {s}:1: against {g}:1: The concatenation of tokens")
    assert "Traceback" not in err


def test_evaluate_a_parse_with_several_roots_keeps_its_scores(tmp_path, capsys):
    """Parsers may attach several words to the root; the official scorer
    refuses such a file, so its metrics are left out with a note, not an error."""
    g, s = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    g.write_text(GOLD, encoding="utf-8")
    s.write_text(SYSTEM.replace("\t3\tobl\t", "\t0\troot\t"), encoding="utf-8")
    assert main(["evaluate", str(g), str(s), "--json"]) == 0
    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert scores["conll18"] is None and scores["uas"] == pytest.approx(400 / 6)
    assert captured.err == (f"semiparse evaluate: note: no CoNLL 2018 metrics: the official "
                            f"scorer refuses {s}:1: There are 2 roots in a sentence\n")
    assert main(["evaluate", str(g), str(s)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("full DEPREL, without punctuation:")
    # the gold file stays an error
    assert main(["evaluate", str(s), str(g)]) == 2


CONTENT = {"nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated",
           "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed",
           "flat", "compound", "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep"}


def test_evaluate_projectivized_english_against_a_count_by_hand(ud_files, tmp_path, capsys):
    """English EWT has multiword tokens and empty nodes.  Its optimal
    projectivization changes only heads, so every score is the share of
    words (content words for CLAS) that kept their head."""
    gold = next(p for p in ud_files if p.name == "en_ewt-ud-dev.conllu")
    system = tmp_path / "system.conllu"
    assert main(["projectivize", str(gold), "-o", str(system)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(system), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    from semiparse.treebank.conllu import read_conllu

    words = kept = content = content_kept = 0
    for g, s in zip(read_conllu(gold), read_conllu(system)):
        for d in range(1, len(g) + 1):
            same = g.heads[d] == s.heads[d]
            is_content = g.columns(d)[7].split(":")[0] in CONTENT
            words, kept = words + 1, kept + same
            content, content_kept = content + is_content, content_kept + (is_content and same)
    assert kept < words and scores["words"] == words
    official = scores["conll18"]
    for metric in ("uas", "las"):
        assert (official[metric]["correct"], official[metric]["gold"]) == (kept, words)
        assert official[metric]["f1"] == pytest.approx(scores["uas"]) == pytest.approx(scores["las"])
    for metric in ("clas", "blex"):
        assert (official[metric]["correct"], official[metric]["gold"]) == (content_kept, content)


def test_count_only(tmp_path, capsys):
    src = tmp_path / "in.conllu"
    src.write_text(NO_PUNCT + PUNCT_FIXES, encoding="utf-8")
    assert main(["count", "--only", "punct", str(src)]) == 2
    assert f"semiparse count: error: {src}:1: --only punct: the tree is not projective" in capsys.readouterr().err
    assert main(["count", "--only", "punct", "--on-error", "skip", "--json", str(src)]) == 0
    captured = capsys.readouterr()
    assert f"{src}:1: --only punct" in captured.err and "sentence skipped" in captured.err
    (stats,) = json.loads(captured.out)["files"]
    assert (stats["sentences"], stats["words"], stats["edges_lost"]) == (1, 5, 1)
    expected = count_optimal_projectivizations([-1, 3, 4, 0, 3, 3], single_root=True, only={2})
    assert stats["per_sentence"][0]["optimal_trees"] == expected[1] == 2

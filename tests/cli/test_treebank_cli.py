"""End to end: semiparse projectivize / count / compare-pseudo."""
import json
import os
import subprocess
import sys

import pytest

from semiparse.cli import main
from semiparse.treebank.conllu import read_conllu
from semiparse.treebank.projectivity import (
    count_optimal_projectivizations,
    is_projective,
)

TWO = (
    "# sent_id = a\n"
    "1\tA\ta\tX\t_\t_\t3\tdep\t_\t_\n"
    "2\tB\tb\tX\t_\t_\t4\tdep\t_\tSpaceAfter=No\n"
    "3\tC\tc\tX\t_\t_\t0\troot\t_\t_\n"
    "4\tD\td\tX\t_\t_\t3\tdep\t_\t_\n"
    "\n"
    "# sent_id = b\n"
    "1\tE\te\tX\t_\t_\t0\troot\t_\t_\n"
    "\n"
)


@pytest.fixture
def gothic(ud_files):
    """A small UD file with many non-projective trees."""
    return next(p for p in ud_files if p.name == "got_proiel-ud-dev.conllu")


def heads_of(path):
    return [s.heads for s in read_conllu(path)]


def test_projectivize_file_changes_only_heads_and_keeps_the_most_edges(gothic, tmp_path):
    out = tmp_path / "out.conllu"
    assert main(["projectivize", str(gothic), "-o", str(out)]) == 0
    before = gothic.read_text(encoding="utf-8").splitlines()
    after = out.read_text(encoding="utf-8").splitlines()
    assert len(before) == len(after)
    changed = 0
    for old, new in zip(before, after):
        if old != new:
            old_cols, new_cols = old.split("\t"), new.split("\t")
            assert old_cols[:6] == new_cols[:6] and old_cols[7:] == new_cols[7:]
            changed += 1
    gold, trees = heads_of(gothic), heads_of(out)
    assert changed > 100
    lost = 0
    for g, t in zip(gold, trees):
        assert is_projective(t) and t[1:].count(0) == 1
        kept, _ = count_optimal_projectivizations(g, single_root=True)
        assert sum(a == b for a, b in zip(g[1:], t[1:])) == kept
        lost += len(g) - 1 - kept
    assert lost == changed


def test_mark_then_unmark_restores_the_file(gothic, tmp_path):
    marked, restored = tmp_path / "m.conllu", tmp_path / "r.conllu"
    assert main(["projectivize", str(gothic), "--mark", "--tie-break", "closest", "-o", str(marked)]) == 0
    assert "OrigHead=" in marked.read_text(encoding="utf-8")
    assert main(["projectivize", "--unmark", str(marked), "-o", str(restored)]) == 0
    assert restored.read_bytes() == gothic.read_bytes()


def test_random_is_reproducible_and_independent_of_jobs(gothic, tmp_path):
    outs = []
    for jobs in ("1", "2", "1"):
        out = tmp_path / f"r{len(outs)}.conllu"
        args = ["projectivize", str(gothic), "--tie-break", "random", "--seed", "7", "--jobs", jobs, "-o", str(out)]
        assert main(args) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    other = tmp_path / "other.conllu"
    main(["projectivize", str(gothic), "--tie-break", "random", "--seed", "8", "-o", str(other)])
    assert other.read_bytes() != outs[0]


def test_stdin_to_stdout_through_the_installed_command(tmp_path):
    # Run outside the checkout: `python -m` puts the working directory first
    # on sys.path, and the source tree there has no compiled extensions.
    done = subprocess.run(
        [sys.executable, "-m", "semiparse", "projectivize", "--mark"],
        input=TWO.encode(), capture_output=True, check=True, cwd=tmp_path,
    )
    out = done.stdout.decode()
    assert out == TWO.replace("\t4\tdep\t_\tSpaceAfter=No", "\t3\tdep\t_\tSpaceAfter=No|OrigHead=4")


def test_bad_input_fails_with_file_line_and_leaves_no_output(tmp_path, capsys):
    bad = tmp_path / "bad.conllu"
    bad.write_text(TWO + "1\tF\tf\tX\t_\t_\t1\troot\t_\t_\n\n")
    out = tmp_path / "out.conllu"
    out.write_text("previous\n")
    assert main(["projectivize", str(bad), "-o", str(out)]) == 2
    assert f"{bad}:10: word 1 is headed by itself" in capsys.readouterr().err
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.conllu", "out.conllu"]

    assert main(["projectivize", str(bad), "--on-error", "skip", "-o", str(out)]) == 0
    assert "sentence skipped" in capsys.readouterr().err
    assert out.read_text() == TWO.replace("\t4\tdep\t_\tSpaceAfter", "\t3\tdep\t_\tSpaceAfter")
    assert main(["projectivize", str(bad), "--on-error", "keep", "-o", str(out)]) == 0
    assert out.read_text().endswith("1\tF\tf\tX\t_\t_\t1\troot\t_\t_\n\n")


def test_multiple_roots_error_or_warning(tmp_path, capsys):
    text = "1\tA\ta\tX\t_\t_\t0\tr\t_\t_\n2\tB\tb\tX\t_\t_\t0\tr\t_\t_\n3\tC\tc\tX\t_\t_\t2\td\t_\t_\n\n"
    path = tmp_path / "roots.conllu"
    path.write_text(text)
    assert main(["count", str(path)]) == 2
    assert f"{path}:2: 2 words attached to 0" in capsys.readouterr().err
    assert main(["count", str(path), "--multiple-roots", "warn", "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning: 2 words attached to 0" in captured.err
    assert json.loads(captured.out)["total"]["non_projective"] == 0


def test_user_errors(capsys, gothic):
    assert main(["projectivize", str(gothic), "--seed", "1"]) == 2
    assert "--seed only applies to --tie-break random" in capsys.readouterr().err
    assert main(["count", "/nonexistent/x.conllu"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_count_json_matches_the_api(ud_files, tmp_path, capsys):
    files = [p for p in ud_files if p.name.startswith(("got_proiel-ud-dev", "de_gsd-ud-dev"))]
    plot = tmp_path / "fig8.png"
    assert main(["count", *map(str, files), "--json", "--root", "any", "--plot", str(plot)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for path, stats in zip(files, report["files"]):
        trees = heads_of(path)
        assert stats["sentences"] == len(trees) == len(stats["per_sentence"])
        assert stats["tokens"] == sum(len(h) - 1 for h in trees)
        nonproj = 0
        for heads, row in zip(trees, stats["per_sentence"]):
            kept, count = count_optimal_projectivizations(heads)
            assert (row["length"] - row["lost"], row["optimal_trees"]) == (kept, count)
            nonproj += not is_projective(heads)
        assert stats["non_projective"] == nonproj
    assert report["total"]["sentences"] == sum(s["sentences"] for s in report["files"])
    assert main(["count", str(files[0]), "--per-sentence"]) == 0
    text = capsys.readouterr().out
    assert f"{files[0]}" in text and "optimal_trees" in text


def test_compare_pseudo_optimal_never_loses_more(ud_files, capsys):
    if not os.environ.get("CI"):  # CI installs the test extra, which has spaCy
        pytest.importorskip("spacy")
    files = [str(p) for p in ud_files if "dev" in p.name]
    assert main(["compare-pseudo", *files, "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert {row["treebank"] for row in table} == {p.parent.name for p in ud_files}
    assert all(row["kept_optimal"] >= row["kept_lifting"] for row in table)
    assert sum(row["gain"] for row in table) > 0
    dev = [p for p in ud_files if "dev" in p.name]
    assert sum(row["trees"] for row in table) == sum(len(heads_of(p)) for p in dev)


def test_compare_pseudo_without_spacy_says_how_to_install(monkeypatch, capsys, gothic):
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setitem(sys.modules, "spacy.pipeline._parser_internals", None)
    assert main(["compare-pseudo", str(gothic)]) == 2
    assert "pip install 'semiparse[compare]'" in capsys.readouterr().err


def test_count_with_jobs_and_sentence_prescan(gothic, capsys):
    from semiparse.treebank.conllu import count_sentences

    assert count_sentences(gothic) == len(heads_of(gothic))
    reports = []
    for jobs in ("1", "2"):
        assert main(["count", str(gothic), "--json", "--jobs", jobs]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1]

"""The README's main job: ``semiparse demo`` on its generated sample."""
import os
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semiparse.cli import main
from semiparse.cli.demo import random_tree
from semiparse.treebank.conllu import read_conllu
from semiparse.treebank.projectivity import (
    count_optimal_projectivizations,
    is_projective,
)


@given(n=st.integers(1, 30), seed=st.integers(0, 10**6))
def test_random_tree_is_a_tree_with_one_root_word(n, seed):
    heads = random_tree(n, random.Random(seed))
    assert heads[0] == -1 and sum(1 for h in heads[1:] if h == 0) == 1
    for d in range(1, n + 1):
        seen = set()
        while d != 0:
            assert d not in seen and 0 <= heads[d] <= n
            seen.add(d)
            d = heads[d]


def test_demo_writes_counts_and_an_optimal_projective_treebank(tmp_path, capsys):
    assert main(["demo", "--sentences", "60", "--seed", "3", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "every output tree is projective and optimal" in out
    gold = list(read_conllu(tmp_path / "sample.conllu"))
    new = list(read_conllu(tmp_path / "sample.projective.conllu"))
    assert len(gold) == len(new) == 60
    assert any(not is_projective(s.heads) for s in gold)
    for g, p in zip(gold, new):
        assert is_projective(p.heads)
        kept = sum(1 for d in range(1, len(g.heads)) if g.heads[d] == p.heads[d])
        assert kept == count_optimal_projectivizations(g.heads)[0]


@pytest.mark.parametrize("name", ["sample.conllu", "sample.projective.conllu"])
def test_demo_refuses_an_output_that_is_not_a_regular_file(tmp_path, capsys, name):
    os.mkfifo(tmp_path / name)
    assert main(["demo", "--sentences", "3", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert name in err and "not a regular file" in err
    assert not (tmp_path / "sample.conllu").is_file()


def test_demo_says_when_its_output_directory_is_a_file(tmp_path, capsys):
    """mkdir's 'File exists' did not say what was wrong."""
    target = tmp_path / "out"
    target.write_text("kept\n")
    assert main(["demo", "--sentences", "3", "-o", str(target)]) == 2
    assert capsys.readouterr().err == (f"semiparse demo: error: {target}: not a directory: -o names the "
                                       "directory to write sample.conllu and its projectivization in\n")
    assert target.read_text() == "kept\n"

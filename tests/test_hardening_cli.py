"""Regressions of the treebank commands, bench and demo on inputs that once
crashed them or lost data: each test failed before its fix."""
from semiparse.cli import main

# A non-projective tree (the edge 1 -> 4 crosses 0 -> 2) whose changed
# words carry unusual MISC and DEPS values.
def _sentence(misc1="", deps2="0:root"):
    rows = [
        ("1", "3", "nsubj", "3:nsubj", misc1),
        ("2", "0", "root", deps2, "_"),
        ("3", "2", "obj", "2:obj", "SpaceAfter=No"),
        ("4", "1", "det", "1:det", "_"),
    ]
    return "# sent_id = s1\n" + "".join(
        f"{i}\tw{i}\tw{i}\tX\t_\t_\t{h}\t{rel}\t{deps}\t{misc}\n" for i, h, rel, deps, misc in rows
    ) + "\n"


def test_mark_then_unmark_restores_an_empty_misc(tmp_path):
    """An empty MISC column (not ``_``) marked and unmarked comes back empty."""
    source = tmp_path / "in.conllu"
    source.write_bytes(_sentence(misc1="").encode())
    marked, restored = tmp_path / "marked.conllu", tmp_path / "restored.conllu"
    assert main(["projectivize", "--mark", str(source), "-o", str(marked)]) == 0
    assert marked.read_bytes() != source.read_bytes()
    assert main(["projectivize", "--unmark", str(marked), "-o", str(restored)]) == 0
    assert restored.read_bytes() == source.read_bytes()

"""`semiparse parse` and `semiparse evaluate` on inputs every other command
reads: comment blocks of their own, any line ends, byte order marks, long
head chains, pipes; the model's own heads and labels in the output; the
calibration comments checked whole."""
import json
import os
import re
import sys
import threading

import pytest

from semiparse.cli import main
from semiparse.perceptron import RDAOptions, Trainer, read_trees

from support import BOM, check_parse_output, predictions


@pytest.fixture(scope="module")
def greek(shared_data):
    """The first blocks of the Greek dev file as read (comments included)."""
    raw = (shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu").read_bytes()
    return [block + b"\n\n" for block in raw.split(b"\n\n")[:12]]


@pytest.fixture(scope="module")
def model_path(shared_data, tmp_path_factory):
    """A real model (rda, so that --probabilities means something): one epoch
    on a few short Greek training sentences."""
    trees = [t for t in read_trees(shared_data / "ud" / "UD_Greek-GDT" / "el_gdt-ud-train.conllu")
             if len(t) <= 20][:40]
    model = Trainer(system="arc_standard", oracle="dynamic", options=RDAOptions(), epochs=1, seed=3,
                    progress=False).run(trees, nonproj="projectivize")
    path = tmp_path_factory.mktemp("model") / "greek.npz"
    model.save(path)
    return path


def sentence(forms, heads, labels, eol="\n", extra=()):
    """A sentence's lines (the ``extra`` lines first) joined by ``eol``."""
    lines = list(extra) + [f"{d}\t{form}\t{form.lower()}\tNOUN\t_\t_\t{head}\t{label}\t_\t_"
                           for d, (form, head, label) in enumerate(zip(forms, heads, labels), 1)]
    return eol.join(lines) + eol


# -- parse: every byte but HEAD and DEPREL (item 3), the model's own values (item 7) --

LINE_ENDS = {"lf": ["\n"], "crlf": ["\r\n"], "cr": ["\r"], "mixed": ["\r", "\n", "\r\n"]}


@pytest.mark.parametrize("ends", sorted(LINE_ENDS))
@pytest.mark.parametrize("final_blank", [True, False])
def test_parse_keeps_comment_blocks_and_line_ends(model_path, tmp_path, ends, final_blank):
    eols = LINE_ENDS[ends]
    lines = ["# newdoc id = d1", "", "# sent_id = 1", "# text = Ο σκύλος τρέχει",
             "1\tΟ\tο\tDET\t_\t_\t_\t_\t_\t_",
             "2\tσκύλος\tσκύλος\tNOUN\t_\tCase=Nom\t_\t_\t_\tSpaceAfter=No",
             "2.1\tείναι\tείμαι\tAUX\t_\t_\t_\t_\t2:cop\t_",
             "3-4\tτρέχει,\t_\t_\t_\t_\t_\t_\t_\t_",
             "3\tτρέχει\tτρέχω\tVERB\t_\t_\t_\t_\t_\t_",
             "4\t,\t,\tPUNCT\t_\t_\t_\t_\t_\t_", "", "",
             "# newpar", "", "# sent_id = 2", "1\tναι\tναι\tINTJ\t_\t_\t0\troot\t_\t_", "",
             "# a comment block at the end"]
    text = "".join(line + eols[i % len(eols)] for i, line in enumerate(lines))
    if final_blank:
        text += eols[0]
    given = BOM + text.encode()
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_bytes(given)
    assert main(["parse", str(model_path), str(src), "-o", str(out), "--quiet"]) == 0
    check_parse_output(given, out.read_bytes(), predictions(model_path, src))


@pytest.mark.parametrize("blank", [True, False])
def test_parse_output_carries_the_models_heads_and_labels(model_path, greek, tmp_path, blank):
    """The model's HEAD and DEPREL replace the input's (gold ones, or ``_``);
    the other columns and the comments are the input's."""
    given = b"".join(greek)
    if blank:  # input to be parsed: no tree, no labels
        given = re.sub(rb"^(\d+(?:\t[^\t\n]*){5})\t[^\t\n]*\t[^\t\n]*\t", rb"\1\t_\t_\t", given, flags=re.M)
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    src.write_bytes(given)
    assert main(["parse", str(model_path), str(src), "-o", str(out), "--quiet"]) == 0
    words = predictions(model_path, src)
    check_parse_output(given, out.read_bytes(), words)
    given_labels = [t.labels[d].encode() for t in read_trees(src, need_heads=False)
                    for d in range(1, len(t) + 1)]
    # the model (one epoch) disagrees with the input on some labels: a copy would fail above
    assert any(label != given for (_, label), given in zip(words, given_labels))


def test_parse_probabilities_replace_an_earlier_parse(model_path, greek, tmp_path, capsys):
    gold, once, twice = tmp_path / "gold.conllu", tmp_path / "once.conllu", tmp_path / "twice.conllu"
    gold.write_bytes(BOM + b"# newdoc\r\n\r\n" + b"".join(greek).replace(b"\n", b"\r\n"))
    for src, out in ((gold, once), (once, twice)):
        assert main(["parse", str(model_path), str(src), "-o", str(out), "--probabilities", "--quiet"]) == 0
    assert once.read_bytes() == twice.read_bytes()
    data = once.read_bytes()
    assert data.startswith(BOM + b"# newdoc\r\n\r\n# semiparse_system = arc_standard\r\n# semiparse_steps = ")
    assert data.count(b"# semiparse_steps = ") == len(greek)
    assert b"\n" not in data.replace(b"\r\n", b"")
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(once), "--calibration", "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert sum(row["count"] for row in scores["calibration"]) == 2 * sum(len(t) for t in read_trees(gold))


# -- evaluate --calibration: the decisions recorded whole (item 5) --------------------

def probabilities_output(model_path, greek, tmp_path):
    gold, out = tmp_path / "gold.conllu", tmp_path / "out.conllu"
    gold.write_bytes(b"".join(greek))
    assert main(["parse", str(model_path), str(gold), "-o", str(out), "--probabilities", "--quiet"]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    index = [i for i, line in enumerate(lines) if line.startswith("# semiparse_steps = ")][1]
    return gold, out, lines, index


@pytest.mark.parametrize("change,reason", [
    (lambda steps: steps[:-1], "the parse is not finished after the"),
    (lambda steps: steps[:1], "the parse is not finished after the 1 steps"),
    (lambda steps: steps + steps[-1:], "is not a valid move"),
])
def test_calibration_refuses_steps_that_are_not_the_whole_parse(model_path, greek, tmp_path, capsys,
                                                                  change, reason):
    gold, out, lines, index = probabilities_output(model_path, greek, tmp_path)
    steps = lines[index].split(" = ", 1)[1].split()
    lines[index] = "# semiparse_steps = " + " ".join(change(steps))
    out.write_text("\n".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(out), "--calibration"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"semiparse evaluate: error: {out}:{index + 1}: ") and reason in err
    assert err.count("\n") == 1


def test_calibration_refuses_a_second_steps_comment(model_path, greek, tmp_path, capsys):
    gold, out, lines, index = probabilities_output(model_path, greek, tmp_path)
    lines.insert(index + 1, lines[index])
    out.write_text("\n".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(out), "--calibration"]) == 2
    err = capsys.readouterr().err
    assert err == (f"semiparse evaluate: error: {out}:{index + 2}: a second 'semiparse_steps' comment "
                   f"in this sentence (the first is at {out}:{index + 1})\n")


# -- evaluate: long chains (item 10), pipes (item 17), what the reader accepts (item 18) --

def chain(n):
    """A valid tree of n words where each word's head is the next word (the
    last is the root): the scorer's recursive walk goes n calls deep."""
    return sentence([f"w{d}" for d in range(1, n + 1)], [d + 1 for d in range(1, n)] + [0],
                    ["dep"] * (n - 1) + ["root"]) + "\n"


@pytest.mark.parametrize("n", [1000, 5000])
def test_evaluate_long_chain(tmp_path, capsys, n):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(chain(n), encoding="utf-8")
    # the system attaches the last word's dependent to the root instead
    system.write_text(chain(n).replace(f"\t{n}\tdep\t", "\t0\tdep\t"), encoding="utf-8")
    limit = sys.getrecursionlimit()
    assert main(["evaluate", str(gold), str(system), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["uas"] == pytest.approx(100 * (n - 1) / n)
    assert main(["evaluate", str(gold), str(gold), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["conll18"]["uas"]["f1"] == 100.0 and scores["conll18"]["uas"]["gold"] == n
    assert sys.getrecursionlimit() == limit


def run_in_thread(argv, fifos, timeout=120):
    """``main(argv)``'s status, run on a thread so that a read that hangs
    fails the test instead of hanging it (None when it did not finish in
    ``timeout`` seconds; a reader still waiting on one of ``fifos`` is then
    given an empty writer, so that the thread ends)."""
    result = []
    worker = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    worker.start()
    worker.join(timeout)
    if not result:
        for _ in range(100):
            for fifo in fifos:
                try:  # succeeds only while a reader waits on it
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
            worker.join(0.1)
        return None
    return result[0]


def feed(fifo, data):
    """A thread that writes ``data`` into ``fifo`` once (as a shell's
    process substitution does)."""
    def write():
        with open(fifo, "wb") as f:
            f.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


GOLD = (sentence(["The", "dog", "barks"], [2, 3, 0], ["det", "nsubj", "root"]) + "\n"
        + sentence(["Cats", "sleep", "."], [2, 0, 2], ["nsubj", "root", "punct"]) + "\n")
SYSTEM = GOLD.replace("1\tThe\tthe\tNOUN\t_\t_\t2\tdet", "1\tThe\tthe\tNOUN\t_\t_\t3\tdet")


def test_evaluate_reads_pipes_once(tmp_path, capsys):
    gold, system = tmp_path / "gold.fifo", tmp_path / "system.fifo"
    os.mkfifo(gold)
    os.mkfifo(system)
    writers = [feed(gold, GOLD.encode()), feed(system, SYSTEM.encode())]
    assert run_in_thread(["evaluate", str(gold), str(system), "--json"], (gold, system)) == 0
    for w in writers:  # each wrote all its data, read once: it ends (it may not have yet)
        w.join(timeout=30)
        assert not w.is_alive()
    scores = json.loads(capsys.readouterr().out)
    assert scores["uas"] == pytest.approx(500 / 6)
    assert scores["conll18"]["uas"]["f1"] == pytest.approx(500 / 6)


def crlf(text):
    return text.replace("\n", "\r\n")


GOLD_VARIANTS = {
    "bom": lambda t: "\ufeff" + t,
    "two blank lines": lambda t: t.replace("\n\n", "\n\n\n"),
    "whitespace separator": lambda t: t.replace("\n\n", "\n \t\n", 1),
    "comment block first": lambda t: "# newdoc id = d1\n\n" + t,
    "comment block between": lambda t: t.replace("\n\n", "\n\n# newpar\n\n", 1),
    "comment block last": lambda t: t + "# end\n",
    "comment between words": lambda t: t.replace("\n2\t", "\n# a note\n2\t", 1),
    "crlf": crlf,
    "cr": lambda t: t.replace("\n", "\r"),
    "no final blank line": lambda t: t.rstrip("\n") + "\n",
    "all of them": lambda t: "\ufeff# newdoc\r\r" + crlf(t.replace("\n\n", "\n\n \n\n# x\n\n")),
}


@pytest.mark.parametrize("variant", sorted(GOLD_VARIANTS))
def test_evaluate_reads_what_every_command_reads(tmp_path, capsys, variant):
    """The official scorer sees such files as the reader does: same scores,
    for a gold file and for a system file."""
    plain_gold, plain_system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    odd_gold, odd_system = tmp_path / "odd-gold.conllu", tmp_path / "odd-system.conllu"
    for path, text in ((plain_gold, GOLD), (plain_system, SYSTEM), (odd_gold, GOLD_VARIANTS[variant](GOLD)),
                       (odd_system, GOLD_VARIANTS[variant](SYSTEM))):
        path.write_bytes(text.encode())
    assert main(["evaluate", str(plain_gold), str(plain_system), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert expected["conll18"] is not None
    for gold, system in ((odd_gold, plain_system), (plain_gold, odd_system), (odd_gold, odd_system)):
        assert main(["evaluate", str(gold), str(system), "--json"]) == 0
        captured = capsys.readouterr()
        assert json.loads(captured.out) == expected and captured.err == ""


def test_scorer_refusals_name_the_line_of_the_file(tmp_path, capsys):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    # two words on the root in the second sentence (file line 8, after a comment block and a note)
    text = "\ufeff# newdoc\n\n" + SYSTEM.replace("\n\n1\tCats", "\n\n# note\n1\tCats").replace(
        "Cats\tcats\tNOUN\t_\t_\t2", "Cats\tcats\tNOUN\t_\t_\t0")
    system.write_text(text, encoding="utf-8")
    assert text.split("\n")[7].startswith("1\tCats")
    assert main(["evaluate", str(gold), str(system)]) == 0
    assert capsys.readouterr().err == (f"semiparse evaluate: note: no CoNLL 2018 metrics: the official "
                                       f"scorer refuses {system}:8: There are 2 roots in a sentence\n")
    assert main(["evaluate", str(system), str(gold)]) == 2
    assert capsys.readouterr().err == (f"semiparse evaluate: error: {system}:8: There are 2 roots "
                                       f"in a sentence\n")


def test_evaluate_sentence_counts_differ_at_a_line(tmp_path, capsys):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    system.write_text(GOLD.split("\n\n")[0] + "\n\n", encoding="utf-8")
    assert main(["evaluate", str(gold), str(system)]) == 2
    assert capsys.readouterr().err == (f"semiparse evaluate: error: {system}:4: the file ends after 1 "
                                       f"sentences, but the gold file has 2 (the next at {gold}:5)\n")
    assert main(["evaluate", str(system), str(gold)]) == 2
    assert capsys.readouterr().err == (f"semiparse evaluate: error: {gold}:5: sentence 2, but the gold "
                                       f"file has 1\n")


def test_evaluate_empty_node_inside_a_multiword_token(tmp_path, capsys):
    """The scorer ignores empty nodes, but inside a multiword token's range it
    takes one for a word (and fails on its HEAD ``_``): it is not given them."""
    gold = tmp_path / "gold.conllu"
    gold.write_text("1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
                    "1\tde\tde\tADP\t_\t_\t2\tcase\t_\t_\n"
                    "1.1\tx\tx\tX\t_\t_\t_\t_\t1:dep\t_\n"
                    "2\tel\tel\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    assert main(["evaluate", str(gold), str(gold), "--json"]) == 0
    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert captured.err == "" and scores["conll18"]["las"]["f1"] == 100.0
    assert scores["conll18"]["las"]["gold"] == 2

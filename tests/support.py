"""What several test modules share besides the brute-force references
(tests/brute_force.py): hypothesis strategies for trees, split grammars and
their inputs, and mutated bytes; the checks of a command's output and
refusal; a walk through a system's configurations; system texts; the
fuzz tests' call that must answer or raise ValueError; the fixture that
shortens check's trial of critical_buffer."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

import semiparse
from semiparse.cli import main
from semiparse.grammar import Grammar, GrammarWarning
from semiparse.perceptron import Model, read_trees
from semiparse.transitions import load_system

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = Path(__file__).resolve().parent / "systems"  # the systems the tests declare
NEG_INF = float("-inf")
BOM = b"\xef\xbb\xbf"


@pytest.fixture
def short_hint_trial(monkeypatch):
    """check's trial of ``critical_buffer = true`` on 20 examples instead of
    HINT_EXAMPLES (2000).  Where a passing system does not declare it, check
    tries the declaration on a check of its own of that many examples
    before it advises it: 10 to 20 s, most of the time of a test that runs
    check on such a system for something else.  The trial still runs;
    whether its advice is right is
    test_grammar_kernel.py::test_check_suggests_the_declaration_where_the_reduction_agrees's
    to check, on the full trial (tests/cli/test_check.py shortens it too)."""
    monkeypatch.setattr("semiparse.testing.checking.HINT_EXAMPLES", 20)


# Inputs every query refuses, each with (a pattern of) its error: a wrong
# shape, NaN, an unknown terminal, nothing, +inf.
BAD_INPUTS = [
    ("sss", np.zeros((2, 2)), "shape"),
    ("sss", np.full((3, 3), np.nan), "NaN"),
    ("sxs", np.zeros((3, 3)), "terminal 'x'"),
    ("", np.zeros((0, 0)), "empty input"),
    ("ss", np.array([[0, np.inf], [0, 0]]), r"\+inf"),
]


# -- strategies -----------------------------------------------------------------------

@st.composite
def trees(draw, min_words=1, max_words=8, single_root=None):
    """Random trees, projective or not: the words in random order, each
    attached to the root or to a word placed before it; with ``single_root``
    (drawn when None) only the first word attaches to the root."""
    n = draw(st.integers(min_words, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    single = draw(st.booleans()) if single_root is None else single_root
    heads = [-1] * (n + 1)
    placed = [0]
    for d in order:
        choices = placed[1:] if single and len(placed) > 1 else placed
        heads[d] = draw(st.sampled_from(choices))
        placed.append(d)
    return heads


STATES, TYPES, TERMS = ("X", "Y"), ("A", "B"), ("a", "b")


@st.composite
def split_grammars(draw):
    """Random well-formed split grammars over two states, types and terminals.

    Rules that use a symbol no kept rule defines are dropped (to a fixpoint),
    and the start symbol A always finishes from terminal a's initial states.
    """
    pre = {t: (draw(st.sampled_from(STATES)), draw(st.sampled_from(STATES))) for t in TERMS}
    pick = lambda options: draw(st.lists(st.sampled_from(options), unique=True, max_size=4))  # noqa: E731
    fin = set(pick([("finish", a, b, c) for a in TYPES for b in STATES for c in STATES]))
    fin.add(("finish", "A", *pre["a"]))
    rules = fin | set(pick([("left", b2, a, b) for b2 in STATES for a in TYPES for b in STATES]))
    rules |= set(pick([("right", c2, c, a) for c2 in STATES for c in STATES for a in TYPES]))
    while True:
        lefts = {b for b, _ in pre.values()} | {r[1] for r in rules if r[0] == "left"}
        rights = {c for _, c in pre.values()} | {r[1] for r in rules if r[0] == "right"}
        types = {r[1] for r in rules if r[0] == "finish"}
        kept = {r for r in rules if
                (r[0] == "finish" and r[2] in lefts and r[3] in rights)
                or (r[0] == "left" and r[2] in types and r[3] in lefts)
                or (r[0] == "right" and r[2] in rights and r[3] in types)}
        if kept == rules:
            break
        rules = kept
    form = {"finish": "{} -> ({}, {})", "left": "({}, _) -> {} ({}, _)",
            "right": "(_, {}) -> (_, {}) {}"}
    text = "\n".join(["start A"] + [f"({b}, {c}) -> {t}" for t, (b, c) in pre.items()]
                     + [form[r[0]].format(*r[1:]) for r in sorted(rules)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GrammarWarning)
        return Grammar.from_text(text, "random.grammar")


@st.composite
def inputs(draw, grammar, max_len=5, allow_forbidden=True):
    n1 = draw(st.integers(1, max_len))
    terms = draw(st.lists(st.sampled_from(sorted(grammar.terminals)), min_size=n1, max_size=n1))
    values = [0.0, 1.0, 2.0] + ([NEG_INF] if allow_forbidden else [])
    flat = draw(st.lists(st.sampled_from(values), min_size=n1 * n1, max_size=n1 * n1))
    return terms, np.array(flat).reshape(n1, n1)


@st.composite
def grammar_and_input(draw, max_len=5):
    g = draw(split_grammars())
    return g, *draw(inputs(g, max_len))


SCORES = [0.0, 0.5, 1.0, 2.0, NEG_INF]


@st.composite
def labelled_cases(draw, max_len=4, max_labels=3, labelled=True):
    """A random split grammar, terminals and weights ``(n1, n1, L)`` (or
    ``(n1, n1)``), with values of the same shape."""
    g = draw(split_grammars())
    n1 = draw(st.integers(1, max_len))
    terms = draw(st.lists(st.sampled_from(sorted(g.terminals)), min_size=n1, max_size=n1))
    shape = (n1, n1, draw(st.integers(1, max_labels))) if labelled else (n1, n1)
    size = int(np.prod(shape))
    w = np.array(draw(st.lists(st.sampled_from(SCORES), min_size=size, max_size=size)))
    values = np.array(draw(st.lists(st.sampled_from([-1.0, 0.0, 1.0, 3.0]),
                                    min_size=size, max_size=size)))
    return g, terms, w.reshape(shape), values.reshape(shape)


INSERTS = [b"(", b")", b" ", b"\n", b"\r", b"\r\n", b"\xe9", b"\xff", b"\xc3", b"\x80", b"\x00",
           b"-NONE-", b"( ", b"x", b"\t"]


@st.composite
def mutated(draw, blocks, max_edits=4):
    """Bytes of one to three consecutive ``blocks`` with up to ``max_edits``
    edits: characters or lines dropped, duplicated, swapped; bytes inserted
    (brackets, spaces, invalid UTF-8); line endings changed."""
    start = draw(st.integers(0, len(blocks) - 1))
    data = b"".join(blocks[start:start + draw(st.integers(1, 3))])
    for _ in range(draw(st.integers(1, max_edits))):
        edit = draw(st.sampled_from(["drop", "dup", "swap", "insert", "lines", "endings"]))
        k = draw(st.integers(0, max(len(data) - 1, 0)))
        if edit == "drop":
            data = data[:k] + data[k + draw(st.integers(1, 3)):]
        elif edit == "dup":
            data = data[:k] + data[k:k + 1] + data[k:]
        elif edit == "swap":
            data = data[:k] + data[k + 1:k + 2] + data[k:k + 1] + data[k + 2:]
        elif edit == "insert":
            data = data[:k] + draw(st.sampled_from(INSERTS)) + data[k:]
        elif edit == "lines":
            lines = data.split(b"\n")
            j = draw(st.integers(0, len(lines) - 1))
            how = draw(st.sampled_from(["drop", "dup", "swap"]))
            if how == "drop":
                del lines[j]
            elif how == "dup":
                lines.insert(j, lines[j])
            elif j + 1 < len(lines):
                lines[j], lines[j + 1] = lines[j + 1], lines[j]
            data = b"\n".join(lines)
        else:
            data = data.replace(b"\n", draw(st.sampled_from([b"\r\n", b"\r", b"\n\n"])))
    return data


# -- commands and their outputs --------------------------------------------------------

REFUSED = object()  # what value_error_or_result gives for a ValueError


def value_error_or_result(call, *args, **kwargs):
    """``call(*args, **kwargs)``'s result, or :data:`REFUSED` when it raises
    ValueError; any other exception propagates (the API must answer or say
    ValueError).  A result that comes back is for the caller to check
    against a reference (brute force, the generic engine, the exhaustive
    oracle): answering is not enough."""
    try:
        return call(*args, **kwargs)
    except ValueError:
        return REFUSED


def one_shot(*values):
    """Is one of ``values`` an iterator (a generator), spent by the first call
    that reads it, so that a reference cannot be given the same input?"""
    return any(hasattr(v, "__next__") for v in values)


def cli_error(capsys, argv):
    """Run the CLI expecting exit 2 with exactly one line on stderr; return it."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def predictions(model_path, path):
    """``(HEAD, DEPREL)`` as bytes for every word of the file, in order, by
    the Python API."""
    model = Model.load(model_path)
    out = []
    for tree in read_trees(path, need_heads=False):
        heads, labels, _ = model.parse(tree)
        out += [(str(heads[d]).encode(), labels[d].encode()) for d in range(1, len(tree) + 1)]
    return out


def check_parse_output(given, written, words):
    """Every line of ``written`` is the line of ``given`` with, on word lines,
    HEAD and DEPREL the model's (``words``, in order); every other byte equal."""
    lines_in, lines_out = given.splitlines(keepends=True), written.splitlines(keepends=True)
    assert len(lines_in) == len(lines_out)
    k = 0
    for number, (line, out) in enumerate(zip(lines_in, lines_out), 1):
        bom = BOM if number == 1 and line.startswith(BOM) else b""
        body = line[len(bom):].rstrip(b"\r\n")
        cols = body.split(b"\t")
        if len(cols) == 10 and cols[0].isdigit():
            head, label = words[k]
            k += 1
            line = bom + b"\t".join(cols[:6] + [head, label] + cols[8:]) + line[len(bom) + len(body):]
        assert out == line, number
    assert k == len(words)


# -- transition systems ---------------------------------------------------------------

def walk(spec, n, choices):
    """Follow random transitions with the API and with the system's tuple
    interface side by side; return the configurations visited."""
    system = semiparse.system(spec)
    py = load_system(spec)
    config = system.initial(n)
    stack, buffer, arcs = py.initial(n)
    visited = []
    for choice in choices:
        visited.append(config)
        assert (config.stack, config.buffer, config.arcs) == (stack, buffer, arcs)
        assert config.is_final() == py.is_final(stack, buffer, arcs)
        legal = py.legal(stack, buffer, arcs)
        assert sorted(config.legal()) == sorted(legal)
        if not legal:
            break
        name = legal[choice % len(legal)]
        before = (config.stack, config.buffer, config.arcs)
        following = config.apply(name, label=choice % 7)
        assert (config.stack, config.buffer, config.arcs) == before  # unchanged
        stack, buffer, arcs, edge = py.apply(stack, buffer, arcs, name)
        if edge is not None:
            assert following.labels[edge[1]] == choice % 7
        config = following
    return visited


# A system that loops: arc-standard with a transition that undoes shift.
SHIFT = '''
[[transition]]
name = "shift"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0", "b"]
buffer_after = ["*"]
'''

# Its left_arc requires the top headless: tests add transitions that head
# stack nodes, and the loader refuses an edge whose head may descend from its
# dependent.
ARC_STANDARD = '''name = "looping"
final = { stack = "root", buffer = "empty" }
''' + SHIFT + '''
[[transition]]
name = "left_arc"
stack = ["*", "s1", "s0"]
require = ["s1 != root", "s1 has no head", "s0 has no head"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s1"

[[transition]]
name = "right_arc"
stack = ["*", "s1", "s0"]
require = ["s0 has no head"]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"
'''

UNSHIFT = '''
[[transition]]
name = "unshift"
stack = ["*", "s0"]
require = ["s0 != root"]
stack_after = ["*"]
buffer_after = ["s0", "*"]
'''


def late_loop(folder):
    """A system file in ``folder``: arc-standard with an unshift that needs 6
    stack nodes, so that shift and unshift undo each other only on sentences
    of 5 words or more, beyond the loader's search for cycles: it loads."""
    from semiparse.resources import data_dir

    text = (data_dir("systems") / "arc_standard.toml").read_text()
    text = text.replace('static_order = ["left_arc", "right_arc", "shift"]',
                        'static_order = ["left_arc", "right_arc", "shift", "unshift"]')
    text = text.replace("[completion]", UNSHIFT.replace(
        'require = ["s0 != root"]', 'require = ["stack size >= 6", "s0 != root"]') + "\n[completion]")
    (folder / "arc_standard.grammar").write_text(
        (data_dir("grammars") / "arc_standard.grammar").read_text())
    path = folder / "late_loop.toml"
    path.write_text(text)
    load_system(str(path))
    return path


@st.composite
def random_system_texts(draw, shapes, dependent_headless=False, finals=("root", "any")):
    """A small declared system as TOML: shift (first, so that it can start)
    and one to three transitions, each of one of ``shapes``: ``(stack,
    buffer, stack_after, buffer_after, edges)``, its named nodes and the edges
    (``"h -> d"``, None for none) it may add.  Each node it matches may be
    required to have a head or none; with ``dependent_headless`` its edge's
    dependent must have none (the loader refuses a second head).  The final
    stack is one of ``finals``."""
    final = draw(st.sampled_from(finals))
    parts = [f'name = "random"\nfinal = {{ stack = "{final}", buffer = "empty" }}\n'
             '[[transition]]\nname = "shift"\nstack = ["*", "s0"]\nbuffer = ["b", "*"]\n'
             'stack_after = ["*", "s0", "b"]\nbuffer_after = ["*"]\n']
    for k in range(draw(st.integers(1, 3))):
        stack, buffer, stack_after, buffer_after, edges = draw(st.sampled_from(shapes))
        edge = draw(st.sampled_from(edges))
        dependent = edge.split()[-1] if edge and dependent_headless else None
        require = [f"{x} != root" for x in stack]
        for x in stack + buffer:
            kind = "has no head" if x == dependent else draw(
                st.sampled_from([None, "has head", "has no head"]))
            if kind:
                require.append(f"{x} {kind}")
        parts.append(f'[[transition]]\nname = "t{k}"\nstack = {json.dumps(["*"] + stack)}\n'
                     f'buffer = {json.dumps(buffer + ["*"])}\nrequire = {json.dumps(require)}\n'
                     f'stack_after = {json.dumps(["*"] + stack_after)}\n'
                     f'buffer_after = {json.dumps(buffer_after + ["*"])}\n'
                     + (f'edge = "{edge}"\n' if edge else ""))
    return "".join(parts)

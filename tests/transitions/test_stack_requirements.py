"""Requirements on the size of the stack (``stack empty``, ``stack size >=,
<=, == K``) and whole-stack patterns (``stack = []``, ``stack = ["s1",
"s0"]``): the compiled machine and the Python rules agree on random walks,
a whole-stack pattern means the same as ``"*"`` with ``stack size == K``,
contradictions are refused with the line, and the root-at-the-end systems
that use them have no dead end."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.testing.checking import check
from semiparse.transitions.systems.loading import system_from_text
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import walk

SIZES = '''
name = "sizes"
initial = {{ root = "{root}" }}
final = {{ stack = "any", buffer = "empty" }}

[[transition]]
name = "shift"
stack = ["*"]
buffer = ["b", "*"]
require = ["stack size <= 2"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "shift_alone"
stack = {alone}
buffer = ["b", "*"]
require = ["b != root"{alone_require}]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "left_arc"
stack = ["*", "s1", "s0"]
require = ["s1 != root", "s1 has no head"]
stack_after = ["*", "s0"]
buffer_after = ["*"]
edge = "s0 -> s1"

[[transition]]
name = "right_arc"
stack = {pair}
require = ["s0 has no head"{pair_require}]
stack_after = ["*", "s1"]
buffer_after = ["*"]
edge = "s1 -> s0"

[[transition]]
name = "pop"
stack = ["*", "s0"]
require = ["stack size == 3", "s0 has head"]
stack_after = ["*"]
buffer_after = ["*"]
'''


def sizes(root, whole):
    """The test system, with whole-stack patterns or their "*" equivalents."""
    alone, alone_require = ('[]', '') if whole else ('["*"]', ', "stack empty"')
    pair, pair_require = ('["s1", "s0"]', '') if whole else ('["*", "s1", "s0"]', ', "stack size == 2"')
    return SIZES.format(root=root, alone=alone, alone_require=alone_require, pair=pair,
                        pair_require=pair_require)


@pytest.fixture(scope="module", params=["none", "buffer_end"])
def files(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"sizes_{request.param}")
    out = []
    for whole in (True, False):
        path = folder / f"sizes_{whole}.toml"
        path.write_text(sizes(request.param, whole).replace('"sizes"', f'"sizes_{whole}"'))
        out.append(str(path))
    return out


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 6), choices=st.lists(st.integers(0, 1000), max_size=30))
def test_the_machine_and_the_rules_agree_and_whole_patterns_are_sizes(files, n, choices):
    whole, starred = (walk(path, n, choices) for path in files)
    for a, b in zip(whole, starred):
        assert (a.stack, a.buffer, a.arcs) == (b.stack, b.buffer, b.arcs)
        assert a.legal() == b.legal()
        assert len(a.stack) <= 3
        if "shift_alone" in a.legal():
            assert not a.stack
        if "right_arc" in a.legal():
            assert len(a.stack) == 2
        if "pop" in a.legal():
            assert len(a.stack) == 3


@pytest.mark.parametrize("require, reason", [
    (["stack size >= 3", "stack size <= 2"], "the stack holds at least 3 and at most 2 nodes"),
    (["stack empty"], "the stack holds at least 1 and at most 0 nodes"),
    (["stack size == x"], "bad require 'stack size == x'"),
    (["stack size < 2"], "bad require 'stack size < 2'"),
])
def test_contradictory_or_malformed_sizes_are_refused_with_the_line(require, reason):
    text = sizes("none", True).replace('require = ["stack size == 3", "s0 has head"]',
                                        f"require = {require!r}".replace("'", '"'))
    with pytest.raises(SystemFileError, match=f"x.toml:\\d+: transition pop: .*{reason}"):
        system_from_text(text, "x.toml")


def test_a_stack_pattern_with_star_inside_is_refused():
    text = sizes("none", True).replace('stack = ["s1", "s0"]', 'stack = ["s1", "*", "s0"]')
    with pytest.raises(SystemFileError, match=r"x.toml:\d+: transition right_arc: stack pattern must "
                                               r"be \["):
        system_from_text(text, "x.toml")


@pytest.mark.parametrize("name", ["arc_hybrid_root_end", "arc_eager_root_end"])
def test_root_at_the_end_systems_have_no_dead_end(name):
    (result,) = check(name, examples=200, max_n=7, seed=3)
    assert result.ok and result.dead_ends == 0
    assert semiparse.system(name).initial(0).legal() == ["shift_root"]


def _edited(tmp_path, name, edits):
    """A copy of the shipped system ``name`` with ``edits`` (old, new) made,
    as a file of another name (its completion grammar is the shipped one)."""
    from semiparse.resources import data_dir

    text = (data_dir("systems") / f"{name}.toml").read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / f"mine_{name}.toml"
    path.write_text(text.replace(f'name = "{name}"', f'name = "mine_{name}"'))
    return str(path)


# Whole-stack (whole-buffer) forms after, where nothing can be under (behind)
# the pattern: shift_root of the root-at-end arc-hybrid matches the empty
# stack, the unshift moves of arc_eager_single_root require an empty buffer.
WHOLE_AFTER = {
    "arc_hybrid_root_end": [('stack = []\nbuffer = ["b", "*"]\nrequire = ["b == root"]\n'
                             'stack_after = ["*", "b"]',
                             'stack = []\nbuffer = ["b", "*"]\nrequire = ["b == root"]\n'
                             'stack_after = ["b"]')],
    "arc_eager_single_root": [('require = ["buffer empty", "s0 has no head"]\n'
                               'stack_after = ["*", "s1"]\nbuffer_after = ["*"]',
                               'require = ["buffer empty", "s0 has no head"]\n'
                               'stack_after = ["*", "s1"]\nbuffer_after = []')],
}


@pytest.mark.parametrize("name", sorted(WHOLE_AFTER))
def test_whole_forms_after_mean_the_starred_ones_where_the_rest_is_empty(tmp_path, name):
    """docs/oracles.md said stack_after and buffer_after take the whole-stack
    form "likewise", but stack_after = ["b"] was refused ('must be ["*",
    names...]').  Where the rule's pattern leaves no rest, the form after
    says the same as the starred one: the same rules, machine, oracle and
    check."""
    whole = _edited(tmp_path, name, WHOLE_AFTER[name])
    starred = _edited(tmp_path, name, [])
    a, b = semiparse.system(whole).definition, semiparse.system(starred).definition
    assert [(r.name, r.stack_after, r.buffer_after) for r in a._rules] == [
        (r.name, r.stack_after, r.buffer_after) for r in b._rules]
    heads = (-1, 2, 0, 2, 3, 3)
    oracles = [semiparse.system(p).oracle(method="grammar") for p in (whole, starred)]
    for choices in ([0] * 12, [1, 0, 2, 1, 0, 0, 3, 1, 0, 2, 0, 1], list(range(12))):
        for c, d in zip(walk(whole, 5, choices), walk(starred, 5, choices)):
            assert (c.stack, c.buffer, c.arcs, c.legal()) == (d.stack, d.buffer, d.arcs, d.legal())
            assert oracles[0].scores(c, heads) == oracles[1].scores(d, heads)
    (result,) = check(whole, examples=60, max_n=5)
    assert result.ok


@pytest.mark.parametrize("old, new, reason", [
    ('require = ["s1 != root", "s1 has no head"]\nstack_after = ["*", "s0"]',
     'require = ["s1 != root", "s1 has no head"]\nstack_after = ["s0"]',
     r'transition left_arc: stack_after = \["s0"\] without "\*" says the stack after holds '
     r'exactly s0, but the stack pattern \["\*", "s1", "s0"\] matches a stack with more nodes '
     r'under them, which the rule would drop: write \["\*", "s0"\]'),
    ('require = ["stack size == 3", "s0 has head"]\nstack_after = ["*"]\nbuffer_after = ["*"]',
     'require = ["stack size == 3", "s0 has head"]\nstack_after = ["*"]\nbuffer_after = []',
     r'transition pop: buffer_after = \[\] without "\*" says the buffer after holds exactly '
     r'nothing, but the buffer pattern \["\*"\] matches a buffer with more nodes behind them, '
     r'which the rule would drop: write \["\*"\], or require "buffer empty"'),
    ('stack_after = ["*", "s1"]', 'stack_after = ["s1", "*"]',
     r'transition right_arc: stack_after must be \["\*", names...\], or \[names...\] for the '
     r'whole stack'),
])
def test_a_whole_form_after_that_would_drop_nodes_is_refused_saying_why(old, new, reason):
    text = sizes("none", False)
    assert old in text
    with pytest.raises(SystemFileError, match=r"x.toml:\d+: " + reason):
        system_from_text(text.replace(old, new), "x.toml")

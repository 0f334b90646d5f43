"""What a declared system's rules imply of the heads, which ``validate`` and
the searches' memo keys rely on, is derived from the rules.

- arc-eager with a ``pop2`` that removes ``s1`` from under a headed ``s0``
  and arc-eager with a ``right_arc2`` whose edge ``s1 -> b`` pushes ``b``
  above ``s0`` reach stack nodes whose head is not the node below them; an
  arc-eager whose ``attach`` keeps its dependent in the buffer reaches headed
  buffer nodes; a system without a root token whose ``right_arc`` pushes
  headed words needs the arcs for the root's final edges.  Each loads, and
  on the configurations it reaches ``scores`` equals the row of
  ``scores_batch`` and the exhaustive search (C and Python) equals a search
  keyed on whole configurations; ``pop2``'s completion grammar and
  projective form pass ``check``;
- a declared ``invariants.stack_heads`` that the rules do not imply is
  refused at load time with FILE:LINE naming the transition that breaks it
  (arc-eager declaring "none"; the ``pop2`` system declaring "below"),
  also by ``semiparse check``; one they imply loads (arc-hybrid declaring
  "below", true as no stack node has a head);
- the shipped and test systems keep their invariants, hence the fast path
  of ``validate`` and their search keys;
- random legal walks on those systems and the ones above never reach a
  configuration that ``validate`` refuses, and random small systems the
  loader accepts never reach one either, and their exhaustive search keys
  merge no configurations with different values.
"""
import functools
import re
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import tree_tops
from semiparse.resources import data_dir
from semiparse.testing import gold_trees
from semiparse.testing.checking import check
from semiparse.transitions.oracles.exhaustive import Search
from semiparse.transitions.systems.loading import load_system, system_from_text
from semiparse.transitions.systems.format.rules import head_not_below, headed_on_stack
from semiparse.transitions.systems.format.system_file import SystemFileError

from support import SYSTEMS, cli_error, random_system_texts

NEG_INF = float("-inf")
SHIPPED = data_dir("systems")
EAGER = (SHIPPED / "arc_eager.toml").read_text(encoding="utf-8")
ORDER = 'static_order = ["left_arc", "right_arc", "reduce", "shift"]'
# arc-eager's transitions and strategy, without its completion
EAGER_RULES = (EAGER[:EAGER.index("# The string starts with a virtual node")]
               + '[strategy.none]\ndescription = "every computation"\n')

POP2 = EAGER.replace(ORDER, ORDER.replace('"shift"]', '"shift", "pop2"]')).replace(
    '[[transition]]\nname = "reduce"', '''[[transition]]
name = "pop2"
stack = ["*", "s1", "s0"]
buffer = ["*"]
require = ["s1 has head", "s0 has head"]
stack_after = ["*", "s0"]
buffer_after = ["*"]

[[transition]]
name = "reduce"''')
RIGHT_ARC2 = EAGER_RULES.replace(ORDER, ORDER.replace('"shift"]', '"shift", "right_arc2"]')).replace(
    "[strategy.none]", '''[[transition]]
name = "right_arc2"
stack = ["*", "s1", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s1", "s0", "b"]
buffer_after = ["*"]
edge = "s1 -> b"

[strategy.none]''')
# attach heads the buffer front and keeps it there; no edge may then give it
# another head, or make it the head of its head
ATTACH = EAGER_RULES.replace(ORDER, ORDER.replace('"shift"]', '"shift", "attach"]')).replace(
    'require = ["s0 != root", "s0 has no head"]',
    'require = ["s0 != root", "s0 has no head", "b has no head"]').replace(
    'name = "right_arc"\nstack = ["*", "s0"]\nbuffer = ["b", "*"]\n',
    'name = "right_arc"\nstack = ["*", "s0"]\nbuffer = ["b", "*"]\nrequire = ["b has no head"]\n'
).replace("[strategy.none]", '''[[transition]]
name = "attach"
stack = ["*", "s0"]
buffer = ["b", "*"]
require = ["b has no head"]
stack_after = ["*", "s0"]
buffer_after = ["b", "*"]
edge = "s0 -> b"

[strategy.none]''')
# no root token and no requirement: the words left headless on the stack,
# and only those, become the root's children
PUSH_NO_ROOT = '''name = "push_no_root"
initial = { root = "none" }
final = { stack = "any", buffer = "empty" }

[[transition]]
name = "shift"
stack = ["*"]
buffer = ["b", "*"]
stack_after = ["*", "b"]
buffer_after = ["*"]

[[transition]]
name = "right_arc"
stack = ["*", "s0"]
buffer = ["b", "*"]
stack_after = ["*", "s0", "b"]
buffer_after = ["*"]
edge = "s0 -> b"

[strategy.none]
description = "every computation"
'''
INVARIANT = 'final = { stack = "any", buffer = "empty" }\n'
TEXTS = {"pop2": POP2, "right_arc2": RIGHT_ARC2, "attach": ATTACH, "push_no_root": PUSH_NO_ROOT}


def _system(key):
    return system_from_text(TEXTS[key], f"{key}.toml")


def _line(text, key):
    """Line (1-based) of the first line of ``text`` that starts with ``key``."""
    return text[:text.index(f"\n{key}") + 1].count("\n") + 1


def _reachable(system, n):
    """Every configuration reachable from ``initial(n)`` (breadth first)."""
    start = system.initial(n)
    seen, todo = {start}, deque([start])
    while todo:
        config = todo.popleft()
        for _, stack, buffer, arcs, _ in system.successors(*config):
            if (stack, buffer, arcs) not in seen:
                seen.add((stack, buffer, arcs))
                todo.append((stack, buffer, arcs))
    return seen


def _reference(system, heads):
    """``scores(stack, buffer, arcs)`` by a search whose memo is keyed on the
    whole configuration, arcs included."""
    @functools.lru_cache(maxsize=None)
    def best(stack, buffer, arcs):
        if system.is_final(stack, buffer, arcs):
            return sum(heads[d] == h for h, d in system.final_edges(stack, buffer, arcs))
        return max((value(*step[1:]) for step in system.successors(stack, buffer, arcs)),
                   default=NEG_INF)

    def value(stack, buffer, arcs, edge):
        gain = edge is not None and heads[edge[1]] == edge[0]
        return int(gain) + best(stack, buffer, arcs)

    return lambda stack, buffer, arcs: {t: value(s, b, a, e) for t, s, b, a, e
                                        in system.successors(stack, buffer, arcs)}


def _same_searches(system, heads, configs):
    """The C and the Python exhaustive search equal :func:`_reference` on ``configs``."""
    reference = _reference(system, tuple(heads))
    searches = [Search(system, heads, "none", compiled=c) for c in (True, False)]
    for stack, buffer, arcs in configs:
        expected = reference(stack, buffer, arcs)
        for search in searches:
            assert search.scores(stack, buffer, arcs) == expected, (stack, buffer, arcs)


def _scores_and_row(system, config, heads, method):
    """``scores`` of ``config`` by ``method``, the same as its row of ``scores_batch``."""
    oracle = semiparse.oracle(system, method=method)
    scores = oracle.scores(config, heads)
    row = oracle.scores_batch([config], [heads])[0]
    assert {t: row[i] for i, t in enumerate(oracle.transitions) if row[i] > NEG_INF} == {
        t: v for t, v in scores.items() if v > NEG_INF}
    assert all(row[i] == NEG_INF for i, t in enumerate(oracle.transitions) if t not in scores)
    return scores


# -- the systems of the sweep ------------------------------------------------------------

@pytest.mark.parametrize("key, steps, stack, arcs, expected", [
    ("pop2", ["right_arc", "right_arc", "pop2"], (0, 2), (-1, 0, 1, -1),
     {"shift": 0, "right_arc": 1, "reduce": 0}),
    ("right_arc2", ["shift", "right_arc2"], (0, 1, 2), (-1, -1, 0, -1),
     {"shift": 0, "right_arc": 1, "reduce": 0, "right_arc2": 0}),
])
def test_a_stack_node_headed_from_elsewhere_validates(key, steps, stack, arcs, expected):
    system = _system(key)
    config = semiparse.system(system).initial(3)
    for t in steps:
        config = config.apply(t)
    assert (config.stack, config.buffer, config.arcs) == (stack, (3,), arcs)
    assert system.validate(stack, (3,), arcs, 3) == (stack, (3,), arcs)
    heads = [-1, 0, 1, 2]
    methods = ["exhaustive"] + (["grammar", "projective_masked"] if key == "pop2" else [])
    for method in methods:
        assert _scores_and_row(system, config, heads, method) == expected, method
    _same_searches(system, heads, _reachable(system, 3))
    assert (system.stack_heads, system.buffer_heads) == ("any", False)


def test_the_pop2_system_passes_check(tmp_path):
    path = tmp_path / "pop2.toml"
    path.write_text(POP2)
    for method in ("grammar", "projective_masked"):
        [result] = check(str(path), examples=300, max_n=6, method=method)
        assert result.ok, (method, result.mismatch)


def test_a_headed_node_whose_head_has_left_the_string_takes_no_credit():
    """After pop2, node 2 is headed by 1, which is gone: no completion may
    credit it its gold head 0 (the grammar path once did, in C and in
    Python, as 2 takes 0 as head in the completion string)."""
    system = _system("pop2")
    config = semiparse.system(system).initial(3).apply("right_arc").apply("right_arc")
    config = config.apply("pop2")
    heads = [-1, 0, 0, 0]
    expected = {"shift": 0, "right_arc": 0, "reduce": 1}
    for method in ("exhaustive", "grammar", "projective_masked"):
        assert _scores_and_row(system, config, heads, method) == expected, method


def test_headed_buffer_nodes_validate_and_key_the_search():
    system = _system("attach")
    config = semiparse.system(system).initial(3).apply("attach")
    assert (config.stack, config.buffer, config.arcs) == ((0,), (1, 2, 3), (-1, 0, -1, -1))
    assert _scores_and_row(system, config, [-1, 0, 1, 2], "exhaustive") == {"shift": 2}
    # the initial configuration and the one after attach differ in arcs only
    assert system.search_key(*system.initial(3)) != system.search_key(
        config.stack, config.buffer, config.arcs)
    for heads in ([-1, 0, 1, 2], [-1, 2, 0, 2], [-1, 3, 3, 0]):
        _same_searches(system, heads, _reachable(system, 3))
    assert (system.stack_heads, system.buffer_heads) == ("any", True)


def test_without_a_root_token_headed_stack_nodes_need_the_arcs():
    system = _system("push_no_root")
    config = semiparse.system(system).initial(2).apply("shift")
    # right_arc heads 2 by 1: only 1 is left headless, for the root
    assert _scores_and_row(system, config, [-1, 0, 0], "exhaustive") == {
        "shift": 2, "right_arc": 1}
    after = config.apply("right_arc")
    assert system.validate(after.stack, after.buffer, after.arcs, 2) == (
        (1, 2), (), (-1, -1, 1))
    _same_searches(system, [-1, 0, 0], _reachable(system, 2))
    assert (system.stack_heads, system.needs_arcs) == ("below", True)


# -- invariants.stack_heads -------------------------------------------------------------

@pytest.mark.parametrize("text, claim, reason", [
    (EAGER, "none", "transition right_arc can leave a node with a head on the stack: b, the "
                    "dependent of its edge s0 -> b"),
    (POP2, "below", "transition pop2 can leave a stack node whose head is not the node just "
                    "below it: s0, which may have a head, the node below it (s1), ends above "
                    "the rest of the stack"),
    (RIGHT_ARC2, "below", "transition right_arc2 can leave a stack node whose head is not the "
                          "node just below it: b, the dependent of its edge s1 -> b, ends "
                          "above s0"),
], ids=["eager-none", "pop2-below", "right_arc2-below"])
def test_a_declared_invariant_the_rules_break_is_refused(tmp_path, capsys, text, claim, reason):
    path = tmp_path / "x.toml"
    text = text.replace(INVARIANT, f'{INVARIANT}invariants = {{ stack_heads = "{claim}" }}\n')
    path.write_text(text)
    message = (f"{path}:{_line(text, 'invariants')}: invariants.stack_heads = {claim!r} does "
               f"not follow from the transitions: {reason}")
    for load in (load_system, semiparse.system, semiparse.oracle):
        with pytest.raises(SystemFileError) as info:
            load(str(path))
        assert str(info.value) == message
    assert cli_error(capsys, ["check", str(path), "--examples", "30"]).strip() == (
        f"semiparse check: error: {message}")


def test_a_declared_invariant_the_rules_imply_loads_and_an_unknown_one_is_refused():
    # "below" holds vacuously where no stack node has a head
    for name, claim in [("arc_eager", "below"), ("arc_hybrid", "none"), ("arc_hybrid", "below"),
                        ("arc_swift2", "below"), ("arc_standard_no_root", "none")]:
        text = (SHIPPED / f"{name}.toml").read_text(encoding="utf-8")
        final = re.search(r"^final = .*\n", text, re.M).group(0)
        system = system_from_text(text.replace(final, f'{final}invariants = {{ stack_heads = '
                                                      f'"{claim}" }}\n'), "x.toml")
        assert system.stack_heads == load_system(name).stack_heads, (name, claim)
    text = EAGER.replace(INVARIANT, f'{INVARIANT}invariants = {{ stack_heads = "above" }}\n')
    with pytest.raises(SystemFileError, match=r"^x\.toml:\d+: invariants\.stack_heads 'above': "
                                               r"expected 'none' or 'below'$"):
        system_from_text(text, "x.toml")


# -- the shipped and test systems --------------------------------------------------------

FILES = sorted(SHIPPED.glob("*.toml")) + sorted(SYSTEMS.glob("*.toml"))
BELOW = {"arc_eager", "arc_eager_root_end", "arc_eager_single_root", "arc_swift2",
         "arc_swift3", "strict_eager"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{'tests/' * (p.parent == SYSTEMS)}{p.stem}")
def test_the_shipped_and_test_systems_keep_their_invariants(path):
    system = load_system(str(path))
    rules = system._rules
    if system.sets_aside:  # Covington: heads anywhere, the slow path checks them
        assert (system.stack_heads, system.buffer_heads, system.needs_arcs) == ("any", True, True)
        assert system.in_order and not system._fast_check
        for stack, buffer, arcs in _reachable(system, 3):
            system.validate_slowly(stack, buffer, arcs, 3)
            assert system.search_key(stack, buffer, arcs) == (stack, buffer, tree_tops(arcs))
        return
    below = path.stem in BELOW
    assert (headed_on_stack(rules) is not None, head_not_below(rules)) == (below, None)
    assert (system.stack_heads, system.buffer_heads) == ("below" if below else "none", False)
    assert system.needs_arcs == below
    # so validate's fast path applies (except to the swap systems, whose buffer
    # leaves the sentence's order), and the search keys hold the stack heads only
    assert system._fast_check == system.in_order
    assert system.in_order == (system.completion_kind != "search")
    for stack, buffer, arcs in _reachable(system, 3):
        if system._fast_check:
            assert system.accepts(stack, buffer, arcs if below else None, 3)
        else:  # the slow path accepts it (it raises where it refuses)
            system.validate_slowly(stack, buffer, arcs, 3)
        assert system.search_key(stack, buffer, arcs) == (
            (stack, buffer, tuple(arcs[x] for x in stack)) if below else (stack, buffer))


# -- random walks --------------------------------------------------------------------------

WALKED = [str(p) for p in FILES] + list(TEXTS)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), spec=st.sampled_from(WALKED))
def test_random_walks_reach_only_configurations_that_validate(data, spec):
    system = _system(spec) if spec in TEXTS else load_system(spec)
    grammar = system.grammar is not None
    heads = data.draw(gold_trees(1, 10 if grammar else 5))
    n = len(heads) - 1
    config = semiparse.system(system).initial(n)
    scored = data.draw(st.integers(0, 4 * n + 4))
    for step in range(4 * n + 4):
        stack, buffer, arcs = config.stack, config.buffer, config.arcs
        assert system.validate(stack, buffer, arcs, n) == (
            stack, buffer, arcs if system.needs_arcs else None)
        if step == scored:
            _scores_and_row(system, config, heads, "auto" if grammar else "exhaustive")
        legal = config.legal()
        if not legal:
            break
        config = config.apply(legal[data.draw(st.integers(0, len(legal) - 1))])


# -- random small systems ------------------------------------------------------------------

# (stack, buffer, stack_after, buffer_after, possible edges): pushes, pops and
# attachments that keep their dependent on the stack or in the buffer, some
# moving it away from its head (pop2, a swap), unshifts.
_SHAPES = [
    (["s0"], ["b"], ["s0", "b"], [], [None, "s0 -> b"]),
    (["s0"], ["b"], [], ["b"], ["b -> s0"]),
    (["s0"], ["b"], ["s0"], ["b"], ["s0 -> b", "b -> s0"]),
    (["s1", "s0"], ["b"], ["s1", "s0", "b"], [], ["s1 -> b"]),
    (["s1", "s0"], [], ["s0"], [], [None, "s0 -> s1"]),
    (["s1", "s0"], [], ["s1"], [], ["s1 -> s0"]),
    (["s1", "s0"], [], ["s0", "s1"], [], [None, "s1 -> s0"]),
    (["s0"], [], [], ["s0"], [None]),
    (["s0"], [], [], [], [None]),
]


@settings(max_examples=200, deadline=None)
@given(text=random_system_texts(_SHAPES, dependent_headless=True), data=st.data())
def test_a_system_the_loader_accepts_reaches_only_configurations_that_validate(text, data):
    try:
        system = system_from_text(text, "r.toml")
    except SystemFileError:
        return  # refused for another reason (a loop, a second head, a cycle, ...)
    for n in range(4):
        configs = _reachable(system, n)
        for stack, buffer, arcs in configs:
            assert system.validate(stack, buffer, arcs, n) == (
                stack, buffer, arcs if system.needs_arcs else None)
        heads = data.draw(gold_trees(n, n)) if n else [-1]
        _same_searches(system, heads, configs)

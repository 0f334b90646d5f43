"""Fast oracles (semiparse.transitions.fast) against the exhaustive search and the
grammar path: hypothesis on small sentences, then every configuration visited
by random and oracle-guided computations over a whole shared UD dev file."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import no_crossing
from semiparse.testing import (
    gold_trees,
    oracle_examples,
    perturbed_configurations,
    validation_outcome,
)
from semiparse.transitions import load_system, methods
from semiparse.transitions.fast import _lrspine
from semiparse.transitions.runtime import _lr_spine_moves as spine_moves
from semiparse.transitions.systems.lr_spine import child_bounds, spines
from semiparse.treebank.conllu import read_conllu

# (system, method, strategies, projective gold only)
FAST = [
    ("arc_standard", "linear", ("none",), True),
    ("arc_standard", "right_stack", ("none", "lbr", "strict_lbr"), True),
    ("arc_standard", "cubic_critical", ("none", "lbr", "strict_lbr", "rbl"), False),
    ("arc_eager", "cost", ("none",), True),
    ("arc_hybrid", "cost", ("none",), True),
]
CASES = [(s, m, st_, p) for s, m, sts, p in FAST for st_ in sts]
_oracles = {}


def get_oracle(system, strategy, method):
    key = (system, strategy, method)
    if key not in _oracles:
        _oracles[key] = semiparse.oracle(system, strategy, method)
    return _oracles[key]


NONPROJECTIVE = [-1, 3, 0, 2, 2, 3]  # 3 -> 1 and 3 -> 5 cross 0 -> 2


@pytest.mark.parametrize("system", ["arc_standard", "arc_eager", "arc_hybrid", "lr_spine"])
def test_registered_methods_keep_to_what_they_declare(system):
    """Every registered method of the shipped systems (those FAST tests,
    lr_spine's and the masked grammar path): a strategy it does not declare is
    refused, and one that declares projective gold trees only refuses a
    crossing tree; the others answer for it as the grammar path does."""
    found = methods(system)  # with projective_masked where the system declares that form
    tested = {m for s, m, _, _ in FAST + [("lr_spine", "spine_table", (), True)] if s == system}
    assert tested <= {m.name for m in found}  # what the tests below run is registered
    stack, buffer, arcs = [0, 1], [2, 3, 4, 5], [-1] * 6  # after one shift: no arc yet
    for m in found:
        for strategy in load_system(system).strategies:
            if strategy not in m.strategies:
                with pytest.raises(ValueError):
                    semiparse.oracle(system, strategy, m.name).scores(
                        stack, buffer, [-1, 2, 0, 2, 3, 4], arcs)
        oracle = semiparse.oracle(system, "none", m.name)
        if m.projective_only:
            with pytest.raises(ValueError):
                oracle.scores(stack, buffer, NONPROJECTIVE, arcs)
        else:
            assert oracle.scores(stack, buffer, NONPROJECTIVE, arcs) == semiparse.oracle(
                system, "none", "grammar").scores(stack, buffer, NONPROJECTIVE, arcs)


@pytest.mark.parametrize("system,method,strategy,projective", CASES,
                         ids=[f"{s}-{m}-{st_}" for s, m, st_, _ in CASES])
def test_against_exhaustive_and_grammar(system, method, strategy, projective):
    fast = get_oracle(system, strategy, method)
    grammar = get_oracle(system, strategy, "grammar")
    exhaustive = get_oracle(system, strategy, "exhaustive")
    examples = oracle_examples(system, 7, [strategy], {strategy: fast},
                               projective=True if projective else None)

    @settings(max_examples=150, database=None)
    @given(examples)
    def check(ex):
        c = ex.computation
        got = fast.scores(c.stack, c.buffer, ex.heads, c.arcs)
        assert got == exhaustive.scores_exhaustive(c.stack, c.buffer, ex.heads, c.arcs)
        assert got == grammar.scores(c.stack, c.buffer, ex.heads, c.arcs)

    check()


@settings(max_examples=300, database=None)
@given(st.data())
def test_linear_equals_right_stack_on_longer_sentences(data):
    """linear restricts Algorithm 1 to a band of cells and prunes roots: on
    sentences too long for the exhaustive search it must still agree with
    the full table, along random and oracle-guided computations."""
    heads = data.draw(gold_trees(8, 45, projective=True))
    linear = get_oracle("arc_standard", "none", "linear")
    full = get_oracle("arc_standard", "none", "right_stack")
    system = load_system("arc_standard")
    stack, buffer, arcs = system.initial(len(heads) - 1)
    follow = data.draw(st.floats(0, 1))
    rng = random.Random(data.draw(st.integers(0, 2**16)))
    while not system.is_final(stack, buffer, arcs):
        expected = full.scores(stack, buffer, heads, arcs)
        assert linear.scores(stack, buffer, heads, arcs) == expected
        best = max(expected.values())
        legal = [t for t in expected if expected[t] == best or rng.random() > follow]
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, rng.choice(legal))


LONGER = [("right_stack", st_, True) for st_ in ("lbr", "strict_lbr")] + \
    [("cubic_critical", st_, False) for st_ in ("none", "lbr", "strict_lbr", "rbl")]


@pytest.mark.parametrize("method,strategy,projective", LONGER,
                         ids=[f"{m}-{st_}" for m, st_, _ in LONGER])
def test_against_grammar_on_longer_sentences(method, strategy, projective):
    """Strategies of right_stack, and cubic_critical on non-projective gold
    trees, against the grammar path beyond the exhaustive search's reach."""
    fast = get_oracle("arc_standard", strategy, method)
    grammar = get_oracle("arc_standard", strategy, "grammar")
    examples = oracle_examples("arc_standard", 18, [strategy], {strategy: fast},
                               projective=projective)

    @settings(max_examples=60, database=None)
    @given(examples)
    def check(ex):
        if len(ex.heads) < 9:
            return
        c = ex.computation
        assert fast.scores(c.stack, c.buffer, ex.heads, c.arcs) == \
            grammar.scores(c.stack, c.buffer, ex.heads, c.arcs)

    check()


def test_linear_unlinked_chain_run():
    """Critical nodes 8 and 9 have no gold edge to the stack: the best
    computation climbs them right after 4 (4 -> 3, 8 -> 4, 9 -> 8), long
    before the stack node 0 they finally hang from is reached."""
    heads = [-1, 2, 0, 4, 8, 8, 7, 8, 9, 11, 9, 0, 13, 11]
    for method in ("linear", "right_stack", "grammar"):
        got = get_oracle("arc_standard", "none", method).scores([0, 1, 2], range(3, 14), heads)
        assert got == {"shift": 12, "left_arc": 13, "right_arc": 11}, method


def test_right_stack_refuses_rbl_and_nonprojective():
    with pytest.raises(ValueError, match="does not support strategy"):
        semiparse.oracle("arc_standard", "rbl", "right_stack")
    o = semiparse.oracle("arc_standard", "none", "right_stack")
    with pytest.raises(ValueError, match="projective"):
        o.scores([0], [1, 2, 3], [-1, 3, 0, 2])


def test_auto_picks_fast_methods():
    o = semiparse.oracle("arc_standard")
    assert o.method_for([-1, 2, 0, 2]) == "linear"
    # non-projective: the grammar path in C on reduced strings (critical_buffer)
    assert o.method_for([-1, 3, 0, 2]) == "grammar"
    assert semiparse.oracle("arc_standard", "lbr").method_for([-1, 3, 0, 2]) == "cubic_critical"
    assert semiparse.oracle("arc_standard", "lbr").method_for([-1, 2, 0, 2]) == "right_stack"
    assert semiparse.oracle("arc_standard", "rbl").method_for([-1, 2, 0, 2]) == "cubic_critical"
    assert semiparse.oracle("arc_eager").method_for([-1, 2, 0, 2]) == "cost"
    assert semiparse.oracle("lr_spine").method_for([-1, 2, 0, 2]) == "spine_table"


# -- the LR-spine system ------------------------------------------------------------

def test_lr_spine_transitions():
    system = load_system("lr_spine")
    stack, buffer, arcs = system.initial(5)
    for t in ["shift", "shift", "left_arc_1", "shift", "right_arc_1", "shift"]:
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, t)
    assert stack == (0, 2, 4) and buffer == (5,)
    assert spines(2, arcs) == ((2, 1), (2, 3))
    assert system.legal(stack, buffer, arcs) == ["shift", "left_arc_1", "right_arc_1",
                                                 "right_arc_2"]
    s2, _, a2, edge = system.apply(stack, buffer, arcs, "right_arc_2")
    assert edge == (3, 4) and s2 == (0, 2) and spines(2, a2) == ((2, 1), (2, 3, 4))
    s3, _, a3, edge = system.apply(stack, buffer, arcs, "left_arc_1")
    assert edge == (4, 2) and spines(4, a3) == ((4, 2, 1), (4,))
    with pytest.raises(ValueError, match="not legal"):
        system.apply(stack, buffer, arcs, "right_arc_3")
    with pytest.raises(ValueError, match="unknown transition"):
        system.apply(stack, buffer, arcs, "swap")


def test_lr_spine_validate():
    system = load_system("lr_spine")
    with pytest.raises(ValueError, match="root 0 at the bottom"):
        system.validate((1,), (2,), (-1, -1, -1), 2)
    with pytest.raises(ValueError, match="no head"):
        system.validate((0, 2), (3,), (-1, 2, 1, -1), 3)
    with pytest.raises(ValueError, match="consecutive"):
        system.validate((0, 2, 3), (4,), (-1, 3, -1, -1, -1), 4)
    assert system.validate([0, 2], [3], [-1, 2, -1, -1], 3) == ((0, 2), (3,), (-1, 2, -1, -1))


@settings(max_examples=2000, database=None)
@given(perturbed_configurations("lr_spine", max_n=9))
def test_lr_spine_c_acceptance_agrees_with_the_python_validator(example):
    n, stack, buffer, arcs = example
    system = load_system("lr_spine")
    expected = validation_outcome(system.validate_slowly, example)
    assert validation_outcome(system.validate, example) == expected
    if arcs is not None:
        # neither too strict (the fast path would never be taken) nor too lax
        assert spine_moves.accepts(stack, buffer, arcs, n) == (not isinstance(expected, str))


def test_lr_spine_validate_normalizes_other_integers():
    import numpy as np
    system = load_system("lr_spine")
    got = system.validate(np.array([0, 2]), [np.int64(3)], np.array([-1, 2, -1, -1]), 3)
    assert got == ((0, 2), (3,), (-1, 2, -1, -1))
    assert all(type(x) is int for part in got for x in part)
    with pytest.raises(ValueError, match="needs arcs"):
        system.validate([0, 2], [3], None, 3)
    with pytest.raises(ValueError, match="cycle"):
        system.validate([0, 3], [], [-1, 2, 1, -1], 3)


@settings(max_examples=60, database=None)
@given(gold_trees(1, 6, projective=True))
def test_lr_spine_builds_every_projective_tree(heads):
    """From the initial configuration the best completion gets every edge."""
    o = get_oracle("lr_spine", "none", "spine_table")
    stack, buffer, arcs = load_system("lr_spine").initial(len(heads) - 1)
    assert max(o.scores(stack, buffer, heads, arcs).values()) == len(heads) - 1


@settings(max_examples=120, database=None)
@given(oracle_examples("lr_spine", 6, ["none"], projective=True))
def test_lr_spine_against_exhaustive(ex):
    o = get_oracle("lr_spine", "none", "spine_table")
    c = ex.computation
    assert o.scores(c.stack, c.buffer, ex.heads, c.arcs) == \
        o.scores_exhaustive(c.stack, c.buffer, ex.heads, c.arcs)


def lr_spine_by_successors(stack, buffer, heads, arcs):
    """sigma by composition, as the oracle computed it before it derived the
    successors in C and bounded its tables: every legal transition applied
    by the system, the spines by :func:`spines`, the right stack in Python,
    and one whole table per successor (only the table code is shared with
    the oracle, which runs it with bounds)."""
    heads = tuple(heads)
    n = len(heads) - 1
    work = _lrspine.SpineGold(heads)
    out = {}
    for t, s2, b2, a2, edge in load_system("lr_spine").successors(
            tuple(stack), tuple(buffer), tuple(arcs)):
        gain = 0 if edge is None else int(heads[edge[1]] == edge[0])
        start = b2[0] if b2 else n + 1
        # right stack: buffer nodes whose gold head is outside the buffer or
        # that have a gold dependent among the stack roots or earlier fragment roots
        fragment_roots, marked = [], {heads[x] for x in s2 if heads[x] >= start}
        for b in range(start, n + 1):
            if heads[b] < start or b in marked:
                fragment_roots.append(b)
                marked.add(heads[b])
        lo, hi = child_bounds(a2)
        trees = [spines(x, a2, lo, hi) for x in reversed(s2)]     # the top first
        out[t] = gain + _lrspine.table_value(work, trees, fragment_roots,
                                             n + 1 - start - len(fragment_roots), bound=False)
    return out


@settings(max_examples=500, database=None)
@given(st.data())
def test_lr_spine_equals_composition(data):
    """The successors derived in C (spines spliced, right stack per
    transition) and the bounded tables give the scores of applying each
    transition and filling its whole table, along random and oracle-guided
    computations."""
    heads = data.draw(gold_trees(1, 12, projective=True))
    o = get_oracle("lr_spine", "none", "spine_table")
    system = load_system("lr_spine")
    stack, buffer, arcs = system.initial(len(heads) - 1)
    follow = data.draw(st.floats(0, 1))
    rng = random.Random(data.draw(st.integers(0, 2**16)))
    while not system.is_final(stack, buffer, arcs):
        got = o.scores(stack, buffer, heads, arcs)
        assert got == lr_spine_by_successors(stack, buffer, heads, arcs), (stack, buffer, arcs)
        assert list(got) == system.legal(stack, buffer, arcs)
        best = max(got.values())
        legal = [t for t in got if got[t] == best or rng.random() > follow]
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, rng.choice(legal))


# -- every configuration of computations over a shared UD dev file ---------------------

UD_FILE = "UD_Gothic-PROIEL/got_proiel-ud-dev.conllu"


@pytest.fixture(scope="module")
def ud_trees(shared_data):
    path = shared_data / "ud" / UD_FILE
    trees = [s.heads for s in read_conllu(path) if s.heads is not None]
    assert len(trees) > 900
    return trees


def walk(system, heads, oracle, rng, follow):
    """Configurations of one computation: random steps, or (with probability
    ``follow``) optimal steps of ``oracle``."""
    stack, buffer, arcs = system.initial(len(heads) - 1)
    while not system.is_final(stack, buffer, arcs):
        yield stack, buffer, arcs
        legal = system.legal(stack, buffer, arcs)
        if rng.random() < follow:
            best = oracle.optimal(stack, buffer, heads, arcs)
            legal = [t for t in legal if t in best]
        stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, rng.choice(legal))


UD_CASES = [("arc_standard", ("linear", "right_stack", "cubic_critical")),
            ("arc_eager", ("cost",)), ("arc_hybrid", ("cost",))]


@pytest.mark.parametrize("system,names", UD_CASES, ids=[s for s, _ in UD_CASES])
def test_ud_dev_file(ud_trees, system, names):
    """fast == grammar on every configuration of a random and of an
    oracle-guided computation, for every sentence of the file."""
    rng = random.Random(5)
    sys_ = load_system(system)
    grammar = get_oracle(system, "none", "grammar")
    fast = {m: get_oracle(system, "none", m) for m in names}
    compared = 0
    for heads in ud_trees:
        projective = no_crossing(heads)
        usable = [m for m in names if projective or m == "cubic_critical"]
        if not usable:
            continue
        guide = fast[usable[0]]
        for follow in (0.0, 0.8):
            for stack, buffer, arcs in walk(sys_, heads, guide, rng, follow):
                expected = grammar.scores(stack, buffer, heads, arcs)
                for m in usable:
                    assert fast[m].scores(stack, buffer, heads, arcs) == expected, (m, heads,
                                                                                   stack, buffer)
                compared += 1
    assert compared > 10000


def test_lr_spine_ud_dev_file(ud_trees):
    """On every projective sentence up to 25 words, along a computation mixing
    optimal and random steps, the oracle keeps its promises: after any step t,
    the best sigma is sigma_t minus t's own gain, and a computation that
    follows the oracle from the initial configuration builds the gold tree."""
    rng = random.Random(6)
    system = load_system("lr_spine")
    o = get_oracle("lr_spine", "none", "spine_table")
    done = 0
    for heads in ud_trees:
        if len(heads) > 26 or not no_crossing(heads):
            continue
        stack, buffer, arcs = system.initial(len(heads) - 1)
        promised = len(heads) - 1
        while not system.is_final(stack, buffer, arcs):
            scores = o.scores(stack, buffer, heads, arcs)
            best = max(scores.values())
            assert best == promised, (heads, stack, buffer, arcs)
            if rng.random() < 0.7:
                t = rng.choice(sorted(t for t, v in scores.items() if v == best))
            else:
                t = rng.choice(sorted(scores))
            stack, buffer, arcs, edge = system.apply(stack, buffer, arcs, t)
            promised = scores[t] - (edge is not None and heads[edge[1]] == edge[0])
        assert promised == 0
        done += 1
    assert done > 500


def test_lr_spine_ud_dev_file_equals_composition(ud_trees):
    """The C successors against composition on every configuration of a
    random and of an oracle-guided computation, for every projective
    sentence of the file."""
    rng = random.Random(7)
    system = load_system("lr_spine")
    o = get_oracle("lr_spine", "none", "spine_table")
    compared = 0
    for heads in ud_trees:
        if not no_crossing(heads):
            continue
        for follow in (0.0, 0.8):
            for stack, buffer, arcs in walk(system, heads, o, rng, follow):
                assert o.scores(stack, buffer, heads, arcs) == \
                    lr_spine_by_successors(stack, buffer, heads, arcs), (heads, stack, buffer)
                compared += 1
    assert compared > 10000

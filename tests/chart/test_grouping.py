"""The max-plus column chart (the grammar oracle's) takes a grammar's
combinations in blocks (``semiparse/chart/grouping.py``): the blocks against
the combinations they stand for, and the chart against brute-force
enumeration, filled input after input as the oracle fills it."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse import semiring as sr
from semiparse.chart.kernels import maxplus_by_columns
from semiparse.chart.grouping import blocks
from semiparse.chart.inputs import compiled
from semiparse.transitions.systems.loading import load_system

from brute_force import semiring_value
from support import inputs, split_grammars

SYSTEMS = ["arc_swift2", "arc_swift3", "arc_standard_root_end", "arc_eager_single_root"]


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4), st.integers(0, 4)), max_size=30))
def test_the_blocks_partition_the_combinations(combos):
    seen = []
    for target, first, second in blocks(combos):
        assert first and second and list(first) == sorted(set(first))
        seen += [(target, a, b) for a in first for b in second]
    assert sorted(seen) == sorted(set(combos))  # each combination in exactly one block


def test_generated_grammars_take_fewer_dot_products():
    """The shipped grammars whose rows are products of rules shrink (arc-swift:
    every attaching rule of the stack's nodes times each finish rule)."""
    for name in SYSTEMS:
        tables = load_system(name).completion_spec.grammar.tables
        nr = tables.n_right
        right = blocks([(c2, bd * nr + c, cd) for c2, c, bd, cd in tables.right_combos.tolist()])
        assert len(right) < len(tables.right_combos)


def _reversed(pl, pr, w):
    return pl[::-1].copy(), pr[::-1].copy(), np.ascontiguousarray(w[::-1, ::-1])


@settings(max_examples=500)  # a wrong block shows only where a best derivation uses it
@given(st.data())
def test_the_column_chart_equals_brute_force_input_after_input(data):
    """Three inputs in one chart, each sharing a prefix with the one before (so
    that columns are kept), by the grammar and, reversed, by its mirror."""
    g = data.draw(split_grammars())
    terms, w = data.draw(inputs(g, max_len=5))
    cases = [(terms, w)]
    for _ in range(2):
        more_terms, more_w = data.draw(inputs(g, max_len=5))
        keep = data.draw(st.integers(0, min(len(terms), len(more_terms))))
        more_terms = list(terms[:keep]) + list(more_terms[keep:])
        more_w[:keep, :keep] = w[:keep, :keep]
        cases.append((more_terms, more_w))
        terms, w = more_terms, more_w
    expected = [semiring_value(sr.MaxPlus(), g, t, x) for t, x in cases]
    encoded = [(*g.encode(t)[1:], np.ascontiguousarray(x, dtype=float)) for t, x in cases]
    assert maxplus_by_columns(compiled(g), encoded) == expected
    mirrored = [_reversed(*(*g.mirrored.encode(t)[1:], x)) for t, (_, _, x) in zip(
        [t for t, _ in cases], encoded)]
    assert maxplus_by_columns(compiled(g.mirrored), mirrored, head_last=True) == expected

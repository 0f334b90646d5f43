"""The generic Python engine: the chart equations (Nederhof 2019, Table 2)
over any semiring object (k-best, score polynomials, users' semirings), in
the same order as the Cython engine, and their outside pass."""
from semiparse import semiring as sr
from semiparse.chart.inputs import NEG_INF
from semiparse.chart.result import ParseResult

def python_result(ring, grammar, ids, w):
    value = inside_generic(ring, grammar.tables, ids, w)
    if isinstance(ring, sr.Viterbi):
        if value[0] == NEG_INF:
            return ParseResult(NEG_INF, None)
        return ParseResult(value[0], heads_of_edges(sr.edges_of(value[1]), len(ids)))
    if isinstance(ring, sr.KBest):
        trees = [(score, heads_of_edges(sr.edges_of(edges), len(ids))) for score, edges in value]
        return ParseResult([s for s, _ in trees], trees[0][1] if trees else None, trees)
    return ParseResult(value)


def heads_of_edges(edges, n1):
    heads = [-1] * n1
    for h, d in edges:
        heads[d] = h
    return heads


def inside_generic(ring, tables, ids, w):
    """The chart equations (Nederhof 2019, Table 2; see docs/engine.md) in pure
    Python over any semiring, in the same order as the Cython engine."""
    return _inside_chart(ring, tables, ids, w)[0]


def outside_generic(ring, tables, ids, w):
    """``(value, edges)``: the inside value and, for each edge, ``edges[h][d]``
    the semiring sum over the derivations that contain ``h -> d`` (zero if
    none), by the outside pass over the chart of :func:`inside_generic`.

    Any commutative semiring works (``zero``, ``one``, ``plus``, ``times``,
    ``weight``; no division or subtraction): log gives the log of the
    unnormalized edge mass (subtract the value for posteriors), max-plus the
    max-marginals, counting the number of derivations through each edge.
    """
    N = len(ids)
    zero, plus, times = ring.zero, ring.plus, ring.times
    total, W, L, R, IL, IR = _inside_chart(ring, tables, ids, w)
    oL, oR, oIL, oIR = {}, {}, {}, {}

    def add(table, key, value):
        table[key] = plus(table.get(key, zero), value)

    for b, c in tables.root.tolist():
        add(oL, (b, 0, 0), R.get((c, 0, N - 1), zero))
        add(oR, (c, 0, N - 1), L.get((b, 0, 0), zero))
    edges = [[zero] * N for _ in range(N)]
    pairs = tables.pairs.tolist()
    left_combos = tables.left_combos.tolist()
    right_combos = tables.right_combos.tolist()
    for span in range(N - 1, 0, -1):  # the inside equations backwards
        for i in range(N - span):
            j = i + span
            for c2, c, bd, cd in right_combos:
                out = oR.get((c2, i, j), zero)
                for d in range(i + 1, j + 1):
                    add(oIR, (bd, c, i, d), times(out, R.get((cd, d, j), zero)))
                    add(oR, (cd, d, j), times(out, IR.get((bd, c, i, d), zero)))
            for b2, bd, b, cd in left_combos:
                out = oL.get((b2, i, j), zero)
                for d in range(i, j):
                    add(oL, (bd, i, d), times(out, IL.get((b, cd, d, j), zero)))
                    add(oIL, (b, cd, d, j), times(out, L.get((bd, i, d), zero)))
            for b, c, needs_left, needs_right in pairs:
                for needed, (h, d), inside, outside in ((needs_left, (j, i), IL, oIL),
                                                        (needs_right, (i, j), IR, oIR)):
                    if not needed:
                        continue
                    out = outside.get((b, c, i, j), zero)
                    edges[h][d] = plus(edges[h][d], times(inside[b, c, i, j], out))
                    out = times(out, W[h][d])
                    for k in range(i, j):
                        add(oR, (c, i, k), times(out, L.get((b, k + 1, j), zero)))
                        add(oL, (b, k + 1, j), times(out, R.get((c, i, k), zero)))
    return total, edges


def _inside_chart(ring, tables, ids, w):
    """``(value, W, L, R, IL, IR)``: the value and the filled chart."""
    N = len(ids)
    zero, one, plus, times = ring.zero, ring.one, ring.plus, ring.times
    W = [[zero if w[h, d] == NEG_INF else ring.weight(float(w[h, d]), h, d) for d in range(N)]
         for h in range(N)]
    L = {}  # (B, i, j) -> value; missing entries are zero
    R = {}
    IL = {}  # (B, C, i, j): head j, left child i
    IR = {}  # (B, C, i, j): head i, right child j
    for h, t in enumerate(ids):
        L[int(tables.term_left[t]), h, h] = one
        R[int(tables.term_right[t]), h, h] = one
    pairs = tables.pairs.tolist()
    left_combos = tables.left_combos.tolist()
    right_combos = tables.right_combos.tolist()
    for span in range(1, N):
        for i in range(N - span):
            j = i + span
            for b, c, needs_left, needs_right in pairs:
                acc = zero
                for k in range(i, j):
                    acc = plus(acc, times(R.get((c, i, k), zero), L.get((b, k + 1, j), zero)))
                if needs_left:
                    IL[b, c, i, j] = times(acc, W[j][i])
                if needs_right:
                    IR[b, c, i, j] = times(acc, W[i][j])
            for b2, bd, b, cd in left_combos:
                acc = zero
                for d in range(i, j):
                    acc = plus(acc, times(L.get((bd, i, d), zero), IL.get((b, cd, d, j), zero)))
                L[b2, i, j] = plus(L.get((b2, i, j), zero), acc)
            for c2, c, bd, cd in right_combos:
                acc = zero
                for d in range(i + 1, j + 1):
                    acc = plus(acc, times(IR.get((bd, c, i, d), zero), R.get((cd, d, j), zero)))
                R[c2, i, j] = plus(R.get((c2, i, j), zero), acc)
    acc = zero
    for b, c in tables.root.tolist():
        acc = plus(acc, times(L.get((b, 0, 0), zero), R.get((c, 0, N - 1), zero)))
    return acc, W, L, R, IL, IR

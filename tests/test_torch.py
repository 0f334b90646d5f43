"""semiparse.torch: differentiable queries over a grammar's trees, against
brute force (every derivation of a small input, tests/brute_force.py) and torch.autograd.gradcheck."""
import math
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brute_force import (
    labelled_distribution,
    projective_trees,
)
from support import split_grammars

torch = pytest.importorskip("torch")

import semiparse  # noqa: E402
from semiparse.torch import TreeCRF, heads_to_edges  # noqa: E402
from semiparse.torch import log_partition as torch_log_partition  # noqa: E402

NEG_INF = float("-inf")
SCORES = [0.0, 0.5, 1.0, -1.5, 2.0, NEG_INF]


# -- brute force ----------------------------------------------------------------

@st.composite
def cases(draw, labelled=False, max_len=5):
    """(grammar, terminals, w3): a random split grammar, an input, labelled
    scores (one label when not ``labelled``) from SCORES."""
    grammar = draw(split_grammars())
    n1 = draw(st.integers(1, max_len))
    terms = "".join(draw(st.lists(st.sampled_from(sorted(grammar.terminals)),
                                  min_size=n1, max_size=n1)))
    L = draw(st.integers(1, 3)) if labelled else 1
    w = draw(st.lists(st.sampled_from(SCORES), min_size=n1 * n1 * L, max_size=n1 * n1 * L))
    return grammar, terms, np.array(w).reshape(n1, n1, L)


def close(a, b, tol=1e-9):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=tol, atol=tol)


# -- against brute force --------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(case=cases(labelled=False), labelled=st.booleans())
def test_queries_and_gradients_equal_brute_force(case, labelled):
    """log Z, marginals (= its gradient), entropy and expectations and their
    gradients, log_prob, the best tree, k-best and counts equal enumeration,
    unlabelled or with a label axis of one; ValueError "no tree" when none."""
    grammar, terms, w3 = case
    want = labelled_distribution(grammar, terms, w3)
    w = torch.tensor(w3 if labelled else w3[..., 0], requires_grad=True).unsqueeze(0)
    crf = TreeCRF(w, grammar=grammar, terminals=[terms])
    if not want["derivations"]:
        with pytest.raises(ValueError, match="no tree"):
            crf.log_partition
        assert crf.count == [0]
        return
    log_z = crf.log_partition
    assert close(log_z.item(), want["log_z"])
    (grad,) = torch.autograd.grad(log_z.sum(), w)
    mu = want["mu"] if labelled else want["mu"][..., 0]
    assert close(grad[0], mu) and close(crf.marginals[0].detach(), mu)
    entropy = crf.entropy
    assert close(entropy.item(), want["entropy"])
    (grad,) = torch.autograd.grad(entropy.sum(), w)
    assert close(grad[0], want["d_entropy"] if labelled else want["d_entropy"][..., 0])
    values = torch.tensor(want["values"] if labelled else want["values"][..., 0]).unsqueeze(0)
    values.requires_grad_(True)
    expected = crf.expected(values)
    assert close(expected.item(), want["expected"])
    dw, dv = torch.autograd.grad(expected.sum(), (w, values))
    assert close(dw[0], want["d_expected"] if labelled else want["d_expected"][..., 0])
    assert close(dv[0], mu)
    # trees: log_prob of each derivable tree, the best one, k-best, the count
    trees = {}
    for s, heads, labels in want["derivations"]:
        trees.setdefault((tuple(heads), tuple(labels)), []).append(s)
    for (heads, labels), scores in trees.items():
        args = [torch.tensor([heads])] + ([torch.tensor([[max(x, 0) for x in labels]])]
                                          if labelled else [])
        lp = crf.log_prob(*args).item()
        assert close(lp, scores[0] + math.log(len(scores)) - want["log_z"])
    best = max(s for s, _, _ in want["derivations"])
    assert close(crf.max.item(), best)
    assert crf.count == [len(want["derivations"])]
    if not labelled:
        got, _ = crf.kbest(3)
        top = sorted((s for s, _, _ in want["derivations"]), reverse=True)[:3]
        assert close(got[:len(top), 0], top)
        assert (got[len(top):, 0] == NEG_INF).all()


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(case=cases(labelled=True, max_len=4))
def test_labelled_gradients_equal_brute_force(case):
    """Labelled weights: log Z, labelled marginals, the entropy's and the
    expectation's gradients per labelled edge equal enumeration."""
    grammar, terms, w3 = case
    want = labelled_distribution(grammar, terms, w3)
    if not want["derivations"]:
        return
    w = torch.tensor(w3, requires_grad=True).unsqueeze(0)
    crf = TreeCRF(w, grammar=grammar, terminals=[terms])
    assert close(crf.log_partition.item(), want["log_z"])
    assert close(crf.marginals[0].detach(), want["mu"])
    (grad,) = torch.autograd.grad(crf.entropy.sum(), w)
    assert close(grad[0], want["d_entropy"])
    (grad,) = torch.autograd.grad(crf.expected(torch.tensor(want["values"])[None]).sum(), w)
    assert close(grad[0], want["d_expected"])


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 4))
def test_samples_are_trees_of_the_distribution(seed, n):
    """Every draw is a tree the grammar derives with the allowed edges."""
    rng = np.random.default_rng(seed)
    w = torch.tensor(rng.normal(size=(1, n + 1, n + 1)))
    heads = TreeCRF(w).sample(4, rng=random.Random(seed))
    assert heads.shape == (4, 1, n + 1)
    for h in heads[:, 0].tolist():
        assert TreeCRF(w).log_prob(torch.tensor([h])).item() > NEG_INF


# -- gradcheck (float64) ---------------------------------------------------------------

def _weights(shape, seed=0, forbid=()):
    w = torch.tensor(np.random.default_rng(seed).normal(size=shape))
    for index in forbid:
        w[index] = NEG_INF
    return w.requires_grad_(True)


def test_gradcheck_log_partition_and_second_derivatives():
    """gradcheck and gradgradcheck of log Z (unlabelled, labelled, padded
    with lengths, forbidden edges), gradcheck of marginals, entropy,
    expectations and log_prob."""
    lengths = torch.tensor([3, 2])
    for w in (_weights((2, 4, 4), forbid=[(0, 1, 2)]), _weights((2, 4, 4, 2), forbid=[(1, 0, 1, 0)])):
        f = lambda x: torch_log_partition(x, lengths=lengths)  # noqa: E731
        assert torch.autograd.gradcheck(f, (w,))
        assert torch.autograd.gradgradcheck(f, (w,))
        assert torch.autograd.gradcheck(lambda x: TreeCRF(x, lengths).marginals, (w,))
        assert torch.autograd.gradcheck(lambda x: TreeCRF(x, lengths).entropy, (w,))
        values = torch.tensor(np.random.default_rng(1).normal(size=w.shape), requires_grad=True)
        assert torch.autograd.gradcheck(lambda x, v: TreeCRF(x, lengths).expected(v), (w, values))
    heads = torch.tensor([[-1, 0, 1, 1], [-1, 2, 0, -1]])
    assert torch.autograd.gradcheck(lambda x: TreeCRF(x, lengths).log_prob(heads),
                                    (_weights((2, 4, 4)),))


@pytest.mark.parametrize("call, message", [
    (lambda w: torch_log_partition(w, lengths=3), "lengths must be one number of words per batch item"),
    (lambda w: TreeCRF(w).sample(k=2.0), "k must be a positive integer, got 2.0"),
    (lambda w: TreeCRF(w).sample(k=-1), "k must be a positive integer, got -1"),
    (lambda w: TreeCRF(w).kbest(10 ** 9), r"k = 1000000000: the result would hold k x 1 x 3 heads"),
    (lambda w: torch_log_partition(w.to("meta")), "weights must be a dense tensor holding values, "
                                                   "got one on the meta device"),
    (lambda w: torch_log_partition(w.to_sparse()), "got one of layout torch.sparse_coo"),
    (lambda w: TreeCRF(w).expected(w.numpy()), r"values must be a dense real tensor of shape "
                                               r"\(1, 3, 3\), got a ndarray"),
    (lambda w: TreeCRF(w).log_prob(None), r"heads must be integers of shape \(1, 3\), got NoneType"),
    (lambda w: TreeCRF(w).log_prob("abc"), r"heads must be integers of shape \(1, 3\), got str"),
    (lambda w: TreeCRF(w).log_prob(torch.zeros(1, 3, dtype=torch.complex64)),
     r"got \(1, 3\) of torch.complex64"),
    (lambda w: TreeCRF(w).log_prob(torch.zeros(1, 3, dtype=torch.long, device="meta")),
     r"got \(1, 3\) of torch.int64 on the meta device"),
    (lambda w: TreeCRF(w).expected(torch.zeros(1, 3, 3, device="meta")),
     r"values must be a dense real tensor .* of torch.float32 on the meta device"),
    (lambda w: TreeCRF(w).expected(torch.zeros(1, 3, 3, dtype=torch.complex64)),
     r"values must be a dense real tensor .*, got \(1, 3, 3\) of torch.complex64"),
])
def test_bad_arguments_are_value_errors(call, message):
    """What was a TypeError, RuntimeError or NotImplementedError (or a
    message that named the right shape as the wrong one)."""
    with pytest.raises(ValueError, match=message):
        call(torch.zeros(1, 3, 3, dtype=torch.float64))


@pytest.mark.parametrize("at", [(0, 1, 1), (0, 1, 0)])  # a self-loop, an edge into the root
@pytest.mark.parametrize("query", ["log_partition", "marginals", "count", "entropy"])
def test_nan_in_a_sentence_is_refused_by_every_query(at, query):
    """Edges no tree has are ignored, but NaN there was refused by log Z and
    taken by the marginals and the count; padding beyond a length is not read."""
    w = torch.zeros(2, 3, 3, dtype=torch.float64)
    w[at] = float("nan")
    with pytest.raises(ValueError, match=rf"batch item 0: weights contain NaN at w\[0, {at[1]}, {at[2]}\]"):
        getattr(TreeCRF(w), query)
    padded = torch.zeros(2, 3, 3, dtype=torch.float64)
    padded[1, 2, 1] = float("nan")
    value = getattr(TreeCRF(padded, lengths=[2, 1]), query)
    assert torch.isfinite(torch.as_tensor(value, dtype=torch.float64)).all()


THIRD = "third derivatives of log Z .* are not implemented"


def test_third_derivatives_are_refused():
    """The covariance has no backward of its own: asking for it is an error,
    never a wrong number -- also where the objective has other terms, and
    for the second derivatives of the entropy and the marginals, which came
    back as zeros while the error hung on a node autograd left out."""
    w = _weights((1, 3, 3))
    (g,) = torch.autograd.grad(torch_log_partition(w).sum(), w, create_graph=True)
    (h,) = torch.autograd.grad((g * g).sum(), w, create_graph=True)
    with pytest.raises(RuntimeError, match=THIRD):
        torch.autograd.grad(h.sum(), w)
    with pytest.raises(RuntimeError, match=THIRD):
        torch.autograd.grad(h.sum() + (w ** 3).sum(), w)
    for f in (lambda x: TreeCRF(x).entropy.sum(), lambda x: (TreeCRF(x).marginals * x).sum()):
        with pytest.raises(RuntimeError, match=THIRD):
            torch.autograd.functional.hessian(f, w.detach())


# -- batches, precision, scale ---------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), sizes=st.lists(st.integers(0, 6), min_size=1, max_size=4),
       labels=st.sampled_from([0, 2]))
def test_padded_batch_equals_separate_calls(seed, sizes, labels):
    """A padded batch (padding filled with NaN, which nothing reads) gives
    each sentence's log Z, marginals, entropy and gradients as a call on that
    sentence alone, on one thread or two."""
    rng = np.random.default_rng(seed)
    N = max(sizes) + 1
    shape = (len(sizes), N, N) + ((labels,) if labels else ())
    w = np.full(shape, np.nan)
    for b, n in enumerate(sizes):
        w[b, :n + 1, :n + 1] = rng.normal(size=(n + 1, n + 1) + shape[3:])
    batch = torch.tensor(w, requires_grad=True)
    crf = TreeCRF(batch, lengths=sizes, n_jobs=2)
    log_z, entropy = crf.log_partition, crf.entropy
    (grad,) = torch.autograd.grad((log_z + entropy).sum(), batch)
    for b, n in enumerate(sizes):
        one = torch.tensor(w[b:b + 1, :n + 1, :n + 1], requires_grad=True)
        single = TreeCRF(one)
        assert close(log_z[b].item(), single.log_partition.item())
        assert close(entropy[b].item(), single.entropy.item())
        assert close(crf.marginals[b, :n + 1, :n + 1].detach(), single.marginals[0].detach())
        (g1,) = torch.autograd.grad((single.log_partition + single.entropy).sum(), one)
        assert close(grad[b, :n + 1, :n + 1], g1[0])
        assert (grad[b, n + 1:] == 0).all() and (grad[b, :, n + 1:] == 0).all()
        assert close(log_z[b].item(), semiparse.parse(
            "projective", "s" * (n + 1), w[b, :n + 1, :n + 1], "log").value
            if not labels else semiparse.parse_labelled(
                "projective", "s" * (n + 1), w[b, :n + 1, :n + 1], "log").value)


def test_float32_agrees_with_float64():
    """float32 scores give float32 results within float32's precision of the
    float64 results for the same (float32-representable) scores."""
    w32 = torch.randn(3, 12, 12, generator=torch.Generator().manual_seed(0)) * 3
    w64 = w32.double()
    for w in (w32, w64):
        w.requires_grad_(True)
    c32, c64 = TreeCRF(w32), TreeCRF(w64)
    assert c32.log_partition.dtype == torch.float32
    assert torch.allclose(c32.log_partition.double(), c64.log_partition, rtol=1e-6)
    assert torch.allclose(c32.entropy.double(), c64.entropy, rtol=1e-5, atol=1e-5)
    (g32,) = torch.autograd.grad(c32.log_partition.sum(), w32)
    (g64,) = torch.autograd.grad(c64.log_partition.sum(), w64)
    assert g32.dtype == torch.float32 and torch.allclose(g32.double(), g64, atol=1e-6)


@pytest.mark.parametrize("offset", [1e6, 1e15, -1e15])
def test_shifted_scores_give_the_same_distribution(offset):
    """A constant added to every score (or to each word's scores) changes log
    Z by the constant times the words and nothing else: marginals, entropy,
    gradients and the best tree stay.  (Scores in eighths, so that w + 1e15
    is exact in a double.)"""
    rng = np.random.default_rng(3)
    w = np.round(rng.normal(size=(1, 8, 8)) * 8) / 8
    per_word = np.round(offset * (1 + np.arange(8)) / 8)
    for shift in (np.full(8, offset), per_word):
        moved = torch.tensor(w + shift[None, None, :])
        assert (moved.numpy() - shift[None, None, :] == w).all()
        base, moved = TreeCRF(torch.tensor(w)), TreeCRF(moved)
        assert close(moved.marginals, base.marginals, 1e-9)
        assert close(moved.entropy, base.entropy, 1e-9)
        assert (moved.argmax == base.argmax).all()
        want = base.log_partition.item() + shift[1:].sum()
        assert math.isclose(moved.log_partition.item(), want, rel_tol=1e-15)


@pytest.mark.parametrize("value", [1e300, -1e300, 3e38])
def test_all_equal_scores_are_uniform_at_any_size(value):
    """Equal scores of any size: the uniform distribution over the trees
    (float32 too, up to its largest finite numbers)."""
    for dtype in (torch.float64, torch.float32):
        if abs(value) > torch.finfo(dtype).max:
            continue
        crf = TreeCRF(torch.full((1, 5, 5), value, dtype=dtype))
        count = crf.count[0]
        assert close(crf.entropy.item(), math.log(count), 1e-6)
        assert close(crf.marginals, TreeCRF(torch.zeros(1, 5, 5, dtype=dtype)).marginals, 1e-6)


def test_scores_a_double_cannot_hold_are_errors():
    """Two scores of one word more than 1.8e308 apart, or a log Z beyond a
    double, are ValueErrors naming the batch item, never a wrong number."""
    w = torch.zeros(2, 3, 3, dtype=torch.float64)
    w[1, 0, 1], w[1, 2, 1] = 1e308, -1e308
    with pytest.raises(ValueError, match="batch item 1: .*differ by more than a (double|torch.float64) holds"):
        torch_log_partition(w)
    w = torch.full((1, 3, 3), 1.7e308, dtype=torch.float64)
    with pytest.raises(ValueError, match="batch item 0: log Z of these weights overflows (a double|torch.float64)"):
        torch_log_partition(w)
    w = torch.full((1, 3, 3), 3e38)
    with pytest.raises(ValueError, match="batch item 0: log Z of these weights overflows torch.float32"):
        torch_log_partition(w)
    w = torch.zeros(1, 3, 3, 2, dtype=torch.float64)
    w[0, 0, 1, 0], w[0, 0, 1, 1] = 1e308, -1e308  # two labels of one edge
    with pytest.raises(ValueError, match="batch item 0: .*differ by more than a double holds"):
        torch_log_partition(w)


def checked_path(batch, w64, marginals):
    """log Z and marginals of a ``_Batch`` the way every sentence went before
    the batch kernel: :meth:`_Batch.prepared`, the marginals kernel on each,
    ``unshift``."""
    from semiparse.chart import kernels
    from semiparse.chart.score_shift import unshift

    items = batch.prepared(w64)
    log_z, mu = np.zeros(batch.B), np.zeros((batch.B, batch.N, batch.N))
    for b, (total, edges) in enumerate(kernels.edge_marginals_batch(
            "log", batch.rules, [x[:3] for x in items])):
        log_z[b] = unshift(total, items[b][3])
        m = batch.sizes[b]
        mu[b, :m, :m] = edges
        if not marginals:
            assert kernels.inside("log", batch.rules, *items[b][:3]) == total
    return log_z, mu


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), sizes=st.lists(st.integers(0, 9), min_size=1, max_size=6),
       kinds=st.lists(st.sampled_from(["normal", "peaked", "forbidden", "large", "offset"]),
                      min_size=6, max_size=6), n_jobs=st.sampled_from([1, 2]))
def test_batch_kernel_equals_the_checked_path(seed, sizes, kinds, n_jobs):
    """The batch kernel (checks, shift and kernels of all the sentences in
    one Cython call, ``kernels.log_partition_batch``) gives log Z and marginals
    equal to the last bit to the checked path of each sentence; sentences
    whose scores are too large for its plain shift are left to that path
    (``fast`` False) and still come out right, in the same batch."""
    from semiparse.chart import kernels
    from semiparse.chart.score_shift import shifted
    from semiparse.torch.batch import _Batch

    rng = np.random.default_rng(seed)
    N = max(sizes) + 1
    w = np.full((len(sizes), N, N), np.nan)
    for b, n in enumerate(sizes):
        x = rng.normal(size=(n + 1, n + 1))
        kind = kinds[b]
        if kind == "peaked":
            x = x * 40
        elif kind == "forbidden":
            x[rng.random(x.shape) < 0.4] = NEG_INF
            x[np.arange(n), np.arange(1, n + 1)] = 0.0  # a chain keeps a tree
        elif kind == "large":
            x = np.round(x * 8) / 8 * 1e12
        elif kind == "offset":
            x = np.round(x * 8) / 8 + 1e15
        w[b, :n + 1, :n + 1] = x
    batch = _Batch("projective", w.shape, sizes, None, n_jobs)
    for marginals in (True, False):
        try:
            want_z, want_mu = checked_path(batch, w, marginals)
        except ValueError as exc:  # e.g. a "large" tree whose total cancels: refused by both
            with pytest.raises(ValueError) as caught:
                batch.run(torch.tensor(w), marginals)
            assert str(exc).split(": ", 1)[-1] in str(caught.value)
            return
        log_z, mu = batch.run(torch.tensor(w), marginals)
        assert close(log_z.numpy(), want_z, 1e-12)
        if marginals:
            assert close(mu, want_mu, 1e-12)
        # the split-grammar kernel alone: the same numbers to the last bit
        edges = np.zeros(w.shape) if marginals else None
        totals, offsets, fast = kernels.log_partition_batch(
            batch.rules, w, batch.starts, batch.size_array, 0, len(sizes), edges, False)
        for b, n in enumerate(sizes):
            if fast[b]:
                assert totals[b] + offsets[b] == want_z[b]
                if marginals:
                    assert (edges[b, :n + 1, :n + 1] == want_mu[b, :n + 1, :n + 1]).all()
    _, _, fast = kernels.log_partition_batch(batch.rules, w, batch.starts, batch.size_array, 0,
                                          len(sizes), None)
    for b, n in enumerate(sizes):  # fast unless the shift's rounding needs checking
        fine = shifted(np.ascontiguousarray(w[b, :n + 1, :n + 1]))[1].errors is None
        assert fast[b] == fine
        assert fine or kinds[b] == "large"
    # and the distribution is the brute force's (small sentences)
    for b, n in enumerate(sizes[:2]):
        if n <= 5:
            x = w[b, :n + 1, :n + 1]
            assert close(log_z[b].item(), semiparse.parse("projective", "s" * (n + 1), x, "log",
                                                          engine="python").value, 1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_eisner_path_equals_brute_force(n):
    """The first-order projective grammar's Eisner path (charts by width)
    gives log Z and edge marginals of brute force, with forbidden edges
    too; other grammars never take it."""
    from semiparse.chart import kernels
    from semiparse.torch.batch import _Batch

    rng = np.random.default_rng(n)
    w = rng.normal(size=(3, n + 1, n + 1)) * 3
    w[1][rng.random((n + 1, n + 1)) < 0.3] = NEG_INF
    w[2] = NEG_INF  # no tree
    batch = _Batch("projective", w.shape, None, None, 1)
    assert batch.rules.first_order()
    assert not _Batch("single_root", w.shape, None, None, 1).rules.first_order()
    edges = np.zeros(w.shape)
    totals, offsets, fast = kernels.log_partition_batch(batch.rules, w, batch.starts,
                                                     batch.size_array, 0, 3, edges)
    assert fast.all() and totals[2] == NEG_INF
    for b in range(2):
        want = labelled_distribution(semiparse.load_grammar("projective"), "s" * (n + 1), w[b][:, :, None])
        assert close(totals[b] + offsets[b], want["log_z"], 1e-12)
        assert close(edges[b], want["mu"][:, :, 0], 1e-12)


@pytest.mark.parametrize("n", [40, 200])
def test_eisner_path_hands_over_beyond_its_range(n):
    """Where the Eisner path's entries leave [1e-100, 1e100] (equal scores
    of 200 words: more than 1e100 trees) the split-grammar kernel, which
    rescales, gives the result, to the last bit; below, the two agree."""
    from semiparse.chart import kernels
    from semiparse.torch.batch import _Batch

    w = np.zeros((2, n + 1, n + 1))
    w[1] = np.random.default_rng(n).normal(size=(n + 1, n + 1)) * 2
    batch = _Batch("projective", w.shape, None, None, 1)
    runs = []
    for eisner in (True, False):
        edges = np.zeros(w.shape)
        totals, _, fast = kernels.log_partition_batch(batch.rules, w, batch.starts,
                                                   batch.size_array, 0, 2, edges, eisner)
        assert fast.all()
        runs.append((totals, edges))
    (t1, e1), (t2, e2) = runs
    if n == 200:
        assert t1[0] == t2[0] and (e1[0] == e2[0]).all() and t1[0] > math.log(1e100)
    assert close(t1, t2, 1e-12) and close(e1, e2, 1e-12)
    assert close(e1[:, :, 1:].sum(1), 1.0, 1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 40),
       kind=st.sampled_from(["normal", "peaked", "forbidden"]))
def test_eisner_path_equals_the_split_grammar_kernel(seed, n, kind):
    """At every length (the outside pass sums blocks of eight spans, and
    the spans past a block's end), with forbidden edges and peaked scores,
    the Eisner path's log Z and marginals are the split-grammar kernel's."""
    from semiparse.chart import kernels
    from semiparse.torch.batch import _Batch

    rng = np.random.default_rng(seed)
    w = rng.normal(size=(1, n + 1, n + 1)) * (6 if kind == "peaked" else 1)
    if kind == "forbidden":
        w[0][rng.random((n + 1, n + 1)) < 0.5] = NEG_INF
        w[0][np.arange(n), np.arange(1, n + 1)] = 0.0  # a chain keeps a tree
    batch = _Batch("projective", w.shape, None, None, 1)
    runs = []
    for eisner in (True, False):
        edges = np.zeros(w.shape)
        totals, _, fast = kernels.log_partition_batch(batch.rules, w, batch.starts,
                                                   batch.size_array, 0, 1, edges, eisner)
        runs.append((totals, edges, fast))
    (t1, e1, f1), (t2, e2, f2) = runs
    assert f1.all() and f2.all()
    assert close(t1, t2, 1e-12) and close(e1, e2, 1e-9)


def test_batch_kernel_errors_name_the_same_item():
    """Errors of a batch are those of the checked path: bad scores of any
    sentence first (the first such sentence), then the first sentence
    without a tree."""
    w = torch.zeros(4, 4, 4, dtype=torch.float64)
    w[0] = NEG_INF  # no tree
    w[2, 1, 3] = float("nan")
    w[3, 2, 1] = float("inf")
    with pytest.raises(ValueError, match="batch item 2: weights contain NaN at w\\[2, 1, 3\\]"):
        torch_log_partition(w)
    w[2, 1, 3] = w[3, 2, 1] = 0.0
    w[3, 1, 2] = NEG_INF
    for grad in (False, True):
        with pytest.raises(ValueError, match="batch item 0: no tree"):
            torch_log_partition(w.clone().requires_grad_(grad))
    w[0] = 0.0
    w[1, 0, 1], w[1, 2, 1] = 1e308, -1e308
    with pytest.raises(ValueError, match="batch item 1: .*differ by more than a double holds"):
        torch_log_partition(w)


def test_batch_kernel_rejects_bad_arguments():
    from semiparse.chart import kernels
    from semiparse.torch.batch import _Batch

    batch = _Batch("projective", (2, 4, 4), [3, 2], None, 1)
    w = np.zeros((2, 4, 4))
    args = (batch.rules, w, batch.starts, batch.size_array)
    with pytest.raises(ValueError, match="items 0..3"):
        kernels.log_partition_batch(*args, 0, 3)
    with pytest.raises(ValueError, match="item 1 of 5 positions"):
        kernels.log_partition_batch(batch.rules, w, batch.starts, np.array([4, 5], dtype=np.intc),
                                 0, 2)
    with pytest.raises(ValueError, match="edges must have the scores' shape"):
        kernels.log_partition_batch(*args, 0, 2, np.zeros((2, 3, 3)))
    bad = [batch.starts[0], (batch.starts[1][0] + 7, batch.starts[1][1])]
    with pytest.raises(ValueError, match="position 0 starts in states"):
        kernels.log_partition_batch(batch.rules, w, bad, batch.size_array, 0, 2)
    totals, offsets, fast = kernels.log_partition_batch(*args, 1, 1)
    assert not fast.any() and (totals == 0).all()


# -- grammars ------------------------------------------------------------------------

def test_single_root_and_user_grammar_files(tmp_path):
    """grammar="single_root" is the projective trees whose root has one child
    (its log Z equals a user file of the same rules, and enumeration)."""
    from semiparse.torch import SINGLE_ROOT

    path = tmp_path / "single.grammar"
    path.write_text(SINGLE_ROOT)
    w = _weights((1, 5, 5), seed=4)
    a = TreeCRF(w, grammar="single_root")
    b = TreeCRF(w, grammar=str(path))
    assert close(a.log_partition.item(), b.log_partition.item())
    assert a.count == [sum(1 for h in _projective(5) if h.count(0) == 1)]
    mu = a.marginals[0].detach()
    assert close(mu[0].sum().item(), 1.0)  # the root has exactly one child
    scores = [sum(w[0, h[d], d].item() for d in range(1, 5)) for h in _projective(5) if h.count(0) == 1]
    assert close(a.log_partition.item(), float(np.logaddexp.reduce(scores)))


def _projective(n1):

    return projective_trees(n1)


def test_completion_grammar_of_a_configuration():
    """The arc-standard completion grammar with a configuration's terminals:
    the distribution over the trees still reachable, its count and log Z as
    the core's."""
    terms = ["p", "p", "s", "s", "s"]
    w = _weights((1, 5, 5), seed=5)
    crf = TreeCRF(w, grammar="arc_standard", terminals=[terms])
    assert crf.count == [semiparse.parse("arc_standard", terms, np.zeros((5, 5)), "counting").value]
    assert close(crf.log_partition.item(),
                 semiparse.parse("arc_standard", terms, w[0].detach().numpy(), "log").value)
    assert torch.autograd.gradcheck(lambda x: TreeCRF(x, grammar="arc_standard",
                                                      terminals=[terms]).entropy, (w,))


# -- input checks --------------------------------------------------------------------

def test_bad_input_is_a_value_error():
    w = torch.zeros(2, 4, 4)
    bad = w.clone()
    bad[1, 2, 3] = float("nan")
    for call, message in [
        (lambda: torch_log_partition(bad), r"batch item 1: weights contain NaN at w\[1, 2, 3\]"),
        (lambda: torch_log_partition(w.int()), "float32 or float64"),
        (lambda: torch_log_partition(np.zeros((1, 3, 3))), "torch tensor"),
        (lambda: torch_log_partition(torch.zeros(2, 3, 4)), r"expected \(B, n\+1, n\+1\)"),
        (lambda: torch_log_partition(w, lengths=[3, 4]), r"lengths\[1\] is 4"),
        (lambda: torch_log_partition(w, lengths=[3]), "lengths has 1 entries"),
        (lambda: TreeCRF(w, "projective"), "the grammar is the keyword argument"),
        (lambda: torch_log_partition(w, lengths=[3, 2.5]), "one number of words per batch item"),
        (lambda: torch_log_partition(w, grammar="arc_standard"), "give terminals"),
        (lambda: torch_log_partition(w, grammar="arc_standard", terminals=["pps", "px"]),
         "batch item 1"),
        (lambda: torch_log_partition(torch.full((1, 3, 3), NEG_INF)), "batch item 0: no tree"),
        (lambda: TreeCRF(w).log_prob(torch.tensor([[-1, 0, 5, 0]] * 2)), "heads must lie in"),
        (lambda: TreeCRF(w).kbest(0), "positive integer"),
        (lambda: TreeCRF(w).expected(torch.zeros(2, 3, 3)), "values must be a dense real tensor"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("call, message", [
    (lambda: heads_to_edges([[True, False]]), r"heads must be integers of shape \(B, N\), got \(1, 2\) of torch.bool"),
    (lambda: heads_to_edges([[-1, 0.0]]), "of torch.float32"),
    (lambda: heads_to_edges([-1, 0]), r"got \(2,\)"),
    (lambda: heads_to_edges([[[-1, 0]]]), r"got \(1, 1, 2\)"),
    (lambda: heads_to_edges(None), "got NoneType"),
    (lambda: heads_to_edges(torch.zeros(1, 2, dtype=torch.long, device="meta")), "on the meta device"),
    (lambda: heads_to_edges([[-1, 9]]), r"heads must lie in -1\.\.1 \(-1: no head\), got 9"),
    (lambda: heads_to_edges([[-2, 0]]), "got -2"),
    (lambda: heads_to_edges([[-1, 0]], n_labels=2), "labels and n_labels go together"),
    (lambda: heads_to_edges([[-1, 0]], labels=[[0, 0]]), "labels and n_labels go together"),
    (lambda: heads_to_edges([[-1, 0]], n_labels=True, labels=[[0, 0]]), "n_labels must be a positive integer"),
    (lambda: heads_to_edges([[-1, 0]], n_labels=2, labels=[[0, -1]]), r"labels must lie in 0\.\.1 where a head is given, got -1"),
    (lambda: heads_to_edges([[-1, 0]], n_labels=2, labels=[[0, 0, 1]]), r"labels must be integers of shape \(1, 2\)"),
    (lambda: heads_to_edges([[-1, 0, 1]], n_labels=10 ** 12, labels=[[0, 0, 0]]),
     r"the result would hold 1 x 3 x 3 x 1000000000000 entries, more than 1e\+08"),
    (lambda: heads_to_edges(torch.full((1, 200000), -1)), r"1 x 200000 x 200000 entries, more than 1e\+08"),
])
def test_heads_to_edges_refuses_bad_heads_and_labels(call, message):
    """Bools became edges, label -1 the last label, heads below -1 were
    dropped and n_labels alone ignored; the rest were IndexError or TypeError,
    or (results of terabytes) a RuntimeError from the allocator."""
    with pytest.raises(ValueError, match=message):
        call()
    assert heads_to_edges([[-1, 0, 1]], n_labels=2, labels=[[-1, 1, 0]]).nonzero().tolist() == [
        [0, 0, 1, 1], [0, 1, 2, 0]]


def test_tensors_without_values_are_value_errors():
    """lengths on the meta device or sparse, and nested weights, values or
    heads, were NotImplementedError or RuntimeError."""
    w = torch.zeros(2, 4, 4, dtype=torch.float64)
    with pytest.warns(UserWarning, match="nested tensors"):  # torch: a prototype
        nested = torch.nested.nested_tensor([w[0], w[1, :3, :3]])
    for call, message in [
        (lambda: torch_log_partition(w, lengths=torch.tensor([1, 2], device="meta")),
         "lengths must be a dense tensor holding values, got one on the meta device"),
        (lambda: TreeCRF(w, lengths=torch.tensor([1, 2]).to_sparse()),
         "lengths must be a dense tensor holding values, got one of layout torch.sparse_coo"),
        (lambda: torch_log_partition(nested), r"weights must be a dense tensor holding values, "
                                              r"got one nested \(torch.nested\)"),
        (lambda: TreeCRF(w).expected(nested), r"values must be a dense real tensor of shape "
                                              r"\(2, 4, 4\), got a tensor of torch.float64 nested"),
        (lambda: TreeCRF(w).log_prob(nested.long()), r"heads must be integers of shape \(2, 4\), "
                                                     r"got a tensor of torch.int64 nested"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


def test_labelled_expected_refuses_values_of_another_label_axis():
    """Values ``(B, N, N, L')`` for weights with L labels: an IndexError when
    L' != L.  The two shapes it takes give the number of words for values
    of 1 (each word has one head)."""
    crf = TreeCRF(torch.zeros(2, 4, 4, 2, dtype=torch.float64), lengths=[3, 2])
    for labels in (1, 3):
        with pytest.raises(ValueError, match=rf"values must be a dense real tensor of shape "
                                             rf"\(2, 4, 4, 2\) or \(2, 4, 4\), got \(2, 4, 4, {labels}\)"):
            crf.expected(torch.ones(2, 4, 4, labels, dtype=torch.float64))
    for shape in ((2, 4, 4, 2), (2, 4, 4)):
        assert torch.allclose(crf.expected(torch.ones(shape)), torch.tensor([3.0, 2.0], dtype=torch.float64))


def test_sample_checks_temperature_and_rng_before_any_sentence():
    """A bad temperature or rng is the caller's, not "batch item 0"'s, and an
    empty batch took any; the draws are semiparse.sample's, sentence by
    sentence, from one rng."""
    for crf in (TreeCRF(torch.zeros(3, 4, 4)), TreeCRF(torch.zeros(0, 4, 4))):
        for kwargs, message in [({"temperature": 0}, "temperature must be a finite number > 0, got 0"),
                                ({"temperature": -1}, "temperature must be a finite number > 0, got -1"),
                                ({"rng": 3}, "rng must be a random.Random or None, got 3")]:
            with pytest.raises(ValueError, match=f"^{message}"):
                crf.sample(1, **kwargs)
    w = torch.tensor(np.random.default_rng(2).normal(size=(2, 4, 4)))
    heads = TreeCRF(w, lengths=[3, 2]).sample(5, rng=random.Random(7))
    rng = random.Random(7)
    for b, n in enumerate([3, 2]):
        draws = semiparse.sample("projective", "s" * (n + 1), w[b, :n + 1, :n + 1].numpy(), rng=rng, k=5)
        assert heads[:, b, :n + 1].tolist() == draws


def test_lengths_may_be_a_generator_and_terminals_are_checked():
    """A generator of lengths was consumed by a check ("lengths has 0
    entries"); terminals [None] or 5 were TypeErrors."""
    w = torch.zeros(2, 3, 3, dtype=torch.float64)
    assert torch.equal(torch_log_partition(w, lengths=(n for n in [2, 1])),
                       torch_log_partition(w, lengths=[2, 1]))
    for terminals, message in [([None, "ss"], "batch item 0: terminals must be a string or a list of "
                                              "terminal names"),
                               (5, "terminals must give one string or list of terminal names per sentence"),
                               ("sss", "got 'sss'")]:
        with pytest.raises(ValueError, match=message):
            torch_log_partition(w, terminals=terminals)


def test_the_engine_points_tensors_that_require_grad_to_semiparse_torch():
    """semiparse.parse and its siblings raised "Can't call numpy()" for a
    tensor in a graph and TypeError for one on the meta device."""
    w = torch.zeros(3, 3, dtype=torch.float64)
    assert semiparse.parse("projective", "sss", w, "log").value == pytest.approx(math.log(3))
    for bad, message in [(w.requires_grad_(), "requires grad: for gradients use semiparse.torch"),
                         (torch.zeros(3, 3, device="meta"), r"got Tensor \(can't convert meta device"),
                         (torch.zeros(3, 3, 2, requires_grad=True), "labelled weights .* requires grad")]:
        with pytest.raises(ValueError, match=message):
            semiparse.parse("projective", "sss", bad, "log")
    with pytest.raises(ValueError, match="values must be .* requires grad"):
        semiparse.expected("projective", "sss", np.zeros((3, 3)), torch.ones(3, 3, requires_grad=True))


def test_log_prob_of_a_tree_the_grammar_does_not_derive_is_minus_inf():
    w = _weights((1, 5, 5))
    crossing = torch.tensor([[-1, 3, 4, 0, 0]])  # 1 <- 3 and 2 <- 4 cross
    assert TreeCRF(w).log_prob(crossing).item() == NEG_INF
    assert heads_to_edges(crossing).sum() == 4


# -- the package's boundaries --------------------------------------------------------

def test_core_does_not_import_torch_and_the_module_gets_pytorch(tmp_path):
    """import semiparse (and the CLI with every sub-command, bench torch
    included) loads no torch; inside semiparse.torch, ``torch`` is PyTorch."""
    code = ("import sys, semiparse, semiparse.cli, semiparse.queries.marginals; "
            "semiparse.cli.build_parser(); assert 'torch' not in sys.modules, 'torch imported'; "
            "import semiparse.torch as T; assert T.torch.__name__ == 'torch' "
            "and hasattr(T.torch, 'autograd')")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # not the checkout: the installed package


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")
def test_gpu_tensors_come_back_on_their_device():
    w = _weights((2, 6, 6)).detach().cuda().requires_grad_(True)
    log_z = torch_log_partition(w)
    (grad,) = torch.autograd.grad(log_z.sum(), w)
    assert log_z.device == w.device and grad.device == w.device
    cpu = torch_log_partition(w.detach().cpu())
    assert close(log_z.cpu(), cpu)


# -- bench torch ---------------------------------------------------------------------

def test_bench_baseline_eisner_equals_log_partition():
    """The bench's plain PyTorch Eisner (the baseline) computes the same log Z
    and gradient as semiparse.torch, padded batches included."""
    from semiparse.bench.torch import eisner_log_partition

    w = _weights((3, 7, 7), seed=7)
    lengths = [6, 3, 1]
    ours, theirs = torch_log_partition(w, lengths=lengths), eisner_log_partition(w, lengths)
    assert close(ours.detach(), theirs.detach())
    (g1,) = torch.autograd.grad(ours.sum(), w)
    (g2,) = torch.autograd.grad(theirs.sum(), w)
    g2[:, :, 0] = 0  # edges into the root: no tree has them
    assert close(g1, g2)


@pytest.mark.parametrize("argv, message", [
    (["--device", "nonsense"], "device must be cpu or cuda[:N], not 'nonsense'"),
    (["--device", "cuda:99"], "device cuda:99: torch finds"),
    (["--lengths", "2000", "--batches", "1000"], "at most 1e+07 scores per batch"),
])
def test_bench_torch_refuses_what_it_cannot_run_before_timing(capsys, argv, message):
    from semiparse.cli import main

    assert main(["bench", "torch", "--seconds", "0.001", "--rounds", "1", *argv]) == 2
    out, err = capsys.readouterr()
    assert message in err and len(err.splitlines()) == 1 and out == ""  # nothing timed first


def test_bench_torch_runs(capsys):
    from semiparse.cli import main

    assert main(["bench", "torch", "--lengths", "3", "--batches", "2", "--seconds", "0.001",
                 "--rounds", "1", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "eisner/ours" in out and "round trip from cpu" in out
    header = out.split("round trip from cpu")[1].splitlines()[1]
    assert header.split() == ["batch", "n", "cpu", "tensors", "cpu", "again", "copies", "alone", "extra"]


# -- the worked example ----------------------------------------------------------------

def test_biaffine_crf_experiment_runs_on_20_sentences(shared_data, tmp_path):
    """The biaffine parser with the tree CRF loss and with the softmax loss
    trains on 20 Greek sentences and writes its table (dev UAS per loss)."""
    from semiparse.experiments import main

    out = tmp_path / "biaffine"
    assert main(["biaffine-crf", "--data", str(shared_data), "--limit", "20", "--epochs", "1",
                 "--out", str(out)]) == 0
    text = (tmp_path / "biaffine.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| crf |", "| softmax |"))]
    assert len(rows) == 2
    for row in rows:
        assert 0.0 <= float(row.split("|")[2]) <= 100.0


def test_a_lazily_negated_float64_tensor_is_read_as_its_values():
    # z.conj().imag is a float64 tensor with the negative bit: numpy() refused it
    z = torch.randn(1, 4, 4, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))
    w = z.conj().imag
    assert w.is_neg()
    plain = w.resolve_neg()
    assert torch.equal(torch_log_partition(w), torch_log_partition(plain))
    assert torch.equal(TreeCRF(w).marginals, TreeCRF(plain).marginals)
    g = (1j * torch.ones(1, dtype=torch.complex128)).conj().imag   # -1, as a negated view
    assert g.is_neg()
    x, y = plain.clone().requires_grad_(), plain.clone().requires_grad_()
    torch_log_partition(x).backward(g)
    torch_log_partition(y).backward(-torch.ones(1, dtype=torch.float64))
    assert torch.equal(x.grad, y.grad)

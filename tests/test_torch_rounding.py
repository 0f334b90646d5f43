"""semiparse.torch.TreeCRF computes in float64 whatever the dtype and checks
the rounding of its per-word shift as the core does: scores far below their
words' best edges, and results near the limits of the dtype, give the exact
answer (exact brute force over the projective trees, tests/brute_force.py)
or the core's ValueError naming the batch item, never a wrong number."""
import math
import re

import numpy as np
import pytest

from brute_force import projective_distribution

torch = pytest.importorskip("torch")

import semiparse  # noqa: E402
from semiparse.torch import TreeCRF  # noqa: E402
from semiparse.torch import log_partition as torch_log_partition  # noqa: E402

NEG_INF = float("-inf")


def far_root(big, dtype, batch=1, seed=0):
    """``(batch, 5, 5)`` normal scores whose root edges all score about
    ``big`` less: every tree needs one of them.  Item 0 keeps plain scores
    when ``batch`` is 2."""
    w = torch.tensor(np.random.default_rng(seed).normal(size=(batch, 5, 5)))
    w[-1, 0, :] += big
    return w.to(dtype)


def best_tree(trees):
    heads, _ = max(trees, key=lambda t: t[1])
    return heads, math.log(max(p for _, p in trees))


@pytest.mark.parametrize("big", [-1e13, -1e15])
def test_a_shift_that_rounds_the_likely_trees_is_the_cores_error(big):
    """float64: the root edges less their words' best lose digits to the
    shift, so the differences between trees are gone: every query that
    reads them raises the core's ValueError for that batch item (they were
    wrong numbers: marginals off by 1e-2), while the plain item beside it
    and the best score stay exact."""
    w = far_root(big, torch.float64, batch=2)
    with pytest.raises(ValueError) as core:
        semiparse.marginals("projective", "sssss", w[1].numpy())
    assert "scores too large for log-space queries" in str(core.value)
    message = re.escape(f"batch item 1: {core.value}")
    crf = TreeCRF(w)
    heads = torch.tensor([best_tree(projective_distribution(w[b].numpy())[2])[0] for b in range(2)])
    for query in (lambda: crf.marginals, lambda: crf.entropy, lambda: crf.log_prob(heads),
                  lambda: crf.expected(torch.ones(2, 5, 5, dtype=torch.float64))):
        with pytest.raises(ValueError, match=message):
            query()
    x = w.unsqueeze(-1).requires_grad_(True)  # one label: the labelled path
    with pytest.raises(ValueError, match=message):
        torch_log_partition(x)
    with torch.no_grad():  # the value alone reads no difference of trees
        assert torch_log_partition(x).shape == (2,)
    mu, _, _ = projective_distribution(w[0].numpy())
    assert np.allclose(TreeCRF(w[:1]).marginals[0].numpy(), mu, atol=1e-12)
    best = max(sum(w[1, h[d], d].item() for d in range(1, 5)) for h, _ in
               projective_distribution(w[1].numpy())[2])
    assert crf.max[1].item() == pytest.approx(best, rel=1e-15)


@pytest.mark.parametrize("big", [-1e4, -1e7])
def test_float32_scores_far_below_their_words_best_are_exact(big):
    """float32 root edges 1e4 or 1e7 below the rest (a common soft mask):
    the shift in float64 keeps every digit, so the marginals, the labelled
    gradient, the entropy, log_prob and expectations are the exact ones of
    the float32 numbers to float32 precision (they were off by up to 0.1)."""
    w = far_root(big, torch.float32)
    mu, entropy, trees = projective_distribution(w[0].double().numpy())
    crf = TreeCRF(w)
    assert crf.marginals.dtype == torch.float32
    assert np.allclose(crf.marginals[0].double().numpy(), mu, atol=1e-6)
    x = w.unsqueeze(-1).requires_grad_(True)
    torch_log_partition(x).sum().backward()
    assert np.allclose(x.grad[0, ..., 0].double().numpy(), mu, atol=1e-6)
    assert crf.entropy.item() == pytest.approx(entropy, abs=1e-6)
    heads, log_p = best_tree(trees)
    assert crf.log_prob(torch.tensor([heads])).item() == pytest.approx(log_p, abs=1e-6)
    values = torch.arange(25, dtype=torch.float32).reshape(1, 5, 5)
    assert crf.expected(values).item() == pytest.approx((mu * values[0].numpy()).sum(), rel=1e-6)


def test_float32_entropy_is_the_float64_entropy_of_its_numbers():
    """Sharp distributions (scores times 1e3 .. 1e5): the float32 entropy and
    marginals are the float64 ones of the same numbers, rounded to float32
    (the entropy cancelled in float32: off by up to 0.06)."""
    gen = torch.Generator().manual_seed(0)
    for scale in (1e3, 1e4, 1e5):
        w = torch.randn(30, 8, 8, generator=gen) * scale
        c32, c64 = TreeCRF(w), TreeCRF(w.double())
        assert c32.entropy.dtype == torch.float32
        assert torch.equal(c32.entropy, c64.entropy.to(torch.float32))
        assert torch.equal(c32.marginals, c64.marginals.to(torch.float32))


def one_tree(dtype, values):
    """A batch of two: item 0 plain scores, item 1 one allowed tree (0 -> 1,
    0 -> 2, 2 -> 3) with these edge values; scores and values as tensors."""
    w = torch.zeros(2, 4, 4, dtype=torch.float64)
    w[1] = NEG_INF
    v = torch.zeros(2, 4, 4, dtype=torch.float64)
    for (h, d), x in zip([(0, 1), (0, 2), (2, 3)], values):
        w[1, h, d] = 0.0
        v[1, h, d] = x
    return w.to(dtype), v.to(dtype)


@pytest.mark.filterwarnings("ignore:overflow encountered in dot:RuntimeWarning")  # the core's first try
def test_expectations_and_best_scores_near_the_limits_of_the_dtype():
    """Sums whose partial sums overflow but whose total fits are exact (they
    were inf), as the core gives them; totals beyond the dtype, float32
    too, are ValueErrors naming the batch item."""
    w, v = one_tree(torch.float64, [1e308, 1e308, -1.5e308])
    v.requires_grad_(True)
    expected = TreeCRF(w).expected(v)
    assert expected[1].item() == 5e307 == semiparse.expected("projective", "ssss", w[1].numpy(),
                                                             v[1].detach().numpy())
    (grad,) = torch.autograd.grad(expected[1], v)
    assert grad[1].sum().item() == 3 and grad[1, 2, 3].item() == 1.0
    best = TreeCRF(v.detach().clone().masked_fill(w == NEG_INF, NEG_INF)).max
    assert best[1].item() == 5e307
    w, v = one_tree(torch.float64, [1e308, 1e308, 1e308])
    with pytest.raises(ValueError, match=r"beyond a double"):
        semiparse.expected("projective", "ssss", w[1].numpy(), v[1].numpy())
    with pytest.raises(ValueError, match=r"batch item 1: the expected value is beyond the range "
                                         r"of torch.float64"):
        TreeCRF(w).expected(v)
    w, v = one_tree(torch.float32, [1e38, 1e38, -1.5e38])
    assert TreeCRF(w).expected(v)[1] == v[1].double().sum().float()  # the float32 numbers' sum
    w, v = one_tree(torch.float32, [3e38, 3e38, 1e38])
    with pytest.raises(ValueError, match=r"batch item 1: the expected value is beyond the range "
                                         r"of torch.float32"):
        TreeCRF(w).expected(v)
    scores = v.masked_fill(w == NEG_INF, NEG_INF)
    with pytest.raises(ValueError, match=r"batch item 1: the best score is beyond the range of "
                                         r"torch.float32"):
        TreeCRF(scores).max
    with pytest.raises(ValueError, match=r"batch item 1: the score of tree 1 is beyond the range "
                                         r"of torch.float32"):
        TreeCRF(scores).kbest(2)


def test_labelled_log_z_whose_shift_cancels_is_refused_as_unlabelled():
    """Each word's best edge 1e15 above the edges its trees can use: the
    shifted log Z and the shift cancel, and rounding ate the digits.  The
    unlabelled path and the core refuse it; labelled log Z gave 1.0 where
    it is 0.25 + log 2."""
    w = torch.full((1, 3, 3), NEG_INF, dtype=torch.float64)
    w[0, 2, 1] = w[0, 1, 2] = 1e15 + 0.3
    w[0, 0, 1] = w[0, 0, 2] = -1e15
    with pytest.raises(ValueError, match="lost its digits"):
        semiparse.parse("projective", "sss", w[0].numpy(), "log")
    message = "batch item 0: log Z of these weights has lost its digits"
    with pytest.raises(ValueError, match=message):
        torch_log_partition(w)
    with pytest.raises(ValueError, match=message):
        torch_log_partition(w.unsqueeze(-1))


def test_log_prob_whose_tree_and_log_z_cancel_is_refused():
    """Root edges exactly 1e15 below the rest (eighths: the shift is exact,
    so the marginals are exact): every tree scores about -1e15, and log p,
    their difference with log Z, rounds by up to 0.06 in a double.  A
    ValueError as for the entropy (it was -2.375 where the exact value is
    -2.3537); the marginals stay exact."""
    w = np.round(np.random.default_rng(0).normal(size=(5, 5)) * 8) / 8
    w[0, 1:] -= 1e15
    mu, _, trees = projective_distribution(w)
    crf = TreeCRF(torch.tensor(w)[None])
    assert np.allclose(crf.marginals[0].numpy(), mu, atol=1e-12)
    heads, _ = best_tree(trees)
    with pytest.raises(ValueError, match="batch item 0: log_prob: the tree scores 1e.15 and log Z"):
        crf.log_prob(torch.tensor([heads]))
    with pytest.raises(ValueError, match="batch item 0: entropy"):
        crf.entropy


@pytest.mark.parametrize("dtype, mask", [(torch.float32, torch.finfo(torch.float32).min),
                                         (torch.float64, -1e300)])
def test_masked_edges_and_labels_no_likely_tree_uses_stay_exact(dtype, mask):
    """Soft masks (-1e300, float32's most negative number) lose all of the
    shift to rounding, which no query may mind where no likely tree uses
    them: on whole edges, and on single labels of likely edges.  Marginals,
    entropy and the labelled gradient are those of the weights without them."""
    rng = np.random.default_rng(1)
    w = torch.tensor(rng.normal(size=(1, 5, 5, 3)), dtype=dtype)
    w[0, :, :, 0] = mask                 # label 0 of every edge
    w[0, 1, 2] = w[0, 3, 4] = mask       # two edges, every label
    kept = w[..., 1:].double().masked_fill(w[..., 1:] == mask, NEG_INF)
    want = TreeCRF(kept)
    crf = TreeCRF(w)
    assert torch.equal(crf.marginals[..., 0], torch.zeros(1, 5, 5, dtype=dtype))
    assert torch.allclose(crf.marginals[..., 1:].double(), want.marginals, atol=1e-7)
    assert crf.entropy.item() == pytest.approx(want.entropy.item(), abs=1e-6)
    x = w.clone().requires_grad_(True)
    torch_log_partition(x).sum().backward()
    assert torch.allclose(x.grad[..., 1:].double(), want.marginals, atol=1e-7)
    unlabelled = w[..., 1]
    mu, _, _ = projective_distribution(kept[0, ..., 0].numpy())
    assert np.allclose(TreeCRF(unlabelled).marginals[0].double().numpy(), mu, atol=1e-7)

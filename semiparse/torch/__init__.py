"""Exact, differentiable queries over the trees a split grammar defines, in PyTorch.

The optional extra ``neural`` (PyTorch); nothing in the core imports this
package.  Edge scores are a batch of tensors ``w[b, h, d]`` (``(B, n+1, n+1)``,
position 0 the root, ``-inf`` forbidding an edge) or labelled scores
``w[b, h, d, l]`` (``(B, n+1, n+1, L)``), float32 or float64, with ``lengths``
(words per sentence) for a padded batch: sentence ``b`` reads
``w[b, :lengths[b]+1, :lengths[b]+1]`` and nothing else.

- :func:`log_partition` is an autograd function: the forward pass is the
  Cython log kernel (:func:`semiparse.chart.kernels.log_partition_batch`: checks,
  shift and kernels of a batch per thread without the GIL; Eisner's
  algorithm for first-order projective rules), the backward pass hands the
  incoming gradient to the edge marginals of the outside pass, computed with
  the forward pass when a gradient is wanted.  Exact: the marginals are the
  gradient.
- The marginals are differentiable too: their backward pass is the
  covariance of edges, ``Cov(sum_e g_e x_e, x_f)`` for an incoming gradient
  ``g``, computed exactly by the outside pass of the generic engine over the
  first-order expectation semiring (Li and Eisner 2009): for each edge, the
  mean of ``sum g x`` over the trees through it.  So second derivatives of
  the log partition, and the gradients of the entropy and of expectations,
  are exact.  That pass is Python (about 2 ms at 10 words, 90 ms at 40).
- :class:`TreeCRF` is the distribution over the grammar's trees with the
  names of torch-struct's ``DependencyCRF``.

Tensors on a GPU are copied to the CPU for the kernels and the results
copied back.  Scores are shifted per dependent first
(:func:`semiparse.chart.score_shift.shifted`), in float64 whatever the dtype
(:class:`TreeCRF` computes in float64 and casts its results back at the
end), so large or shifted scores give the same distribution; what a double
cannot hold, or a shift whose rounding would move a likely tree's score
(:func:`semiparse.chart.score_shift.check_rounding`), is a ValueError naming
the batch item, never a wrong number.

The modules: ``distribution`` (:class:`TreeCRF`, :func:`log_partition`),
``functions`` (the autograd functions), ``batch`` (the checked batch, its
threads and kernels; :func:`grammar_of`), ``tensors`` (the weights' checks,
integer and float64 conversions, results in the weights' dtype).
"""
import torch  # noqa: F401  (semiparse.torch.torch is PyTorch, as it was)

from semiparse.torch.batch import SINGLE_ROOT, grammar_of
from semiparse.torch.distribution import TreeCRF, log_partition
from semiparse.torch.tensors import heads_to_edges

__all__ = ["log_partition", "TreeCRF", "SINGLE_ROOT", "grammar_of", "heads_to_edges"]

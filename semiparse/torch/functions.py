"""The autograd functions over a :class:`~semiparse.torch.batch._Batch`:
log Z, whose backward pass is the edge marginals, and the marginals, whose
backward pass is the covariance of edges (exact); a third derivative
raises."""
import torch

from semiparse.torch.tensors import as_numpy


class _LogPartition(torch.autograd.Function):
    """log Z of each sentence; backward: incoming gradient times the edge marginals."""

    @staticmethod
    def forward(ctx, w, batch):
        need = ctx.needs_input_grad[0]
        log_z, mu = batch.run(w, marginals=need)
        ctx.batch, ctx.mu = batch, mu
        if need:
            ctx.save_for_backward(w)
        return log_z

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the marginals' own backward is needed
            mu = _Marginals.apply(w, ctx.batch, ctx.mu)
            return grad.reshape(-1, 1, 1) * mu, None
        # a plain backward: one product in float64 and one conversion, no graph
        g = as_numpy(grad).reshape(-1, 1, 1)
        return torch.from_numpy(ctx.mu * g).to(device=w.device, dtype=w.dtype), None


class _Marginals(torch.autograd.Function):
    """Edge marginals (``cached``: already computed with log Z); backward:
    the covariance of edges with the incoming gradient (exact)."""

    @staticmethod
    def forward(ctx, w, batch, cached):
        mu = cached if cached is not None else batch.run(w, marginals=True)[1]
        ctx.batch = batch
        ctx.save_for_backward(w)
        return torch.from_numpy(mu).to(device=w.device, dtype=w.dtype)

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        with torch.no_grad():
            cov = ctx.batch.covariance(w, grad)
        if torch.is_grad_enabled() and (w.requires_grad or grad.requires_grad):
            cov = _ThirdOrder.apply(cov, w, grad)  # create_graph: a graph that refuses
        return cov, None, None


class _ThirdOrder(torch.autograd.Function):
    """The covariance (the marginals' gradient) in a graph built for higher
    derivatives: a node joined to the scores and the incoming gradient, so
    that differentiating through it reaches it and raises, where it would
    otherwise give zeros.  (``once_differentiable`` hangs its error on new
    leaves, which ``torch.autograd.grad(..., w)`` leaves out: the derivative
    came back as zero.)"""

    @staticmethod
    def forward(ctx, cov, w, grad):
        return cov.clone()

    @staticmethod
    def backward(ctx, _):
        raise RuntimeError("third derivatives of log Z (derivatives of the gradient of the "
                           "marginals, e.g. second derivatives of the entropy) are not "
                           "implemented")

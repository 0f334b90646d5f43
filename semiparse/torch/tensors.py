"""The tensors the queries take and give: the weights' checks, integer
tensors (heads, labels) and their edge indicators, float64 numpy copies,
and results in the weights' dtype, refused where they are beyond it."""
import math

import numpy as np
import torch

DTYPES = (torch.float32, torch.float64)
MAX_RESULT = 10 ** 8  # entries of a result: the (k, B, N) heads of sample and kbest, heads_to_edges


def as_numpy(t):
    """A float64 CPU numpy view or copy of a tensor (no gradient); a lazily
    negated or conjugated view (``z.conj().imag``) is materialized first,
    as numpy cannot take one."""
    return t.detach().to(device="cpu", dtype=torch.float64).resolve_neg().resolve_conj().numpy()


def storage(x):
    """What keeps tensor ``x`` from being read: " on the meta device", " of
    layout ...", " nested (torch.nested)", or "" for a dense tensor holding
    values."""
    if x.is_meta:
        return " on the meta device"
    if x.is_nested:
        return " nested (torch.nested)"
    return "" if x.layout == torch.strided else f" of layout {x.layout}"


def described(x):
    """Tensor ``x`` for a message: its shape (none for a nested tensor), its
    dtype and :func:`storage`."""
    return ("a tensor" if x.is_nested else str(tuple(x.shape))) + f" of {x.dtype}{storage(x)}"


def checked_weights(weights):
    """``weights`` if they are a dense float32 or float64 tensor of edge
    scores ``(B, n+1, n+1)`` or labelled ones ``(B, n+1, n+1, L)``, else
    ValueError."""
    if not torch.is_tensor(weights):
        raise ValueError(f"weights must be a torch tensor, got {type(weights).__name__}")
    if weights.dtype not in DTYPES:
        raise ValueError(f"weights must be float32 or float64, got {weights.dtype}")
    if storage(weights):
        raise ValueError(f"weights must be a dense tensor holding values, got one{storage(weights)}")
    if weights.dim() not in (3, 4) or weights.shape[1] != weights.shape[2] or weights.shape[1] < 1:
        raise ValueError(f"weights have shape {tuple(weights.shape)}: expected (B, n+1, n+1) "
                         "edge scores or (B, n+1, n+1, L) labelled ones, w[b, h, d] the edge h -> d")
    if weights.dim() == 4 and weights.shape[3] == 0:
        raise ValueError("labelled weights need at least one label (a label axis of size 0)")
    return weights


def integers(x, name, shape=None):
    """``x`` as a dense tensor of integers holding values, of ``shape``
    (None: any ``(B, N)``), or ValueError."""
    wanted = "(B, N)" if shape is None else shape
    try:
        x = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"{name} must be integers of shape {wanted}, got {type(x).__name__}") from None
    if (storage(x) or x.dtype.is_floating_point or x.dtype.is_complex
            or x.dtype == torch.bool or x.dim() != 2 or shape is not None and x.shape != shape):
        raise ValueError(f"{name} must be integers of shape {wanted}, got {described(x)}")
    return x


def padded(rows, width, fill=-1):
    """``(len(rows), width)`` long: each row's entries first, then ``fill``
    (a row of None: all ``fill``)."""
    out = torch.full((len(rows), width), fill, dtype=torch.long)
    for b, row in enumerate(rows):
        if row is not None:
            out[b, :len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def beyond(b, what, dtype):
    """The ValueError of batch item ``b``'s ``what``, beyond ``dtype``'s range."""
    return ValueError(f"batch item {b}: {what} is beyond the range of {dtype} "
                      f"(+-{torch.finfo(dtype).max:.2g})")


def in_dtype(x, dtype, what):
    """Float64 ``x`` (B,) in ``dtype``, or ValueError naming the first batch
    item where it is not finite there (beyond the dtype)."""
    x = x.to(dtype)
    bad = torch.nonzero(~torch.isfinite(x.detach())).flatten().tolist()
    if bad:
        raise beyond(bad[0], what, dtype)
    return x


def row_sums(terms, dtype, what):
    """``(B,)`` the sums of the rows of float64 ``terms`` in ``dtype``, taken
    at a power-of-two scale where a partial sum overflows (exact, and
    differentiable); ValueError naming the first batch item whose sum is
    beyond the dtype."""
    total = terms.sum(1)
    if not torch.isfinite(total.detach()).all():
        scale = 2.0 ** max(terms.shape[1], 2).bit_length()
        total = (terms / scale).sum(1) * scale
    return in_dtype(total, dtype, what)


def heads_to_edges(heads, n_labels=None, labels=None):
    """``(B, N, N)`` 0/1 float64 edge indicators of ``(B, N)`` heads (``-1``
    ignored); with ``labels`` and ``n_labels``, ``(B, N, N, L)``.
    ValueError for heads outside -1..N-1, a label outside 0..L-1 at a word
    with a head, or only one of ``labels`` and ``n_labels``."""
    heads = integers(heads, "heads")
    B, N = heads.shape
    bad = heads[(heads < -1) | (heads >= N)]
    if len(bad):
        raise ValueError(f"heads must lie in -1..{N - 1} (-1: no head), got {bad[0].item()}")
    if (labels is None) != (n_labels is None):
        raise ValueError("labels and n_labels go together: give both or neither")
    if labels is not None:
        if isinstance(n_labels, bool) or not isinstance(n_labels, (int, np.integer)) or n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}")
        labels = integers(labels, "labels", tuple(heads.shape))
        bad = labels[(heads >= 0) & ((labels < 0) | (labels >= n_labels))]
        if len(bad):
            raise ValueError(f"labels must lie in 0..{n_labels - 1} where a head is given, "
                             f"got {bad[0].item()}")
    shape = (B, N, N) if labels is None else (B, N, N, int(n_labels))
    if math.prod(shape) > MAX_RESULT:
        raise ValueError(f"the result would hold {' x '.join(map(str, shape))} entries, more than "
                         f"{MAX_RESULT:.0e}")
    out = torch.zeros(shape, dtype=torch.float64)
    b, d = torch.nonzero(heads >= 0, as_tuple=True)
    if labels is None:
        out[b, heads[b, d], d] = 1.0
    else:
        out[b, heads[b, d], d, labels[b, d]] = 1.0
    return out

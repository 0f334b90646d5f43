"""``semiparse bench torch``: semiparse.torch's log partition against PyTorch baselines.

For batches of 1 and 32 sentences of 10 to 80 words (random normal scores,
projective.grammar), the time per sentence of

* ``semiparse.torch.log_partition``: forward alone (the Cython inside pass)
  and forward + backward (inside and outside in the forward pass, the
  marginals handed back);
* a plain PyTorch Eisner inside pass (first-order, log space, vectorized
  over the batch and each width's spans, autograd for the backward pass),
  kept here as the baseline that always runs;
* torch-struct's ``DependencyCRF(...).partition`` (Rush 2020), when
  ``torch_struct`` can be imported (its package from the index fails on
  current PyTorch), in the same run.

Everything on one CPU thread (``torch.set_num_threads(1)``, ``n_jobs=1``),
thread CPU time, medians of alternating rounds; every table first checks
that the implementations agree.  With a GPU (``--device cuda``) a second
table times the round trip: scores on the GPU copied to the CPU, the
kernels, the log partition and gradient copied back, against the same call
on CPU tensors.
"""
import statistics
import time

from semiparse.cli import seconds

TARGET = 20.0  # forward + backward at batch 32, 40 words: >= 20x torch-struct
# The largest batch timed: the Eisner baseline keeps a few (B, n+1, n+1)
# tensors per span width for its backward pass.
MAX_CELLS = 10 ** 7


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "torch", help="semiparse.torch's log partition (forward, backward) vs PyTorch Eisner "
        "and torch-struct",
        description="Time per sentence of semiparse.torch.log_partition, forward and forward + "
        "backward, against a plain PyTorch Eisner inside pass and torch-struct's DependencyCRF "
        "(when importable), on one CPU thread; with --device cuda also the GPU round trip.")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--seconds", type=seconds(60), default=0.1,
                        help="minimum CPU seconds per timing, above 0 and at most 60 (default 0.1)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"),
                        help="the scores' dtype (default float32, what models use; semiparse "
                        "computes in float64 either way)")
    parser.add_argument("--device", default=None,
                        help="also time the round trip from this device (e.g. cuda)")
    parser.set_defaults(func=run)
    return parser


def eisner_log_partition(w, lengths=None):
    """log Z over projective trees (the root, position 0, may take several
    children) of ``(B, N, N)`` scores ``w[b, h, d]``, by first-order Eisner
    in log space in plain PyTorch: the charts as one tensor per width (the
    entries ``[i, i + k]`` of every sentence), so autograd differentiates it
    without in-place writes.  ``lengths``: words per sentence (None: N - 1)."""
    import torch

    B, N, _ = w.shape
    # edges into the root are impossible; a large finite score keeps the
    # gradients of all-impossible spans exactly 0 (exp(-1e4) is 0) rather than NaN
    w = w.clone()
    w[:, :, 0] = -1e4
    zero = w.new_zeros(B, N)
    cr, cl, ir, il = [zero], [zero], [None], [None]  # complete / incomplete, right / left heads
    for k in range(1, N):
        span = N - k
        right = torch.diagonal(w, offset=k, dim1=1, dim2=2)   # w[i, i + k]
        left = torch.diagonal(w, offset=-k, dim1=1, dim2=2)   # w[i + k, i]
        split = torch.logsumexp(torch.stack([cr[x][:, :span] + cl[k - 1 - x][:, x + 1:x + 1 + span]
                                             for x in range(k)]), 0)
        ir.append(split + right)
        il.append(split + left)
        cr.append(torch.logsumexp(torch.stack([ir[x][:, :span] + cr[k - x][:, x:x + span]
                                               for x in range(1, k + 1)]), 0))
        cl.append(torch.logsumexp(torch.stack([cl[x][:, :span] + il[k - x][:, x:x + span]
                                               for x in range(k)]), 0))
    if lengths is None:
        return cr[N - 1][:, 0]
    return torch.stack([cr[int(n)][b, 0] for b, n in enumerate(lengths)])


def torch_struct_partition():
    """``f(w)`` giving torch-struct's log partition of our ``(B, N, N)``
    scores (its potentials: the words' edges with the root's on the
    diagonal), or the reason it cannot be used."""
    try:
        from torch_struct import DependencyCRF
    except Exception as exc:  # not installed, or failing on this PyTorch
        return None, f"cannot be imported: {type(exc).__name__}: {exc}"

    def partition(w):
        import torch

        if not w.requires_grad:
            # without a gradient its 0.5 package fills a view of a leaf that requires grad
            # in place, which current PyTorch refuses: the forward pass records the graph
            w = w.detach().requires_grad_(True)
        n = w.shape[1] - 1
        eye = torch.eye(n, dtype=torch.bool)
        root = w[:, 0, 1:].unsqueeze(1).expand(-1, n, -1)  # root[b, i, d] = w[b, 0, d]
        return DependencyCRF(torch.where(eye, root, w[:, 1:, 1:])).partition

    import torch

    try:  # a trial, forward and backward: its package may fail on this PyTorch
        trial = torch.zeros(1, 4, 4, dtype=torch.float64, requires_grad=True)
        partition(trial).sum().backward()
    except Exception as exc:
        return None, f"fails on PyTorch {torch.__version__}: {type(exc).__name__}: {exc}"
    return partition, None


def run(args):
    from semiparse.cli import UserError
    from semiparse.neural import _torch
    from semiparse.bench._timing import alternating, fmt_time

    torch = _torch()
    from semiparse.torch import log_partition

    if min(args.lengths + args.batches) < 1 or args.rounds < 1:
        raise UserError("--lengths and --batches must be >= 1, --rounds >= 1")
    if max(args.batches) * (max(args.lengths) + 1) ** 2 > MAX_CELLS:
        raise UserError(f"--batches {max(args.batches)} --lengths {max(args.lengths)}: at most "
                        f"{MAX_CELLS:.0e} scores per batch, BATCH x (LENGTH + 1)^2")
    if args.device:  # before the CPU part, not after it
        from semiparse.neural import check_device

        check_device(args.device)
    torch.set_num_threads(1)
    ts_partition, why = torch_struct_partition()
    print("semiparse.torch.log_partition vs PyTorch baselines, projective.grammar, random normal "
          f"{args.dtype} scores; thread CPU time per sentence, one thread, medians of "
          f"{args.rounds} alternating rounds")
    if ts_partition is None:
        print(f"torch-struct {why}; its columns are left out")
    head = (f"{'batch':>5} {'n':>4}  {'semiparse fwd':>13} {'fwd+bwd':>10}  {'eisner fwd':>10} "
            f"{'fwd+bwd':>10}  {'eisner/ours':>11}")
    if ts_partition is not None:
        head += f"  {'t-s fwd':>10} {'fwd+bwd':>10}  {'t-s/ours':>9}"
    print(head)
    ratios = {}
    for B in args.batches:
        for n in args.lengths:
            gen = torch.Generator().manual_seed(n * 1000 + B)
            w = torch.randn(B, n + 1, n + 1, generator=gen, dtype=getattr(torch, args.dtype))
            _check_agreement(torch, log_partition, eisner_log_partition, ts_partition, w)
            fns = [lambda: log_partition(w), _fwd_bwd(w, log_partition),
                   lambda: eisner_log_partition(w), _fwd_bwd(w, eisner_log_partition)]
            if ts_partition is not None:
                fns += [lambda: ts_partition(w), _fwd_bwd(w, ts_partition)]
            times = [t / B for t in alternating(fns, args.seconds, args.rounds)]
            line = (f"{B:>5} {n:>4}  {fmt_time(times[0]):>13} {fmt_time(times[1]):>10}  "
                    f"{fmt_time(times[2]):>10} {fmt_time(times[3]):>10}  "
                    f"{times[3] / times[1]:>10.1f}x")
            if ts_partition is not None:
                ratios[B, n] = times[5] / times[1]
                line += (f"  {fmt_time(times[4]):>10} {fmt_time(times[5]):>10}  "
                         f"{ratios[B, n]:>8.1f}x")
            print(line, flush=True)
    print("(eisner/ours and t-s/ours: forward + backward of the baseline over ours)")
    if (32, 40) in ratios:
        verdict = "met" if ratios[32, 40] >= TARGET else "NOT met"
        print(f"target >= {TARGET:.0f}x torch-struct, forward + backward at batch 32, 40 words: "
              f"{ratios[32, 40]:.1f}x, {verdict}")
    if args.device:
        _round_trip(torch, log_partition, args, fmt_time)
    return 0


def _fwd_bwd(w, partition):
    def call():
        x = w.detach().requires_grad_(True)
        partition(x).sum().backward()
        return x.grad
    return call


def _check_agreement(torch, ours, eisner, ts_partition, w):
    """log Z and its gradient agree between the implementations (1e-8 in
    float64, 1e-4 in float32)."""
    from semiparse.cli import UserError

    grads = []
    for f in [ours, eisner] + ([ts_partition] if ts_partition is not None else []):
        x = w.detach().requires_grad_(True)
        value = f(x)
        value.sum().backward()
        grads.append((value.detach(), x.grad))
    for name, (value, grad) in zip(["eisner", "torch-struct"], grads[1:]):
        # torch-struct has no edges into the root or self-loops: compare the rest
        mask = torch.ones_like(grad, dtype=torch.bool)
        mask[:, :, 0] = False
        mask[:, torch.arange(w.shape[1]), torch.arange(w.shape[1])] = False
        tol = 1e-8 if w.dtype == torch.float64 else 1e-4
        if not (torch.allclose(value, grads[0][0], rtol=tol, atol=tol)
                and torch.allclose(grad[mask], grads[0][1][mask], rtol=tol, atol=tol)):
            raise UserError(f"{name} disagrees with semiparse.torch on {tuple(w.shape)} scores")


def _round_trip(torch, log_partition, args, fmt_time):
    """The cost of scores on another device: copied to the CPU for the
    kernels, results copied back; wall time (the copies synchronize)."""
    device = torch.device(args.device)
    # on the CPU itself nothing is copied: the second column times the same call again
    theirs = "cpu again" if device.type == "cpu" else f"{device} tensors"
    print(f"\nround trip from {device}: forward + backward per batch, wall time, median of "
          f"{args.rounds * 5} calls")
    print(f"{'batch':>5} {'n':>4}  {'cpu tensors':>12} {theirs:>14}  "
          f"{'copies alone':>12}  {'extra':>8}")
    for B in args.batches:
        for n in args.lengths:
            w_cpu = torch.randn(B, n + 1, n + 1, dtype=getattr(torch, args.dtype))
            w_dev = w_cpu.to(device)

            def timed(fn):
                samples = []
                for _ in range(args.rounds * 5):
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    start = time.perf_counter()
                    fn()
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    samples.append(time.perf_counter() - start)
                return statistics.median(samples)

            def copies():
                w_dev.cpu()
                torch.empty(B, dtype=w_cpu.dtype).to(device)
                torch.empty_like(w_cpu).to(device)

            cpu = timed(_fwd_bwd(w_cpu, log_partition))
            dev = timed(_fwd_bwd(w_dev, log_partition))
            alone = timed(copies)
            print(f"{B:>5} {n:>4}  {fmt_time(cpu):>12} {fmt_time(dev):>14}  {fmt_time(alone):>12}  "
                  f"{dev / cpu:>7.2f}x", flush=True)

"""A neural transition parser trained with the project's exact oracles.

Kiperwasser and Goldberg 2016's BiLSTM feature extractor and MLP scorer, for
any declared transition system, trained in lockstep minibatches with one
``oracle.scores_batch`` call per step (static, non-deterministic or dynamic
oracle with exploration); see docs/neural.md.  Needs PyTorch (``pip install
"semiparse[neural]"``); nothing outside this package imports it, and
importing this package does not either (:func:`semiparse.neural.io.is_neural_model`
works without it).
"""
from contextlib import contextmanager


def _torch():
    """Import torch, or raise ImportError saying how to install it."""
    try:
        import torch
    except ModuleNotFoundError:
        raise ImportError('the neural parser needs PyTorch: pip install "semiparse[neural]"') from None
    return torch


@contextmanager
def cpu_threads(count):
    """torch's CPU threads set to ``count`` inside the block, its own setting
    given back after (``semiparse parse --threads``)."""
    torch = _torch()
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def check_device(device):
    """ValueError unless torch can put the network on ``device``: ``cpu``, or
    ``cuda[:N]`` where torch finds that CUDA device.  Another device type of
    torch's (``mps``, ``xpu``, ...) is refused with what is wrong with it
    here: this build of PyTorch lacks it, this machine has none, or the
    neural parsers do not run on it."""
    from semiparse.neural.options import check_device_name

    other = _other_device(device)
    if other is not None:
        raise ValueError(f"device {device}: {other}; the neural parsers run on cpu or cuda[:N]")
    check_device_name(device)
    if device != "cpu":
        torch = _torch()
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count <= int(device.partition(":")[2] or 0):
            raise ValueError(f"device {device}: torch finds "
                             f"{count or 'no'} CUDA device{'s' if count != 1 else ''}")


def _other_device(device):
    """What is wrong with ``device`` where it names a device type of torch's
    other than cpu and cuda (None for any other name, or without torch)."""
    import re

    match = re.fullmatch(r"([a-z]+)(:\d+)?", device) if isinstance(device, str) else None
    if match is None or match.group(1) in ("cpu", "cuda"):
        return None
    try:
        import torch
    except ModuleNotFoundError:
        return None
    kind = match.group(1)
    try:
        torch.device(device)
    except (RuntimeError, ValueError):
        return None  # not a device torch knows
    backend = getattr(torch.backends, kind, None) if kind == "mps" else getattr(torch, kind, None)
    built = getattr(backend, "is_built", lambda: backend is not None)()
    if not built:
        return f"this build of PyTorch has no {kind.upper()} support"
    if not getattr(backend, "is_available", lambda: False)():
        return f"torch finds no {kind.upper()} device on this machine"
    return f"torch has it, but semiparse does not run its networks on {kind.upper()}"


def load(path, system=None, device="cpu"):
    """A :class:`~semiparse.neural.parser.NeuralModel` from a file (see :func:`semiparse.neural.io.load`)."""
    _torch()
    from semiparse.neural.io import load as _load

    return _load(path, system=system, device=device)


def parse_sentences(model, sentences, batch_size=64, with_dead_ends=False, root="single"):
    """``(heads, labels)`` of each :class:`semiparse.treebank.data.Tree`, by
    batched greedy decoding (see :meth:`NeuralModel.parse`); ``root``:
    ``"single"`` (the default) gives each sentence exactly one word attached
    to the root, ``"any"`` keeps the model's parse
    (:mod:`semiparse.training.single_root`)."""
    return model.parse(list(sentences), batch_size=batch_size, with_dead_ends=with_dead_ends,
                       root=root)


def train(trees, system="arc_standard", dev=None, progress=False, log=None, **options):
    """Train a parser on :class:`~semiparse.treebank.data.Tree` objects;
    ``options`` are the fields of :class:`semiparse.neural.options.Options`."""
    _torch()
    from semiparse.neural.options import Options
    from semiparse.neural.trainer import NeuralTrainer

    return NeuralTrainer(system, Options(**options), progress=progress, log=log).run(trees, dev=dev)

"""Neural model files and training checkpoints.

A model file is one ``torch.save`` archive (a zip) of a dict:

``format``  ``"semiparse-neural-model"`` (the first key: :func:`is_neural_model`
            finds it at the start of the archive's ``data.pkl`` without torch)
``version`` 1
``meta``    a JSON object (text): the system record of the perceptron models
            (``system``, ``system_definition``, ``system_sha256``,
            ``system_grammar``: :func:`semiparse.perceptron.model.system_record`),
            ``transitions`` (the output columns), ``positions`` (the feature
            positions), ``vocab`` (the symbol tables and labels), ``options``,
            ``root_label``, ``nonproj``, ``oracle`` and the training
            ``history``
``state``   the network's weights (tensor name -> CPU tensor)

It holds tensors, strings and numbers only and is read with
``torch.load(weights_only=True)``, which runs no pickled code.  A checkpoint
(``semiparse train --checkpoint``) is the same dict with the format
``"semiparse-neural-checkpoint"`` and the optimizer, the random states, the
epoch reached, the best weights so far, and the training data and dev set of
the run (:func:`data_record`).  Reading checks every zip member's CRC-32
(``torch.load`` does not), so damaged bytes are refused, not loaded.
"""
import copy
import hashlib
import io
import json
import math
import os
import warnings
import zipfile

from semiparse.transitions.systems.loading import definition_sha256
from semiparse.treebank.outputs import open_output
from semiparse.errors import ModelWarning
from semiparse.perceptron.model import (SYSTEM_KEYS, ModelError, check_model_file, check_same_system,
                                   model_path, recorded_system, system_record)

FORMAT = "semiparse-neural-model"
CHECKPOINT = "semiparse-neural-checkpoint"
VERSION = 1


def _format_of(path):
    """What a file is, without torch: ``FORMAT``, ``CHECKPOINT``,
    ``"perceptron"`` (a perceptron model's archive), ``""`` (another zip
    archive) or None (not a readable zip archive)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            name = next((n for n in names if n.endswith("/data.pkl")), None)
            if name is None:
                return "perceptron" if "meta.npy" in names else ""
            with archive.open(name) as stream:
                head = stream.read(256)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, RuntimeError):
        return None  # ValueError: a name not UTF-8; RuntimeError: an unknown zip version
    for fmt in (FORMAT, CHECKPOINT):
        if b"format" in head[:32] and fmt.encode() in head[:64]:
            return fmt
    return ""


def _starts_like_zip(path):
    with open(path, "rb") as stream:
        return stream.read(4) == b"PK\x03\x04"


def is_neural_model(path):
    """Whether ``path`` is a neural model file (a cheap look at its first
    bytes; False for a missing or unreadable file, a directory, a
    perceptron model)."""
    return os.path.isfile(path) and _format_of(path) == FORMAT


def refuse_checkpoint(path, found=None):
    """Raise ModelError if ``path`` is a training checkpoint (``found``: its
    :func:`_format_of`, if read already), saying how to get the model of its
    run (resume it: docs/neural.md)."""
    if (_format_of(path) if found is None else found) == CHECKPOINT:
        raise ModelError(f"{path}: is a training checkpoint (semiparse train --checkpoint), not a "
                         f"model; resuming its run writes the model: semiparse train TRAIN.conllu "
                         f"--model bilstm --resume {path} -o MODEL, with the run's options and "
                         f"training data")


def _payload(model, fmt):
    meta = {
        **system_record(model.transition_system),
        "transitions": list(model.transitions.names),
        "positions": list(model.positions),
        "vocab": model.vocab.to_dict(),
        "options": model.options.to_dict(),
        **{k: v for k, v in model.meta.items()},
    }
    state = {k: v.detach().cpu() for k, v in model.net.state_dict().items()}
    return {"format": fmt, "version": VERSION, "meta": json.dumps(meta), "state": state}


def _write(payload, path):
    import torch

    path = model_path(path)
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    with open_output(path, binary=True) as stream:
        stream.write(buffer.getvalue())


def save(model, path):
    """Write a :class:`NeuralModel` (atomically, :func:`semiparse.treebank.outputs.open_output`)."""
    _write(_payload(model, FORMAT), path)


def _reason(exc):
    """The first line of an exception's message (two where the first ends in
    a colon, as torch's load_state_dict's), or its type's name."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    return " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]


def _read(path, fmt):
    import pickle

    import torch

    path = model_path(path)
    check_model_file(path, "model file" if fmt == FORMAT else "training checkpoint (--resume)")
    found = _format_of(path)
    if fmt == FORMAT:
        refuse_checkpoint(path, found)
    if found is None and _starts_like_zip(path):
        raise ModelError(f"{path}: not a readable semiparse model (truncated or corrupt zip archive)")
    if found != fmt:
        what = "neural model" if fmt == FORMAT else "training checkpoint"
        kind = {FORMAT: "neural model", "perceptron": "perceptron model"}.get(found)
        raise ModelError(f"{path}: not a semiparse {what}" + (f" (it is a {kind})" if kind else ""))
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()  # torch.load does not check the CRC-32 of what it reads
        if damaged is not None:
            raise ValueError(f"{damaged} fails its CRC-32 check")
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError,
            zipfile.BadZipFile) as exc:
        raise ModelError(f"{path}: not a readable semiparse model (truncated or corrupt: "
                         f"{_reason(exc)})") from None
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ModelError(f"{path}: not a semiparse neural model")
    if payload.get("version") != VERSION:
        raise ModelError(f"{path}: model format version {payload.get('version')!r} "
                         f"(this semiparse reads {VERSION})")
    try:
        meta = json.loads(payload["meta"])
        if not isinstance(meta, dict):
            raise ValueError("meta is not an object")
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: inconsistent model: {exc}") from None
    except RecursionError:  # json recurses once per level of nesting
        raise ModelError(f"{path}: inconsistent model: its meta data is nested too deeply") from None
    return payload, meta


def _build(path, payload, meta, system=None):
    from semiparse.neural.options import Options
    from semiparse.neural.parser import NeuralModel
    from semiparse.neural.vocab import Vocab

    recorded = recorded_system(path, meta)
    if system is not None:
        check_same_system(path, recorded, system)
    reserved = SYSTEM_KEYS + ("transitions", "positions", "vocab", "options")
    try:
        options = Options.from_dict(meta["options"])
        model = NeuralModel(recorded, Vocab.from_dict(meta["vocab"]), options,
                            {k: v for k, v in meta.items() if k not in reserved})
        if list(model.transitions.names) != meta["transitions"]:
            raise ValueError("its transitions do not match its system")
        if list(model.positions) != meta["positions"]:
            raise ValueError("its feature positions do not match its options")
        model.net.load_state_dict(payload["state"])
        if not model.finite():
            raise ValueError("its weights are not all finite numbers (NaN or infinity)")
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{path}: inconsistent model: {_reason(exc)}") from None
    return model


def load(path, system=None, device="cpu"):
    """Read a model written by :func:`save`; ``system``, if given (a name,
    file or ``module:attr``), must have the definition the model records.
    Every problem is a :class:`semiparse.perceptron.ModelError` naming the file."""
    payload, meta = _read(path, FORMAT)
    return _build(path, payload, meta, system).to(device)


def data_record(trees):
    """What a checkpoint records of its training or dev trees (None for
    none): their file (for messages), number and the sha256 of their CoNLL-U
    text as read (of their words, tags, heads and labels for trees made in
    memory)."""
    if trees is None:
        return None
    digest = hashlib.sha256()
    for tree in trees:
        digest.update(tree.source.raw if tree.source is not None else json.dumps(
            [tree.forms, tree.tags, list(tree.heads), tree.labels],
            default=int).encode() + b"\n")  # int: numpy's integers
    file = next((t.source.file for t in trees if t.source is not None), "<trees>")
    return {"file": str(file), "sentences": len(trees), "sha256": digest.hexdigest()}


def _named(record):
    if record is None:
        return "none"
    return f"{record['file']} ({record['sentences']} sentences, sha256 {record['sha256'][:12]})"


def _check_train(path, state, saved, model, n_examples, train):
    """ModelError unless the run resumed trains on the data of the
    checkpoint (``train``: the :func:`data_record` of its trees), whose
    examples its ``order`` numbers.  A checkpoint written before training
    data were recorded (no ``train``) is checked by its vocabulary and number
    of examples only, as then."""
    then, order = state.get("train"), state["order"]
    if then is None:
        if saved.vocab.to_dict() != model.vocab.to_dict() or len(order) != n_examples:
            raise ModelError(f"{path}: the checkpoint was made with other training data")
    elif then["sha256"] != train["sha256"]:
        raise ModelError(f"{path}: the checkpoint was made with other training data: "
                         f"{_named(then)}, now {_named(train)}")
    elif len(order) != n_examples:
        raise ModelError(f"{path}: inconsistent checkpoint: order numbers {len(order)} training "
                         f"examples, its training data make {n_examples}")


def _check_dev(path, state, dev):
    """ModelError unless the run resumed is scored on the dev set of the
    checkpoint (:func:`data_record` ``dev``): the best epoch is chosen by dev
    LAS.  A checkpoint written before dev sets were recorded tells from its
    history only whether it had one; it is resumed with a warning."""
    if "dev" not in state:
        had = any("las" in record for record in state["history"])
        if had != (dev is not None):
            raise ModelError(f"{path}: the checkpoint was made {'with' if had else 'without'} a dev "
                             f"set (--dev), which chooses the best epoch; resume it "
                             f"{'with the same one' if had else 'without one'}")
        if had:
            warnings.warn(f"{path}: the checkpoint does not record its dev set (an earlier "
                          f"semiparse wrote it): make sure --dev is the one its run had", ModelWarning)
        return
    then = state["dev"]
    if (then or {}).get("sha256") != (dev or {}).get("sha256"):
        raise ModelError(f"{path}: the checkpoint was made with another dev set (--dev), which "
                         f"chooses the best epoch: {_named(then)}, now {_named(dev)}")


def save_checkpoint(path, model, optimizer, epoch, best, rng, order, history, train, dev=None):
    """Write the state of a run after ``epoch`` epochs (see the module doc);
    ``train`` and ``dev``: the :func:`data_record` of its trees."""
    import torch

    payload = _payload(model, CHECKPOINT)
    payload.update({
        "epoch": epoch, "optimizer": optimizer.state_dict(),
        "best_score": float(best[0]),
        "best_state": {k: v.detach().cpu() for k, v in best[1].items()} if best[1] else {},
        "random": rng.getstate(), "torch_random": torch.get_rng_state(), "order": list(order),
        "history": json.dumps(history), "train": json.dumps(train), "dev": json.dumps(dev),
    })
    _write(payload, path)


# The fields save_checkpoint adds to a model's, besides train and dev (which an
# earlier semiparse did not write), and those of a data_record
RUN_STATE = ("epoch", "order", "history", "best_score", "best_state", "optimizer", "random",
             "torch_random")
RECORD = {"file": str, "sentences": int, "sha256": str}


def _run_state(path, payload, saved, optimizer):
    """The run-state fields of a checkpoint, JSON decoded, each checked
    against the others and against ``saved``, the checkpoint's own model
    (whose weights become the best ones), so that a damaged file is refused
    before the run, not in it: ModelError ``FILE: inconsistent checkpoint:
    FIELD ...``.  ``optimizer``: the run's (its class checks the state)."""
    import random

    import torch

    def bad(field, reason):
        return ModelError(f"{path}: inconsistent checkpoint: {field} {reason}")

    missing = next((k for k in RUN_STATE if k not in payload), None)
    if missing is not None:
        raise bad(missing, "is missing")
    state = {k: payload[k] for k in RUN_STATE + ("train", "dev") if k in payload}
    for field in (f for f in ("history", "train", "dev") if f in state):
        try:
            state[field] = json.loads(state[field])
        except (TypeError, ValueError, RecursionError) as exc:
            raise bad(field, f"is not JSON text ({_reason(exc)})") from None
    epoch, order, history = state["epoch"], state["order"], state["history"]
    if type(epoch) is not int or epoch < 1:
        raise bad("epoch", f"must be a whole number >= 1, got {epoch!r:.60}")
    if not (isinstance(history, list) and all(isinstance(r, dict) for r in history)
            and [r.get("epoch") for r in history] == list(range(1, epoch + 1))):
        raise bad("history", f"does not hold one record per epoch done ({epoch})")
    if not (isinstance(order, list) and all(type(i) is int for i in order)
            and sorted(order) == list(range(len(order)))):
        raise bad("order", "is not an order of the training examples (0, 1, ... each once)")
    for field in ("train", "dev"):
        record = state.get(field)
        if record is not None and not (isinstance(record, dict) and all(
                isinstance(record.get(k), t) for k, t in RECORD.items())):
            raise bad(field, "is neither null nor a record of a file, its number of sentences and "
                             "their sha256")
    score = state["best_score"]
    if type(score) not in (int, float) or not math.isfinite(score):
        raise bad("best_score", f"must be a finite number, got {score!r:.60}")
    try:
        if not isinstance(state["best_state"], dict):
            raise TypeError(f"a {type(state['best_state']).__name__}")
        if state["best_state"]:
            saved.net.load_state_dict(state["best_state"])
            if not saved.finite():
                raise ValueError("not all finite numbers")
    except (TypeError, ValueError, RuntimeError) as exc:
        raise bad("best_state", f"is not weights of its network ({_reason(exc)})") from None
    try:
        random.Random().setstate(state["random"])
    except (TypeError, ValueError, OverflowError) as exc:
        raise bad("random", f"is not a state of Python's random generator ({_reason(exc)})") from None
    try:
        torch.Generator().set_state(state["torch_random"])
    except (TypeError, RuntimeError) as exc:
        raise bad("torch_random", f"is not a state of torch's random generator "
                                  f"({_reason(exc)})") from None
    scratch = type(optimizer)(saved.net.parameters())
    try:
        value = state["optimizer"]
        if not (isinstance(value, dict) and isinstance(value.get("state"), dict)
                and isinstance(value.get("param_groups"), list)):
            raise ValueError("no state and param_groups")
        scratch.load_state_dict(copy.deepcopy(value))  # the step changes the tensors in place
        for param in saved.net.parameters():
            param.grad = torch.zeros_like(param)
        scratch.step()  # load_state_dict looks at the groups only; a step uses all of it
    except (AttributeError, LookupError, TypeError, ValueError, RuntimeError) as exc:
        raise bad("optimizer", f"is not the state of {type(optimizer).__name__} on its network "
                               f"({_reason(exc)})") from None
    return state


def _source(system):
    """``"FILE, "``, the file a system was read from, for messages; ``""`` for
    a shipped or registered system or one written in Python."""
    where = getattr(system, "path", None)
    if where is None or getattr(system, "shipped", True) or not os.path.isfile(where):
        return ""
    return f"{where}, "


def _grammar_form(text):
    """A completion grammar's text as its rules, so that comments and layout
    do not count (as :func:`definition_sha256` for the TOML); None for none."""
    from semiparse.grammar import Grammar

    if text is None:
        return None
    try:
        return Grammar.from_text(text).to_text()
    except ValueError:  # a recorded grammar that no longer parses: its text
        return text


def _text_sha256(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _check_system(path, meta, saved, model):
    """ModelError unless the run resumed has the transition system of the
    checkpoint: its name, the sha256 of its definition (the TOML) and its
    completion grammar (the file the TOML names, which the definition's
    sha256 does not cover), each compared with what the checkpoint records
    (its ``meta``; ``saved``: its model).  A system written in Python is
    compared by its name and transitions."""
    system = model.transition_system
    then, now = definition_sha256(saved.transition_system), definition_sha256(system)
    if (saved.system != model.system or then != now
            or list(saved.transitions.names) != list(model.transitions.names)):
        digest = lambda d: f"sha256 {d[:12]}" if d is not None else "written in Python"
        raise ModelError(f"{path}: the checkpoint was made with another transition system: "
                         f"{saved.system} ({digest(then)}), now {model.system} ({_source(system)}"
                         f"{digest(now)})")
    then_text = meta.get("system_grammar") if "system_definition" in meta else None
    now_text = system.grammar_text if now is not None else None
    spec = getattr(system, "completion_spec", None)
    file = getattr(spec, "grammar_file", None) if now_text is not None else None
    if then_text is None and now_text is not None and "system_definition" in meta:
        warnings.warn(f"{path}: the checkpoint does not record its completion grammar (an "
                      f"earlier semiparse wrote it): make sure {file or 'the grammar'} is the "
                      f"one its run had", ModelWarning)
        return
    if _grammar_form(then_text) == _grammar_form(now_text):
        return
    sha = lambda text: "none" if text is None else f"sha256 {_text_sha256(text)[:12]}"
    raise ModelError(f"{path}: the checkpoint was made with another completion grammar of "
                     f"{model.system}, which gives the dynamic oracle: {sha(then_text)}, now "
                     + (f"{file} ({sha(now_text)})" if file is not None else sha(now_text)))


def restore_checkpoint(path, model, optimizer, rng, history, n_examples, train, dev=None):
    """Load a checkpoint into a freshly built run (same options, system,
    training data and dev set: ``train`` and ``dev`` the :func:`data_record`
    of its trees, ``n_examples`` its number of training examples): the
    weights, optimizer, random states and history.  Returns
    ``(epochs done, (best score, best weights), example order)``."""
    import torch

    payload, meta = _read(path, CHECKPOINT)
    saved = _build(path, payload, meta)
    state = _run_state(path, payload, saved, optimizer)
    _check_system(path, meta, saved, model)
    run_only = ("epochs", "device", "oracle_threads")  # a resumed run may train longer, elsewhere
    before, now = saved.options.to_dict(), model.options.to_dict()
    differ = [k for k in now if k not in run_only and before[k] != now[k]]
    if differ:
        raise ModelError(f"{path}: the checkpoint was made with other options: "
                         + ", ".join(f"{k} {before[k]!r} (now {now[k]!r})" for k in differ))
    _check_train(path, state, saved, model, n_examples, train)
    if state["epoch"] > model.options.epochs:  # the run would end with more than asked
        raise ModelError(f"{path}: the checkpoint has {state['epoch']} epochs done: --epochs "
                         f"must be at least that, got {model.options.epochs}")
    _check_dev(path, state, dev)
    model.net.load_state_dict(payload["state"])
    optimizer.load_state_dict(state["optimizer"])
    rng.setstate(state["random"])
    torch.set_rng_state(state["torch_random"])
    history.extend(state["history"])
    return state["epoch"], (state["best_score"], state["best_state"] or None), state["order"]

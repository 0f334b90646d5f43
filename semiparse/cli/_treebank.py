"""Shared plumbing of the treebank commands (projectivize, count, compare-pseudo).

Input files are streamed sentence by sentence; with ``--jobs N`` batches of
sentences go to N worker processes (bounded memory, output order kept).
"""
import dataclasses
import multiprocessing
import os
import signal
import stat
import sys
from itertools import islice
from pathlib import Path

from tqdm import tqdm

from semiparse.cli import int_range
from semiparse.treebank.conllu import (ON_ERROR, ConlluError, UnknownHead, apply_policy,
                                       count_sentences, read_conllu)

BATCH = 512  # sentences per batch handed to the worker processes
PROGRESS_MIN = 300  # files with more sentences than this get a progress bar
MIN_PER_WORKER = 16  # sentences of the first batch per worker process started


def add_input_options(parser):
    """``--on-error``, ``--multiple-roots``, ``--root``, ``--jobs``."""
    parser.add_argument(
        "--on-error", choices=ON_ERROR, default="fail",
        help="bad tree: stop with FILE:LINE: reason (fail, default), drop the "
        "sentence (skip) or copy it unchanged (keep); both warn on stderr",
    )
    parser.add_argument(
        "--multiple-roots", choices=("error", "warn"), default="error",
        help="several words attached to 0: an error (UD, default) or a warning",
    )
    parser.add_argument(
        "--root", choices=("single", "any"), default="single",
        help="single (default): trees with one word on the root, as UD requires "
        "(for gold trees that have one); any: the root may take several "
        "children (Nederhof 2019, Table 3)",
    )
    parser.add_argument(
        "--jobs", type=positive_int, default=1, metavar="N",
        help="worker processes (default 1)",
    )


positive_int = int_range(1)


def add_partial_option(parser, what):
    """``--partial``: HEAD ``_`` is an unknown head (docs/treebanks.md, Partial trees)."""
    parser.add_argument(
        "--partial", action="store_true",
        help=f"accept partial trees: HEAD _ is an unknown head; {what}",
    )


def expand_inputs(paths):
    """Files named, with directories replaced by their ``*.conllu`` files."""
    files = []
    for name in paths:
        path = Path(name)
        if name != "-" and path.is_dir():
            found = sorted(path.rglob("*.conllu"))
            if not found:
                raise ValueError(f"{path}: no .conllu files in this directory")
            files.extend(str(p) for p in found)
        else:
            files.append(name)
    seen = {}
    for name in files:
        key = _identity(name)
        if key in seen:
            if name == "-" == seen[key]:
                raise ValueError("-: standard input named twice: it can be read only once")
            if name == seen[key]:
                raise ValueError(f"{name}: named twice (directly or through a directory): "
                                 f"each file is read once")
            raise ValueError(f"{name}: the same file as {seen[key]} (through a link, a directory "
                             f"or standard input): each file is read once")
        seen[key] = name
    return files


def _identity(name):
    """What tells two named inputs apart: the file behind them (``-`` is
    standard input's, as ``/dev/stdin`` or a link to the file it reads),
    else the resolved path (for one that does not exist: its error comes
    when it is read)."""
    try:
        info = os.fstat(0) if name == "-" else os.stat(name)
    except OSError:
        return name if name == "-" else os.path.realpath(name)
    return info.st_dev, info.st_ino


def use_single_root(root, heads):
    """``--root single`` applies to gold trees with one word on the root."""
    return root == "single" and heads.count(0) == 1


def progress(path):
    """A tqdm bar for files of more than a few hundred sentences (stderr, TTY only).

    Sentences are counted ahead only in regular files: a pipe or FIFO can be
    read once, by the command itself; and only for a terminal, where a bar
    is shown (the count costs a pass over the file)."""
    if path == "-" or not sys.stderr.isatty() or not _is_regular(path):
        return tqdm(disable=True)
    total = count_sentences(path)
    return tqdm(
        total=total, unit="sent", desc=Path(path).name, leave=False,
        disable=True if total <= PROGRESS_MIN else None,
    )


def sentences(path, args, passthrough=False):
    """``(sentence, usable)`` pairs of a file under the ``--on-error`` policy
    (``passthrough``: as :func:`read_conllu` says; partial trees with
    ``--partial``)."""
    partial = getattr(args, "partial", None)
    read = read_conllu(path, multiple_roots=args.multiple_roots, passthrough=passthrough,
                       partial=bool(partial))
    if partial is None:   # a command without --partial: not to be suggested
        read = _complete_only(read, f"semiparse {args.command} reads complete trees")
    return apply_policy(read, args.on_error)


def _complete_only(items, why):
    """The sentences of ``items`` with each unknown-head error saying ``why``."""
    for item in items:
        if not isinstance(item, bytes):
            item.errors = [UnknownHead(e.file, e.line, e.word, why) if isinstance(e, UnknownHead)
                           else e for e in item.errors]
        yield item


def failed(sentence, reason, on_error):
    """``sentence`` with the error ``FILE:LINE: reason`` (at its first line)
    under ``--on-error``: raised (fail), or warned about and given back in
    a list for keep, an empty list for skip."""
    error = ConlluError(sentence.file, sentence.start_line, reason)
    bad = dataclasses.replace(sentence, errors=[error], warnings=[])  # its warnings were given when read
    return [s for s, _ in apply_policy([bad], on_error)]


def _is_regular(path):
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # the reader reports it


def mapped(function, items, jobs):
    """``map(function, items)`` lazily, in order; batches in a process pool when jobs > 1.

    The pool has no more workers than cores, nor than items in the first
    batch (a short file is not worth a thousand processes)."""
    items = iter(items)
    batch = list(islice(items, BATCH))
    jobs = min(jobs, os.cpu_count() or 1, max(1, len(batch) // MIN_PER_WORKER))
    if jobs == 1:
        yield from map(function, batch)
        yield from map(function, items)
        return
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs, initializer=_quiet_worker) as pool:
        while batch:
            yield from pool.map(function, batch, chunksize=max(1, len(batch) // (4 * jobs)))
            batch = list(islice(items, BATCH))


def _quiet_worker():
    """Workers leave Ctrl-C to the main process (which stops the pool) and
    die silently when it terminates them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


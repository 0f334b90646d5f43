"""``semiparse projectivize``: replace every non-projective tree of a CoNLL-U
file by an optimal projective tree (the most gold edges kept).

Only the HEAD column of changed words is rewritten (``--mark`` also records
the old head as ``OrigHead=H`` in MISC; ``--unmark`` undoes that).
"""
import collections
import functools
import random

from ..cli import UserError
from ..conllu_io import rendered
from ..outputs import check_output, open_output
from ..projectivity import TIE_BREAKS, projectivize
from ._treebank import add_input_options, mapped, progress, sentences, use_single_root


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "projectivize",
        help="optimal projectivization of a CoNLL-U file",
        description="Replace each non-projective tree by a projective tree that keeps "
        "the most gold edges. Only HEAD columns change.",
    )
    parser.add_argument("input", nargs="?", default="-", metavar="IN", help="CoNLL-U file (default: stdin)")
    parser.add_argument("-o", "--output", default="-", metavar="OUT", help="output file (default: stdout)")
    parser.add_argument(
        "--tie-break", choices=TIE_BREAKS, default="first",
        help="among optimal trees: first (deterministic, default), closest (changed "
        "heads nearest above the gold heads), random (uniform)",
    )
    parser.add_argument("--seed", type=int, help="seed for --tie-break random (reproducible output)")
    marks = parser.add_mutually_exclusive_group()
    marks.add_argument("--mark", action="store_true", help="record each changed word's original head as OrigHead=H in MISC")
    marks.add_argument("--unmark", action="store_true", help="undo --mark: restore HEAD from OrigHead and remove it")
    add_input_options(parser)
    parser.set_defaults(func=run)
    return parser


def _tree(item, tie_break, seed, root):
    """Worker: the new heads of one sentence (None for an unusable one)."""
    index, heads = item
    if heads is None:
        return None
    single = use_single_root(root, heads)
    # One generator per sentence, seeded by (seed, index): output does not depend on --jobs.
    rng = random.Random(f"{seed}:{index}") if seed is not None else random.Random()
    return projectivize(heads, tie_break, seed=rng, single_root=single)


def run(args):
    if args.seed is not None and args.tie_break != "random":
        raise UserError("--seed only applies to --tie-break random")
    if args.unmark and args.tie_break != "first":
        raise UserError("--unmark restores the original trees: it takes no --tie-break")
    # In place (-o IN) is safe: the input is read to its end before the rename.
    check_output(args.output, [args.input], allow_input=True)
    worker = functools.partial(_tree, tie_break=args.tie_break, seed=args.seed, root=args.root)
    pending = collections.deque()

    def items(stream):
        for index, (sentence, usable) in enumerate(stream):
            pending.append(sentence)
            yield index, (sentence.heads if usable else None)

    with open_output(args.output, binary=True) as out, progress(args.input) as bar:
        if args.unmark:
            for sentence, usable in sentences(args.input, args):
                out.write(sentence.unmarked(args.on_error)[0].encode("utf-8", "surrogateescape")
                          if usable else sentence.raw)
                bar.update()
            return 0
        # Trees that nothing would change come as raw bytes, copied as read.
        stream = sentences(args.input, args, passthrough=True)
        for heads in mapped(worker, items(stream), args.jobs):
            out.write(rendered(pending.popleft(), heads, mark=args.mark))
            bar.update()
    return 0

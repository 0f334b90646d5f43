"""``semiparse projectivize``: replace every non-projective tree of a CoNLL-U
file by an optimal projective tree (the most gold edges kept).

Only the HEAD column of changed words is rewritten (``--mark`` also records
the old head as ``OrigHead=H`` in MISC; ``--unmark`` undoes that;
``--update-deps`` moves the DEPS entry for the old head; ``--encode`` writes
into DEPREL how to restore the original head, see :mod:`semiparse.treebank.encoding`).
``--only`` lets just the words with the given relations change head.
``--partial`` reads HEAD ``_`` as an unknown head: the known edges are
projectivized (the projective tree with the most known edges) and the words
with unknown heads keep ``_``.
"""
import collections
import functools
import random
import sys

from semiparse.cli import UserError
from semiparse.treebank.conllu import rendered
from semiparse.treebank.encoding import ENCODE_TIE_BREAK, ENCODINGS
from semiparse.treebank.outputs import check_output, open_output
from semiparse.treebank.projectivity import TIE_BREAKS, NoProjectiveTree, TreeTooLarge, projectivize
from semiparse.treebank.columns import DEPREL, DEPS, bare_entry, parse_deprels, stale_deps, words_with
from semiparse.cli._treebank import (add_input_options, add_partial_option, failed, mapped, progress,
                                     sentences, use_single_root)
from semiparse.cli.deprojectivize import encode_sentence


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "projectivize",
        help="optimal projectivization of a CoNLL-U file",
        description="Replace each non-projective tree by a projective tree that keeps "
        "the most gold edges. Only HEAD columns change (and DEPS with --update-deps).",
    )
    parser.add_argument("input", nargs="?", default="-", metavar="IN", help="CoNLL-U file (default: stdin)")
    parser.add_argument("-o", "--output", default="-", metavar="OUT", help="output file (default: stdout)")
    parser.add_argument(
        "--tie-break", choices=TIE_BREAKS,
        help="among optimal trees: first (deterministic; the default), closest (changed "
        "heads nearest above the gold heads; the default with --encode, where it restores "
        "the most), random (uniform)",
    )
    parser.add_argument("--seed", type=int, help="seed for --tie-break random (reproducible output)")
    marks = parser.add_mutually_exclusive_group()
    marks.add_argument("--mark", action="store_true", help="record each changed word's original head as OrigHead=H in MISC")
    marks.add_argument("--unmark", action="store_true", help="undo --mark: restore HEAD from OrigHead and remove it")
    parser.add_argument(
        "--only", metavar="DEPREL[,DEPREL...]",
        help="only words with these relations (universal part, e.g. punct) may change head: "
        "the fewest such changes that make the tree projective; a sentence where they "
        "cannot is an error under --on-error",
    )
    parser.add_argument(
        "--update-deps", action="store_true",
        help="move each changed word's DEPS entry for its old head to the new head "
        "(without it such words are only counted on stderr)",
    )
    parser.add_argument(
        "--encode", choices=ENCODINGS,
        help="write into the DEPREL of changed words how to restore them (undone by "
        "semiparse deprojectivize; see docs/treebanks.md, Encodings)",
    )
    add_input_options(parser)
    add_partial_option(parser, "the known heads are projectivized, the unknown ones stay _")
    parser.set_defaults(func=run)
    return parser


def _tree(item, tie_break, seed, root, partial=False):
    """Worker: the new heads of one sentence (None for an unusable one, the
    error when ``only`` words cannot make it projective, NoProjectiveTree, or
    its chart would not fit in memory, TreeTooLarge).  With ``partial`` the
    words whose head is unknown (-1) keep it."""
    index, heads, only = item
    if heads is None:
        return None
    single = use_single_root(root, heads)
    # One generator per sentence, seeded by (seed, index): output does not depend on --jobs.
    rng = random.Random(f"{seed}:{index}") if seed is not None else random.Random()
    try:
        tree = projectivize(heads, tie_break, seed=rng, single_root=single, only=only, partial=partial)
    except (NoProjectiveTree, TreeTooLarge) as error:
        return error
    return [-1 if h == -1 else t for h, t in zip(heads, tree)] if partial else tree


def run(args):
    if args.seed is not None and args.tie_break != "random":
        raise UserError("--seed only applies to --tie-break random")
    if args.unmark and (args.tie_break not in (None, "first") or args.only or args.update_deps):
        raise UserError("--unmark restores the original trees: it takes no --tie-break, --only or --update-deps")
    if args.encode and (args.mark or args.unmark or args.update_deps):
        other = "mark" if args.mark else "unmark" if args.unmark else "update-deps"
        raise UserError(f"--encode cannot be combined with --{other}")
    if args.partial and args.encode:
        raise UserError("--encode records how to restore each changed head: it needs complete "
                        "trees, not --partial")
    only = None if args.only is None else parse_deprels(args.only)
    # In place (-o IN) is safe: the input is read to its end before the rename.
    check_output(args.output, [args.input], allow_input=True)
    tie_break = args.tie_break or (ENCODE_TIE_BREAK if args.encode else "first")
    worker = functools.partial(_tree, tie_break=tie_break, seed=args.seed, root=args.root,
                               partial=args.partial)
    pending = collections.deque()

    def items(stream):
        for index, (sentence, usable) in enumerate(stream):
            pending.append(sentence)
            movable = words_with(sentence, only) if usable and only is not None else None
            yield index, (sentence.heads if usable else None), movable

    with open_output(args.output, binary=True) as out, progress(args.input) as bar:
        if args.unmark:
            for sentence, usable in sentences(args.input, args):
                text = sentence.unmarked(args.on_error, partial=args.partial,
                                         multiple_roots=args.multiple_roots)[0] if usable else None
                out.write(text.encode("utf-8", "surrogateescape") if usable else sentence.raw)
                bar.update()
            return 0
        stale = bare = 0
        # Trees that nothing would change come as raw bytes, copied as read
        # (not with --encode, which refuses labels already encoded in any tree).
        stream = sentences(args.input, args, passthrough=not args.encode)
        for heads in mapped(worker, items(stream), args.jobs):
            sentence = pending.popleft()
            bar.update()
            if isinstance(heads, ValueError):
                reason = f"--only {args.only}: {heads}" if isinstance(heads, NoProjectiveTree) else str(heads)
                for kept in failed(sentence, reason, args.on_error):
                    out.write(kept.raw)
                continue
            if heads is not None:
                words = stale_deps(sentence, heads)
                stale += len(words)
                if args.update_deps:
                    bare += _warn_bare_entries(sentence, words)
            if args.encode and heads is not None:
                out.write(encode_sentence(sentence, heads, args.encode, args.on_error))
            else:
                out.write(rendered(sentence, heads, mark=args.mark, deps=args.update_deps))
    if stale:
        print(f"semiparse projectivize: {stale} words changed HEAD and had a DEPS entry for the old head: "
              + ((f"{stale - bare} moved to the new head (--update-deps)"
                  + (f", {bare} left where they were (no relation)" if bare else ""))
                 if args.update_deps
                 else "the basic tree and the enhanced graph now disagree (--update-deps moves them)"),
              file=sys.stderr)
    return 0


def _warn_bare_entries(sentence, words):
    """Warn, at its line, about each of ``words`` whose DEPS entry for its old
    head names no relation (``4``, not ``4:obj``): --update-deps leaves it
    where it is.  Returns how many there were."""
    count = 0
    for d in words:
        cols = sentence.columns(d)
        entry = bare_entry(cols[DEPS], cols[DEPREL], sentence.heads[d])
        if entry is not None:
            count += 1
            print(f"{sentence.file}:{sentence.line_of(d)}: warning: DEPS entry {entry!r} of word {d} "
                  "names no relation: left where it was (--update-deps)", file=sys.stderr)
    return count

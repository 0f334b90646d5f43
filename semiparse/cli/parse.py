"""``semiparse parse``: parse CoNLL-U input with a trained model.

The output is the input with each word's HEAD and DEPREL replaced by the
model's; every other byte (comments, blocks of comments alone, multiword
tokens, empty nodes, other columns, line endings) is copied as read.
``--probabilities`` sets the ``semiparse_system`` and ``semiparse_steps``
comments of each sentence (replacing those of an earlier parse).  Models of
``semiparse train --model bilstm`` (``semiparse.neural``) are parsed in
batches by greedy decoding.  ``--root single`` (the default) gives every
sentence exactly one word attached to the root
(:mod:`semiparse.training.single_root`); ``--root any`` keeps the model's
parse.
"""
import sys

from semiparse.cli import UserError, int_range
from semiparse.neural.io import is_neural_model, refuse_checkpoint
from semiparse.treebank.outputs import check_output, open_output
from semiparse.perceptron import Model, ModelError, read_trees
from semiparse.perceptron.calibration import steps_metadata
from semiparse.perceptron.model import check_beam, check_model_file
from semiparse.transitions.systems.loading import definition_files


def add_parser(subparsers):
    p = subparsers.add_parser("parse", help="parse CoNLL-U input with a model from 'semiparse train'")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="IN.conllu", help="words and tags; HEAD/DEPREL are replaced")
    p.add_argument("-o", "--output", metavar="OUT.conllu", help="default: standard output")
    p.add_argument("--system", metavar="NAME|FILE.toml|MODULE:ATTR",
                   help="fail unless the model is for this transition system (the same name and "
                   "definition); by default the definition recorded in the model is used")
    p.add_argument("--beam", type=int, help="beam size (default: the model's)")
    p.add_argument("--probabilities", action="store_true",
                   help="record each decision and its probability in a comment (greedy decoding; "
                   "for 'semiparse evaluate --calibration')")
    p.add_argument("--root", choices=("single", "any"), default="single",
                   help="single (default): every sentence gets exactly one word attached to the "
                   "root, as Universal Dependencies requires and the CoNLL 2018 scorer of "
                   "'semiparse evaluate' checks (decoding keeps to it where that is exact for the "
                   "model's system, as for arc-standard and arc-hybrid; otherwise the root keeps "
                   "the child the model scored best and the others are attached to it); any: the "
                   "parse as the model made it, for treebanks that allow several root children")
    p.add_argument("--strict-labels", action="store_true",
                   help="fail (instead of warning) when the input's DEPREL column holds a label "
                   "unseen in training")
    p.add_argument("--threads", type=int_range(1, 1024), metavar="N",
                   help="CPU threads of torch for a neural model (default 1: torch's default, "
                   "one per core, oversubscribes a machine busy with other work, and a network "
                   "of this size gains little from more; docs/neural.md)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args):
    from tqdm import tqdm

    check_output(args.output, [args.model, args.input, *definition_files(args.system)])
    if args.beam is not None:
        check_beam(args.beam)
    model = load_model(args)
    # Blocks without words (comments alone) are kept, to be copied as read.
    trees = read_trees(args.input, need_heads=False, keep_empty=True)
    reported = set()
    for tree in trees:
        for message in model.unseen_labels(tree):
            label = message.split("'")[1]
            if args.strict_labels:
                raise ModelError(message)
            if label not in reported:
                reported.add(label)
                print(f"semiparse parse: warning: {message}", file=sys.stderr)
    first_dead_end = None
    with open_output(args.output, binary=True) as out:
        if isinstance(model, Model):
            parses = perceptron_parses(model, trees, args)
        else:
            parses = neural_parses(model, trees, threads=args.threads or 1, root=args.root)
        for tree, parse in zip(trees, tqdm(parses, total=len(trees), desc="parse", unit="sent",
                                           disable=True if args.quiet else None,
                                           file=sys.stderr)):  # None: on a terminal only
            if parse is None:
                out.write(tree.source.raw)
                continue
            heads, labels, metadata, dead_end = parse
            if dead_end and first_dead_end is None:
                first_dead_end = tree.where
            out.write(tree.source.relabeled(heads, labels, metadata))
    if model.dead_ends:
        print(f"semiparse parse: warning: the parse of {model.dead_ends} sentence(s) reached a "
              f"dead end of {model.system} (a configuration that is not final and from which no "
              f"final one is reachable) or went round a loop of its moves, the first at "
              f"{first_dead_end}; they were parsed again with the transitions that can still "
              f"finish, and words left without a head attached to the root (docs/training.md)",
              file=sys.stderr)
    return 0


def load_model(args):
    """The perceptron or neural model in ``args.model``; neural models take
    neither ``--beam`` nor ``--probabilities``."""
    check_model_file(args.model)   # a FIFO would block the first look at its bytes
    if not is_neural_model(args.model):
        refuse_checkpoint(args.model)
        if args.threads is not None:
            raise UserError(f"{args.model}: --threads is for neural models; this is a "
                            "perceptron model (one thread)")
        return Model.load(args.model, system=args.system)
    for option, given in (("--beam", args.beam is not None), ("--probabilities", args.probabilities)):
        if given:
            raise UserError(f"{args.model}: {option} is for perceptron models; this is a neural "
                            "model (greedy batched decoding)")
    import semiparse.neural

    try:
        return semiparse.neural.load(args.model, system=args.system)
    except ImportError as exc:
        raise UserError(f"{args.model}: {exc}") from None


def perceptron_parses(model, trees, args):
    """``(heads, labels, metadata, reached a dead end)`` of each tree, one at a
    time (``None`` for a block without words)."""
    for tree in trees:
        if not len(tree):
            yield None
            continue
        before = model.dead_ends
        heads, labels, steps = model.parse(tree, beam=args.beam, with_probabilities=args.probabilities,
                                           root=getattr(args, "root", "single"))
        metadata = steps_metadata(model.system, steps) if args.probabilities else None
        yield heads, labels, metadata, model.dead_ends > before


def neural_parses(model, trees, batch_size=64, threads=1, root="single"):
    """The same for a neural model, decoded in batches of ``batch_size`` trees
    on ``threads`` CPU threads of torch (its setting is given back after);
    ``root``: as ``--root``."""
    import semiparse.neural

    with semiparse.neural.cpu_threads(threads):
        for start in range(0, len(trees), batch_size):
            chunk = trees[start:start + batch_size]
            parsed = iter(semiparse.neural.parse_sentences(
                model, [tree for tree in chunk if len(tree)], batch_size, with_dead_ends=True,
                root=root))
            for tree in chunk:
                if not len(tree):
                    yield None
                else:
                    heads, labels, dead_end = next(parsed)
                    yield heads, labels, None, dead_end

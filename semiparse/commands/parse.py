"""``semiparse parse``: parse CoNLL-U input with a trained model."""
import sys

from ..outputs import check_output, open_output
from ..train import Model, ModelError, read_trees
from ..train.evaluate import steps_comment
from ..train.model import check_beam


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
    p.add_argument("--strict-labels", action="store_true",
                   help="fail (instead of warning) when the input's DEPREL column holds a label "
                   "unseen in training")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args):
    from tqdm import tqdm

    from ..train.data import render

    check_output(args.output, [args.model, args.input])
    if args.beam is not None:
        check_beam(args.beam)
    model = Model.load(args.model, system=args.system)
    trees = read_trees(args.input, need_heads=False)
    reported = set()
    for tree in trees:
        for message in model.unseen_labels(tree):
            label = message.split("'")[1]
            if args.strict_labels:
                raise ModelError(message)
            if label not in reported:
                reported.add(label)
                print(f"semiparse parse: warning: {message}", file=sys.stderr)
    with open_output(args.output) as out:
        for tree in tqdm(trees, desc="parse", unit="sent", disable=args.quiet, file=sys.stderr):
            heads, labels, steps = model.parse(tree, beam=args.beam, with_probabilities=args.probabilities)
            text = render(tree, heads, labels)
            if args.probabilities:
                text = steps_comment(model.system, steps) + text
            out.write(text)
    return 0

"""``semiparse train``: train a transition-based parser with the project's oracles."""
import sys

from ..outputs import check_output
from ..train import NONPROJ, ORACLES, TRAINERS, Trainer, read_trees
from ..train.trainer import RESTARTS


def add_parser(subparsers):
    p = subparsers.add_parser(
        "train", help="train a greedy or beam transition-based parser (static / nondet / dynamic oracle)",
        description="Train a labelled transition-based dependency parser on a CoNLL-U treebank "
        "and save it (format: docs/training.md).",
    )
    p.add_argument("train", metavar="TRAIN.conllu", help="training treebank")
    p.add_argument("--dev", metavar="DEV.conllu", help="scored after every epoch")
    p.add_argument("--system", default="arc_standard", metavar="NAME|FILE.toml|MODULE:ATTR",
                   help="transition system: a shipped or registered name (default arc_standard), "
                   "a system file, or a system object in a Python module; the model records its "
                   "definition")
    p.add_argument("--oracle", choices=ORACLES, default="dynamic",
                   help="static: canonical gold sequence; nondet: any optimal move, no exploration; "
                   "dynamic: optimal moves with exploration (default)")
    p.add_argument("--trainer", choices=TRAINERS, default="perceptron")
    p.add_argument("--nonproj", choices=NONPROJ, default="projectivize",
                   help="non-projective training trees: skip them, projectivize them optimally, "
                   "or train on them with the (non-projective) dynamic oracle")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--beam", type=int, default=8, help="beam size for the beam trainers")
    p.add_argument("--restart", choices=RESTARTS, default="positive",
                   help="beam trainers: after an update stop (none) or resume decoding from c+ "
                   "(positive) or, with the dynamic oracle, from c- (negative)")
    p.add_argument("--explore-after", type=int, default=1, metavar="K",
                   help="epochs before exploration starts (dynamic oracle)")
    p.add_argument("--explore-p", type=float, default=0.9,
                   help="perceptron: probability of following a wrong prediction")
    p.add_argument("--rho", type=float, default=0.01, help="RDA ridge")
    p.add_argument("--alpha", type=float, default=1.0, help="RDA learning rate")
    p.add_argument("--l1", type=float, default=None, help="RDA L1 penalty (default 1/(20 |D|))")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("-o", "--output", required=True, metavar="MODEL")
    p.set_defaults(func=run)
    return p


def run(args):
    log = lambda message: print(message, file=sys.stderr)
    check_output(args.output, [args.train, args.dev])
    trainer = Trainer(  # checks the hyper-parameters before any data is read
        system=args.system, oracle=args.oracle, trainer=args.trainer, epochs=args.epochs,
        seed=args.seed, beam=args.beam, explore_after=args.explore_after, explore_p=args.explore_p,
        rho=args.rho, alpha=args.alpha, lam=args.l1, restart=args.restart,
        progress=not args.quiet, log=log,
    )
    trees = read_trees(args.train)
    dev = read_trees(args.dev) if args.dev else None
    model = trainer.run(trees, dev=dev, nonproj=args.nonproj)
    model.save(args.output)
    log(f"saved {args.output}: {len(model.classes)} classes, {model.n_nonzero()} non-zero parameters")
    return 0

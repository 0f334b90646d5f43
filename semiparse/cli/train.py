"""``semiparse train``: train a transition-based parser with the project's oracles.

``--model perceptron`` (default) trains the sparse-feature parsers of
:mod:`semiparse.perceptron`; ``--model bilstm`` the neural parser of
:mod:`semiparse.neural` (PyTorch, imported only then).  Each model's own
options are refused with the other.
"""
import os
import sys

from semiparse.cli import UserError
from semiparse.treebank.outputs import check_output
from semiparse.perceptron import NONPROJ, ORACLES, TRAINERS, Trainer, options_for, read_trees
from semiparse.treebank.data import complete_trees
from semiparse.perceptron.options import RESTARTS
from semiparse.transitions.systems.loading import definition_files

MODELS = ("perceptron", "bilstm")
# --nonproj: the perceptron's policies and the neural parser's (subset = skip)
NONPROJ_ALL = NONPROJ + ("subset", "encode")
PERCEPTRON_EPOCHS = 10  # --epochs of the perceptron models; bilstm's: semiparse.neural.options
# Why a --dev file may not have HEAD _ (--partial is for TRAIN)
SCORED = "the dev set is scored against complete trees"
# Options of one model only (dest, default): None in argparse, so that giving
# one to the other model is an error rather than ignored.
PERCEPTRON_ONLY = {"trainer": "perceptron", "beam": 8, "restart": "positive", "rho": 0.01,
                   "alpha": 1.0}
NEURAL_ONLY = ("device", "batch_size", "lr", "loss", "word_dim", "char_dim", "char_hidden",
               "upos_dim", "xpos_dim", "feats_dim", "lemma_dim", "lstm_dim", "lstm_layers", "hidden_dim",
               "label_hidden_dim", "word_dropout", "dropout", "features", "threads", "oracle_threads", "checkpoint", "resume")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "train", help="train a greedy or beam transition-based parser (static / nondet / dynamic oracle)",
        description="Train a labelled transition-based dependency parser on a CoNLL-U treebank "
        "and save it (format: docs/training.md).",
    )
    p.add_argument("train", metavar="TRAIN.conllu", help="training treebank")
    p.add_argument("--model", choices=MODELS, default="perceptron",
                   help="perceptron: sparse features (default); bilstm: the neural parser of "
                   "docs/neural.md (needs semiparse[neural])")
    p.add_argument("--dev", metavar="DEV.conllu", help="scored after every epoch")
    p.add_argument("--system", default="arc_standard", metavar="NAME|FILE.toml|MODULE:ATTR",
                   help="transition system: a shipped or registered name (default arc_standard), "
                   "a system file, or a system object in a Python module; the model records its "
                   "definition")
    p.add_argument("--oracle", choices=ORACLES, default="dynamic",
                   help="static: canonical gold sequence; nondet: any optimal move, no exploration; "
                   "dynamic: optimal moves with exploration (default)")
    p.add_argument("--trainer", choices=TRAINERS, help="perceptron models (default perceptron)")
    p.add_argument("--nonproj", choices=NONPROJ_ALL,
                   help="non-projective training trees: skip them (subset), projectivize them "
                   "optimally, or train on them with the (non-projective) dynamic oracle "
                   "(default: projectivize; docs/neural.md says why); bilstm also: "
                   "encode (projectivize, recording in the labels how to undo it)")
    p.add_argument("--partial", action="store_true",
                   help="TRAIN may have unknown heads (HEAD _): partial trees, trained on with the "
                   "dynamic oracle, which counts their known edges (perceptron models; "
                   "--oracle dynamic or nondet); with no known HEAD 0, the root label (given to "
                   "the words parses attach to the root) is root if TRAIN has it, else its most "
                   "common label")
    p.add_argument("--epochs", type=int,
                   help="passes over TRAIN (default 10 for the perceptron, 30 for bilstm)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed, any integer (default 0; bilstm seeds torch with it modulo 2**64)")
    p.add_argument("--beam", type=int, help="beam size for the beam trainers (default 8)")
    p.add_argument("--restart", choices=RESTARTS,
                   help="beam trainers: after an update stop (none) or resume decoding from c+ "
                   "(positive) or, with the dynamic oracle, from c- (negative)")
    p.add_argument("--explore-after", type=int, default=1, metavar="K",
                   help="epochs before exploration starts (dynamic oracle)")
    p.add_argument("--explore-p", type=float, default=0.9,
                   help="perceptron, bilstm: probability of following a wrong prediction")
    p.add_argument("--rho", type=float, help="RDA ridge (default 0.01)")
    p.add_argument("--alpha", type=float, help="RDA learning rate (default 1)")
    p.add_argument("--l1", type=float, default=None, help="RDA L1 penalty (default 1/(20 |D|))")
    n = p.add_argument_group("bilstm models", "the neural parser (docs/neural.md); defaults as "
                             "Kiperwasser and Goldberg 2016")
    n.add_argument("--device", help="cpu (default) or cuda[:N]; the oracle runs on the CPU")
    n.add_argument("--batch-size", type=int, help="sentences advanced in lockstep (default 8)")
    n.add_argument("--lr", type=float, help="Adam learning rate (default 0.001)")
    n.add_argument("--loss", choices=("hinge", "nll"),
                   help="hinge: best optimal vs best non-optimal transition (default); nll: "
                   "log-likelihood of the set of optimal transitions")
    for flag, default, what in (("word-dim", 100, "word embedding"),
                                ("char-dim", 24, "character embedding (0: no character encoder)"),
                                ("char-hidden", 50, "character BiLSTM units per direction"),
                                ("upos-dim", 25, "UPOS embedding (0: none)"),
                                ("xpos-dim", 0, "XPOS embedding (0: none)"),
                                ("feats-dim", 25, "FEATS embedding (0: none)"),
                                ("lemma-dim", 100, "LEMMA embedding (0: none)"),
                                ("lstm-dim", 125, "sentence BiLSTM units per direction"),
                                ("lstm-layers", 2, "sentence BiLSTM layers"),
                                ("hidden-dim", 100, "transition MLP hidden units"),
                                ("label-hidden-dim", 100, "label MLP hidden units")):
        n.add_argument(f"--{flag}", type=int, metavar="N", help=f"{what} (default {default})")
    n.add_argument("--word-dropout", type=float, metavar="ALPHA",
                   help="a word w is dropped with probability ALPHA / (count(w) + ALPHA) "
                   "(default 0.25)")
    n.add_argument("--dropout", type=float, metavar="P",
                   help="dropout on the sentence BiLSTM's input, between its layers and on its "
                   "output (default 0.33; 0: none)")
    n.add_argument("--features", metavar="POSITIONS",
                   help="configuration positions scored, e.g. s2,s1,s0,b0 or s0,s0.lc,s0.rc,b0; "
                   "aK: the K-th word set aside (Covington's λ2) (default: from the system's "
                   "transitions, s2,s1,s0,a0,b0 for covington)")
    n.add_argument("--threads", type=int, metavar="N",
                   help="CPU threads of torch (default 1: torch's one per core ran a lockstep "
                   "epoch 3x slower on a busy 2-core machine, docs/neural.md)")
    n.add_argument("--oracle-threads", type=int, metavar="N",
                   help="threads of the oracle's scores_batch call at each step (default 1, the "
                   "fastest measured with minibatches of up to 32 sentences: docs/neural.md)")
    n.add_argument("--checkpoint", metavar="FILE", help="write the run's state after every epoch")
    n.add_argument("--resume", metavar="FILE", help="continue the run of a --checkpoint file")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("-o", "--output", required=True, metavar="MODEL")
    p.set_defaults(func=run)
    return p


def _given(args, names):
    return [n for n in names if getattr(args, n) is not None]


def run(args):
    log = lambda message: print(message, file=sys.stderr)
    if args.model == "bilstm":
        return _run_neural(args, log)
    given = _given(args, NEURAL_ONLY)
    if given:
        raise UserError(f"--{given[0].replace('_', '-')} is an option of --model bilstm")
    if args.nonproj in ("subset", "encode"):
        if args.nonproj == "encode":
            raise UserError("--nonproj encode is an option of --model bilstm")
        args.nonproj = "skip"
    check_output(args.output, [args.train, args.dev, *definition_files(args.system)])
    settings = {k: default if getattr(args, k) is None else getattr(args, k)
                for k, default in PERCEPTRON_ONLY.items()}
    # the settings are checked before any data is read
    options = options_for(explore_after=args.explore_after, explore_p=args.explore_p, lam=args.l1,
                          oracle=args.oracle, **settings)
    trainer = Trainer(args.system, args.oracle, options,
                      PERCEPTRON_EPOCHS if args.epochs is None else args.epochs, args.seed,
                      progress=not args.quiet, log=log)
    trees = read_trees(args.train, partial=args.partial)
    dev = complete_trees(args.dev, SCORED) if args.dev else None
    model = trainer.run(trees, dev=dev, nonproj=args.nonproj or "projectivize",
                        partial=args.partial)
    model.save(args.output)
    log(f"saved {args.output}: {len(model.classes)} classes, {model.n_nonzero()} non-zero parameters")
    return 0


def _run_neural(args, log):
    """``--model bilstm``: semiparse.neural, PyTorch imported only here."""
    if args.partial:
        raise UserError("--partial is an option of the perceptron models for now: the neural "
                        "trainer reads complete trees")
    given = _given(args, list(PERCEPTRON_ONLY) + ["l1"])
    if given:
        raise UserError(f"--{given[0]} is an option of --model perceptron, not bilstm")
    try:
        import torch
    except ModuleNotFoundError:
        raise UserError('--model bilstm needs PyTorch: pip install "semiparse[neural]"') from None
    from semiparse.neural import io
    from semiparse.neural.features import parse_positions
    from semiparse.neural.options import Options, check_threads
    from semiparse.neural.trainer import COMPLETE_ONLY, NeuralTrainer

    settings = {k: getattr(args, k) for k in NEURAL_ONLY
                if k not in ("threads", "checkpoint", "resume") and getattr(args, k) is not None}
    if "features" in settings:
        settings["features"] = parse_positions(settings["features"])
    nonproj = "subset" if args.nonproj == "skip" else args.nonproj  # the help's synonyms
    if args.epochs is not None:
        settings["epochs"] = args.epochs
    options = Options(oracle=args.oracle, nonproj=nonproj or "projectivize", seed=args.seed,
                      explore_after=args.explore_after, explore_p=args.explore_p, **settings)
    threads = 1 if args.threads is None else args.threads
    check_threads(threads)
    torch.set_num_threads(threads)
    system_files = definition_files(args.system)
    check_output(args.output, [args.train, args.dev, args.resume, *system_files])
    if args.checkpoint is not None:
        # one path for both, even one not written yet, would lose the other
        if os.path.realpath(args.checkpoint) == os.path.realpath(args.output):
            raise UserError(f"--checkpoint {args.checkpoint}: it names the model's file (-o); "
                            f"the run's state needs a file of its own")
        check_output(args.checkpoint, [args.train, args.dev, *system_files])
    trainer = NeuralTrainer(args.system, options, progress=not args.quiet, log=log,
                            checkpoint=args.checkpoint, resume=args.resume)
    trees = complete_trees(args.train, COMPLETE_ONLY)
    dev = complete_trees(args.dev, SCORED) if args.dev else None
    model = trainer.run(trees, dev=dev)
    io.save(model, args.output)
    best = model.meta.get("best_epoch")
    log(f"saved {args.output}: {model.n_parameters()} parameters"
        + (f", epoch {best} (best dev LAS)" if dev is not None and best else ""))
    return 0

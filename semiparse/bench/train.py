"""``semiparse bench train``: seconds per training epoch with the static oracle
against the nondet and dynamic (exploring) oracles, on the same projective
sentences in one run, with the ratios (target: dynamic <= 1.5 x static; seed
000 reports 2.3x for arc-standard and about 8x for LR-spine).

Times are CPU seconds of this process (``time.process_time``) spent in the
training epochs (set-up such as loading the oracle's grammar is excluded), so
other load on the machine does not distort the ratios; wall seconds of the
whole run divided by the number of epochs are shown too.  Every system is
first trained once, untimed, on 50 sentences: without that warm-up the first
timed column of a run came out up to 40% slower.

The last lines compare arc-standard's compiled rewrite machine with a
hand-written arc-standard step on the same C state (the floor, in
``semiparse/bench/_floor.pyx``): the static computations of the same
sentences replayed as a training step uses the system (features, legal mask
over every class, step), the best of several runs each (target: machine <=
1.2 x floor), and the legal masks and steps alone.
"""
import time

from semiparse.bench._inputs import COMPLETE, ud_train_file
from semiparse.cli import UserError, int_range

TARGET = 1.5
FLOOR_TARGET = 1.2


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "train", help="seconds per epoch: static vs dynamic-oracle training",
        description="Seconds per epoch of greedy perceptron training with the static, nondet and "
        "dynamic oracles on the same sentences (default: the first 400 projective sentences of "
        "$SEMIPARSE_DATA/ud/UD_Greek-GDT/el_gdt-ud-train.conllu).",
    )
    parser.add_argument("file", nargs="?", metavar="TRAIN.conllu")
    parser.add_argument("--sentences", type=int_range(1), default=400, help="number of projective sentences")
    parser.add_argument("--epochs", type=int_range(1), default=2)
    parser.add_argument("--systems", nargs="+", default=["arc_standard", "arc_hybrid", "arc_eager", "lr_spine"])
    parser.add_argument("--trainer", default="perceptron", choices=["perceptron", "rda"])
    parser.set_defaults(func=run)
    return parser


def run(args):
    from semiparse.treebank.projectivity import is_projective
    from semiparse.perceptron import PerceptronOptions, RDAOptions, Trainer
    from semiparse.treebank.data import complete_trees

    path = args.file or ud_train_file("UD_Greek-GDT", "el_gdt")
    trees = [t for t in complete_trees(path, COMPLETE) if is_projective(t.heads)][: args.sentences]
    if not trees:
        raise UserError(f"{path}: no projective sentence to train on")
    tokens = sum(len(t) for t in trees)
    print(f"{path}: {len(trees)} projective sentences, {tokens} tokens, {args.epochs} epochs, "
          f"{args.trainer}; CPU seconds per epoch (wall in brackets)")
    print(f"{'system':14s} {'static':>16s} {'nondet':>16s} {'dynamic':>16s} {'nondet/st':>10s} {'dyn/st':>8s}")
    for system in args.systems:  # untimed warm-up: the first run of a process pays extra
        Trainer(system=system, oracle="static", epochs=1, progress=False).run(
            trees[:50], nonproj="skip")
    for system in args.systems:
        times = {}
        for oracle in ("static", "nondet", "dynamic"):
            options = {"perceptron": PerceptronOptions, "rda": RDAOptions}[args.trainer](explore_after=0)
            trainer = Trainer(system, oracle, options, epochs=args.epochs, seed=1, progress=False)
            wall = time.perf_counter()
            trainer.run(trees, nonproj="skip")
            cpu = sum(record["cpu_seconds"] for record in trainer.history)
            times[oracle] = (cpu / args.epochs, (time.perf_counter() - wall) / args.epochs)
        cell = lambda o: f"{times[o][0]:7.2f} ({times[o][1]:6.2f})"
        ratio = times["dynamic"][0] / times["static"][0]
        print(f"{system:14s} {cell('static'):>16s} {cell('nondet'):>16s} {cell('dynamic'):>16s} "
              f"{times['nondet'][0] / times['static'][0]:9.2f}x {ratio:7.2f}x"
              f"  {'meets' if ratio <= TARGET else 'misses'} target {TARGET}x")
    machine_vs_floor(trees)
    return 0


def machine_vs_floor(trees, repeats=5):
    """Print the machine / floor ratio of replaying arc-standard's static computations."""
    from semiparse.bench import _floor
    from semiparse.perceptron import Model
    from semiparse.perceptron.trainer import StaticOracle

    model = Model("arc_standard", sorted({l for t in trees for l in t.labels[1:]}))
    sents = [model.sentence(t) for t in trees]
    static = StaticOracle("arc_standard")
    paths = [static._path(model.machine, s)[1] for s in sents]
    for features, what in ((True, "features + legal mask + step"), (False, "legal mask + step")):
        best, checks = {}, set()
        for floor in (False, True) * repeats:
            cpu = time.process_time()
            checks.add(_floor.run_paths(model.machine, sents, paths, model.templates,
                                        model.cls_move, floor, features))
            cpu = time.process_time() - cpu
            best[floor] = min(best.get(floor, cpu), cpu)
        if len(checks) != 1:
            raise RuntimeError("the machine and the hand-written floor disagree")
        ratio = best[False] / best[True]
        print(f"arc_standard machine vs hand-written floor, {what}: {best[False]:.4f} s vs "
              f"{best[True]:.4f} s = {ratio:.2f}x"
              + (f"  {'meets' if ratio <= FLOOR_TARGET else 'misses'} target {FLOOR_TARGET}x"
                 if features else ""))

"""``semiparse bench fast-oracle``: the fast oracles' own cost per call.

``semiparse bench oracle`` times ``Oracle.scores``, which also validates the
configuration in Python on every call (about 15-20 µs at n = 40).  This
benchmark times the registered method functions themselves and, as the
baseline, the grammar path function, on the same configurations (collected
as in ``bench oracle``: UD sentences parsed by following the oracle for the
optimal projectivization, with 10% random steps; projective gold trees only,
the ones every fast method applies to).  Ratios are grammar time / method
time.  LR-spine has no grammar path: it is timed on its own configurations.
"""

from semiparse._support.seeds import seeded
from semiparse.cli import int_range, seconds
from semiparse.bench._inputs import long_trees, ud_files
from semiparse.bench._timing import fmt_time, mean_time, per_call
from semiparse.bench.oracle import MAX_SECONDS, collect


def add_parser(subparsers):
    p = subparsers.add_parser("fast-oracle",
                              help="time per call of the fast oracle methods themselves")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="CoNLL-U files or directories (default: every file under $SEMIPARSE_DATA/ud)")
    p.add_argument("--systems", nargs="+", metavar="NAME",
                   default=["arc_standard", "arc_eager", "arc_hybrid", "lr_spine"])
    p.add_argument("--sizes", type=int_range(1), nargs="+", default=[10, 20, 40, 60, 80], metavar="K",
                   help="k+m values (default 10 20 40 60 80); configurations within +-4 count")
    p.add_argument("--per-size", type=int_range(1), default=8, metavar="N",
                   help="configurations per k+m and system (default 8)")
    p.add_argument("--seconds", type=seconds(MAX_SECONDS), default=0.02,
                   help=f"minimum time per measurement, at most {MAX_SECONDS} (default 0.02)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)
    return p


def run(args):
    from semiparse.transitions import load_system, methods
    from semiparse.transitions.oracles.gold import Gold
    from semiparse.heads import no_crossing
    from semiparse.transitions.oracles.grammar_method import grammar_scores

    rng = seeded(args.seed)
    trees = [t for t in long_trees(ud_files(args.files), longest=3 * args.per_size)
             if no_crossing(t)]
    for name in args.systems:
        system = load_system(name)
        fast = [m for m in methods(name) if "none" in m.strategies]
        baseline = system.grammar is not None
        found = collect(system, "none", trees, args.sizes, args.per_size, rng)
        print(f"\n{name}: mean time per call of the method function"
              + (" (ratio = grammar path time / method time)" if baseline else ""))
        header = f"{'k+m':>5} {'configs':>7}" + (f" {'grammar':>10}" if baseline else "")
        header += "".join(f" {m.name:>15}" + (f" {'ratio':>7}" if baseline else "")
                          for m in fast)
        print(header)
        for size in args.sizes:
            configs = found[size]
            if not configs:
                print(f"{size:>5} {0:>7}  (no sentence long enough)")
                continue
            times = {m.name: [] for m in fast}
            times["grammar"] = []
            for stack, buffer, arcs, heads in configs:
                gold = Gold(heads)
                stack, buffer, arcs = system.validate(stack, buffer, arcs, gold.n)
                expected = None
                if baseline:
                    expected = grammar_scores(system, gold, stack, buffer, arcs, "none")
                    times["grammar"].append(per_call(
                        lambda: grammar_scores(system, gold, stack, buffer, arcs, "none"),
                        args.seconds, repeats=1))
                for m in fast:
                    got = m.fn(stack, buffer, gold.heads, arcs, "none")
                    if expected is not None and got != expected:
                        raise AssertionError(f"{name}/{m.name} disagrees with the grammar path "
                                             f"at stack={stack} buffer={buffer}")
                    times[m.name].append(per_call(
                        lambda: m.fn(stack, buffer, gold.heads, arcs, "none"),
                        args.seconds, repeats=1))
            row = f"{size:>5} {len(configs):>7}"
            g = mean_time(times["grammar"])
            if baseline:
                row += f" {fmt_time(g):>10}"
            for m in fast:
                t = mean_time(times[m.name])
                row += f" {fmt_time(t):>15}" + (f" {g / t:>6.0f}x" if baseline else "")
            print(row)
    return 0

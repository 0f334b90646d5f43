"""``semiparse bench oracle``: time per oracle call by k+m, every method.

Configurations are collected while parsing shared UD sentences (longest
first, so every k+m from 10 to 120 is covered): each step follows an optimal
transition for the optimal projectivization of the gold tree (fastest
registered method) or, with probability 0.1, a random legal one, as in
training with exploration.  On each collected configuration every method of
the system is timed against the original gold tree (projective or not; a
method exact only for projective trees is timed on the projective ones) and
must return the grammar path's scores.  Ratios are grammar time / method time
on the same configurations.  k + m = stack size - 1 + buffer size.  Times are
CPU time of this process by default (robust on a shared machine; ``--clock
wall`` for elapsed time).
"""
import time
from pathlib import Path

from semiparse._support.seeds import seeded
from semiparse.cli import UserError, int_range, pyplot, seconds
from semiparse.treebank.outputs import check_output, open_output
from semiparse.bench._inputs import long_trees, ud_files
from semiparse.bench._timing import fmt_time, mean_time, per_call, seconds_per_call
from semiparse.resources import data_root

SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager")
MAX_SECONDS = 60  # per measurement: there is one per configuration


def add_parser(subparsers):
    p = subparsers.add_parser("oracle",
                              help="time per oracle call by k+m for every system and method")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="CoNLL-U files or directories (default: every file under $SEMIPARSE_DATA/ud)")
    p.add_argument("--systems", nargs="+", default=list(SYSTEMS), metavar="SYSTEM",
                   help="names, system files or MODULE:ATTR (default: the shipped rewrite systems)")
    p.add_argument("--strategy", default="none", help="oracle strategy (default none)")
    p.add_argument("--sizes", type=int_range(1), nargs="+", default=list(range(10, 121, 10)), metavar="K",
                   help="k+m values (default 10 20 ... 120); configurations within +-4 count")
    p.add_argument("--per-size", type=int_range(1), default=8, metavar="N",
                   help="configurations per k+m and system (default 8)")
    p.add_argument("--seconds", type=seconds(MAX_SECONDS), default=0.02,
                   help=f"minimum time per measurement, at most {MAX_SECONDS} (default 0.02)")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="measure CPU time of this process (default) or elapsed time")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", metavar="FILE.png", help="draw mean time per call vs k+m (log scale)")
    pair = p.add_argument_group(
        "a declared system against its shipped equivalent",
        "--system FILE times, on the configurations each system passes through on the same "
        "projective sentences (FILEs, else the shared Greek dev set), one scores call, one "
        "scores_batch call and scores_batch on --threads threads per configuration, and prints "
        "the ratios.  For a system whose oracle searches its computations (the swap systems) "
        "it times, on the non-projective sentences of FILEs, else of the Gothic and Hungarian "
        "dev sets, each call against arc_standard's on the same sentences: median, 99th "
        "percentile, maximum, mean and one scores_batch call per sentence")
    pair.add_argument("--system", metavar="FILE.toml",
                      help="the declared system (a system file, a name or MODULE:ATTR)")
    pair.add_argument("--against", metavar="NAME",
                      help="the shipped system to compare with (default: the longest shipped name "
                      "the system's name starts with)")
    pair.add_argument("--sentences", type=int_range(1), default=60,
                      help="projective sentences parsed by each system (default 60)")
    pair.add_argument("--threads", type=int_range(1), default=2,
                      help="threads of the threaded scores_batch (default 2)")
    p.set_defaults(func=run)
    return p


def collect(system, strategy, trees, sizes, per_size, rng):
    """``{size: [(stack, buffer, arcs, heads)]}`` visited while parsing ``trees``."""
    from semiparse import oracle, projectivize

    follow = oracle(system, strategy)
    found = {s: [] for s in sizes}

    def bucket(km):
        for s in sizes:
            if abs(km - s) <= 4 and len(found[s]) < per_size:
                return s
        return None

    for heads in trees:
        if all(len(v) >= per_size for v in found.values()):
            break
        n = len(heads) - 1
        if not any(len(found[s]) < per_size and s - 4 <= n for s in sizes):
            continue
        target = projectivize(heads)
        stack, buffer, arcs = system.initial(n)
        taken = set()
        while not system.is_final(stack, buffer, arcs):
            size = bucket(len(stack) - 1 + len(buffer))
            if size is not None and size not in taken:  # one per sentence and size
                taken.add(size)
                found[size].append((stack, buffer, arcs, list(heads)))
            legal = system.legal(stack, buffer, arcs)
            if rng.random() < 0.1:
                t = rng.choice(legal)
            else:
                t = min(follow.optimal(stack, buffer, target, arcs), key=legal.index)
            stack, buffer, arcs, _ = system.apply(stack, buffer, arcs, t)
    return found


def run(args):
    from semiparse.transitions import load_system

    if args.system:
        return _run_pair(args)
    if args.plot:
        check_output(args.plot, inputs=args.files)  # before minutes of timing, not after
        pyplot()
    rng = seeded(args.seed)
    timer = _timer(args.clock)
    if not args.files:
        _need(data_root() / "ud", lambda p: any(p.glob("*/*.conllu")), "holds no */*.conllu")
    trees = long_trees(ud_files(args.files), longest=3 * args.per_size)
    curves = {}
    for spec in args.systems:
        _bench_system(load_system(spec), args, trees, rng, timer, curves)
    if args.plot:
        _plot(curves, args.plot, args.strategy, args.clock)
        print(f"\nplot written to {args.plot}")
    return 0


def _run_pair(args):
    from semiparse.bench import _nonprojective as nonprojective, system_pair
    from semiparse.transitions import load_system

    if args.plot:
        raise UserError("--plot draws the per-size curves; it does not go with --system")
    system = load_system(args.system)
    if system.completion_kind in ("search", "spanning"):   # the non-projective systems
        if args.files:
            files = ud_files(args.files)
        else:
            files = nonprojective.default_files()
            for path in files:
                _need(path, Path.is_file)
        return nonprojective.run(args, system, files)
    if not args.files:
        _need(data_root() / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu", Path.is_file)
    trees = (system_pair.read_projective(ud_files(args.files), args.sentences) if args.files
             else system_pair.default_sentences(args.sentences))
    rows = system_pair.compare(args.system, args.against, trees, threads=args.threads,
                               min_seconds=max(args.seconds, 0.2), seed=args.seed)
    print(f"{len(trees)} projective sentences; time per configuration: scores (one call each), "
          f"batch (one scores_batch call, one thread), batch x{args.threads} ({args.threads} "
          f"threads, elapsed time); gains over single calls")
    print("\n".join(system_pair.report(rows, args.threads)))
    return 0


def _need(path, found, what="not found"):
    """UserError naming ``SEMIPARSE_DATA`` unless ``found(path)``: the
    shared data read without FILES."""
    from semiparse.bench import missing_data

    if not found(path):
        raise UserError(missing_data(path, what))


def _timer(clock):
    """``timer(fn, seconds)``: seconds per call of ``fn`` on the chosen clock
    (CPU time of this process, or elapsed time)."""
    if clock == "cpu":
        return lambda fn, s: seconds_per_call(fn, s, time.process_time)
    return lambda fn, s: per_call(fn, s, repeats=1)


def _bench_system(system, args, trees, rng, timer, curves):
    """Print the table of one system (a row per size) and add its mean times
    per size to ``curves[(system name, method)]``."""
    from semiparse import oracle
    from semiparse.transitions.oracles.methods import system_methods

    system.check_strategy(args.strategy)
    registered = system_methods(system)
    names = (["grammar"] + [m.name for m in registered if args.strategy in m.strategies]
             + ["auto"])  # what semiparse.oracle() picks, per configuration
    projective_only = {m.name: m.projective_only for m in registered}
    oracles = {m: oracle(system, args.strategy, m) for m in names}
    found = collect(system, args.strategy, trees, args.sizes, args.per_size, rng)
    print(f"\n{system.name}, strategy {args.strategy}: mean {args.clock} time per oracle call "
          f"(ratio = grammar time / method time on the same configurations)")
    print(f"{'k+m':>5} {'configs':>7} {'grammar':>10}"
          + "".join(f" {m:>16} {'ratio':>7}" for m in names[1:]))
    broken = {}
    for size in args.sizes:
        configs = found[size]
        if not configs:
            print(f"{size:>5} {0:>7}  (no sentence long enough)")
            continue
        times = {m: [] for m in names}
        disagree = dict.fromkeys(names, 0)
        for config in configs:
            agree = _check(oracles, config, projective_only, broken)
            for m in names:
                disagree[m] += m in agree and not agree[m]
                times[m].append(_time(oracles[m], config, timer, args.seconds)
                                if m in agree else None)
        print(_row(size, len(configs), names, times, disagree, system.name, curves))
        bad = {m: d for m, d in disagree.items() if d}
        if bad:
            print(f"  !N: the method disagreed with the grammar path on N "
                  f"configurations: {bad}")
    for m, error in broken.items():
        print(f"  method {m} failed and was not timed: {error}")


def _check(oracles, config, projective_only, broken):
    """``{method: whether its scores are the grammar path's}`` on one
    configuration, for the methods that apply to it: not broken, and not
    exact only for projective trees when its gold tree is not.  A method that
    raises is entered in ``broken`` (with its error), so that the others are
    still timed."""
    from semiparse.heads import no_crossing

    stack, buffer, arcs, heads = config
    expected = oracles["grammar"].scores(stack, buffer, heads, arcs)
    projective = no_crossing(heads)
    agree = {}
    for m, o in oracles.items():
        if m in broken or (projective_only.get(m) and not projective):
            continue
        try:
            agree[m] = o.scores(stack, buffer, heads, arcs) == expected
        except Exception as exc:  # report a crashing method, time the others
            broken[m] = f"{type(exc).__name__}: {exc}"
    return agree


def _time(o, config, timer, seconds):
    """Seconds per call of the oracle ``o`` on one configuration, each call
    the first for its gold tree (as each configuration comes from another
    sentence): the oracle is cleared before it, or the values the grammar
    path remembered at the first repetition would answer the others."""
    stack, buffer, arcs, heads = config

    def first_call():
        o.cache_clear()
        o.scores(stack, buffer, heads, arcs)
    return timer(first_call, seconds)


def _row(size, n_configs, names, times, disagree, system, curves):
    """The table row of one size: the grammar path's mean time, then each
    method's (``!N``: disagreed on N configurations) and its ratio on the
    configurations where both were timed; the means go into ``curves``."""
    grammar = mean_time(times["grammar"])
    row = f"{size:>5} {n_configs:>7} {fmt_time(grammar):>10}"
    curves.setdefault((system, "grammar"), []).append((size, grammar))
    for m in names[1:]:
        pairs = [(g, t) for g, t in zip(times["grammar"], times[m]) if t is not None]
        if not pairs:
            row += f" {'-':>16} {'-':>7}"
            continue
        mean = sum(t for _, t in pairs) / len(pairs)
        ratio = sum(g for g, _ in pairs) / len(pairs) / mean
        note = f"!{disagree[m]}" if disagree[m] else ""
        row += f" {fmt_time(mean) + note:>16} {ratio:>6.1f}x"
        curves.setdefault((system, m), []).append((size, mean))
    return row


def _plot(curves, path, strategy, clock):
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (system, method), points in sorted(curves.items()):
        xs, ys = zip(*[(x, y) for x, y in points if y == y])
        ax.plot(xs, [y * 1e3 for y in ys], marker="o", markersize=3,
                linestyle="-" if method == "grammar" else "--", label=f"{system} / {method}")
    ax.set_yscale("log")
    ax.set_xlabel("k + m (stack size - 1 + buffer size)")
    ax.set_ylabel(f"mean {clock} time per oracle call (ms)")
    ax.set_title(f"Oracle time per call on UD configurations (strategy {strategy})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        with open_output(path, binary=True) as out:
            fig.savefig(out, format="png", dpi=120)
    finally:
        plt.close(fig)

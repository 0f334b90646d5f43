"""``semiparse bench batch``: ``Oracle.scores_batch`` against single calls.

Collects the configurations visited while parsing the sentences of a UD dev
file with the configuration API (``semiparse.system``), following the oracle
of the optimally projectivized gold tree with 10% random steps, then times
on the same configurations one ``oracle.scores(config, heads)`` call each
(the baseline) and one ``oracle.scores_batch`` call for all of them, in
alternating rounds (medians; this thread's CPU time, fair on a shared
machine); then one call on one thread against one on ``--jobs`` threads, in
elapsed time (threads save time, not CPU).  Every timed call starts from a
cleared oracle (``Oracle.cache_clear``), as a first call does.
All must give the same scores.  Projectivized gold trees, so that the C kernels
(arc-standard ``linear``, arc-hybrid and arc-eager ``cost``) apply.
"""
import math
import time

import numpy as np

from semiparse._support.seeds import seeded
from semiparse.cli import int_range
from semiparse.bench._inputs import read_heads, walk
from semiparse.bench._timing import alternating, fmt_time


MAX_JOBS = 256


def add_parser(subparsers):
    p = subparsers.add_parser("batch", help="Oracle.scores_batch vs one scores() call each")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="CoNLL-U files or directories (default: the first *-dev.conllu under "
                   "$SEMIPARSE_DATA/ud)")
    p.add_argument("--systems", nargs="+", default=["arc_standard", "arc_hybrid", "arc_eager"],
                   metavar="SYSTEM", help="names, system files or MODULE:ATTR")
    p.add_argument("--sentences", type=int_range(1), default=300, metavar="N",
                   help="sentences parsed to collect configurations (default 300)")
    p.add_argument("--rounds", "--repeats", type=int_range(1), default=5,
                   help="alternating rounds, medians reported (default 5)")
    p.add_argument("--jobs", type=int_range(1, MAX_JOBS), default=2,
                   help=f"threads of the last column, 1 to {MAX_JOBS} (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)
    return p


def _dev_file(args):
    from semiparse.bench._inputs import ud_files

    files = ud_files(args.files)
    if args.files:
        return files
    dev = [f for f in files if f.name.endswith("-dev.conllu")]
    return dev[:1] or files[:1]


def check_rows(name, oracle, configs, golds, threads):
    """RuntimeError unless every row of ``scores_batch`` (on one thread and on
    ``threads``) equals the scores of one ``scores`` call: a benchmark of
    wrong answers is void."""
    rows = [oracle.scores_batch(configs, golds, n_jobs=j) for j in (1, threads)]
    column = {t: i for i, t in enumerate(oracle.transitions)}
    for i, (config, heads) in enumerate(zip(configs, golds)):
        want = np.full(len(column), -math.inf)
        for t, v in oracle.scores(config, heads).items():
            want[column[t]] = v
        for got, jobs in zip(rows, (1, threads)):
            if not np.array_equal(got[i], want):
                raise RuntimeError(f"{name}: scores_batch row {i} on {jobs} thread(s), "
                                   f"{got[i].tolist()}, differs from scores, {want.tolist()}")


def run(args):
    from semiparse import projectivize, system

    files = _dev_file(args)
    trees = [tuple(projectivize(h)) for h in read_heads(files)[:args.sentences]]
    print(f"{len(trees)} sentences of {', '.join(f.name for f in files)}, projectivized; "
          f"time per configuration, medians of {args.rounds} alternating rounds")
    threads = f"{args.jobs} threads"
    print(f"{'':32}{'-- CPU time, 1 thread --':^30}{'-- batch, elapsed --':^30}")
    print(f"{'system':>14} {'configs':>8} {'method':>8} {'scores()':>10} {'batch':>10} {'ratio':>7} "
          f"{'1 thread':>10} {threads:>10} {'ratio':>7}")
    rng = seeded(args.seed)
    for name in args.systems:
        sys_ = system(name)
        oracle = sys_.oracle()
        configs, golds = walk(sys_, trees, rng, explore=0.1)

        def single():
            oracle.cache_clear()
            return [oracle.scores(c, h) for c, h in zip(configs, golds)]

        def batch(jobs=1):
            oracle.cache_clear()  # a first call's cost, not a memo kept from the last call
            return oracle.scores_batch(configs, golds, n_jobs=jobs)

        check_rows(name, oracle, configs, golds, args.jobs)
        # one call per round (min_seconds 0)
        t_single, t_batch = (t / len(configs) for t in alternating(
            [single, batch], 0.0, rounds=args.rounds))
        e_batch, e_jobs = (t / len(configs) for t in alternating(
            [batch, lambda: batch(args.jobs)], 0.0, rounds=args.rounds, clock=time.perf_counter))
        methods = sorted({oracle.method_for(h) for h in set(golds)})
        print(f"{sys_.name:>14} {len(configs):>8} {'/'.join(methods):>8} {fmt_time(t_single):>10} "
              f"{fmt_time(t_batch):>10} {t_single / t_batch:>6.1f}x {fmt_time(e_batch):>10} "
              f"{fmt_time(e_jobs):>10} {e_batch / e_jobs:>6.1f}x")
    return 0

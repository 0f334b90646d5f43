"""``semiparse bench engine``: the grammar engine against a specialized Eisner.

Four parts (``--parts``), all with ``projective.grammar`` on random normal
weights, each checked for agreement before it is timed:

- ``maxplus``: one max-plus parse through the public ``parse`` call (input
  checks included) and through the Cython kernel alone (input already
  encoded), the generic Python engine, and the hand-written first-order
  Eisner algorithm in Cython (the floor for any projective parser);
- ``log``: the log inside kernel against the max-plus one, with the path it
  took (plain probabilities or scaled numbers) and its scaled-number
  fallback timed alone;
- ``marginals``: edge marginals (inside and outside, log) against the log
  inside pass alone and against a hand-written first-order Eisner
  inside-outside in Cython (the floor);
- ``batch``: marginals of a batch of sentences on 1 and on 2 threads.
"""
import math

import numpy as np

from semiparse.cli import UserError, int_range, seconds
from semiparse.bench._timing import alternating, fmt_time, seconds_per_call

MAX_N = 2000  # longest sentence timed: charts and weights grow as n^2, time as n^3
MAX_BATCH = 100_000
MAX_BATCH_CELLS = 10 ** 8  # weights of a batch, 8 bytes each (and as many marginals)


def add_parser(subparsers):
    p = subparsers.add_parser("engine", help="generic Cython/Python engine vs specialized Eisner")
    p.add_argument("--lengths", type=int_range(1, MAX_N), nargs="+", default=[10, 20, 40, 80, 160],
                   help=f"sentence lengths n, 1 to {MAX_N} (default: 10 20 40 80 160)")
    p.add_argument("--python-max-n", type=int_range(0), default=160,
                   help="longest n timed with the (slow) Python engine (default 160)")
    p.add_argument("--seconds", type=seconds(60), default=0.2,
                   help="minimum time per measurement round, at most 60 (default 0.2)")
    p.add_argument("--seed", type=int_range(0), default=0)
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                   help="which tables to print (default: all)")
    p.add_argument("--batch", type=int_range(1, MAX_BATCH), nargs=2, default=[256, 30],
                   metavar=("SENTENCES", "WORDS"),
                   help=f"batch size and sentence length of the batch part, each 1 to {MAX_BATCH} "
                   "(default 256 30)")
    p.set_defaults(func=run)
    return p


PARTS = ("maxplus", "log", "marginals", "batch")


def run(args):
    from semiparse import load_grammar

    count, n = args.batch
    if "batch" in args.parts and (n > MAX_N or count * (n + 1) ** 2 > MAX_BATCH_CELLS):
        raise UserError(f"--batch {count} {n}: at most {MAX_N} words, and SENTENCES x (WORDS + 1)^2 "
                        f"at most {MAX_BATCH_CELLS:.0e} (the batch's weights and marginals in memory)")

    grammar = load_grammar("projective")
    rng = np.random.default_rng(args.seed)
    tables = {"maxplus": _maxplus_table, "log": _log_table, "marginals": _marginals_table,
              "batch": _batch_table}
    for part in args.parts:
        tables[part](args, grammar, rng)
        print()
    return 0


def _kernel_input(grammar, n, rng):
    """Random weights for n words, and the kernels' arguments for them."""
    from semiparse.chart.inputs import check_input, compiled

    w = rng.normal(size=(n + 1, n + 1))
    (_, pl, pr), wc = check_input(grammar, "s" * (n + 1), w)
    return w, (compiled(grammar), pl, pr, wc)


def _log_table(args, grammar, rng):
    from semiparse import parse
    from semiparse.chart.kernels import inside

    print("log inside vs max-plus inside (Cython kernels), and the log kernel's fallback over "
          "scaled numbers alone; thread CPU time per call, medians of 5 rounds alternating with "
          "max-plus")
    print(f"{'n':>5} {'max-plus':>12} {'log':>12} {'log path':>9} {'scaled':>12} "
          f"{'log/max-plus':>13} {'scaled/max-plus':>16}")
    for n in args.lengths:
        w, kernel_args = _kernel_input(grammar, n, rng)
        expected = parse(grammar, "s" * (n + 1), w, "log", engine="python").value
        for kernel in ("log", "logscaled"):
            if not math.isclose(inside(kernel, *kernel_args), expected, rel_tol=1e-9):
                raise RuntimeError(f"{kernel} kernel and the Python log semiring disagree at n={n}")
        path = "scaled" if math.isnan(inside("logplain", *kernel_args)) else "plain"
        # each kernel alternates with max-plus alone: a kernel run just before
        # another leaves the caches in its own state
        t_max, t_log = alternating([lambda: inside("maxplus", *kernel_args),
                                    lambda: inside("log", *kernel_args)], args.seconds)
        t_max2, t_scaled = alternating([lambda: inside("maxplus", *kernel_args),
                                        lambda: inside("logscaled", *kernel_args)], args.seconds)
        print(f"{n:>5} {fmt_time(t_max):>12} {fmt_time(t_log):>12} {path:>9} "
              f"{fmt_time(t_scaled):>12} {t_log / t_max:>12.2f}x {t_scaled / t_max2:>15.2f}x")


def _marginals_table(args, grammar, rng):
    from semiparse.chart.kernels import edge_marginals, inside
    from semiparse.bench._eisner import eisner_by_width, eisner_marginals

    print("edge marginals (inside + outside, log) vs log inside alone, vs a hand-written "
          "Eisner inside-outside (floor) and vs the log partition's own first-order path "
          "(eisner_src.c, plain numbers by width; '-' where they leave their range); thread "
          "CPU time per call, medians of 5 alternating rounds")
    print(f"{'n':>5} {'log inside':>12} {'marginals':>12} {'floor':>12} {'by width':>12} "
          f"{'marginals/inside':>17} {'marginals/floor':>16} {'marginals/width':>16}")
    for n in args.lengths:
        w, kernel_args = _kernel_input(grammar, n, rng)
        log_z, post = edge_marginals("log", *kernel_args)
        floors = []  # the floors timed: checked against the engine first
        for floor in (eisner_marginals, eisner_by_width):
            floor_z, floor_post = floor(kernel_args[-1])
            if floor is eisner_by_width and math.isnan(floor_z):
                continue  # beyond the plain numbers' range: the kernel rescales there
            if not (math.isclose(log_z, floor_z, rel_tol=1e-9)
                    and np.allclose(post, floor_post, rtol=1e-9, atol=1e-12)):
                raise RuntimeError(f"engine and {floor.__name__} disagree at n={n}")
            floors.append(floor)
        t_inside, t_marg, t_floor, *t_width = alternating(
            [lambda: inside("log", *kernel_args), lambda: edge_marginals("log", *kernel_args)]
            + [lambda f=f: f(kernel_args[-1]) for f in floors], args.seconds)
        t_width = t_width[0] if t_width else None
        width = fmt_time(t_width) if t_width else "-"
        ratio = f"{t_marg / t_width:>15.2f}x" if t_width else f"{'-':>16}"
        print(f"{n:>5} {fmt_time(t_inside):>12} {fmt_time(t_marg):>12} {fmt_time(t_floor):>12} "
              f"{width:>12} {t_marg / t_inside:>16.2f}x {t_marg / t_floor:>15.2f}x {ratio}")


def _batch_table(args, grammar, rng, rounds=7):
    """The public batch call on 1 and 2 threads, next to the kernels alone
    (inputs already checked, one GIL release per thread's share) and to a
    compute-only C loop of the same length (:mod:`._ceiling`): the loop's
    speed-up is what the machine gives two threads at that moment, and
    bounds the others.  All are timed in alternation, round after round,
    and the medians reported, since the speed-up of two threads varies with
    the load of the host."""
    import threading
    import time

    from semiparse.chart.kernels import edge_marginals_batch
    from semiparse.chart.inputs import check_input, compiled
    from semiparse.bench._ceiling import busy_loop
    from semiparse.queries.marginals import marginals

    count, n = args.batch
    batch = [("s" * (n + 1), rng.normal(size=(n + 1, n + 1))) for _ in range(count)]
    one = marginals(grammar, batch, n_jobs=1)
    if not all(np.array_equal(a, b) for a, b in zip(one, marginals(grammar, batch, n_jobs=2))):
        raise RuntimeError("batch results differ between 1 and 2 threads")
    checked = []
    for terminals, w in batch:
        (_, pl, pr), w = check_input(grammar, terminals, w)
        checked.append((pl, pr, w))

    def on_threads(target, shares):
        workers = [threading.Thread(target=target, args=share) for share in shares]
        for t in workers:
            t.start()
        for t in workers:
            t.join()

    def kernels(threads):
        on_threads(edge_marginals_batch, [("log", compiled(grammar), checked[i::threads])
                                          for i in range(threads)])

    # as many loop steps as the kernels' time on one thread
    steps = 1 << 20
    steps = int(steps * seconds_per_call(lambda: kernels(1), args.seconds, time.perf_counter)
                / seconds_per_call(lambda: busy_loop(steps), args.seconds, time.perf_counter))

    def ceiling(threads):
        on_threads(busy_loop, [(steps // threads,)] * threads)

    p1, p2, k1, k2, c1, c2 = alternating([
        lambda: marginals(grammar, batch, n_jobs=1), lambda: marginals(grammar, batch, n_jobs=2),
        lambda: kernels(1), lambda: kernels(2), lambda: ceiling(1), lambda: ceiling(2)],
        args.seconds, rounds, clock=time.perf_counter)
    print(f"marginals of a batch of {count} sentences of {n} words; elapsed time per batch, "
          f"medians of {rounds} alternating rounds")
    print(f"{'':>16} {'1 thread':>10} {'2 threads':>10} {'speed-up':>9}")
    print(f"{'public call':>16} {fmt_time(p1):>10} {fmt_time(p2):>10} {p1 / p2:>8.2f}x")
    print(f"{'kernels alone':>16} {fmt_time(k1):>10} {fmt_time(k2):>10} {k1 / k2:>8.2f}x")
    print(f"{'machine ceiling':>16} {fmt_time(c1):>10} {fmt_time(c2):>10} {c1 / c2:>8.2f}x"
          "   (a compute-only C loop of the same length)")


def _maxplus_table(args, grammar, rng):
    from semiparse import parse
    from semiparse.chart.kernels import inside
    from semiparse.bench._eisner import eisner_best_score

    print("max-plus, projective.grammar, random normal weights; thread CPU time per call, "
          "medians of 5 alternating rounds (the Python engine: one round)")
    print(f"{'n':>5} {'eisner (floor)':>15} {'cython kernel':>14} {'parse() call':>14} "
          f"{'python engine':>14} {'kernel/eisner':>14} {'call/eisner':>12} {'python/call':>12}")
    for n in args.lengths:
        w, kernel_args = _kernel_input(grammar, n, rng)
        terms = "s" * (n + 1)
        best = eisner_best_score(w)
        got = parse(grammar, terms, w).value
        if not math.isclose(best, got, rel_tol=1e-9, abs_tol=1e-9):
            raise RuntimeError(f"engine and Eisner disagree at n={n}: {got} vs {best}")
        t_eisner, t_kernel, t_cython = alternating([
            lambda: eisner_best_score(w), lambda: inside("maxplus", *kernel_args),
            lambda: parse(grammar, terms, w)], args.seconds)
        t_python = float("nan")
        if n <= args.python_max_n:
            (t_python,) = alternating([lambda: parse(grammar, terms, w, engine="python")],
                                      args.seconds, rounds=1)
        ratio = f"{t_python / t_cython:.1f}x" if n <= args.python_max_n else "-"
        print(f"{n:>5} {fmt_time(t_eisner):>15} {fmt_time(t_kernel):>14} {fmt_time(t_cython):>14} "
              f"{fmt_time(t_python):>14} {t_kernel / t_eisner:>13.2f}x "
              f"{t_cython / t_eisner:>11.2f}x {ratio:>12}")

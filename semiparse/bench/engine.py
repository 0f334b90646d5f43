"""``semiparse bench engine``: the grammar engine against a specialized Eisner.

Four parts (``--parts``), all with ``projective.grammar`` on random normal
weights, each checked for agreement before it is timed:

- ``maxplus``: one max-plus parse through the public ``parse`` call (input
  checks included) and through the Cython kernel alone (input already
  encoded), the generic Python engine, and the hand-written first-order
  Eisner algorithm in Cython (the floor for any projective parser);
- ``log``: the log inside kernel against the max-plus one;
- ``marginals``: edge marginals (inside and outside, log) against the log
  inside pass alone and against a hand-written first-order Eisner
  inside-outside in Cython (the floor);
- ``batch``: marginals of a batch of sentences on 1 and on 2 threads.
"""
import math

import numpy as np

from ._timing import fmt_time, per_call


def add_parser(subparsers):
    p = subparsers.add_parser("engine", help="generic Cython/Python engine vs specialized Eisner")
    p.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80, 160],
                   help="sentence lengths n (default: 10 20 40 80 160)")
    p.add_argument("--python-max-n", type=int, default=160,
                   help="longest n timed with the (slow) Python engine (default 160)")
    p.add_argument("--seconds", type=float, default=0.2,
                   help="minimum time per measurement round (default 0.2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                   help="which tables to print (default: all)")
    p.add_argument("--batch", type=int, nargs=2, default=[256, 30], metavar=("SENTENCES", "WORDS"),
                   help="batch size and sentence length of the batch part (default 256 30)")
    p.set_defaults(func=run)
    return p


PARTS = ("maxplus", "log", "marginals", "batch")


def run(args):
    from .. import load_grammar

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
    from ..engine import _check_input

    w = rng.normal(size=(n + 1, n + 1))
    (_, pl, pr), wc = _check_input(grammar, "s" * (n + 1), w)
    return w, (grammar.compiled, pl, pr, wc)


def _log_table(args, grammar, rng):
    from .. import parse
    from .._cky import inside

    print("log inside vs max-plus inside (Cython kernels); mean time per call")
    print(f"{'n':>5} {'max-plus':>12} {'log':>12} {'log/max-plus':>13}")
    for n in args.lengths:
        w, kernel_args = _kernel_input(grammar, n, rng)
        expected = parse(grammar, "s" * (n + 1), w, "log", engine="python").value
        if not math.isclose(inside("log", *kernel_args), expected, rel_tol=1e-9):
            raise RuntimeError(f"log kernel and the Python log semiring disagree at n={n}")
        t_max = per_call(lambda: inside("maxplus", *kernel_args), args.seconds)
        t_log = per_call(lambda: inside("log", *kernel_args), args.seconds)
        print(f"{n:>5} {fmt_time(t_max):>12} {fmt_time(t_log):>12} {t_log / t_max:>12.2f}x")


def _marginals_table(args, grammar, rng):
    from .._cky import edge_marginals, inside
    from .._eisner import eisner_marginals

    print("edge marginals (inside + outside, log) vs log inside alone and vs a "
          "hand-written Eisner inside-outside (floor); mean time per call")
    print(f"{'n':>5} {'log inside':>12} {'marginals':>12} {'floor':>12} "
          f"{'marginals/inside':>17} {'marginals/floor':>16}")
    for n in args.lengths:
        w, kernel_args = _kernel_input(grammar, n, rng)
        log_z, post = edge_marginals("log", *kernel_args)
        floor_z, floor_post = eisner_marginals(kernel_args[-1])
        if not (math.isclose(log_z, floor_z, rel_tol=1e-9)
                and np.allclose(post, floor_post, rtol=1e-9, atol=1e-12)):
            raise RuntimeError(f"engine and Eisner inside-outside disagree at n={n}")
        t_inside = per_call(lambda: inside("log", *kernel_args), args.seconds)
        t_marg = per_call(lambda: edge_marginals("log", *kernel_args), args.seconds)
        t_floor = per_call(lambda: eisner_marginals(kernel_args[-1]), args.seconds)
        print(f"{n:>5} {fmt_time(t_inside):>12} {fmt_time(t_marg):>12} {fmt_time(t_floor):>12} "
              f"{t_marg / t_inside:>16.2f}x {t_marg / t_floor:>15.2f}x")


def _batch_table(args, grammar, rng):
    from ..queries.marginals import marginals

    count, n = args.batch
    batch = [("s" * (n + 1), rng.normal(size=(n + 1, n + 1))) for _ in range(count)]
    one = marginals(grammar, batch, n_jobs=1)
    if not all(np.array_equal(a, b) for a, b in zip(one, marginals(grammar, batch, n_jobs=2))):
        raise RuntimeError("batch results differ between 1 and 2 threads")
    print(f"marginals of a batch of {count} sentences of {n} words (public call); time per batch")
    t1 = per_call(lambda: marginals(grammar, batch, n_jobs=1), args.seconds)
    t2 = per_call(lambda: marginals(grammar, batch, n_jobs=2), args.seconds)
    print(f"{'1 thread':>10} {'2 threads':>10} {'speed-up':>9}")
    print(f"{fmt_time(t1):>10} {fmt_time(t2):>10} {t1 / t2:>8.2f}x")


def _maxplus_table(args, grammar, rng):
    from .. import parse
    from .._cky import inside
    from .._eisner import eisner_best_score
    from ..engine import _check_input

    print("max-plus, projective.grammar, random normal weights; mean time per call")
    print(f"{'n':>5} {'eisner (floor)':>15} {'cython kernel':>14} {'parse() call':>14} "
          f"{'python engine':>14} {'kernel/eisner':>14} {'call/eisner':>12} {'python/call':>12}")
    for n in args.lengths:
        w = rng.normal(size=(n + 1, n + 1))
        terms = "s" * (n + 1)
        best = eisner_best_score(w)
        got = parse(grammar, terms, w).value
        if not math.isclose(best, got, rel_tol=1e-9, abs_tol=1e-9):
            raise RuntimeError(f"engine and Eisner disagree at n={n}: {got} vs {best}")
        t_eisner = per_call(lambda: eisner_best_score(w), args.seconds)
        (_, pl, pr), wc = _check_input(grammar, terms, w)
        rules = grammar.compiled
        t_kernel = per_call(lambda: inside("maxplus", rules, pl, pr, wc), args.seconds)
        t_cython = per_call(lambda: parse(grammar, terms, w), args.seconds)
        t_python = float("nan")
        if n <= args.python_max_n:
            t_python = per_call(lambda: parse(grammar, terms, w, engine="python"),
                                args.seconds, repeats=1)
        ratio = f"{t_python / t_cython:.1f}x" if n <= args.python_max_n else "-"
        print(f"{n:>5} {fmt_time(t_eisner):>15} {fmt_time(t_kernel):>14} {fmt_time(t_cython):>14} "
              f"{fmt_time(t_python):>14} {t_kernel / t_eisner:>13.2f}x "
              f"{t_cython / t_eisner:>11.2f}x {ratio:>12}")

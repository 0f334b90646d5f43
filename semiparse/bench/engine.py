"""``semiparse bench engine``: the grammar engine against a specialized Eisner.

Times one max-plus parse with ``projective.grammar`` through the public
``parse`` call (input checks included) and through the Cython kernel alone
(input already encoded), the generic Python engine, and the hand-written
first-order Eisner algorithm in Cython (the floor for any projective parser),
on the same random weights in the same run.  All must agree on the score.
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
    p.set_defaults(func=run)
    return p


def run(args):
    from .. import load_grammar, parse
    from .._cky import inside
    from .._eisner import eisner_best_score
    from ..engine import _check_input

    grammar = load_grammar("projective")
    rng = np.random.default_rng(args.seed)
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
    return 0

"""``semiparse check SYSTEM``: prove an oracle right against exhaustive search.

For the dependency systems (shipped or registered names, a ``.toml`` file or
``module:attr``) hypothesis draws gold trees (projective and not),
configurations reachable from the initial one and every strategy, and
compares the grammar oracle (or
``--method M``) with the exhaustive search over all computations.  A mismatch
is shrunk and printed; the exit status is then 1.  ``top_down`` and
``in_order`` are the constituent systems, checked by the generic walk check
on the gold trees of :mod:`semiparse.testing.constituent_checking`.
``--all`` checks every shipped system (docs/systems.md), each with its
completion grammar and every registered oracle method, then the constituent
systems.
"""
import sys
import time

# the options of the dependency check, which the other kinds refuse
DEPENDENCY_OPTIONS = ("--grammar", "--method", "--strategy")


def walk_trees(system):
    """The module of gold trees (``example_trees``, ``MAX_STATES``) on which
    a system of this kind is walk-checked, or None for the dependency
    systems, which have their own check and its options."""
    if system.kind == "dependency":
        return None
    from semiparse.testing import constituent_checking

    return {"constituent": constituent_checking}[system.kind]


def _run_walks(system, args):
    from semiparse.cli._walk_check import run as run_walks

    trees = walk_trees(system)
    return run_walks(system, trees, args.examples, args.max_n, args.seed,
                     max_states=trees.MAX_STATES)


def add_parser(subparsers):
    p = subparsers.add_parser(
        "check", help="compare a transition system's oracle with exhaustive search",
        description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("system", metavar="SYSTEM", nargs="?",
                   help="arc_standard, arc_hybrid, arc_eager, a registered system, a .toml "
                        "file, MODULE:ATTR (a system object in a Python module), or top_down / "
                        "in_order")
    p.add_argument("--system", dest="system_option", metavar="SYSTEM",
                   help="the same as the positional SYSTEM")
    p.add_argument("--all", action="store_true",
                   help="check every shipped and registered system: its completion grammar and "
                        "every registered oracle method of it, then top_down and in_order; exit "
                        "status 1 if any fails")
    p.add_argument("--grammar", metavar="FILE",
                   help="completion grammar to check instead of the system's own")
    p.add_argument("--examples", type=int, default=2000, metavar="N",
                   help="examples per strategy (default 2000)")
    p.add_argument("--max-n", type=int, default=8, metavar="N",
                   help="largest sentence length (default 8)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--strategy", action="append", metavar="NAME",
                   help="check only this strategy (repeatable; default: all of the system's)")
    p.add_argument("--method", metavar="M",
                   help="oracle method to check: grammar, search (the bounded search, "
                        "strategy none), spanning (a completion of kind spanning) or a "
                        "registered fast method (default: the completion grammar and the "
                        "method a system file makes of its [completion.projective]; the "
                        "search or the branching of a completion of kind search or spanning; "
                        "else every registered method)")
    p.set_defaults(func=run)
    return p


def run(args):
    if args.all:
        return run_all(args)
    if (args.system is None) == (args.system_option is None):
        raise ValueError("give the system to check once: SYSTEM or --system SYSTEM (or --all)")
    args.system = args.system if args.system is not None else args.system_option
    from semiparse.transitions import load_system
    from semiparse.transitions.oracles.methods import system_methods

    start = time.perf_counter()
    system = load_system(args.system, grammar_file=args.grammar)
    if walk_trees(system) is not None:
        given = [name for name, value in zip(DEPENDENCY_OPTIONS, (args.grammar, args.method,
                                                                  args.strategy)) if value]
        if given:
            raise ValueError(f"{args.system} is a {system.kind} system, checked against its own "
                             f"oracle: {', '.join(given)} apply to dependency systems only")
        return _run_walks(system, args)
    chosen = [args.method]
    if args.method is None:
        chosen = (["grammar"] if system.grammar is not None or args.grammar
                  else [system.completion_kind]
                  if system.completion_kind in ("search", "spanning") else [])
        chosen = chosen or [m.name for m in system_methods(system)]
        if chosen == ["grammar"] and not args.grammar:
            # the methods a system file makes of its own declarations (its
            # projective form): method "auto" may choose them
            chosen += [m.name for m in system_methods(system) if m.name in system.own_methods]
        if not chosen:
            reason = getattr(system, "not_split", None)
            where = f"{system.path}: " if hasattr(system, "path") else ""
            raise ValueError(f"{where}transition system {system.name!r} has neither a completion "
                             f"grammar nor a registered oracle method to check"
                             + (f"; no split grammar can describe it: {reason}" if reason else ""))
    results = _check(args, system, chosen)
    status = _report(results)
    print(f"{sum(r.ok for r in results)}/{len(results)} strategies passed in "
          f"{time.perf_counter() - start:.1f} s")
    return status


def run_all(args):
    """``check --all``: every system of :func:`available_systems`: the
    dependency ones with their grammar (if any) and every registered method,
    then the others by the walk check; one summary line, status 1 if
    anything failed."""
    from semiparse.transitions import load_system
    from semiparse.testing.checking import check, make_oracle
    from semiparse.transitions.oracles.methods import system_methods
    from semiparse.transitions.systems.loading import available_systems

    given = [name for name, value in (("SYSTEM", args.system or args.system_option),
                                      ("--grammar", args.grammar), ("--method", args.method),
                                      ("--strategy", args.strategy)) if value]
    if given:
        raise ValueError(f"--all checks every system with its own grammar, methods and "
                         f"strategies: drop {', '.join(given)}")
    start = time.perf_counter()
    failed, count, passed = [], 0, 0
    walked = []
    for name in available_systems():
        system = load_system(name)
        if walk_trees(system) is not None:
            walked.append(system)
            continue
        # (method, strategies): the grammar under all, a method under those it supports
        methods = [("grammar", None)] * (system.grammar is not None)
        if system.completion_kind in ("search", "spanning"):
            methods.append((system.completion_kind, ["none"]))
        methods += [(m.name, [s for s in system.strategies if s in m.strategies])
                    for m in system_methods(system)]
        results = []
        for method, strategies in methods:
            results += check(name, strategies, args.examples, args.max_n, args.seed, method)
        count, passed = count + len(results), passed + sum(r.ok for r in results)
        if _report(results):
            failed.append(name)
    for system in walked:
        count += 1
        if _run_walks(system, args):
            failed.append(system.name)
        else:
            passed += 1
            method = make_oracle(system.name).method
            print(f"ok    {system.name} strategy=none method={method}: the walk check above passed")
    print(f"check --all: {passed}/{count} checks passed in {time.perf_counter() - start:.1f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _check(args, system, methods):
    """The :class:`CheckResult` of every strategy (``--strategy`` or all of
    the system's) for each of ``methods``: the grammar under each, a method
    other than the one named by ``--method`` under those it supports."""
    from semiparse.testing.checking import check
    from semiparse.transitions.oracles.methods import system_methods

    supports = {m.name: m.strategies for m in system_methods(system)}
    supports["search"] = ("none",)   # the bounded search, for any declared system
    supports["spanning"] = ("none",)
    results = []
    for method in methods:
        strategies = args.strategy
        if method == "search" or (method != "grammar" and method != args.method):
            strategies = [s for s in strategies or system.strategies if s in supports[method]]
            if not strategies:
                continue
        results += check(system, strategies, args.examples, args.max_n, args.seed,
                         method, args.grammar)
    return results


def _report(results):
    """Print one line per result (and the dead-end warning); 1 if any failed."""
    status = 0
    for r in results:
        what = f"{r.system} strategy={r.strategy} method={r.method}"
        if r.method == "grammar":
            what += f" grammar={r.grammar}"
        notes = "".join(f"; {note}" for note in r.notes)
        if r.ok:
            print(f"ok    {what}: {r.examples} examples (n <= {r.max_n}, seed {r.seed}{notes}) "
                  f"agree with the exhaustive search")
            if r.hint:
                print(f"hint  {what}: {r.hint}")
        else:
            status = 1
            print(f"FAIL  {what}: {r.method} and the exhaustive search differ{notes}; "
                  f"shrunk counterexample:")
            print("      " + r.mismatch.describe(r.method).replace("\n", "\n      "))
        if r.dead_end is not None:
            print(f"semiparse check: warning: {r.system}: {r.dead_ends} of the {r.calls} "
                  f"examples of strategy {r.strategy} are at or one step before a dead end, a "
                  f"configuration that is not final and from which no final one is reachable, "
                  f"e.g. {r.dead_end.describe()}; the oracle scores the transitions into them "
                  f"-inf, so training never explores into one, and a parse that reaches one is "
                  f"parsed again with the transitions that can still finish (docs/training.md); "
                  f"the stack requirements of docs/oracles.md can rule them out",
                  file=sys.stderr)
    return status

"""``semiparse bench constituency``: µs per oracle call against sentence length.

Configurations come from the PTB sample: for each tree, the canonical
(static-oracle) sequence with a few arbitrary transitions mixed in (seeded),
so the stacks hold wrong and out-of-order non-terminals.  For each length
bucket and both systems it times ``oracle.loss`` and ``oracle.optimal`` and,
in the same run, two baselines on the same configurations: the loss with the
general capacity-aware programme for every start instead of the increasing
subsequence shortcut (``chain="general"``), and, for sentences of at most
``--exhaustive-max`` words, the exhaustive search (a fresh memo per tree).
"""
import time

from semiparse._support.seeds import seeded
from semiparse.cli import int_range
from semiparse.transitions.constituent.exhaustive import Search
from semiparse.transitions.constituent.oracle import Gold, oracle as make_oracle
from semiparse.transitions.constituent.systems import NT, system as get_system
from semiparse.transitions.systems.registry import registered_systems
from semiparse.treebank.brackets import read_ptb
from semiparse.resources import data_root

BUCKETS = ((1, 8), (9, 15), (16, 25), (26, 40), (41, 60), (61, 10 ** 6))


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "constituency", help="top-down / in-order oracle: µs per call against sentence length",
        description=__doc__.split("\n\n")[1])
    parser.add_argument("--treebank", metavar="MRG", help="bracketed treebank (default: the shared PTB sample)")
    parser.add_argument("--sentences", type=int_range(1), default=400, help="trees used (default 400)")
    parser.add_argument("--configs", type=int_range(1), default=6, help="configurations per tree (default 6)")
    parser.add_argument("--exhaustive-max", type=int_range(0), default=8, metavar="N",
                        help="exhaustive-search baseline for trees of at most N words (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=run)
    return parser


def _treebank(path):
    target = path or data_root() / "ptb" / "wsj_sample_combined.mrg"
    if not path and not target.is_file():
        raise ValueError(f"{target}: PTB sample not found (set SEMIPARSE_DATA or give --treebank)")
    trees = read_ptb(target)
    if not trees:  # else the tables came out empty, with status 0
        raise ValueError(f"{target}: no tree to time")
    return trees


def configurations(name, tree, count, rng):
    """``count`` configurations along the canonical sequence of ``tree`` with
    arbitrary transitions mixed in (probability 0.2 per step)."""
    system = get_system(name)
    gold_sequence = system.static_oracle(tree)
    labels = sorted({t.label for t in gold_sequence if t.kind == "NT"}) + ["<x>"]
    c = system.initial(len(tree))
    seen = []
    k = 0
    opt = make_oracle(name)
    gold = Gold(tree)
    while not system.is_final(c):
        seen.append(c)
        if rng.random() < 0.2:
            options = [u for t in system.legal(c)
                       for u in ([NT(x) for x in labels] if t.kind == "NT" else [t])]
            t = rng.choice(options)
        else:
            t = (opt.optimal(c, gold) or [gold_sequence[min(k, len(gold_sequence) - 1)]])[0]
        c = system.apply(c, t)
        k += 1
    return rng.sample(seen, min(count, len(seen)))


def _time(function, items, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            function(*item)
        best = min(best, time.perf_counter() - start)
    return best / max(1, len(items)) * 1e6


def run(args):
    trees = _treebank(args.treebank)
    rng = seeded(args.seed)
    trees = rng.sample(list(trees), min(args.sentences, len(trees)))
    print(f"semiparse bench constituency: {len(trees)} PTB trees, {args.configs} configurations each, "
          f"seed {args.seed}; times in µs per call (best of 3)")
    for name in registered_systems("constituent", ordered=True):
        fast, general = make_oracle(name), make_oracle(name, chain="general")
        rows = {b: [] for b in BUCKETS}
        for t in trees:
            gold = Gold(t)
            for c in configurations(name, t, args.configs, rng):
                bucket = next(b for b in BUCKETS if b[0] <= gold.n <= b[1])
                rows[bucket].append((c, gold))
        print(f"\n{name}")
        print(f"{'words':>9} {'configs':>7} {'loss':>8} {'optimal':>9} {'general loss':>13} "
              f"{'ratio':>6} {'exhaustive':>11} {'ratio':>8}")
        for (low, high), items in rows.items():
            if not items:
                continue
            loss = _time(fast.loss, items)
            optimal = _time(fast.optimal, items)
            slow = _time(general.loss, items)
            exhaustive = ratio = ""
            small = [item for item in items if item[1].n <= args.exhaustive_max]
            if small and len(small) == len(items):
                def search(c, gold):
                    Search(name, gold).loss(c)
                value = _time(search, small, repeat=1)
                exhaustive = f"{value:11.0f}"
                ratio = f"{value / loss:7.0f}x"
            span = f"{low}-{high}" if high < 10 ** 6 else f"{low}+"
            print(f"{span:>9} {len(items):7d} {loss:8.1f} {optimal:9.1f} {slow:13.1f} "
                  f"{slow / loss:5.2f}x {exhaustive:>11} {ratio:>8}")
    return 0

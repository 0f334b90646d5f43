"""``semiparse bench oracle --system NAME`` for a system whose oracle
searches its computations (a completion of kind ``search``, such as the swap
systems): time per call on the non-projective sentences of the Gothic and
Hungarian dev files, side by side with shipped ``arc_standard`` on the same
sentences.

Each system parses each sentence with its own oracle, following an optimal
transition or, with probability 0.1, a random legal one (as training with
exploration does); one oracle per system, so the search's memo is kept
across the calls of a sentence, as in training.  Every call is timed once
(CPU time of this process), so the table gives the distribution: median,
99th percentile and maximum, and the mean; then one ``scores_batch`` call
per sentence over its configurations, per configuration.  Ratios are the
system's time over arc-standard's.
"""
import time

import numpy as np

from semiparse._support.seeds import seeded
from semiparse.bench._inputs import read_heads
from semiparse.bench._timing import fmt_time
from semiparse.treebank.projectivity import is_projective

AGAINST = "arc_standard"
DEV_FILES = (("UD_Gothic-PROIEL", "got_proiel"), ("UD_Hungarian-Szeged", "hu_szeged"))
MAX_WORDS = 100
EXPLORE = 0.1


def sentences(files, count):
    """The first ``count`` non-projective trees of at most MAX_WORDS words
    of ``files``, as tuples."""
    found = [tuple(h) for h in read_heads(files)
             if len(h) - 1 <= MAX_WORDS and not is_projective(list(h))]
    return found[:count]


def walk(system, trees, seed):
    """``(times, batch_times, configurations)``: the time of each scores call
    along each tree's walk, and of one scores_batch call per tree divided by
    its configurations."""
    from semiparse import system as load

    rng = seeded(seed)
    system = load(system)
    oracle = system.oracle()
    times, batch = [], []
    count = 0
    for heads in trees:
        configs = [system.initial(len(heads) - 1)]
        while not configs[-1].is_final():
            start = time.process_time()
            scores = oracle.scores(configs[-1], heads)
            times.append(time.process_time() - start)
            best = max(scores.values())
            moves = sorted(scores)
            move = (rng.choice(moves) if rng.random() < EXPLORE
                    else min(t for t in moves if scores[t] == best))
            configs.append(configs[-1].apply(move))
        configs.pop()
        fresh = system.oracle()   # a cold memo: the batch is timed from scratch
        start = time.process_time()
        fresh.scores_batch(configs, [heads] * len(configs))
        batch.append((time.process_time() - start) / max(len(configs), 1))
        count += len(configs)
    return np.array(times), np.array(batch), count


def report(name, times, batch, count, base=None):
    """One table row; ratios against ``base`` (arc-standard's row data)."""
    stats = [np.median(times), np.percentile(times, 99), times.max(), times.mean(),
             np.mean(batch)]
    cells = "".join(f" {fmt_time(v):>10}" for v in stats)
    ratio = ""
    if base is not None:
        ratio = "".join(f" {v / max(b, 1e-12):>7.1f}x" for v, b in zip(stats, base))
    return f"{name:<20} {count:>7}{cells}{ratio}", stats


def default_files():
    """The dev files read without FILEs (their presence is checked by the caller)."""
    from semiparse.resources import data_root

    return [data_root() / "ud" / d / f"{p}-ud-dev.conllu" for d, p in DEV_FILES]


def run(args, system, files):
    """Print the table of ``system`` on the non-projective sentences of ``files``."""
    from semiparse.cli import UserError

    trees = sentences(files, args.sentences)
    if not trees:
        raise UserError("no non-projective sentence of at most 100 words in the files read")
    print(f"{len(trees)} non-projective sentences (at most {MAX_WORDS} words, "
          f"{sum(len(t) - 1 for t in trees)} words) of {', '.join(f.name for f in files)}; "
          f"CPU time per oracle call along walks with {EXPLORE:.0%} random moves; batch: one "
          f"scores_batch call per sentence, per configuration")
    print(f"{'system':<20} {'calls':>7} {'median':>10} {'p99':>10} {'max':>10} {'mean':>10} "
          f"{'batch':>10}   ratios to {AGAINST} (median, p99, max, mean, batch)")
    line, base = report(AGAINST, *walk(AGAINST, trees, args.seed))
    print(line)
    line, _ = report(system.name, *walk(system, trees, args.seed), base=base)
    print(line)
    return 0

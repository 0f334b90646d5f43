"""``semiparse bench oracle --system FILE``: a declared system's oracle side by
side with its shipped equivalent, in one run.

Both systems parse the same sentences (by default the first projective
sentences of the shared Greek dev set), each following optimal transitions
of its own oracle (one drawn at random among the optimal ones), and the
configurations they pass through are timed three ways: one ``scores`` call
per configuration, one ``scores_batch`` call for all of them on one thread,
and the same on ``--threads`` threads.  Single calls and one-thread batches
are timed in this thread's CPU time, alternating between the two systems
(fair on a shared machine); the threaded batch in elapsed time, as it is
what threads change.  Every timed call starts from a cleared oracle
(:meth:`~semiparse.transitions.oracles.oracle.Oracle.cache_clear`): a memo kept
from the previous call would answer every row.  Before timing, each batch
row must equal the single call's scores.  The ratios are the declared
system's time over the shipped one's (lower is better; 1.0x: as fast).
"""

from semiparse._support.seeds import seeded
from semiparse.bench import missing_data
from semiparse.cli import UserError
from semiparse.bench._inputs import read_heads, walk
from semiparse.bench.batch import check_rows
from semiparse.bench._timing import alternating, fmt_time, seconds_per_call
from semiparse.resources import data_root

SHIPPED = ("arc_standard", "arc_hybrid", "arc_eager")


def equivalent_of(system):
    """The shipped system a declared one is compared with: the longest shipped
    name its own name starts with (``arc_eager_root_end``: ``arc_eager``)."""
    names = [s for s in SHIPPED if system.name.startswith(s)]
    if not names:
        raise UserError(f"no shipped equivalent of the system {system.name!r}: name one with "
                        f"--against ({', '.join(SHIPPED)})")
    return max(names, key=len)


def default_sentences(count):
    """The first ``count`` projective trees of the shared Greek dev set."""
    path = data_root() / "ud" / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"
    if not path.is_file():
        raise UserError(missing_data(path))
    return read_projective([path], count)


def read_projective(files, count):
    """The first ``count`` projective trees of ``files`` (heads tuples)."""
    from semiparse.treebank.projectivity import is_projective

    trees = [tuple(h) for h in read_heads(files) if is_projective(h)][:count]
    if not trees:
        raise UserError(f"{', '.join(map(str, files))}: no projective sentence")
    return trees


class Timed:
    """One system's configurations and what its oracle does with them."""

    def __init__(self, spec, trees, rng):
        import semiparse

        self.system = semiparse.system(spec)
        self.name = self.system.name
        self.oracle = self.system.oracle()
        self.configs, self.golds = walk(self.system, trees, rng)

    def single(self):
        self.oracle.cache_clear()
        for config, heads in zip(self.configs, self.golds):
            self.oracle.scores(config, heads)

    def batch(self, threads=1):
        def call():
            self.oracle.cache_clear()  # what a first call costs, not a memo kept from the last
            self.oracle.scores_batch(self.configs, self.golds, n_jobs=threads)
        return call


def compare(spec, against, trees, threads=2, min_seconds=0.2, rounds=3, seed=0):
    """``[(name, configurations, per call, batch, threaded batch)]`` for the
    declared system ``spec`` and the shipped system ``against`` (None: its
    :func:`equivalent_of`), seconds per configuration."""
    import semiparse

    if against is None:
        against = equivalent_of(semiparse.system(spec))
    pair = [Timed(s, trees, seeded(seed)) for s in (spec, against)]
    for timed in pair:
        check_rows(timed.name, timed.oracle, timed.configs, timed.golds, threads)
    fns = [f for t in pair for f in (t.single, t.batch())]
    cpu = alternating(fns, min_seconds, rounds)
    rows = []
    for k, timed in enumerate(pair):
        wall = min(seconds_per_call(timed.batch(threads), min_seconds) for _ in range(rounds))
        per = len(timed.configs)
        rows.append((timed.name, per, cpu[2 * k] / per, cpu[2 * k + 1] / per, wall / per))
    return rows


def report(rows, threads):
    """The table of :func:`compare` and the ratios, as lines."""
    lines = [f"{'system':>24} {'configs':>8} {'scores':>11} {'batch':>11} "
             f"{'batch x' + str(threads):>11} {'batch gain':>11} {'threads gain':>13}"]
    for name, count, single, batch, threaded in rows:
        lines.append(f"{name:>24} {count:>8} {fmt_time(single):>11} {fmt_time(batch):>11} "
                     f"{fmt_time(threaded):>11} {single / batch:>10.2f}x {single / threaded:>12.2f}x")
    (mine, _, s1, b1, t1), (theirs, _, s2, b2, t2) = rows
    lines.append(f"{mine} / {theirs}: scores {s1 / s2:.1f}x, batch {b1 / b2:.1f}x, "
                 f"batch on {threads} threads {t1 / t2:.1f}x (time per configuration; 1.0x: as fast)")
    return lines

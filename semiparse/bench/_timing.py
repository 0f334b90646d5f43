"""Timing helpers shared by the benchmarks."""
import math
import time


def seconds_per_call(fn, min_seconds, clock=time.perf_counter, max_calls=None):
    """Seconds per call of ``fn()``, called until ``min_seconds`` of ``clock``
    have passed (at least once, at most ``max_calls`` times)."""
    calls, start = 0, clock()
    while True:
        fn()
        calls += 1
        elapsed = clock() - start
        if elapsed >= min_seconds or calls == max_calls:
            return elapsed / calls


def per_call(fn, min_seconds=0.2, max_calls=100_000, repeats=3):
    """Mean seconds per call of ``fn()``: the best of ``repeats`` rounds, each
    calling ``fn`` until ``min_seconds`` have passed (at least once)."""
    return min(seconds_per_call(fn, min_seconds, max_calls=max_calls) for _ in range(repeats))


def alternating(fns, min_seconds=0.2, rounds=5, clock=time.thread_time):
    """Seconds per call of each function of ``fns``: the median of ``rounds``
    rounds that time every function once in turn, each until ``min_seconds``
    of ``clock`` have passed.  Alternating, and timing in this thread's CPU
    time, keeps the ratios between the functions fair on a shared machine,
    whose speed drifts from one moment to the next."""
    import statistics

    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times):
            out.append(seconds_per_call(fn, min_seconds, clock))
    return [statistics.median(t) for t in times]


def mean_time(values):
    """The mean of the times measured (None: not measured), NaN if none was."""
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else math.nan


def fmt_time(seconds):
    """A time per call in the most readable unit."""
    if seconds != seconds:  # NaN: not measured
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"

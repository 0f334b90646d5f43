"""Timing helpers shared by the benchmarks."""
import time


def per_call(fn, min_seconds=0.2, max_calls=100_000, repeats=3):
    """Mean seconds per call of ``fn()``: the best of ``repeats`` rounds, each
    calling ``fn`` until ``min_seconds`` have passed (at least once)."""
    best = float("inf")
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds or calls >= max_calls:
                break
        best = min(best, elapsed / calls)
    return best


def fmt_time(seconds):
    """A time per call in the most readable unit."""
    if seconds != seconds:  # NaN: not measured
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"

"""``semiparse check top_down|in_order``: the constituent oracle check
(:func:`semiparse.testing.constituent_checking.check`) with its progress
and result lines."""
from semiparse.testing import constituent_checking


def run(system, examples=200, max_n=7, seed=0, ptb=None):
    """Check the oracle of ``system``, printing progress (every 50 examples)
    and a summary, or the shrunk counterexample; 0 if the oracle agrees with
    the exhaustive search everywhere, else 1."""

    def progress(passed, result):
        if passed == 0:
            for note in result.notes:
                print(f"check {result.system}: {note}")
        elif passed % 50 == 0:
            print(f"check {result.system}: {passed} examples, {result.configurations} configurations",
                  flush=True)

    result = constituent_checking.check(system, examples, max_n, seed, ptb, progress)
    if not result.ok:
        print(f"check {result.system}: MISMATCH (shrunk counterexample):\n"
              f"{result.mismatch.describe(result.method)}")
        return 1
    print(f"check {result.system}: oracle == exhaustive search on {result.calls} examples, "
          f"{result.configurations} configurations (max {max_n} words, seed {seed})")
    return 0

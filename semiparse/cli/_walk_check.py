"""The lines of ``semiparse check`` for a system checked by walks (the
generic walk check, :func:`semiparse.testing.checking.check_walks`): its
progress, its summary or its shrunk counterexample."""
from semiparse.testing.checking import check_walks

# more skipped examples than this fraction of those asked for: the check
# proved too little and fails
SKIPPED_LIMIT = 0.25


def run(system, trees, examples=200, max_n=7, seed=0, ptb=None, max_states=None):
    """Walk-check the oracle of ``system`` on the gold trees of ``trees``
    (the module of its kind's trees: ``example_trees(max_n, ptb)``),
    printing progress (every 50 examples) and a summary, or the shrunk
    counterexample; 0 if the oracle agrees with the exhaustive search
    everywhere it finished, else 1.  Examples whose exhaustive search passes
    ``max_states`` states are counted and reported as skipped; more than a
    quarter of them fails the check."""

    def progress(done, result):
        if done == 0:
            for note in result.notes:
                print(f"check {result.system}: {note}")
            if result.max_states is not None:
                print(f"check {result.system}: budget {result.max_states} states of the "
                      f"exhaustive search per example (memo entries and time grow with it); "
                      f"an example past it is skipped and counted")
        elif done % 50 == 0:
            print(f"check {result.system}: {done} examples ({result.passed} passed, "
                  f"{result.skipped} skipped: over budget), {result.configurations} configurations",
                  flush=True)

    if examples < 1 or max_n < 1:
        raise ValueError("examples and max_n must be positive")
    golds, notes = trees.example_trees(max_n, ptb)
    result = check_walks(system, golds, examples, max_n, seed, progress, max_states, notes)
    if not result.ok:
        print(f"check {result.system}: MISMATCH (shrunk counterexample):\n"
              f"{result.mismatch.describe(result.method)}")
        return 1
    budget = ("unbounded exhaustive search" if result.max_states is None
              else f"exhaustive search past {result.max_states} states")
    print(f"check {result.system}: oracle == exhaustive search on {result.passed} examples, "
          f"{result.configurations} configurations (max {max_n} words, seed {seed}); "
          f"skipped: {result.skipped} over budget ({budget})")
    if result.skipped > SKIPPED_LIMIT * result.examples:
        print(f"check {result.system}: FAIL: {result.skipped} of {result.examples} examples skipped "
              f"over budget (more than {SKIPPED_LIMIT:.0%}): the check proves too little; lower "
              f"--max-n")
        return 1
    return 0

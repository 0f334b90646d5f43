"""Batches of inputs on threads (the Cython kernels release the GIL)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

def run_batch(terminals, weights, n_jobs, one, many=None):
    """``one(terminals, weights)``, or for a batch (``weights`` None and
    ``terminals`` a list of ``(terminals, weights)`` pairs) the list of
    ``one`` of each pair, on ``n_jobs`` threads.

    The Cython kernels release the GIL, so threads run them in parallel.  A
    ValueError in a batch names the index of the first item at fault.
    ``many(pairs)``, if given, does the work of a thread's share of the batch
    at once (e.g. all its kernels in one call without the GIL) and returns
    ``(results, error)``: the results of the items before the first one at
    fault, and that item's ValueError (or None).
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    if weights is not None:
        if (isinstance(terminals, (list, tuple)) and terminals
                and all(isinstance(x, tuple) and len(x) == 2 for x in terminals)):
            raise ValueError(f"terminals is a batch of {len(terminals)} (terminals, weights) "
                             f"pairs and weights are given too: give a batch without weights")
        if n_jobs != 1:
            raise ValueError("n_jobs is for batches: give a list of (terminals, weights) pairs "
                             "and no weights")
        return one(terminals, weights)
    if not isinstance(terminals, (list, tuple)):
        raise ValueError("weights missing: expected an array of real numbers, or a batch as "
                         "terminals: a list of (terminals, weights) pairs and no weights")
    batch = list(terminals)

    def each(pairs):
        out = []
        for pair in pairs:
            try:
                out.append(one(*pair))
            except ValueError as exc:
                return out, exc
        return out, None

    def run_chunk(indices):
        """Results of the items in order, up to the first error (returned)."""
        pairs, bad = [], None
        for i in indices:
            pair = batch[i]
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                bad = ValueError(f"batch item {i}: expected a (terminals, weights) pair, "
                                 f"got {pair!r:.60}")
                break
            pairs.append(pair)
        out, error = (many or each)(pairs)
        if error is not None:
            return out, ValueError(f"batch item {indices[len(out)]}: {error}")
        return out, bad

    threads = min(int(n_jobs), max(len(batch), 1))  # more threads than items would idle
    chunks = [c for c in np.array_split(np.arange(len(batch)), threads) if len(c)]
    if threads == 1 or len(chunks) < 2:
        done = [run_chunk(c) for c in chunks]
    else:
        with ThreadPoolExecutor(len(chunks)) as pool:
            done = list(pool.map(run_chunk, chunks))
    results = []
    for out, error in done:
        if error is not None:
            raise error
        results += out
    return results

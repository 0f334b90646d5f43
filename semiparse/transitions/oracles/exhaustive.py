"""Ground truth: oracle scores by exhaustive search over all computations.

Derived from a system's interface alone (legal moves, their effect, final
configurations, the strategy's per-node constraints), never from a grammar,
so it can prove a completion grammar right.  Exponential in general; the
memo over (configuration, strategy flags) makes it fast enough for n <= 10.
Systems with a compiled machine (declared rewrite systems, LR-spine) are
searched on its C state (:class:`._exhaustive.CSearch`); the Python search
here serves the others and is the reference the C one is tested against.
Both are exact for partial gold trees as they are: an edge counts when the
gold head of its dependent is its head, which an unknown head (-1) never is.
"""
from semiparse.transitions.oracles._exhaustive import CSearch
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.oracles.protocol import ExhaustiveSearch
from semiparse.transitions.systems.interface import NEG_INF, edge_masks, initial_masks

_ACTIVE = object()


class PythonSearch:
    """Memoized best number of gold edges from a configuration to a final one,
    through the system's Python interface (``successors``, ``search_key``,
    ``is_final``, ``final_edges``).

    One instance per (system, gold tree); the memo is valid across calls
    because its key holds every strategy flag of the nodes still in the
    configuration.
    """

    def __init__(self, system, heads):
        self.system, self.heads = system, heads
        self.memo = {}

    def scores(self, stack, buffer, arcs, masks):
        """``{transition: sigma}`` for the configuration the oracle is asked
        about, under the strategy flags ``masks`` (:func:`initial_masks`)."""
        out = {}
        for t, s2, b2, a2, edge in self.system.successors(stack, buffer, arcs):
            gain, m2 = 0, masks
            if edge is not None:
                if masks is not None:
                    m2 = edge_masks(masks, edge)
                    if m2 is None:
                        out[t] = NEG_INF
                        continue
                gain = 1 if self.heads[edge[1]] == edge[0] else 0
            future = self.best(s2, b2, a2, m2)
            out[t] = gain + future if future != NEG_INF else NEG_INF
        return out

    def best(self, stack, buffer, arcs, masks):
        """Most gold edges any computation from this configuration can still add."""
        system = self.system
        key = system.search_key(stack, buffer, arcs)
        if masks is not None:
            get = masks.__getitem__
            key = (key, tuple(map(get, stack)), tuple(map(get, buffer)))
        memo = self.memo
        value = memo.get(key)
        if value is not None:
            if value is _ACTIVE:
                raise ValueError(f"transition system {system.name!r} can loop: configuration "
                                 f"stack={list(stack)} buffer={list(buffer)} repeats")
            return value
        if system.is_final(stack, buffer, arcs):
            value = sum(self.heads[d] == h for h, d in system.final_edges(stack, buffer, arcs))
            memo[key] = value
            return value
        memo[key] = _ACTIVE
        value = NEG_INF
        heads = self.heads
        for _, s2, b2, a2, edge in system.successors(stack, buffer, arcs):
            gain, m2 = 0, masks
            if edge is not None:
                if masks is not None:
                    m2 = edge_masks(masks, edge)
                    if m2 is None:
                        continue
                if heads[edge[1]] == edge[0]:
                    gain = 1
            v = gain + self.best(s2, b2, a2, m2)
            if v > value:
                value = v
        memo[key] = value
        return value


class Search(ExhaustiveSearch):
    """The exhaustive search for one (system, gold tree, strategy): on the C
    state of the system's compiled machine when it has one, else through its
    Python interface; both give the same scores.

    compiled: None to choose, True / False to force the C / Python search
    (True is a ValueError for a system without a machine).
    """

    def __init__(self, system, heads, strategy, compiled=None):
        self.system, self.heads, self.strategy = system, heads, strategy
        machine = None
        if compiled is not False:
            try:
                machine = machine_for(system)
            except ValueError:
                if compiled:
                    raise
        self.compiled = machine is not None
        self.engine = CSearch(machine, heads) if self.compiled else PythonSearch(system, heads)

    def scores(self, stack, buffer, arcs):
        """``{transition: sigma}`` for the configuration the oracle is asked about."""
        masks = initial_masks(self.system, self.strategy, stack, buffer, arcs, len(self.heads) - 1)
        return self.engine.scores(stack, buffer, arcs, masks)


def best_computation(system, heads, strategy, stack, buffer, arcs, transition):
    """``(transitions, arcs)``: a computation that starts with ``transition``
    from the configuration ``stack, buffer, arcs`` (arcs: the head of every
    position so far) and adds the most gold edges, and the arcs of its final
    configuration (with its final edges); None where no final configuration
    is reachable after ``transition`` (or the strategy forbids its edge).
    By the Python search: for the counterexamples of ``semiparse check``,
    small n only."""
    search = PythonSearch(system, tuple(heads))
    masks = initial_masks(system, strategy, stack, buffer, arcs, len(heads) - 1)
    step = next((s for s in system.successors(stack, buffer, arcs) if s[0] == transition), None)
    if step is None:
        raise ValueError(f"transition {transition!r} does not apply here")
    done = []
    while True:
        t, stack, buffer, arcs, edge = step
        if edge is not None and masks is not None:
            masks = edge_masks(masks, edge)
            if masks is None:
                return None
        done.append(t)
        best = search.best(stack, buffer, arcs, masks)
        if best == NEG_INF:
            return None
        if system.is_final(stack, buffer, arcs):
            arcs = list(arcs)
            for h, d in system.final_edges(stack, buffer, arcs):
                arcs[d] = h
            return done, tuple(arcs)
        for step in system.successors(stack, buffer, arcs):
            _, s2, b2, a2, e2 = step
            m2 = masks
            if e2 is not None and masks is not None:
                m2 = edge_masks(masks, e2)
                if m2 is None:
                    continue
            gain = 1 if e2 is not None and search.heads[e2[1]] == e2[0] else 0
            if gain + search.best(s2, b2, a2, m2) == best:
                break

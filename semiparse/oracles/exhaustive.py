"""Ground truth: oracle scores by exhaustive search over all computations.

Derived from a system's interface alone (legal moves, their effect, final
configurations, the strategy's per-node constraints), never from a grammar,
so it can prove a completion grammar right.  Exponential in general; the
memo over (configuration, strategy flags) makes it fast enough for n <= 10.
"""
from .system import LBR, NO_LEFT, NO_RIGHT, RBL

NEG_INF = float("-inf")
_ACTIVE = object()


def edge_masks(masks, edge):
    """Strategy flags after ``edge`` (head, dependent), or None if it violates them."""
    h, d = edge
    m = masks.get(h, 0)
    if not m:
        return masks
    if d < h:  # a left child of h
        if m & NO_LEFT:
            return None
        new = m | NO_RIGHT if m & RBL else m
    else:
        if m & NO_RIGHT:
            return None
        new = m | NO_LEFT if m & LBR else m
    if new & NO_LEFT:
        new &= ~LBR
    if new & NO_RIGHT:
        new &= ~RBL
    if new == m:
        return masks
    masks = dict(masks)
    masks[h] = new
    return masks


class Search:
    """Memoized best number of gold edges from a configuration to a final one.

    One instance per (system, gold tree, strategy); the memo is valid across
    calls because the key holds every strategy flag still in force.
    """

    def __init__(self, system, heads, strategy):
        self.system, self.heads, self.strategy = system, heads, strategy
        self.memo = {}
        self._succ = system.successors

    def scores(self, stack, buffer, arcs):
        """``{transition: sigma}`` for the configuration the oracle is asked about."""
        system = self.system
        masks = system.constraints(self.strategy, stack, buffer, arcs)
        out = {}
        for t, s2, b2, a2, edge in self._succ(stack, buffer, arcs):
            gain, m2 = 0, masks
            if edge is not None:
                m2 = edge_masks(masks, edge)
                if m2 is None:
                    out[t] = NEG_INF
                    continue
                gain = self.heads[edge[1]] == edge[0]
            future = self.best(s2, b2, a2, m2)
            out[t] = gain + future if future != NEG_INF else NEG_INF
        return out

    def best(self, stack, buffer, arcs, masks):
        """Most gold edges any computation from this configuration can still add."""
        system = self.system
        key = system.search_key(stack, buffer, arcs)
        if masks:
            live = set(stack) | set(buffer)
            key = (key, tuple(sorted((x, m) for x, m in masks.items() if m and x in live)))
        memo = self.memo
        value = memo.get(key)
        if value is not None:
            if value is _ACTIVE:
                raise ValueError(f"transition system {system.name!r} can loop: configuration "
                                 f"stack={list(stack)} buffer={list(buffer)} repeats")
            return value
        if system.is_final(stack, buffer, arcs):
            memo[key] = 0
            return 0
        memo[key] = _ACTIVE
        value = NEG_INF
        heads = self.heads
        for _, s2, b2, a2, edge in self._succ(stack, buffer, arcs):
            gain, m2 = 0, masks
            if edge is not None:
                if masks:
                    m2 = edge_masks(masks, edge)
                    if m2 is None:
                        continue
                gain = 1 if heads[edge[1]] == edge[0] else 0
            v = gain + self.best(s2, b2, a2, m2)
            if v > value:
                value = v
        memo[key] = value
        return value

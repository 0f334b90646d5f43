# cython: language_level=3, wraparound=False, cdivision=True
"""The oracle of a ``kind = "search"`` completion: an exact search over the
computations from a configuration, bounded (docs/oracles.md, "Completion
kinds").

It extends the exhaustive search of ``_exhaustive.pyx`` (the same C states,
moves and memo keys) with an admissible bound: from a configuration, no
computation adds more gold edges than there are headless words whose gold
head and themselves are still on the stack or in the buffer (the root
always counts as there).  That is the value of a maximum spanning tree over
the gold-weighted arcs between the nodes still there, each taken as
reachable; a computation reaches it unless the order of the nodes stands in
the way.  The search asks, for the targets ``bound``, ``bound - 1``, ...,
whether some computation adds at least that many gold edges, and descends
only into moves after which the target stays within the bound; the first
target reached is the exact value.  Moves are tried by the least drop of the
bound, the most gold edges, the fewest pairs of the moved nodes left out of
the gold tree's projective order (the order in which the tree is
projective: a swap that brings two nodes into it first), then the system's
static order, so that where the bound is reached the first descent usually
reaches it; the order changes the time, never the value.  The memo keeps, per configuration,
the largest target known reached and the smallest known out of reach, which
hold for later targets and later calls on the same gold tree.
"""
from libc.stdlib cimport free, malloc, realloc

from semiparse.transitions.oracles._exhaustive cimport CSearch
from semiparse.transitions.runtime._machine cimport RuleC, machine_is_final
from semiparse.transitions.runtime._state cimport StateC

from semiparse.errors import OverBudget
from semiparse.transitions.oracles.static import static_rank
from semiparse.transitions.systems.interface import NEG_INF

cdef enum:
    NONE_REACHABLE = -1     # no final configuration after this one
    ACTIVE = -2             # memo mark: the configuration is on the current path
    FAILED = -3             # error return
    NO_LIMIT = 65535        # memo: no target known out of reach


cdef class BoundedSearch(CSearch):
    """Exact best number of gold edges from a configuration to a final one
    (one instance per machine and gold tree; strategy ``none``)."""

    cdef int* alive         # scratch: 1 for the positions on the stack or in the buffer
    cdef int* rank          # static rank of each transition code
    cdef int* order         # per depth: the legal moves in the order they are tried
    cdef int* drop          # scratch: the bound's drop after each legal move
    cdef int* gain          # scratch: the gold edges each legal move adds
    cdef int* disorder      # scratch: pairs each legal move leaves out of projective order
    cdef int* proj          # each position's place in the gold tree's projective order
    cdef int order_depths
    cdef bint sets_aside          # words set aside come back (Covington): they stay alive
    cdef readonly long expanded   # configurations expanded so far (for benchmarks)
    cdef long budget              # expansions one scores call may make (-1: no limit)
    cdef long stop_at             # expanded at which the current call stops

    def __cinit__(self):
        self.alive = self.rank = self.order = self.drop = self.gain = NULL
        self.disorder = self.proj = NULL
        self.order_depths = 0
        self.expanded = 0

    def __dealloc__(self):
        free(self.alive)
        free(self.rank)
        free(self.order)
        free(self.drop)
        free(self.gain)
        free(self.disorder)
        free(self.proj)

    def __init__(self, machine, heads, max_states=None):
        super().__init__(machine, heads)
        if max_states is not None and (isinstance(max_states, bool) or not isinstance(
                max_states, int) or max_states < 1):
            raise ValueError(f"max_states must be a positive int or None, got {max_states!r}")
        self.budget = -1 if max_states is None else max_states
        if self.spine:
            raise ValueError("the bounded search runs declared rewrite systems only")
        if self.n + 1 >= NO_LIMIT:
            raise ValueError(f"the bounded search takes at most {NO_LIMIT - 2} words")
        self.sets_aside = machine.system.sets_aside
        self.alive = <int*>malloc(self.width * sizeof(int))
        self.rank = <int*>malloc(max(self.n_codes, 1) * sizeof(int))
        self.drop = <int*>malloc(max(self.n_codes, 1) * sizeof(int))
        self.gain = <int*>malloc(max(self.n_codes, 1) * sizeof(int))
        self.disorder = <int*>malloc(max(self.n_codes, 1) * sizeof(int))
        self.proj = <int*>malloc(self.width * sizeof(int))
        if (self.alive is NULL or self.rank is NULL or self.drop is NULL or self.gain is NULL
                or self.disorder is NULL or self.proj is NULL):
            raise MemoryError()
        for place, x in enumerate(projective_order(heads)):
            self.proj[x] = place
        rank = static_rank(machine.system)
        ranked = sorted(range(self.n_codes), key=lambda t: rank(machine.name(t)))
        for r, t in enumerate(ranked):
            self.rank[t] = r

    def scores(self, stack, buffer, arcs, masks=None):
        """``{transition: sigma}`` for a configuration (positions in 0..n;
        ``arcs`` None when the system does not look at heads).  With
        ``max_states``, a call that would expand more configurations than
        that (those the memo already knows cost nothing) raises
        :class:`~semiparse.errors.OverBudget` instead of answering; what it
        learnt stays in the memo."""
        if masks is not None:
            raise ValueError("the bounded search serves strategy 'none' only")
        cdef int i, k, t, gain, v
        self.stop_at = -1 if self.budget < 0 else self.expanded + self.budget
        self._load(self.states[0], stack, buffer, arcs)
        self.masked = False
        out = {}
        k = self._legal(0)
        for i in range(k):
            t = self.codes[i]
            gain = self._step(0, t)
            v = self._value(1)
            out[self.machine.name(t)] = NEG_INF if v == NONE_REACHABLE else gain + v
        return out

    def bound(self, stack, buffer, arcs):
        """The admissible bound of a configuration (for tests)."""
        self._load(self.states[0], stack, buffer, arcs)
        return self._bound(0)

    cdef int _bound(self, int depth) noexcept:
        """Headless words on the stack or in the buffer, or set aside, whose
        gold head is there too (or is the root)."""
        cdef const StateC* s = self.states[depth]
        cdef int i, x, g, count = 0
        for i in range(self.width):
            self.alive[i] = 0
        self.alive[0] = 1
        for i in range(s.stack_len):
            self.alive[s.stack[i]] = 1
        for i in range(s.buffer_len):
            self.alive[s.buffer[i]] = 1
        if self.sets_aside:  # between the stack top and the buffer front
            i = s.stack[s.stack_len - 1] + 1 if s.stack_len else 0
            while i < (s.buffer[s.buffer_len - 1] if s.buffer_len else self.width):
                self.alive[i] = 1
                i += 1
        for x in range(1, self.width):
            g = self.gold[x]
            if self.alive[x] and g >= 0 and self.alive[g] and s.head[x] < 0:
                count += 1
        return count

    cdef int _inversions(self, int depth, int ns, int nb) noexcept:
        """Pairs out of projective order among the ns top stack nodes and the
        nb front buffer nodes (in that order) of the state at depth."""
        cdef const StateC* s = self.states[depth]
        cdef int block[64]
        cdef int k = 0, i, j, count = 0
        for i in range(ns):
            if k < 64:
                block[k] = s.stack[s.stack_len - ns + i]
                k += 1
        for i in range(nb):
            if k < 64:
                block[k] = s.buffer[s.buffer_len - 1 - i]
                k += 1
        for i in range(k):
            for j in range(i + 1, k):
                if self.proj[block[i]] > self.proj[block[j]]:
                    count += 1
        return count

    cdef bint _before(self, int a, int b) noexcept:
        """Whether legal move a is tried before b (see the module doc)."""
        if self.drop[a] != self.drop[b]:
            return self.drop[a] < self.drop[b]
        if self.gain[a] != self.gain[b]:
            return self.gain[a] > self.gain[b]
        if self.disorder[a] != self.disorder[b]:
            return self.disorder[a] < self.disorder[b]
        return self.rank[a] < self.rank[b]

    cdef int _clear_active(self) except -1:
        """Drop the marks of the configurations on the current path (a call
        stopped half way leaves the memo valid for the next one)."""
        for key in [k for k, v in self.memo.items() if v == ACTIVE]:
            del self.memo[key]
        return 0

    cdef int _grow_order(self, int depths) except -1:
        cdef int* grown
        if depths <= self.order_depths:
            return 0
        depths = max(depths, 2 * self.order_depths)
        grown = <int*>realloc(self.order, depths * max(self.n_codes, 1) * sizeof(int))
        if grown is NULL:
            raise MemoryError()
        self.order = grown
        self.order_depths = depths
        return 0

    cdef int _value(self, int depth) except FAILED:
        """The most gold edges a computation from the state at depth adds
        (NONE_REACHABLE if no final configuration is reachable)."""
        cdef int target = self._bound(depth)
        while target >= 0:
            if self._reaches(depth, target):
                return target
            target -= 1
        return NONE_REACHABLE

    cdef int _reaches(self, int depth, int target) except FAILED:
        """Whether some computation from the state at depth adds at least
        ``target`` gold edges (1) or none does (0)."""
        cdef bytes key = self._key(depth)
        cdef int reached = -1, limit = NO_LIMIT, k, i, j, t, u, gain, ok = 0
        cdef int* order
        cdef const StateC* s = self.states[depth]
        cdef const RuleC* r
        found = self.memo.get(key)
        if found is not None:
            if found == ACTIVE:
                self._loop(depth)
            reached, limit = (found & 0xFFFF) - 1, found >> 16
            if target <= reached:
                return 1
            if target >= limit:
                return 0
        if machine_is_final(self.m, s):
            reached = self._final_value(depth)
            self.memo[key] = (reached + 1) | ((reached + 1) << 16)
            return 1 if reached >= target else 0
        if self.expanded == self.stop_at:
            self._clear_active()
            raise OverBudget(self.budget, "the oracle's bounded search")
        self.memo[key] = ACTIVE
        self.expanded += 1
        self._grow(depth + 2)
        self._grow_order(depth + 1)
        u = self._bound(depth)
        k = self._legal(depth)
        order = self.order + depth * self.n_codes
        # the legal moves, sorted (see _before)
        for i in range(k):
            t = self.codes[depth * self.n_codes + i]
            r = &self.m.rules[t]
            gain = self.gain[t] = self._step(depth, t)
            self.drop[t] = u - gain - self._bound(depth + 1)
            self.disorder[t] = (self._inversions(depth + 1, r.n_stack_after, r.n_buffer_after)
                                - self._inversions(depth, r.ns, r.nb))
            j = i
            while j > 0 and self._before(t, order[j - 1]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = t
        for i in range(k):
            t = self.order[depth * self.n_codes + i]   # deeper levels may move the rows
            gain = self._step(depth, t)
            if target - gain > self._bound(depth + 1):
                break   # sorted by drop: no later move keeps the target within the bound
            if self._reaches(depth + 1, max(target - gain, 0)):
                ok = 1
                break
        if ok:
            reached = max(reached, target)
        else:
            limit = min(limit, target)
        self.memo[key] = (reached + 1) | (limit << 16)
        return ok


def projective_order(heads):
    """The positions 0..n in the order in which the gold tree ``heads`` is
    projective: each head among its dependents in sentence order (an
    in-order traversal from the root; words of unknown head, -1, hang from
    the root)."""
    n = len(heads) - 1
    children = [[] for _ in range(n + 1)]
    for d in range(1, n + 1):
        children[heads[d] if heads[d] >= 0 else 0].append(d)
    out, todo = [], [(0, False)]
    while todo:   # iterative: a chain of n words would pass Python's recursion limit
        x, expanded = todo.pop()
        if expanded:
            out.append(x)
            continue
        parts = [(c, False) for c in children[x] if c < x] + [(x, True)] + [
            (c, False) for c in children[x] if c > x]
        todo.extend(reversed(parts))
    return out

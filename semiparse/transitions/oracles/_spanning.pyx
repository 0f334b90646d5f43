# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The oracle of a completion of kind ``spanning`` in C (docs/oracles.md,
"Completion kinds"): after each legal move, the most gold edges a forest
over the arcs each reachable by itself can still add.

Every word has one gold head at most, so the gold arcs reachable by
themselves give each headless word one candidate head; with the arcs built
they form a graph of one head per word, whose cycles are disjoint.  A
maximum branching over the gold-weighted reachable arcs keeps every
candidate but one per cycle (each cycle holds a candidate: the arcs built
are a forest), so its value is the candidates less the cycles: O(n) per
move, the closed form of Gómez-Rodríguez and Fernández-González 2015 for
Covington's system, here for any declared classes.
:mod:`semiparse.transitions.oracles.spanning` computes the same value by a
maximum branching (Chu-Liu-Edmonds), for checks.
"""
from libc.stdlib cimport free, malloc

from semiparse.transitions.oracles._exhaustive cimport CSearch
from semiparse.transitions.runtime._state cimport ROOT_NONE, StateC

from semiparse.transitions.systems.format.spanning import NODE_CLASSES

cdef enum:
    GONE = -1
    N_CLASSES = 4           # stack, set aside, buffer front, rest of the buffer


cdef class SpanningValue(CSearch):
    """Scores of the legal moves of a configuration under a spanning
    completion (one instance per machine and gold tree)."""
    cdef bint allowed[N_CLASSES * N_CLASSES]
    cdef bint sets_aside
    cdef int first           # the first position a restore brings back onto an empty stack
    cdef int* cls            # scratch: each position's class
    cdef int* par            # scratch: each position's head, built or candidate
    cdef int* seen           # scratch: the walk that first reached each position

    def __cinit__(self):
        self.cls = self.par = self.seen = NULL

    def __dealloc__(self):
        free(self.cls)
        free(self.par)
        free(self.seen)

    def __init__(self, machine, heads):
        super().__init__(machine, heads)
        system = machine.system
        if self.spine or system.reachable is None:
            raise ValueError(f"{system.name} has no completion of kind spanning")
        assert len(NODE_CLASSES) == N_CLASSES
        for a in range(N_CLASSES):
            for b in range(N_CLASSES):
                self.allowed[a * N_CLASSES + b] = system.reachable.allowed[a][b]
        self.sets_aside = system.sets_aside
        self.first = 1 if self.m.root == ROOT_NONE else 0
        self.cls = <int*>malloc(self.width * sizeof(int))
        self.par = <int*>malloc(self.width * sizeof(int))
        self.seen = <int*>malloc(self.width * sizeof(int))
        if self.cls is NULL or self.par is NULL or self.seen is NULL:
            raise MemoryError()

    def scores(self, stack, buffer, arcs, masks=None):
        """``{transition: sigma}``: the gold edge each legal move adds plus
        the value after it (positions in 0..n; strategy ``none``)."""
        if masks is not None:
            raise ValueError("the spanning completion serves strategy 'none' only")
        cdef int i, k, t
        self._load(self.states[0], stack, buffer, arcs)
        self.masked = False
        out = {}
        k = self._legal(0)
        for i in range(k):
            t = self.codes[i]
            out[self.machine.name(t)] = self._step(0, t) + self._value(1)
        return out

    def value(self, stack, buffer, arcs):
        """The most gold edges still to add from a configuration (for tests)."""
        self._load(self.states[0], stack, buffer, arcs)
        return self._value(0)

    cdef int _value(self, int depth) noexcept:
        cdef const StateC* s = self.states[depth]
        cdef int* cls = self.cls
        cdef int* par = self.par
        cdef int* seen = self.seen
        cdef int i, x, g, end, count = 0
        for x in range(self.width):
            cls[x] = GONE
            seen[x] = -1
        if self.sets_aside:  # between the stack top and the buffer front
            x = s.stack[s.stack_len - 1] + 1 if s.stack_len else self.first
            end = s.buffer[s.buffer_len - 1] if s.buffer_len else self.width
            while x < end:
                cls[x] = 1
                x += 1
        for i in range(s.stack_len):
            cls[s.stack[i]] = 0
        for i in range(s.buffer_len):
            cls[s.buffer[i]] = 2 if i == s.buffer_len - 1 else 3
        par[0] = -1
        for x in range(1, self.width):
            par[x] = s.head[x]
            g = self.gold[x]
            if (par[x] < 0 and g >= 0 and cls[x] != GONE and cls[g] != GONE
                    and self.allowed[cls[g] * N_CLASSES + cls[x]]):
                par[x] = g
                count += 1
        # one head per word: each walk up the heads ends at a headless word,
        # or in a cycle it closes itself (first reached by this walk)
        for i in range(1, self.width):
            x = i
            while x >= 0 and seen[x] < 0:
                seen[x] = i
                x = par[x]
            if x >= 0 and seen[x] == i:
                count -= 1
        return count

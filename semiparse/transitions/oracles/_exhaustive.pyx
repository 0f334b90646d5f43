# cython: language_level=3, wraparound=False, cdivision=True
"""The exhaustive search of :mod:`.exhaustive` on the compiled machine.

The same memoized depth-first search as :class:`.exhaustive.PythonSearch`,
for every system with a compiled machine (``_machine.pxd``: the declared
rewrite systems and LR-spine), run on one :c:type:`StateC` per search depth
(``_state.pxd``): each step copies the state one level down and applies the
machine's move, so no Python tuple is built per transition.  The memo is a
dict keyed on the bytes of what :meth:`search_key` keys on (the stack, the
buffer, and the heads of the stack nodes, and of the buffer nodes where one
may have a head, or, for LR-spine, the stack nodes' spines),
plus the strategy masks of the stack and buffer nodes when a strategy
restricts anything; values are the most gold edges still reachable, -1 for
none (no final configuration reachable).
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from semiparse.transitions.runtime._lr_spine_moves cimport spine_legal_codes
from semiparse.transitions.runtime._state cimport ROOT_NONE, StateC, state_copy, state_free, state_load, state_new
from semiparse.transitions.runtime._machine cimport (KIND_SPINE, Machine, MachineC, machine_apply,
                                         machine_arc, machine_is_final, machine_legal)

from semiparse.transitions.systems.interface import LBR, NEG_INF, NO_LEFT, NO_RIGHT, RBL

cdef int C_LBR = LBR, C_RBL = RBL, C_NO_LEFT = NO_LEFT, C_NO_RIGHT = NO_RIGHT

cdef enum:
    NONE_REACHABLE = -1     # the value of a configuration with no final one after it
    ACTIVE = -2             # memo mark: the configuration is on the current path
    FAILED = -3             # error return (an exception is set)


cdef class CSearch:
    """Memoized best number of gold edges from a configuration to a final one,
    on the machine's C state (one instance per machine and gold tree)."""

    def __cinit__(self):
        self.gold = self.masks = self.codes = self.key = NULL
        self.states = NULL
        self.depths = 0

    def __dealloc__(self):
        cdef int i
        for i in range(self.depths):
            state_free(self.states[i])
        free(self.states)
        free(self.gold)
        free(self.masks)
        free(self.codes)
        free(self.key)

    def __init__(self, Machine machine, heads):
        self.machine = machine
        self.m = &machine.c
        self.n = len(heads) - 1
        if self.n < 0:
            raise ValueError("heads must hold the root's entry heads[0] = -1 and one head per word")
        self.width = self.n + 1
        self.spine = machine.c.kind == KIND_SPINE
        self.key_heads = not self.spine and machine.system.needs_arcs
        self.key_buffer_heads = self.key_heads and machine.system.buffer_heads
        self.key_all_heads = self.key_heads and machine.system.keys_all_heads
        self.n_codes = machine.max_code(self.n)
        self.memo = {}
        self.gold = <int*>malloc(self.width * sizeof(int))
        # flag, lengths, stack and buffer, spines (two per stack node, each
        # ended by -1) or stack (and buffer) heads, masks
        self.key = <int*>malloc((3 + 6 * self.width) * sizeof(int))
        if self.gold is NULL or self.key is NULL:
            raise MemoryError()
        for i in range(self.width):
            self.gold[i] = heads[i]
        self._grow(8)

    cdef int _grow(self, int depths) except -1:
        """Room for at least ``depths`` levels of the search."""
        cdef int i
        if depths <= self.depths:
            return 0
        depths = max(depths, 2 * self.depths)
        states = <StateC**>realloc(self.states, depths * sizeof(StateC*))
        if states is NULL:
            raise MemoryError()
        self.states = states
        masks = <int*>realloc(self.masks, depths * self.width * sizeof(int))
        if masks is NULL:
            raise MemoryError()
        self.masks = masks
        codes = <int*>realloc(self.codes, depths * max(self.n_codes, 1) * sizeof(int))
        if codes is NULL:
            raise MemoryError()
        self.codes = codes
        for i in range(self.depths, depths):
            self.states[i] = state_new(self.n)
            if self.states[i] is NULL:
                raise MemoryError()
            self.depths = i + 1
        return 0

    def scores(self, stack, buffer, arcs, masks):
        """``{transition: sigma}`` for a configuration (positions in 0..n;
        ``arcs`` None when the system does not look at heads) under the
        strategy masks of :func:`.interface.initial_masks` (None: no
        restriction)."""
        cdef StateC* s = self.states[0]
        cdef int i, k, t, gain, v
        self._load(s, stack, buffer, arcs)
        self.masked = masks is not None
        if self.masked:
            for i in range(self.width):
                self.masks[i] = masks[i]
        out = {}
        k = self._legal(0)
        for i in range(k):
            t = self.codes[i]
            gain = self._step(0, t)
            if gain < 0:
                out[self.machine.name(t)] = NEG_INF
                continue
            v = self._best(1)
            out[self.machine.name(t)] = NEG_INF if v == NONE_REACHABLE else gain + v
        return out

    cdef int _load(self, StateC* s, stack, buffer, arcs) except -1:
        """Put the configuration into s (ValueError for positions outside 0..n)."""
        state_load(s, stack, buffer, arcs)
        self.heads_known = arcs is not None
        return 0

    cdef int _legal(self, int depth) noexcept:
        """Fill the depth's row of codes with the legal moves; their number."""
        cdef const StateC* s = self.states[depth]
        cdef int* out = self.codes + depth * self.n_codes
        cdef int k = 0, t
        if self.spine:  # in the order of LRSpine.legal()
            return spine_legal_codes(s, out)
        for t in range(self.m.n_rules):
            if machine_legal(self.m, s, t):
                out[k] = t
                k += 1
        return k

    cdef int _step(self, int depth, int t) except -2:
        """Apply move t to the state at depth into depth + 1: the gold edges it
        adds (0 or 1), or -1 if it breaks the strategy masks."""
        cdef const StateC* src
        cdef int h, d, mask, new
        cdef int* masks
        self._grow(depth + 2)
        src = self.states[depth]
        cdef bint edge = machine_arc(self.m, src, t, &h, &d)
        if self.masked:
            masks = self.masks + (depth + 1) * self.width
            memcpy(masks, self.masks + depth * self.width, self.width * sizeof(int))
            if edge and masks[h]:   # edge_masks of .interface
                mask = masks[h]
                if d < h:
                    if mask & C_NO_LEFT:
                        return -1
                    new = (mask | C_NO_RIGHT) & ~C_RBL if mask & C_RBL else mask
                else:
                    if mask & C_NO_RIGHT:
                        return -1
                    new = (mask | C_NO_LEFT) & ~C_LBR if mask & C_LBR else mask
                masks[h] = new
        state_copy(self.states[depth + 1], src)
        machine_apply(self.m, self.states[depth + 1], t, -1)
        return 1 if edge and self.gold[d] == h else 0

    cdef bytes _key(self, int depth):
        """The memo key of the configuration at depth."""
        cdef const StateC* s = self.states[depth]
        cdef const int* masks = self.masks + depth * self.width
        cdef int* key = self.key
        cdef int k = 3, i, x, side
        key[0], key[1], key[2] = self.masked, s.stack_len, s.buffer_len
        for i in range(s.stack_len):
            key[k] = s.stack[i]
            k += 1
        for i in range(s.buffer_len):
            key[k] = s.buffer[i]
            k += 1
        if self.spine:
            for i in range(s.stack_len):
                for side in range(2):
                    x = s.stack[i]
                    while x >= 0:
                        key[k] = x
                        k += 1
                        x = s.l1[x] if side == 0 else s.r1[x]
                    key[k] = -1
                    k += 1
        elif self.key_all_heads:
            # the tree of each position, by its top: whether it has a head,
            # and (a dependent being headless) whether an edge closes a cycle
            for i in range(self.width):
                x = i
                while s.head[x] >= 0:
                    x = s.head[x]
                key[k] = x
                k += 1
        elif self.key_heads:
            for i in range(s.stack_len):
                key[k] = s.head[s.stack[i]]
                k += 1
            if self.key_buffer_heads:
                for i in range(s.buffer_len):
                    key[k] = s.head[s.buffer[i]]
                    k += 1
        if self.masked:
            for i in range(s.stack_len):
                key[k] = masks[s.stack[i]]
                k += 1
            for i in range(s.buffer_len):
                key[k] = masks[s.buffer[i]]
                k += 1
        return PyBytes_FromStringAndSize(<char*>key, k * sizeof(int))

    cdef int _final_value(self, int depth) noexcept:
        """Gold edges among the final edges of a final configuration (with
        ``initial.root = "none"``: the root's edges to the headless stack nodes)."""
        cdef const StateC* s = self.states[depth]
        cdef int value = 0, i, x
        if self.m.root != ROOT_NONE:
            return 0
        for i in range(s.stack_len):
            x = s.stack[i]
            if (not self.heads_known or s.head[x] < 0) and self.gold[x] == 0:
                value += 1
        return value

    cdef int _best(self, int depth) except -3:
        """Most gold edges any computation from the state at depth can still
        add (NONE_REACHABLE: no final configuration)."""
        cdef bytes key = self._key(depth)
        cdef int value, v, gain, i, k
        found = self.memo.get(key)
        if found is not None:
            value = found
            if value == ACTIVE:
                self._loop(depth)
            return value
        if machine_is_final(self.m, self.states[depth]):
            value = self._final_value(depth)
            self.memo[key] = value
            return value
        self.memo[key] = ACTIVE
        value = NONE_REACHABLE
        k = self._legal(depth)
        for i in range(k):
            gain = self._step(depth, self.codes[depth * self.n_codes + i])
            if gain < 0:
                continue
            v = self._best(depth + 1)
            if v != NONE_REACHABLE and gain + v > value:
                value = gain + v
        self.memo[key] = value
        return value

    cdef int _loop(self, int depth) except -1:
        cdef const StateC* s = self.states[depth]
        stack = [s.stack[i] for i in range(s.stack_len)]
        buffer = [s.buffer[i] for i in range(s.buffer_len - 1, -1, -1)]
        raise ValueError(f"transition system {self.machine.system_name!r} can loop: "
                         f"configuration stack={stack} buffer={buffer} repeats")

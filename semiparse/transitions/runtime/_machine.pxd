# cython: language_level=3
"""The compiled rewrite machine: the transitions of a declared system as data
that C code runs on a :c:type:`StateC` (``semiparse/transitions/runtime/_state.pxd``).

Each transition of a :class:`~semiparse.transitions.systems.declared.RewriteSystem` becomes a
``RuleC``: the number of named stack / buffer elements of its pattern, its
requirements (a named node is / is not the root, has a head / has none,
comes before another in the sentence; its edge closes no cycle; the buffer
is empty; the stack has at least K elements), the named nodes it pushes
back onto the stack (after the words set aside, for Covington's shift) and
the buffer front, and its edge.
Transition ``t`` is the ``t``-th ``[[transition]]`` table.  LR-spine, whose
stack elements are spines, runs its own moves (``_lr_spine_moves.pxd``, codes
included) behind the same functions (``kind == KIND_SPINE``).

The functions are inline, ``noexcept nogil``; :func:`machine_apply` and
:func:`machine_arc` assume that :func:`machine_legal` holds.
"""
from semiparse.transitions.runtime._lr_spine_moves cimport spine_apply, spine_arc, spine_legal
from semiparse.transitions.runtime._state cimport (ROOT_NONE, StateC, add_arc, push_buffer_front,
                                                   push_stack)

cdef enum:
    KIND_REWRITE = 0
    KIND_SPINE = 1
    MAX_NAMES = 16          # named pattern elements per transition
    REQ_NOT_ROOT = 0
    REQ_HEADED = 1
    REQ_HEADLESS = 2
    REQ_IS_ROOT = 3
    REQ_BEFORE = 4          # the node comes before req_other's in the sentence
    REQ_ACYCLIC = 5         # the edge closes no cycle: its dependent is no ancestor of its head
    MAX_REQS = 8 * MAX_NAMES
    FINAL_ANY = 0           # the order of system.FINAL_STACKS
    FINAL_ROOT = 1
    FINAL_ONE = 2


cdef struct RuleC:
    int ns                  # named stack elements (bottom to top)
    int nb                  # named buffer elements (front first)
    int stack_min           # least stack size (ns, or more by "stack size >= K")
    int stack_max           # largest stack size ("stack empty", "stack size <= K"), -1: none
    bint buffer_empty       # "buffer empty"
    int n_req
    int req_node[MAX_REQS]   # index into the names: stack ones, then buffer ones
    int req_kind[MAX_REQS]   # REQ_*
    int req_other[MAX_REQS]  # REQ_BEFORE: the name of the node that comes after
    bint restore            # the words set aside (between the stack top and stack_after[0]) go back first
    int n_stack_after
    int stack_after[MAX_NAMES]    # names pushed onto the stack, bottom to top
    int n_buffer_after
    int buffer_after[MAX_NAMES]   # names put back at the buffer front, front first
    int edge_head           # name index of the edge's head, -1 for no edge
    int edge_dep


cdef struct MachineC:
    int kind
    int n_rules
    int final_stack         # final: empty buffer and any stack, only the root, one node (FINAL_*)
    int root                # where the initial configuration puts the root (_state.pxd ROOT_*)
    RuleC* rules


cdef class Machine:
    cdef MachineC c
    cdef readonly str system_name
    cdef readonly tuple transitions
    cdef readonly object system


cdef inline int rule_node(const RuleC* r, const StateC* s, int i) noexcept nogil:
    """The node the rule's i-th name stands for in s."""
    if i < r.ns:
        return s.stack[s.stack_len - r.ns + i]
    return s.buffer[s.buffer_len - 1 - (i - r.ns)]


cdef inline bint machine_is_final(const MachineC* m, const StateC* s) noexcept nogil:
    if s.buffer_len or m.final_stack == FINAL_ANY:
        return s.buffer_len == 0
    if m.final_stack == FINAL_ONE:
        return s.stack_len <= 1
    return s.stack_len == 1 and s.stack[0] == 0


cdef inline bint machine_legal(const MachineC* m, const StateC* s, int t) noexcept nogil:
    """Whether transition t applies to s (never in a final configuration)."""
    cdef const RuleC* r
    cdef int k, x
    if t < 0 or machine_is_final(m, s):
        return False
    if m.kind == KIND_SPINE:
        return spine_legal(s, t)
    if t >= m.n_rules:
        return False
    r = &m.rules[t]
    if s.stack_len < r.stack_min or s.buffer_len < r.nb or (r.buffer_empty and s.buffer_len):
        return False
    if r.stack_max >= 0 and s.stack_len > r.stack_max:
        return False
    for k in range(r.n_req):
        x = rule_node(r, s, r.req_node[k])
        if r.req_kind[k] == REQ_NOT_ROOT:
            if x == 0:
                return False
        elif r.req_kind[k] == REQ_IS_ROOT:
            if x != 0:
                return False
        elif r.req_kind[k] == REQ_HEADED:
            if s.head[x] < 0:
                return False
        elif r.req_kind[k] == REQ_BEFORE:
            if x >= rule_node(r, s, r.req_other[k]):
                return False
        elif r.req_kind[k] == REQ_ACYCLIC:
            x = rule_node(r, s, r.edge_head)
            while x >= 0:
                if x == rule_node(r, s, r.edge_dep):
                    return False
                x = s.head[x]
        elif s.head[x] >= 0:
            return False
    return True


cdef inline bint machine_arc(const MachineC* m, const StateC* s, int t, int* h, int* d) noexcept nogil:
    """Set h, d to the edge a legal transition t adds to s; False if it adds none."""
    cdef const RuleC* r
    if m.kind == KIND_SPINE:
        return spine_arc(s, t, h, d)
    r = &m.rules[t]
    if r.edge_head < 0:
        return False
    h[0] = rule_node(r, s, r.edge_head)
    d[0] = rule_node(r, s, r.edge_dep)
    return True


cdef inline void machine_apply(const MachineC* m, StateC* s, int t, int label) noexcept nogil:
    """Apply the legal transition t to s; its edge (if any) gets label."""
    cdef const RuleC* r
    cdef int env[MAX_NAMES]
    cdef int i, h, d
    cdef bint has_edge
    if m.kind == KIND_SPINE:
        spine_apply(s, t, label)
        return
    has_edge = machine_arc(m, s, t, &h, &d)
    r = &m.rules[t]
    for i in range(r.ns + r.nb):
        env[i] = rule_node(r, s, i)
    s.stack_len -= r.ns
    s.buffer_len -= r.nb
    if r.restore:
        i = s.stack[s.stack_len - 1] + 1 if s.stack_len else (1 if m.root == ROOT_NONE else 0)
        while i < env[r.stack_after[0]]:
            push_stack(s, i)
            i += 1
    for i in range(r.n_stack_after):
        push_stack(s, env[r.stack_after[i]])
    for i in range(r.n_buffer_after - 1, -1, -1):
        push_buffer_front(s, env[r.buffer_after[i]])
    if has_edge:
        add_arc(s, h, d, label)

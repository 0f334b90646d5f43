# cython: language_level=3, wraparound=False, cdivision=True
"""Build a compiled rewrite machine (``_machine.pxd``) from a transition system."""
from libc.stdlib cimport calloc, free

from semiparse.transitions.runtime._lr_spine_moves cimport spine_max_code
from semiparse.transitions.runtime._state cimport ROOT_STACK_BOTTOM

from semiparse.transitions.runtime import _lr_spine_moves as spine_moves
from semiparse.transitions.systems.format.rules import FINAL_STACKS
from semiparse.transitions.systems.loading import load_system


# The interface methods a machine stands for: a subclass that redefines one
# of them has moves the machine does not know.
_MOVES = ("initial", "legal", "apply", "successors", "is_final", "final_edges", "search_key")
# The moves a system class runs in C, by its attribute ``compiled_moves``.
_KINDS = {"rewrite": KIND_REWRITE, "lr_spine": KIND_SPINE}


cdef class Machine:
    """The C program of a transition system: one ``RuleC`` per declared
    transition, or LR-spine's own moves.  Build with :func:`machine_for`."""

    def __cinit__(self):
        self.c.rules = NULL

    def __dealloc__(self):
        free(self.c.rules)

    def __init__(self, system):
        self.system_name = system.name
        self.system = system
        kind = _KINDS.get(getattr(system, "compiled_moves", None))
        if kind is None:
            raise ValueError(f"transition system {system.name!r} is neither declared as "
                             f"stack/buffer rewrites nor LR-spine: no compiled machine")
        # the class that states compiled_moves, whose moves the machine runs
        owner = next(c for c in type(system).__mro__ if "compiled_moves" in vars(c))
        changed = [m for m in _MOVES if getattr(type(system), m, None) is not getattr(owner, m)]
        if changed:  # the machine would not follow them: refuse rather than differ
            raise ValueError(f"transition system {system.name!r} redefines "
                             f"{', '.join(changed)} in Python: no compiled machine runs it")
        if kind == KIND_SPINE:
            self.c.kind = KIND_SPINE
            self.c.final_stack = FINAL_ROOT
            self.c.root = ROOT_STACK_BOTTOM
            self.transitions = system.transitions
            return
        rules = system._rules
        self.transitions = tuple(r.name for r in rules)
        self.c.kind = KIND_REWRITE
        self.c.final_stack = FINAL_STACKS.index(system.final_stack)
        self.c.root = system.root_code
        self.c.rules = <RuleC*>calloc(max(len(rules), 1), sizeof(RuleC))
        if self.c.rules is NULL:
            raise MemoryError()
        self.c.n_rules = len(rules)
        for t, rule in enumerate(rules):
            _compile(&self.c.rules[t], rule, self.system_name)

    @property
    def spine(self):
        """True for LR-spine (codes carry K), False for a declared system."""
        return self.c.kind == KIND_SPINE

    def code(self, str name):
        """The code of a transition name (ValueError if the system has no such transition)."""
        if self.c.kind == KIND_SPINE:
            code = spine_moves.code_of(name)
            if code is not None:
                return code
        elif name in self.transitions:
            return self.transitions.index(name)
        raise ValueError(f"unknown transition {name!r} for {self.system_name}: expected one of "
                         f"{', '.join(self.transitions)}"
                         + (" (K = 1, 2, ... in ASCII digits)" if self.c.kind == KIND_SPINE else ""))

    def name(self, int code):
        """The transition name of a code (inverse of :meth:`code`)."""
        if self.c.kind == KIND_SPINE:
            name = spine_moves.name_of(code)
            if name is not None:
                return name
        elif 0 <= code < len(self.transitions):
            return self.transitions[code]
        raise ValueError(f"no transition of {self.system_name} has code {code}")

    def max_code(self, int n):
        """One more than the largest code that can be legal for n words."""
        return spine_max_code(n) if self.c.kind == KIND_SPINE else self.c.n_rules

    def __repr__(self):
        return f"<Machine {self.system_name}: {', '.join(self.transitions)}>"


cdef _compile(RuleC* out, rule, str system_name):
    """Fill out from a compiled RewriteSystem rule."""
    if rule.ns + rule.nb > MAX_NAMES:
        raise ValueError(f"transition {rule.name} of {system_name} names "
                         f"{rule.ns + rule.nb} elements: the compiled machine takes at "
                         f"most {MAX_NAMES}")
    out.ns, out.nb = rule.ns, rule.nb
    out.stack_min, out.buffer_empty = rule.stack_min, rule.buffer_empty
    out.stack_max = -1 if rule.stack_max is None else rule.stack_max
    reqs = ([(i, REQ_NOT_ROOT) for i in rule.not_root] + [(i, REQ_IS_ROOT) for i in rule.is_root]
            + [(i, REQ_HEADED) for i in rule.headed] + [(i, REQ_HEADLESS) for i in rule.headless])
    reqs = [(i, kind, -1) for i, kind in reqs] + [(i, REQ_BEFORE, j) for i, j in rule.before]
    if rule.acyclic:
        reqs.append((rule.edge[1], REQ_ACYCLIC, -1))
    if len(reqs) > MAX_REQS:
        raise ValueError(f"transition {rule.name} of {system_name} has {len(reqs)} "
                         f"requirements on its nodes: the compiled machine takes at most "
                         f"{MAX_REQS}")
    out.n_req = len(reqs)
    for k, (i, kind, j) in enumerate(reqs):
        out.req_node[k], out.req_kind[k], out.req_other[k] = i, kind, j
    out.restore = rule.restore
    out.n_stack_after = len(rule.stack_after)
    for k, i in enumerate(rule.stack_after):
        out.stack_after[k] = i
    out.n_buffer_after = len(rule.buffer_after)
    for k, i in enumerate(rule.buffer_after):
        out.buffer_after[k] = i
    out.edge_head, out.edge_dep = rule.edge if rule.edge is not None else (-1, -1)


def machine_for(system):
    """The machine of a system (a name, a TOML path or a system object), built
    once per system object and kept on it."""
    system = load_system(system)
    machine = vars(system).get("_machine")
    if machine is None:
        machine = system._machine = Machine(system)
    return machine

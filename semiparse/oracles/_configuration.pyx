# cython: language_level=3
"""Configurations of a transition system for users' own parsers and for the
trainer: one C state (``semiparse/_state.pxd``) run by the system's compiled
machine (``_machine.pxd``).

The public face works with transition names and never changes a
configuration (:meth:`Configuration.apply` returns a new one); the trainer
and the batched oracle use the move codes of the machine and :meth:`do`,
which changes it in place.
"""
from libc.math cimport INFINITY, NAN
from libc.stdlib cimport free, malloc

import numpy as np

from semiparse._state cimport StateC, state_copy, state_free, state_init, state_new
from semiparse.oracles._machine cimport (MachineC, machine_apply, machine_arc, machine_is_final,
                                         machine_legal)
from semiparse.oracles._rows cimport KernelWork, RowKernel, row_fn


cdef class Configuration:
    """A configuration: ``stack`` (bottom first), ``buffer`` (front first),
    ``arcs`` (the head built so far for each position 0..n, -1 if none) and
    ``labels`` (the label ids given with them, -1 if none).

    Make the initial one with ``semiparse.system(name).initial(n)``.
    """

    def __cinit__(self, *args, **kwargs):
        self.c = NULL

    def __dealloc__(self):
        state_free(self.c)

    cdef int _start(self, Machine machine, int n) except -1:
        self.machine = machine
        self.c = state_new(n)
        if self.c is NULL:
            raise MemoryError()
        state_init(self.c, machine.c.root)
        return 0

    @staticmethod
    def initial(Machine machine, int n):
        """The initial configuration of ``machine``'s system for ``n`` words."""
        if n < 0:
            raise ValueError(f"a sentence has n >= 0 words, got n = {n}")
        cdef Configuration config = Configuration.__new__(Configuration)
        config._start(machine, n)
        return config

    cpdef Configuration copy(self):
        """An independent copy."""
        cdef Configuration other = Configuration.__new__(Configuration)
        other._start(self.machine, self.c.n)
        state_copy(other.c, self.c)
        return other

    @property
    def system(self):
        """The transition system (definition) this configuration belongs to."""
        return self.machine.system

    @property
    def n(self):
        """The number of words (positions 1..n; 0 is the root)."""
        return self.c.n

    @property
    def stack(self):
        return tuple(self.c.stack[i] for i in range(self.c.stack_len))

    @property
    def buffer(self):
        return tuple(self.c.buffer[i] for i in range(self.c.buffer_len - 1, -1, -1))

    @property
    def arcs(self):
        """Head of each position 0..n built so far (-1 if none)."""
        return tuple(self.c.head[i] for i in range(self.c.n + 1))

    @property
    def labels(self):
        """Label id of the arc into each position (-1 if none or not given)."""
        return tuple(self.c.label[i] for i in range(self.c.n + 1))

    # -- by transition name ----------------------------------------------------

    def is_final(self):
        return machine_is_final(&self.machine.c, self.c)

    def legal(self):
        """Names of the transitions that apply (none if final), in code order."""
        return [self.machine.name(t) for t in self.legal_codes()]

    def apply(self, str name, int label=-1):
        """The configuration after transition ``name`` (this one is unchanged);
        an edge it adds gets label id ``label``.  ValueError if the
        transition is unknown or does not apply."""
        cdef int t = self.machine.code(name)
        if not machine_legal(&self.machine.c, self.c, t):
            raise ValueError(f"transition {name!r} does not apply to {self!r}")
        cdef Configuration other = self.copy()
        machine_apply(&other.machine.c, other.c, t, label)
        return other

    def __repr__(self):
        return (f"<Configuration {self.machine.system_name} stack={list(self.stack)} "
                f"buffer={list(self.buffer)}>")

    # -- by move code (the trainer, batches) ----------------------------------------

    def legal_codes(self):
        """Codes of the legal transitions, in increasing order."""
        return [t for t in range(self.machine.max_code(self.c.n))
                if machine_legal(&self.machine.c, self.c, t)]

    def valid(self, int move):
        return machine_legal(&self.machine.c, self.c, move)

    def do(self, int move, int label=-1):
        """Apply the move code ``move`` in place."""
        if not machine_legal(&self.machine.c, self.c, move):
            raise ValueError(f"move {move} is not valid in this configuration")
        machine_apply(&self.machine.c, self.c, move, label)

    def arc(self, int move):
        """(head, dependent) of the arc move would add, or None (also if move is not legal)."""
        cdef int h, d
        if machine_legal(&self.machine.c, self.c, move) and machine_arc(
                &self.machine.c, self.c, move, &h, &d):
            return (h, d)
        return None


cdef object _UNSET = object()   # no gold tree seen yet


cdef struct Job:
    const MachineC* machine
    const StateC* state
    row_fn fn            # NULL: legality only, the values are filled in Python
    void* work
    int strategy
    const int* columns   # output column of each kernel column
    int n_columns


def fill_rows(list configs, list golds, Machine machine, prepare, check, double[:, ::1] out,
              int n_jobs=1):
    """Write into ``out`` one row per configuration: -inf for the transitions
    that do not apply, sigma for the others where the gold tree has a C kernel;
    return the indices of the rows left to the caller (NaN where legal).

    ``prepare(heads, i)`` is called once per distinct gold object and returns
    ``(kernel, n)``: ``n`` the number of words and ``kernel`` either
    ``(RowKernel, KernelWork, strategy code, int array of output columns)`` or
    None (no kernel); ``check(config, i)`` is called for a configuration whose
    machine is not ``machine`` and raises if it belongs to another system.  The
    loop over the configurations runs without the GIL."""
    cdef Py_ssize_t N = len(configs), i
    cdef Job* jobs
    cdef Configuration config
    cdef RowKernel kernel
    cdef int[::1] cols
    cdef Job* job
    cdef Job proto             # the kernel part of the jobs of the current gold tree
    cdef int words = -1, g = -1
    cdef object heads, last = _UNSET, found
    cdef dict seen = {}
    pending = []
    group = np.empty(N, dtype=np.intp)   # index of each configuration's gold tree
    cdef Py_ssize_t[::1] groups = group
    proto.fn = NULL
    if len(golds) != N:
        raise ValueError(f"scores_batch: {N} configurations but {len(golds)} gold trees: "
                         f"give one gold tree per configuration")
    jobs = <Job*>malloc(max(N, 1) * sizeof(Job))
    if jobs is NULL:
        raise MemoryError()
    try:
        for i in range(N):
            if not isinstance(configs[i], Configuration):
                raise ValueError(f"configs[{i}] is a {type(configs[i]).__name__}, not a "
                                 f"Configuration (make them with semiparse.system(...).initial(n))")
            config = configs[i]
            if config.machine is not machine:
                check(config, i)
            heads = golds[i]
            if heads is not last:
                found = seen.get(id(heads))
                if found is None or (<tuple>found)[0] is not heads:
                    found = seen[id(heads)] = (heads,) + prepare(heads, i) + (len(seen),)
                entry, words, g = (<tuple>found)[1], (<tuple>found)[2], (<tuple>found)[3]
                proto.fn = NULL
                if entry is not None:
                    kernel, work, code, columns = entry
                    if len(kernel.columns) > 64:
                        raise ValueError(f"{kernel!r}: at most 64 columns")
                    cols = columns   # kept alive by seen
                    proto.fn = kernel.fn
                    proto.work = (<KernelWork>work).ptr
                    proto.strategy = code
                    proto.columns = &cols[0]
                    proto.n_columns = len(kernel.columns)
                last = heads
            if config.c.n != words:
                raise ValueError(f"configs[{i}] has {config.c.n} words but golds[{i}] has {words}")
            groups[i] = g
            job = &jobs[i]
            job[0] = proto
            job.machine = &config.machine.c
            job.state = config.c
            if proto.fn is NULL:
                pending.append(i)
        # from the last configuration to the first: when the configurations
        # follow a computation, a kernel that remembers values (arc-standard's)
        # has then scored each one's successor already
        if n_jobs <= 1 or N < 2:
            order = np.arange(N - 1, -1, -1, dtype=np.intc)
            _run_jobs(jobs, order, out)
        else:
            _run_threads(jobs, group, n_jobs, out)
    finally:
        free(jobs)
    return pending


cdef void _run_jobs_nogil(Job* jobs, const int* order, Py_ssize_t count,
                          double[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t k, i, t, T = out.shape[1]
    cdef double tmp[64]
    cdef int bstart, c
    cdef Job* job
    for k in range(count):
        i = order[k]
        job = &jobs[i]
        for t in range(T):
            out[i, t] = NAN if machine_legal(job.machine, job.state, <int>t) else -INFINITY
        if job.fn is NULL or machine_is_final(job.machine, job.state):
            continue
        bstart = (job.state.buffer[job.state.buffer_len - 1] if job.state.buffer_len
                  else job.state.n + 1)
        job.fn(job.work, job.state.stack, job.state.stack_len, bstart, job.state.head,
               job.strategy, tmp)
        for c in range(job.n_columns):
            t = job.columns[c]
            if out[i, t] != out[i, t]:  # legal: take the kernel's value
                out[i, t] = tmp[c] if tmp[c] == tmp[c] else -INFINITY


cdef void _run_jobs(Job* jobs, const int[::1] order, double[:, ::1] out):
    if order.shape[0]:
        with nogil:
            _run_jobs_nogil(jobs, &order[0], order.shape[0], out)


cdef class _Share:
    """One thread's part of a batch: the configurations at ``order``."""
    cdef Job* jobs
    cdef int[::1] order
    cdef double[:, ::1] out

    def run(self):
        _run_jobs(self.jobs, self.order, self.out)


cdef void _run_threads(Job* jobs, group, int n_jobs, double[:, ::1] out) except *:
    """Split the configurations into n_jobs shares of whole gold-tree groups
    (largest groups first, each to the least loaded share) and run them on
    threads."""
    from concurrent.futures import ThreadPoolExecutor

    sizes = np.bincount(group)
    load = [0] * n_jobs
    owner = np.empty(len(sizes), dtype=np.intp)
    for g in np.argsort(-sizes, kind="stable"):
        k = load.index(min(load))
        owner[g] = k
        load[k] += sizes[g]
    shares = []
    cdef _Share share
    for k in range(n_jobs):
        share = _Share()
        share.jobs = jobs
        share.order = np.flatnonzero(owner[group] == k)[::-1].astype(np.intc)
        share.out = out
        shares.append(share)
    with ThreadPoolExecutor(n_jobs) as pool:
        for future in [pool.submit(s.run) for s in shares]:
            future.result()

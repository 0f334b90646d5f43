# cython: language_level=3, wraparound=False, cdivision=True
"""Configurations of a transition system for users' own parsers and for the
trainer: one C state (``semiparse/transitions/runtime/_state.pxd``) run by the system's compiled
machine (``_machine.pxd``).

The public face works with transition names and never changes a
configuration (:meth:`Configuration.apply` returns a new one); the trainer
and the batched oracle use the move codes of the machine and :meth:`do`,
which changes it in place.
"""
from libc.math cimport INFINITY, NAN
from libc.stdlib cimport free, malloc

import numpy as np

from semiparse.heads._checks import exact_index
from semiparse.transitions.systems.format.limits import MAX_WORDS

from semiparse.transitions.runtime._state cimport (StateC, state_copy, state_free, state_init, state_load,
                                           state_new)
from semiparse.transitions.runtime._machine cimport (KIND_REWRITE, MachineC, machine_apply, machine_arc,
                                             machine_is_final, machine_legal)
from semiparse.transitions.oracles._row_kernels cimport KernelGold, RowKernel, row_fn


cdef object _integer(value, str what, low, high):
    """``value`` as a Python int in [low, high], or ValueError naming ``what``
    (bools, floats and strings are refused rather than read as numbers)."""
    if type(value) is not int:
        try:
            value = exact_index(value)
        except TypeError:
            raise ValueError(f"{what} must be an integer, got {value!r:.60} "
                             f"({type(value).__name__})") from None
    if not low <= value <= high:
        raise ValueError(f"{what} must be an integer from {low} to {high}, got {value}")
    return value


cdef class Configuration:
    """A configuration: ``stack`` (bottom first), ``buffer`` (front first),
    ``arcs`` (the head built so far for each position 0..n, -1 if none) and
    ``labels`` (the label ids given with them, -1 if none).

    Make the initial one with ``semiparse.system(name).initial(n)``; one made
    otherwise (``Configuration()``) has no state, and every use of it is a
    ValueError.
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

    cdef inline int _ready(self) except -1:
        if self.c is NULL:
            raise ValueError("this Configuration has no state: make configurations with "
                             "semiparse.system(name).initial(n)")
        return 0

    @staticmethod
    def initial(Machine machine not None, n):
        """The initial configuration of ``machine``'s system for ``n`` words
        (an integer from 0 to :data:`MAX_WORDS`)."""
        n = _integer(n, "a sentence's number of words n", 0, MAX_WORDS)
        cdef Configuration config = Configuration.__new__(Configuration)
        config._start(machine, n)
        return config

    cpdef Configuration copy(self):
        """An independent copy."""
        self._ready()
        cdef Configuration other = Configuration.__new__(Configuration)
        other._start(self.machine, self.c.n)
        state_copy(other.c, self.c)
        return other

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        raise TypeError("a Configuration does not pickle: pickle its system (semiparse.system "
                        "objects do) and the transitions that led to it from the initial one")

    @property
    def system(self):
        """The transition system (definition) this configuration belongs to."""
        self._ready()
        return self.machine.system

    @property
    def n(self):
        """The number of words (positions 1..n; 0 is the root)."""
        self._ready()
        return self.c.n

    @property
    def stack(self):
        self._ready()
        return tuple([self.c.stack[i] for i in range(self.c.stack_len)])

    @property
    def buffer(self):
        self._ready()
        return tuple([self.c.buffer[i] for i in range(self.c.buffer_len - 1, -1, -1)])

    @property
    def set_aside(self):
        """The words set aside, front first: in a system with a transition
        that brings them back (Covington's shift), the positions between the
        stack top and the buffer front (Nivre 2008's list λ2, where the
        stack is λ1); else none."""
        self._ready()
        system = self.machine.system
        if not getattr(system, "sets_aside", False):
            return ()
        return system.set_aside(self.stack, self.buffer, self.c.n)

    @property
    def lists(self):
        """The lists by name: ``stack`` and ``buffer``, and ``set_aside``
        where the system sets words aside."""
        self._ready()
        out = {"stack": self.stack}
        if getattr(self.machine.system, "sets_aside", False):
            out["set_aside"] = self.set_aside
        out["buffer"] = self.buffer
        return out

    @property
    def arcs(self):
        """Head of each position 0..n built so far (-1 if none)."""
        self._ready()
        return tuple([self.c.head[i] for i in range(self.c.n + 1)])

    @property
    def labels(self):
        """Label id of the arc into each position (-1 if none or not given)."""
        self._ready()
        return tuple([self.c.label[i] for i in range(self.c.n + 1)])

    # -- by transition name ----------------------------------------------------

    def is_final(self):
        self._ready()
        return machine_is_final(&self.machine.c, self.c)

    def legal(self):
        """Names of the transitions that apply (none if final), in code order."""
        return [self.machine.name(t) for t in self.legal_codes()]

    def apply(self, name, label=-1):
        """The configuration after transition ``name`` (this one is unchanged);
        an edge it adds gets label id ``label`` (an integer, -1 for none).
        ValueError if the transition is unknown or does not apply, or for an
        argument of the wrong type."""
        self._ready()
        if not isinstance(name, str):
            raise ValueError(f"apply(name): name must be a transition name (a string, one of "
                             f"{', '.join(self.machine.transitions)}), got {name!r} "
                             f"({type(name).__name__})")
        cdef int lab = _integer(label, "label", -1, 2 ** 31 - 1)
        cdef int t = self.machine.code(name)
        if not machine_legal(&self.machine.c, self.c, t):
            raise ValueError(f"transition {name!r} does not apply to {self!r}")
        cdef Configuration other = self.copy()
        machine_apply(&other.machine.c, other.c, t, lab)
        return other

    def __repr__(self):
        if self.c is NULL:
            return "<Configuration without state>"
        lists = " ".join(f"{name}={list(nodes)}" for name, nodes in self.lists.items())
        return f"<Configuration {self.machine.system_name} {lists}>"

    # -- by move code (the trainer, batches) ----------------------------------------

    def legal_codes(self):
        """Codes of the legal transitions, in increasing order."""
        self._ready()
        return [t for t in range(self.machine.max_code(self.c.n))
                if machine_legal(&self.machine.c, self.c, t)]

    cdef int _move(self, move) except -2:
        """``move`` as a C int for :func:`machine_legal` (which answers False
        for any code it does not know), or ValueError for a non-integer; -1
        for codes beyond an int, which are no move."""
        self._ready()
        if type(move) is not int:
            move = _integer(move, "move", -2 ** 63, 2 ** 63)
        return move if -1 <= move < 2 ** 31 else -1

    def valid(self, move):
        """Whether the move code ``move`` (an integer) applies."""
        return machine_legal(&self.machine.c, self.c, self._move(move))

    def do(self, move, label=-1):
        """Apply the move code ``move`` in place; its edge gets label id
        ``label`` (-1 for none).  ValueError if it does not apply."""
        cdef int t = self._move(move)
        cdef int lab = label if type(label) is int and -1 <= label < 2 ** 31 else \
            _integer(label, "label", -1, 2 ** 31 - 1)
        if not machine_legal(&self.machine.c, self.c, t):
            raise ValueError(f"move {move} is not valid in this configuration")
        machine_apply(&self.machine.c, self.c, t, lab)

    def arc(self, move):
        """(head, dependent) of the arc move would add, or None (also if move is not legal)."""
        cdef int h, d, t = self._move(move)
        if machine_legal(&self.machine.c, self.c, t) and machine_arc(
                &self.machine.c, self.c, t, &h, &d):
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


cdef class _Kind:
    """A kernel and the array mapping its columns to those of ``out``,
    checked once per call: the part of a row job that the gold trees of one
    kind share."""
    cdef readonly RowKernel kernel
    cdef readonly object keep      # the column array, kept alive
    cdef row_fn fn
    cdef const int* columns
    cdef int n_columns

    def __cinit__(self, RowKernel kernel, columns, Py_ssize_t width):
        cdef const int[::1] cols = columns
        if (len(kernel.columns) > 64 or cols.shape[0] != len(kernel.columns)
                or any(not 0 <= c < width for c in cols)):
            raise ValueError(f"{kernel!r}: at most 64 columns, each mapped to a "
                             f"column of out (0 to {width - 1})")
        self.kernel, self.keep, self.fn = kernel, columns, kernel.fn
        self.columns, self.n_columns = &cols[0], cols.shape[0]


def fill_rows(list configs not None, list golds not None, Machine machine not None, prepare, check,
              double[:, ::1] out not None, int n_jobs=1):
    """Write into ``out`` one row per configuration: -inf for the transitions
    that do not apply, sigma for the others where the gold tree has a C kernel;
    return the indices of the rows left to the caller (NaN where legal).

    ``prepare(heads, i)`` is called once per distinct gold object and returns
    ``(kernel, n)``: ``n`` the number of words and ``kernel`` either
    ``(RowKernel, KernelGold, strategy code, int array of output columns)`` or
    None (no kernel); ``check(config, i)`` is called for a configuration whose
    machine is not ``machine`` and raises if it belongs to another system.  The
    loop over the configurations runs without the GIL."""
    cdef Py_ssize_t N = len(configs), i
    cdef Job* jobs
    cdef Configuration config
    cdef _Kind kind
    cdef Job* job
    cdef Job proto             # the kernel part of the jobs of the current gold tree
    cdef int words = -1, g = -1
    cdef object heads, last = _UNSET, found
    cdef dict seen = {}
    cdef dict kinds = {}       # id of a column array -> its _Kind, checked against out
    pending = []
    group = np.empty(N, dtype=np.intp)   # index of each configuration's gold tree
    cdef Py_ssize_t[::1] groups = group
    proto.fn = NULL
    if len(golds) != N:
        raise ValueError(f"scores_batch: {N} configurations but {len(golds)} gold trees: "
                         f"give one gold tree per configuration")
    if out.shape[0] != N or out.shape[1] > 64:
        raise ValueError(f"fill_rows: out has shape ({out.shape[0]}, {out.shape[1]}): expected "
                         f"one row per configuration ({N}) and at most 64 columns")
    jobs = <Job*>malloc(max(N, 1) * sizeof(Job))
    if jobs is NULL:
        raise MemoryError()
    try:
        for i in range(N):
            if not isinstance(configs[i], Configuration):
                raise ValueError(f"configs[{i}] is a {type(configs[i]).__name__}, not a "
                                 f"Configuration (make them with semiparse.system(...).initial(n))")
            config = configs[i]
            config._ready()
            if config.machine is not machine:
                check(config, i)
            heads = golds[i]
            if heads is not last:
                found = seen.get(id(heads))
                if found is None or (<tuple>found)[0] is not heads:
                    entry, words = prepare(heads, i)
                    found = seen[id(heads)] = (heads, entry, words, len(seen))
                entry, words, g = (<tuple>found)[1], (<tuple>found)[2], (<tuple>found)[3]
                proto.fn = NULL
                if entry is not None:
                    kernel, work, code, columns = entry
                    # golds of one kind share their kernel and column array
                    kind = kinds.get(id(columns))
                    if kind is None or kind.kernel is not kernel or kind.keep is not columns:
                        kind = kinds[id(columns)] = _Kind(kernel, columns, out.shape[1])
                    proto.fn = kind.fn
                    proto.work = (<KernelGold>work).ptr
                    proto.strategy = code
                    proto.columns = kind.columns
                    proto.n_columns = kind.n_columns
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


cdef void _fill_row(const Job* job, double* row, Py_ssize_t T) noexcept nogil:
    """The row of one configuration: -inf for the transitions that do not
    apply (the machine decides), the kernel's value for those that do (-inf
    where it has none), NaN where they apply and no kernel scores them."""
    cdef Py_ssize_t t
    cdef double tmp[64]
    cdef int bstart, c
    for t in range(T):
        row[t] = NAN if machine_legal(job.machine, job.state, <int>t) else -INFINITY
    if job.fn is NULL or machine_is_final(job.machine, job.state):
        return
    bstart = (job.state.buffer[job.state.buffer_len - 1] if job.state.buffer_len
              else job.state.n + 1)
    job.fn(job.work, job.state, job.state.stack, job.state.stack_len, bstart, job.state.head,
           job.strategy, tmp)
    for c in range(job.n_columns):
        t = job.columns[c]
        if row[t] != row[t]:  # legal: take the kernel's value
            row[t] = tmp[c] if tmp[c] == tmp[c] else -INFINITY


cdef void _run_jobs_nogil(Job* jobs, const int* order, Py_ssize_t count,
                          double[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t k, i
    for k in range(count):
        i = order[k]
        _fill_row(&jobs[i], &out[i, 0], out.shape[1])


def kernel_scores(Machine machine not None, RowKernel kernel not None, KernelGold work not None,
                  const int[::1] columns not None, int n, tuple stack not None,
                  tuple buffer not None, arcs):
    """``{transition: sigma}`` for the transitions that apply to a validated
    configuration of ``n`` words (``arcs`` None for none), as
    :func:`fill_rows` computes its row: legality from the machine, values
    from ``kernel`` (strategy code 0) on ``work``; ``columns`` maps the
    kernel's columns to the machine's codes."""
    cdef Job job
    cdef double row[64]
    cdef Py_ssize_t t, T = machine.c.n_rules
    cdef int c
    cdef bint bad = (machine.c.kind != KIND_REWRITE or T > 64 or work.ptr is NULL
                     or columns.shape[0] != len(kernel.columns))
    for c in range(columns.shape[0]):
        bad = bad or not 0 <= columns[c] < T
    if bad:
        raise ValueError(f"kernel_scores: {kernel!r} on {machine!r} needs a declared system's "
                         f"machine (at most 64 transitions), a column per kernel column and "
                         f"the kernel's work")
    if work.state is NULL or work.state.n != n:
        state_free(work.state)
        work.state = state_new(n)
        if work.state is NULL:
            raise MemoryError()
    state_load(work.state, stack, buffer, arcs)
    job.machine = &machine.c
    job.state = work.state
    job.fn = kernel.fn
    job.work = work.ptr
    job.strategy = 0
    job.columns = &columns[0]
    job.n_columns = columns.shape[0]
    _fill_row(&job, row, T)
    return {machine.transitions[t]: int(row[t]) if row[t] > -INFINITY else row[t]
            for t in range(T) if machine_legal(job.machine, job.state, <int>t)}


cdef void _run_jobs(Job* jobs, const int[::1] order, double[:, ::1] out):
    if order.shape[0]:
        with nogil:
            _run_jobs_nogil(jobs, &order[0], order.shape[0], out)


cdef extern from *:
    """
    /* the next unclaimed index of a shared counter (GCC and Clang builtin) */
    static inline int semiparse_claim(int *counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    """
    int claim "semiparse_claim"(int* counter) nogil


cdef struct Queue:
    Job* jobs
    const int* order     # the configurations, group after group, each group's last first
    const int* starts    # group g is order[starts[g]:starts[g + 1]]
    int n_groups
    int next             # the next group no thread has claimed


cdef void _drain(Queue* q, double[:, ::1] out) noexcept nogil:
    """Run groups of ``q`` until none is left unclaimed."""
    cdef int g = claim(&q.next)
    while g < q.n_groups:
        _run_jobs_nogil(q.jobs, q.order + q.starts[g], q.starts[g + 1] - q.starts[g], out)
        g = claim(&q.next)


cdef class _Share:
    """One thread's part of a batch: the groups it claims from the queue."""
    cdef Queue* queue
    cdef double[:, ::1] out

    def run(self):
        with nogil:
            _drain(self.queue, self.out)


cdef void _run_threads(Job* jobs, group, int n_jobs, double[:, ::1] out) except *:
    """Run the configurations on n_jobs threads (a pool kept between calls),
    each gold tree's group in one thread: each thread claims the next
    unclaimed group as it finishes one, the groups in decreasing order of
    an estimate of their cost (configurations times words squared: a
    chart's size grows with the sentence), so that no thread is left with
    a long group at the end while the others idle."""
    from concurrent.futures import wait
    from semiparse._support.threads import pool

    cdef Queue queue
    cdef Py_ssize_t i
    sizes = np.bincount(group)
    first = np.unique(group, return_index=True)[1]   # a configuration of each group
    words = np.array([jobs[i].state.n for i in first], dtype=np.float64)
    ranked = np.argsort(-(sizes * words * words), kind="stable")
    rank = np.empty(len(ranked), dtype=np.intp)
    rank[ranked] = np.arange(len(ranked))
    # by group in ranked order, and from the last configuration to the first
    # within a group (see fill_rows)
    order_arr = np.lexsort((-np.arange(len(group)), rank[group])).astype(np.intc)
    starts_arr = np.zeros(len(ranked) + 1, dtype=np.intc)
    np.cumsum(sizes[ranked], out=starts_arr[1:])
    cdef const int[::1] order = order_arr, starts = starts_arr
    queue.jobs, queue.order, queue.starts = jobs, &order[0], &starts[0]
    queue.n_groups, queue.next = len(ranked), 0
    shares = []
    cdef _Share share
    for i in range(n_jobs):
        share = _Share()
        share.queue = &queue
        share.out = out
        shares.append(share)
    futures = [pool(n_jobs).submit(s.run) for s in shares]
    wait(futures)   # every thread is done with the queue before it goes
    for future in futures:
        future.result()

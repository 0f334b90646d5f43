# cython: language_level=3, wraparound=False, cdivision=True
"""Cython core of the trainable parsers: parser state, features, weights.

A configuration is a ``StateC`` (``semiparse/transitions/runtime/_state.pxd``), advanced by the
compiled machine of its transition system (``semiparse/transitions/runtime/_machine.pxd``:
the rewrites of ``systems/*.toml``, or LR-spine's own moves), so the hot loops
never touch Python objects.  Arc-eager is final once the buffer is empty; the
words still without a head are then attached to the root by the decoder
(:meth:`semiparse.perceptron.model.Model.parse`).

Features are Zhang & Nivre (2011) style templates given as data (see
:mod:`semiparse.perceptron.features`), hashed by ``semiparse/perceptron/_features.pxd``.
:class:`Weights` maps keys to rows of per-class weights with an
open-addressing hash table, and supports the averaged perceptron (lazy
averaging) and AdaGrad-RDA with L1 (weights computed lazily from the sums of
gradients and squared gradients).
"""
from libc.math cimport sqrt
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t
cimport cython
import numpy as np
cimport numpy as cnp

from semiparse.transitions.systems.format.limits import loop_error, max_steps
from semiparse.transitions.runtime._state cimport StateC, state_copy
from semiparse.transitions.runtime._configuration cimport Configuration
from semiparse.transitions.runtime._machine cimport (Machine, MachineC, machine_legal, machine_apply,
                                         machine_arc, machine_is_final)
from semiparse.perceptron._features cimport (
    extract, S0, S1, S2, B0, B1, B2, S0H, S0H2, S0L, S0L2, S0R, S0R2, S1L, S1R, S1L2, S1R2,
    B0L, B0L2, A_WORD, A_TAG, A_LABEL, A_VL, A_VR, A_LSETL, A_LSETR, A_DIST)

cnp.import_array()

SLOTS = {"s0": S0, "s1": S1, "s2": S2, "b0": B0, "b1": B1, "b2": B2,
         "s0h": S0H, "s0h2": S0H2, "s0l": S0L, "s0l2": S0L2, "s0r": S0R, "s0r2": S0R2,
         "s1l": S1L, "s1r": S1R, "s1l2": S1L2, "s1r2": S1R2, "b0l": B0L, "b0l2": B0L2}
ATTRIBUTES = {"w": A_WORD, "p": A_TAG, "l": A_LABEL, "vl": A_VL, "vr": A_VR,
              "sl": A_LSETL, "sr": A_LSETR, "d": A_DIST}


cdef class Sentence:
    """A sentence ready for the core: hashed words / tags, gold heads and labels.

    ``heads``/``labels`` are the gold tree (labels as indices into the model's
    label list, -1 if unknown); they may be all -1 for unannotated input.
    """
    cdef readonly int n
    cdef readonly cnp.ndarray words, tags, heads, labels

    def __init__(self, words, tags, heads, labels):
        self.n = len(words) - 1
        self.words = np.ascontiguousarray(words, dtype=np.int64)
        self.tags = np.ascontiguousarray(tags, dtype=np.int64)
        self.heads = np.ascontiguousarray(heads, dtype=np.int32)
        self.labels = np.ascontiguousarray(labels, dtype=np.int32)
        if not (len(self.tags) == len(self.heads) == len(self.labels) == self.n + 1):
            raise ValueError("words, tags, heads and labels must all have length n + 1")


cdef class State(Configuration):
    """A configuration (:class:`semiparse.transitions.runtime._configuration.Configuration`) over
    one :class:`Sentence`, whose words and tags the features read; ``steps``
    counts the moves done since the initial configuration, at most
    ``max_steps`` (:func:`semiparse.transitions.systems.format.limits.max_steps`: a move
    beyond it is a ValueError, as the system's moves loop)."""
    cdef readonly Sentence sentence
    cdef readonly int steps
    cdef readonly long max_steps

    def __cinit__(self, Sentence sentence, Machine machine):
        self.sentence = sentence
        self._start(machine, sentence.n)
        self.max_steps = max_steps(sentence.n)

    cpdef Configuration copy(self):
        cdef State other = State(self.sentence, self.machine)
        state_copy(other.c, self.c)
        other.steps = self.steps
        return other

    def do(self, int move, int label=-1):
        if self.steps >= self.max_steps:
            raise loop_error(self.machine.system_name, self.c.n)
        Configuration.do(self, move, label)
        self.steps += 1

    def spine(self, int root, str side):
        """The left or right spine of root's tree (root first)."""
        out = []
        cdef int x = root
        while x >= 0:
            out.append(x)
            x = self.c.l1[x] if side == "left" else self.c.r1[x]
        return out

    def fingerprint(self):
        """A 64-bit hash of the stack, buffer and arcs (equal configurations, equal hashes)."""
        cdef uint64_t h = 1469598103934665603ULL
        cdef int i
        for i in range(self.c.stack_len):
            h = (h ^ <uint64_t>(self.c.stack[i] + 1)) * 1099511628211ULL
        h = (h ^ 0xFFFFFFFFULL) * 1099511628211ULL
        for i in range(self.c.buffer_len):
            h = (h ^ <uint64_t>(self.c.buffer[i] + 1)) * 1099511628211ULL
        h = (h ^ 0xFFFFFFFFULL) * 1099511628211ULL
        for i in range(self.c.n + 1):
            h = (h ^ <uint64_t>(self.c.head[i] + 1)) * 1099511628211ULL
        return h

    def features(self, const int[:, ::1] templates):
        cdef cnp.ndarray[cnp.uint64_t, ndim=1] out = np.empty(templates.shape[0], dtype=np.uint64)
        _features(self, templates, <uint64_t*>out.data)
        return out


cdef inline void _features(State state, const int[:, ::1] templates, uint64_t* out):
    cdef const int64_t[::1] w = state.sentence.words
    cdef const int64_t[::1] t = state.sentence.tags
    if templates.shape[0]:
        extract(state.c, &w[0], &t[0], &templates[0, 0], templates.shape[0], templates.shape[1], out)


cdef class Weights:
    """Per-class weight rows for hashed feature keys.

    ``W`` holds the current weights; for the averaged perceptron ``U`` holds
    the time-weighted update sums (average = W - U / t); for AdaGrad-RDA ``U``
    holds the gradient sums g and ``G`` the squared-gradient sums, and the
    weights are computed from them on demand.
    """
    cdef readonly int n_classes
    cdef uint64_t* keys
    cdef int* rows
    cdef size_t capacity     # hash-table size, a power of two
    cdef size_t n_rows
    cdef size_t row_capacity
    cdef double* W
    cdef double* U
    cdef double* G
    cdef public bint rda
    cdef public double alpha, rho, lam
    cdef public long long rda_steps

    def __cinit__(self, int n_classes, bint rda=False):
        if n_classes < 1:
            raise ValueError("n_classes must be positive")
        self.n_classes = n_classes
        self.capacity = 1 << 16
        self.keys = <uint64_t*>calloc(self.capacity, sizeof(uint64_t))
        self.rows = <int*>calloc(self.capacity, sizeof(int))
        self.n_rows = 0
        self.row_capacity = 1024
        self.W = <double*>calloc(self.row_capacity * n_classes, sizeof(double))
        self.U = <double*>calloc(self.row_capacity * n_classes, sizeof(double))
        self.G = <double*>calloc(self.row_capacity * n_classes, sizeof(double)) if rda else NULL
        self.rda = rda
        self.alpha, self.rho, self.lam = 1.0, 0.01, 0.0
        self.rda_steps = 0

    def __dealloc__(self):
        free(self.keys)
        free(self.rows)
        free(self.W)
        free(self.U)
        free(self.G)

    @property
    def n_features(self):
        return self.n_rows

    cdef long _find(self, uint64_t key) noexcept nogil:
        cdef size_t mask = self.capacity - 1
        cdef size_t i = (key >> 7) & mask
        while self.keys[i] != 0:
            if self.keys[i] == key:
                return self.rows[i]
            i = (i + 1) & mask
        return -1

    cdef void _grow_table(self):
        cdef size_t old_cap = self.capacity, i, j, mask
        cdef uint64_t* old_keys = self.keys
        cdef int* old_rows = self.rows
        self.capacity = old_cap * 2
        mask = self.capacity - 1
        self.keys = <uint64_t*>calloc(self.capacity, sizeof(uint64_t))
        self.rows = <int*>calloc(self.capacity, sizeof(int))
        for i in range(old_cap):
            if old_keys[i] != 0:
                j = (old_keys[i] >> 7) & mask
                while self.keys[j] != 0:
                    j = (j + 1) & mask
                self.keys[j] = old_keys[i]
                self.rows[j] = old_rows[i]
        free(old_keys)
        free(old_rows)

    cdef double* _grow(self, double* arr, size_t old, size_t new):
        arr = <double*>realloc(arr, new * self.n_classes * sizeof(double))
        memset(arr + old * self.n_classes, 0, (new - old) * self.n_classes * sizeof(double))
        return arr

    cdef long _row(self, uint64_t key):
        """Row of key, created (zero) if absent."""
        cdef size_t mask, i, new_cap
        if 2 * (self.n_rows + 1) > self.capacity:
            self._grow_table()
        mask = self.capacity - 1
        i = (key >> 7) & mask
        while self.keys[i] != 0:
            if self.keys[i] == key:
                return self.rows[i]
            i = (i + 1) & mask
        if self.n_rows == self.row_capacity:
            new_cap = self.row_capacity * 2
            self.W = self._grow(self.W, self.row_capacity, new_cap)
            self.U = self._grow(self.U, self.row_capacity, new_cap)
            if self.G is not NULL:
                self.G = self._grow(self.G, self.row_capacity, new_cap)
            self.row_capacity = new_cap
        self.keys[i] = key
        self.rows[i] = <int>self.n_rows
        self.n_rows += 1
        return self.rows[i]

    cdef inline double _rda_weight(self, size_t k) noexcept nogil:
        cdef double g = self.U[k]
        cdef double t = self.rda_steps * self.lam
        if g > t:
            g -= t
        elif g < -t:
            g += t
        else:
            return 0.0
        return self.alpha * g / sqrt(self.G[k] + self.rho)

    cdef void _scores(self, const uint64_t* feats, int nf, double* out) noexcept nogil:
        cdef int f, c, C = self.n_classes
        cdef long r
        cdef size_t base
        for c in range(C):
            out[c] = 0.0
        for f in range(nf):
            r = self._find(feats[f])
            if r < 0:
                continue
            base = <size_t>r * C
            if self.rda:
                for c in range(C):
                    out[c] += self._rda_weight(base + c)
            else:
                for c in range(C):
                    out[c] += self.W[base + c]

    def scores(self, const uint64_t[::1] feats):
        """Score of every class for one feature vector (an array of keys)."""
        cdef cnp.ndarray[double, ndim=1] out = np.empty(self.n_classes)
        self._scores(&feats[0], feats.shape[0], <double*>out.data)
        return out

    def perceptron_update(self, const uint64_t[::1] feats, int cls, double delta, double t):
        """W[f, cls] += delta for each feature; U accumulates t * delta (for averaging)."""
        cdef int f
        cdef long r
        cdef size_t k
        if cls < 0 or cls >= self.n_classes:
            raise ValueError(f"class {cls} out of range")
        for f in range(feats.shape[0]):
            r = self._row(feats[f])
            k = <size_t>r * self.n_classes + cls
            self.W[k] += delta
            self.U[k] += t * delta

    def perceptron_step(self, const uint64_t[::1] feats, int good, int bad, double t):
        """One perceptron update at time t: towards class good, away from class bad."""
        self.perceptron_update(feats, good, 1.0, t)
        self.perceptron_update(feats, bad, -1.0, t)

    def rda_update(self, const uint64_t[::1] feats, const double[::1] direction):
        """One AdaGrad-RDA step (Goldberg 2013, Algorithm 2) along direction[c] = f_c - p_c."""
        cdef int f, c, C = self.n_classes
        cdef long r
        cdef size_t k
        cdef double d
        if not self.rda:
            raise ValueError("these weights were not created for RDA")
        if direction.shape[0] != C:
            raise ValueError("direction must have one entry per class")
        for f in range(feats.shape[0]):
            r = self._row(feats[f])
            for c in range(C):
                d = direction[c]
                if d != 0.0:
                    k = <size_t>r * C + c
                    self.U[k] += d
                    self.G[k] += d * d
        self.rda_steps += 1

    def finalize(self, double t=0.0):
        """Replace W by the final weights: the average (perceptron, after t
        updates steps) or the RDA solution; drops rows that became all zero."""
        cdef size_t k, N = self.n_rows * self.n_classes
        if self.rda:
            for k in range(N):
                self.W[k] = self._rda_weight(k)
            self.rda = False
        elif t > 0:
            for k in range(N):
                self.W[k] = self.W[k] - self.U[k] / t
        memset(self.U, 0, N * sizeof(double))

    def snapshot(self, double t=0.0):
        """A new table holding the weights finalize(t) would give; self is unchanged."""
        cdef Weights out = Weights(self.n_classes, False)
        cdef size_t k, N = self.n_rows * self.n_classes
        free(out.keys)
        free(out.rows)
        free(out.W)
        free(out.U)
        out.capacity, out.n_rows, out.row_capacity = self.capacity, self.n_rows, self.row_capacity
        out.keys = <uint64_t*>malloc(self.capacity * sizeof(uint64_t))
        out.rows = <int*>malloc(self.capacity * sizeof(int))
        memcpy(out.keys, self.keys, self.capacity * sizeof(uint64_t))
        memcpy(out.rows, self.rows, self.capacity * sizeof(int))
        out.W = <double*>calloc(self.row_capacity * self.n_classes, sizeof(double))
        out.U = <double*>calloc(self.row_capacity * self.n_classes, sizeof(double))
        for k in range(N):
            if self.rda:
                out.W[k] = self._rda_weight(k)
            elif t > 0:
                out.W[k] = self.W[k] - self.U[k] / t
            else:
                out.W[k] = self.W[k]
        return out

    def n_nonzero(self):
        """Number of non-zero parameters (computed RDA weights for RDA)."""
        cdef size_t k, count = 0, N = self.n_rows * self.n_classes
        for k in range(N):
            if (self._rda_weight(k) if self.rda else self.W[k]) != 0.0:
                count += 1
        return count

    def export(self):
        """(keys, weights): the non-zero rows, keys sorted, as numpy arrays."""
        cdef size_t i
        C = self.n_classes
        keys = []
        rows = []
        for i in range(self.capacity):
            if self.keys[i] != 0:
                keys.append(self.keys[i])
                rows.append(self.rows[i])
        W = np.asarray(<double[:max(self.n_rows, 1) * C]>self.W)[: self.n_rows * C].reshape(-1, C).copy()
        if not keys:
            return np.zeros(0, dtype=np.uint64), np.zeros((0, C))
        keys = np.array(keys, dtype=np.uint64)
        rows = np.array(rows, dtype=np.int64)
        order = np.argsort(keys)
        keys, mat = keys[order], W[rows[order]]
        keep = np.any(mat != 0.0, axis=1)
        return keys[keep], mat[keep]

    def load(self, const uint64_t[::1] keys, const double[:, ::1] weights):
        """Set the rows of keys to weights (export()'s output, into a fresh
        table; a key already there gets the new row)."""
        cdef Py_ssize_t i
        cdef int c
        cdef long r
        if weights.shape[0] != keys.shape[0] or (keys.shape[0] and weights.shape[1] != self.n_classes):
            raise ValueError("keys and weights do not match the number of classes")
        for i in range(keys.shape[0]):
            if keys[i] == 0 or (keys[i] & 1) == 0:
                raise ValueError("invalid feature key")
            r = self._row(keys[i])
            for c in range(self.n_classes):
                self.W[<size_t>r * self.n_classes + c] = weights[i, c]


def step_scores(State state, Weights weights, const int[:, ::1] templates,
                const int[::1] cls_move, double[::1] scores, cnp.uint8_t[::1] valid):
    """Features of state (returned), scores of every class and the validity mask."""
    cdef cnp.ndarray[cnp.uint64_t, ndim=1] feats = np.empty(templates.shape[0], dtype=np.uint64)
    _features(state, templates, <uint64_t*>feats.data)
    weights._scores(<uint64_t*>feats.data, templates.shape[0], &scores[0])
    _legal_mask(&state.machine.c, state.c, cls_move, &valid[0])
    return feats


cdef inline void _legal_mask(const MachineC* m, const StateC* s, const int[::1] cls_move,
                             cnp.uint8_t* valid) noexcept nogil:
    """valid[c] = whether class c's move is legal; the classes of one move are
    adjacent, so each move is tested once."""
    cdef int c, last = -1
    cdef bint ok = False
    for c in range(cls_move.shape[0]):
        if cls_move[c] != last:
            last = cls_move[c]
            ok = machine_legal(m, s, last)
        valid[c] = ok


cdef inline void _root_mask(const MachineC* m, const StateC* s, const int[::1] cls_move,
                            cnp.uint8_t* valid) noexcept nogil:
    """valid[c] = 0 for the valid classes whose move gives the root a child
    while another word than that child has no head (the single-root rule of
    :func:`semiparse.training.single_root.forbidden`)."""
    cdef int c, i, h, d, last = -1, others = -1
    cdef bint out = False
    for c in range(cls_move.shape[0]):
        if not valid[c]:
            continue
        if cls_move[c] != last:
            last = cls_move[c]
            out = False
            if machine_arc(m, s, last, &h, &d) and h == 0:
                if others < 0:  # the words without a head, counted once
                    others = 0
                    for i in range(1, s.n + 1):
                        others += s.head[i] < 0
                out = others - (s.head[d] < 0) > 0
        if out:
            valid[c] = 0


def root_mask(State state, const int[::1] cls_move, cnp.uint8_t[::1] valid):
    """Clear in ``valid`` (the validity mask of :func:`step_scores`) the
    classes that the single-root rule forbids in ``state``."""
    if cls_move.shape[0]:
        _root_mask(&state.machine.c, state.c, cls_move, &valid[0])


def greedy_parse(State state, Weights weights, const int[:, ::1] templates,
                 const int[::1] cls_move, const int[::1] cls_label, bint single_root=False):
    """Parse, always taking the best valid class, until a final configuration,
    a dead end (a configuration with no valid class that is not final:
    ``state.is_final()`` tells them apart) or ``state.max_steps`` moves (the
    model's moves loop); returns the classes taken.  ``single_root``: the root
    takes a child only when that child is the last word without a head
    (:mod:`semiparse.training.single_root`)."""
    cdef int C = cls_move.shape[0], c, best
    cdef int nf = templates.shape[0]
    cdef const MachineC* m = &state.machine.c
    cdef double* scores = <double*>malloc(C * sizeof(double))
    cdef uint64_t* feats = <uint64_t*>malloc(max(nf, 1) * sizeof(uint64_t))
    cdef cnp.uint8_t* valid = <cnp.uint8_t*>malloc(C * sizeof(cnp.uint8_t))
    taken = []
    try:
        while not machine_is_final(m, state.c) and state.steps < state.max_steps:
            _features(state, templates, feats)
            weights._scores(feats, nf, scores)
            _legal_mask(m, state.c, cls_move, valid)
            if single_root:
                _root_mask(m, state.c, cls_move, valid)
            best = -1
            for c in range(C):
                if valid[c] and (best < 0 or scores[c] > scores[best]):
                    best = c
            if best < 0:
                break
            machine_apply(m, state.c, cls_move[best], cls_label[best])
            state.steps += 1
            taken.append(best)
    finally:
        free(scores)
        free(feats)
        free(valid)
    return taken

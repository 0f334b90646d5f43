# cython: language_level=3
"""Cython core of the trainable parsers: parser state, transitions, features, weights.

One C struct, ``StateC``, holds a configuration of the three stack/buffer
systems (arc-standard, arc-hybrid, arc-eager): the stack, the buffer (always a
suffix ``b..n`` of the sentence in these systems), the arcs built so far with
their labels, and the per-node child bookkeeping the features read (leftmost /
rightmost two children, left / right valency, left / right label sets).  Each
system is a branch of the functions over that struct (``_valid``, ``_apply``,
``_final``, ``_static``), so the hot loops never touch Python objects.  The
systems follow ``systems/*.toml`` and ``semiparse.oracles`` (LR-spine); arc-eager
is final once the buffer is empty, and the words still without a head are then
attached to the root.  LR-spine reads its spines off the leftmost / rightmost
child fields; its moves ``left_arc_K`` / ``right_arc_K`` are coded as
LEFT / RIGHT + 4 (K - 1).

Features are Zhang & Nivre (2011) style templates given as data (see
:mod:`semiparse.train.features`): each template is a list of (slot, attribute)
atoms; the extractor hashes the atom values of one configuration into 64-bit
keys.  :class:`Weights` maps keys to rows of per-class weights with an
open-addressing hash table, and supports the averaged perceptron (lazy
averaging) and AdaGrad-RDA with L1 (weights computed lazily from the sums of
gradients and squared gradients).
"""
from libc.math cimport sqrt, exp, fabs
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t, int64_t
cimport cython
import numpy as np
cimport numpy as cnp

cnp.import_array()

# systems
DEF ARC_STANDARD = 0
DEF ARC_HYBRID = 1
DEF ARC_EAGER = 2
DEF LR_SPINE = 3
# moves
DEF SHIFT = 0
DEF LEFT = 1
DEF RIGHT = 2
DEF REDUCE = 3
# feature slots
DEF N_SLOTS = 18
DEF S0 = 0
DEF S1 = 1
DEF S2 = 2
DEF B0 = 3
DEF B1 = 4
DEF B2 = 5
DEF S0H = 6
DEF S0H2 = 7
DEF S0L = 8
DEF S0L2 = 9
DEF S0R = 10
DEF S0R2 = 11
DEF S1L = 12
DEF S1R = 13
DEF S1L2 = 14
DEF S1R2 = 15
DEF B0L = 16
DEF B0L2 = 17
# attributes
DEF A_WORD = 0
DEF A_TAG = 1
DEF A_LABEL = 2
DEF A_VL = 3
DEF A_VR = 4
DEF A_LSETL = 5
DEF A_LSETR = 6
DEF A_DIST = 7     # distance from S0 to the slot, capped

SYSTEMS = {"arc_standard": ARC_STANDARD, "arc_hybrid": ARC_HYBRID, "arc_eager": ARC_EAGER,
           "lr_spine": LR_SPINE}
MOVES = {"shift": SHIFT, "left_arc": LEFT, "right_arc": RIGHT, "reduce": REDUCE}


def move_code(name):
    """Integer code of a transition name; LR-spine ``left_arc_K`` / ``right_arc_K``
    are LEFT / RIGHT plus 4 (K - 1) (so ``left_arc_1`` is ``left_arc``)."""
    if name in MOVES:
        return MOVES[name]
    kind, _, k = name.rpartition("_")
    if kind in ("left_arc", "right_arc") and k.isdigit() and int(k) >= 1:
        return MOVES[kind] + 4 * (int(k) - 1)
    raise ValueError(f"unknown transition {name!r}")


def move_name(int code, str system):
    """Inverse of :func:`move_code` (LR-spine names carry their K)."""
    kind = {SHIFT: "shift", LEFT: "left_arc", RIGHT: "right_arc", REDUCE: "reduce"}[code & 3]
    if system == "lr_spine" and kind != "shift":
        return f"{kind}_{(code >> 2) + 1}"
    if code >= 4:
        raise ValueError(f"move code {code} belongs to LR-spine only")
    return kind
SLOTS = {"s0": S0, "s1": S1, "s2": S2, "b0": B0, "b1": B1, "b2": B2,
         "s0h": S0H, "s0h2": S0H2, "s0l": S0L, "s0l2": S0L2, "s0r": S0R, "s0r2": S0R2,
         "s1l": S1L, "s1r": S1R, "s1l2": S1L2, "s1r2": S1R2, "b0l": B0L, "b0l2": B0L2}
ATTRIBUTES = {"w": A_WORD, "p": A_TAG, "l": A_LABEL, "vl": A_VL, "vr": A_VR,
              "sl": A_LSETL, "sr": A_LSETR, "d": A_DIST}


cdef struct StateC:
    int n              # words 1..n, 0 is the root
    int stack_len
    int b              # buffer = b..n (empty when b > n)
    int* stack
    int* head
    int* label
    int* l1            # leftmost child
    int* l2            # second leftmost child
    int* r1            # rightmost child
    int* r2            # second rightmost child
    int* vl            # number of left children
    int* vr            # number of right children
    uint64_t* lsl      # bit set of left children's labels
    uint64_t* lsr      # bit set of right children's labels


cdef inline size_t _n_ints(int n) noexcept nogil:
    return <size_t>(9 * (n + 1))


cdef StateC* _state_new(int n) noexcept nogil:
    cdef StateC* s = <StateC*>malloc(sizeof(StateC))
    cdef int* block = <int*>malloc(_n_ints(n) * sizeof(int))
    cdef uint64_t* sets = <uint64_t*>calloc(2 * (n + 1), sizeof(uint64_t))
    cdef int i
    s.n = n
    s.stack = block
    s.head = block + (n + 1)
    s.label = block + 2 * (n + 1)
    s.l1 = block + 3 * (n + 1)
    s.l2 = block + 4 * (n + 1)
    s.r1 = block + 5 * (n + 1)
    s.r2 = block + 6 * (n + 1)
    s.vl = block + 7 * (n + 1)
    s.vr = block + 8 * (n + 1)
    s.lsl = sets
    s.lsr = sets + (n + 1)
    for i in range(7 * (n + 1)):
        block[i] = -1
    for i in range(2 * (n + 1)):
        s.vl[i] = 0
    s.stack[0] = 0
    s.stack_len = 1
    s.b = 1
    return s


cdef void _state_free(StateC* s) noexcept nogil:
    free(s.stack)
    free(s.lsl)
    free(s)


cdef void _state_copy(StateC* dst, const StateC* src) noexcept nogil:
    memcpy(dst.stack, src.stack, _n_ints(src.n) * sizeof(int))
    memcpy(dst.lsl, src.lsl, 2 * (src.n + 1) * sizeof(uint64_t))
    dst.stack_len = src.stack_len
    dst.b = src.b


cdef inline void _add_arc(StateC* s, int h, int d, int lab) noexcept nogil:
    s.head[d] = h
    s.label[d] = lab
    if d < h:
        s.vl[h] += 1
        s.lsl[h] |= (<uint64_t>1) << (lab & 63)
        if s.l1[h] == -1 or d < s.l1[h]:
            s.l2[h] = s.l1[h]
            s.l1[h] = d
        elif s.l2[h] == -1 or d < s.l2[h]:
            s.l2[h] = d
    else:
        s.vr[h] += 1
        s.lsr[h] |= (<uint64_t>1) << (lab & 63)
        if s.r1[h] == -1 or d > s.r1[h]:
            s.r2[h] = s.r1[h]
            s.r1[h] = d
        elif s.r2[h] == -1 or d > s.r2[h]:
            s.r2[h] = d


cdef inline int _spine(const StateC* s, int root, int side, int k) noexcept nogil:
    """The k-th node (1 = root) of root's left (side LEFT) or right spine, or -1."""
    cdef int x = root
    while k > 1 and x >= 0:
        x = s.l1[x] if side == LEFT else s.r1[x]
        k -= 1
    return x


cdef inline bint _valid(int system, const StateC* s, int move) noexcept nogil:
    cdef bint buf = s.b <= s.n
    cdef int L = s.stack_len
    if move == SHIFT:
        return buf
    if system == LR_SPINE:
        if L < 2:
            return False
        if (move & 3) == LEFT:
            return s.stack[L - 2] != 0 and _spine(s, s.stack[L - 1], LEFT, (move >> 2) + 1) >= 0
        if (move & 3) == RIGHT:
            return _spine(s, s.stack[L - 2], RIGHT, (move >> 2) + 1) >= 0
        return False
    if system == ARC_STANDARD:
        if move == LEFT:
            return L >= 3
        if move == RIGHT:
            return L >= 2
        return False
    if system == ARC_HYBRID:
        if move == LEFT:
            return L >= 2 and buf
        if move == RIGHT:
            return L >= 2
        return False
    # arc-eager (final as soon as the buffer is empty)
    if move == LEFT:
        return L >= 2 and buf and s.head[s.stack[L - 1]] == -1
    if move == RIGHT:
        return buf
    if move == REDUCE:
        return L >= 2 and buf and s.head[s.stack[L - 1]] != -1
    return False


cdef inline void _apply(int system, StateC* s, int move, int lab) noexcept nogil:
    cdef int L = s.stack_len
    if move == SHIFT:
        s.stack[L] = s.b
        s.stack_len += 1
        s.b += 1
    elif system == LR_SPINE:
        if (move & 3) == LEFT:
            _add_arc(s, _spine(s, s.stack[L - 1], LEFT, (move >> 2) + 1), s.stack[L - 2], lab)
            s.stack[L - 2] = s.stack[L - 1]
        else:
            _add_arc(s, _spine(s, s.stack[L - 2], RIGHT, (move >> 2) + 1), s.stack[L - 1], lab)
        s.stack_len -= 1
    elif system == ARC_STANDARD:
        if move == LEFT:
            _add_arc(s, s.stack[L - 1], s.stack[L - 2], lab)
            s.stack[L - 2] = s.stack[L - 1]
            s.stack_len -= 1
        else:
            _add_arc(s, s.stack[L - 2], s.stack[L - 1], lab)
            s.stack_len -= 1
    elif system == ARC_HYBRID:
        if move == LEFT:
            _add_arc(s, s.b, s.stack[L - 1], lab)
        else:
            _add_arc(s, s.stack[L - 2], s.stack[L - 1], lab)
        s.stack_len -= 1
    else:
        if move == LEFT:
            _add_arc(s, s.b, s.stack[L - 1], lab)
            s.stack_len -= 1
        elif move == RIGHT:
            _add_arc(s, s.stack[L - 1], s.b, lab)
            s.stack[L] = s.b
            s.stack_len += 1
            s.b += 1
        else:
            s.stack_len -= 1


cdef inline bint _final(int system, const StateC* s) noexcept nogil:
    if system == ARC_EAGER:
        return s.b > s.n
    return s.b > s.n and s.stack_len == 1


cdef inline void _slots(const StateC* s, int* out) noexcept nogil:
    cdef int L = s.stack_len
    cdef int i
    for i in range(N_SLOTS):
        out[i] = -1
    if L >= 1:
        out[S0] = s.stack[L - 1]
    if L >= 2:
        out[S1] = s.stack[L - 2]
    if L >= 3:
        out[S2] = s.stack[L - 3]
    if s.b <= s.n:
        out[B0] = s.b
    if s.b + 1 <= s.n:
        out[B1] = s.b + 1
    if s.b + 2 <= s.n:
        out[B2] = s.b + 2
    if out[S0] >= 0:
        out[S0H] = s.head[out[S0]]
        if out[S0H] >= 0:
            out[S0H2] = s.head[out[S0H]]
        out[S0L] = s.l1[out[S0]]
        out[S0L2] = s.l2[out[S0]]
        out[S0R] = s.r1[out[S0]]
        out[S0R2] = s.r2[out[S0]]
    if out[S1] >= 0:
        out[S1L] = s.l1[out[S1]]
        out[S1R] = s.r1[out[S1]]
        out[S1L2] = s.l2[out[S1]]
        out[S1R2] = s.r2[out[S1]]
    if out[B0] >= 0:
        out[B0L] = s.l1[out[B0]]
        out[B0L2] = s.l2[out[B0]]


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept nogil:
    # splitmix64 finaliser over the running hash and the next value
    h ^= v + <uint64_t>0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2)
    h ^= h >> 30
    h *= <uint64_t>0xBF58476D1CE4E5B9ULL
    h ^= h >> 27
    h *= <uint64_t>0x94D049BB133111EBULL
    h ^= h >> 31
    return h


cdef inline int64_t _attr(const StateC* s, const int* slots, const int64_t* words,
                          const int64_t* tags, int slot, int attr) noexcept nogil:
    cdef int i = slots[slot]
    cdef int d
    if i < 0:
        return -1
    if attr == A_WORD:
        return words[i]
    if attr == A_TAG:
        return tags[i]
    if attr == A_LABEL:
        return s.label[i]
    if attr == A_VL:
        return s.vl[i]
    if attr == A_VR:
        return s.vr[i]
    if attr == A_LSETL:
        return <int64_t>s.lsl[i]
    if attr == A_LSETR:
        return <int64_t>s.lsr[i]
    # A_DIST
    if slots[S0] < 0:
        return -1
    d = i - slots[S0] if i > slots[S0] else slots[S0] - i
    return d if d < 5 else (5 if d < 10 else 10)


cdef void _extract(const StateC* s, const int64_t* words, const int64_t* tags,
                   const int[:, ::1] templates, uint64_t* out) noexcept nogil:
    """Hash every template (rows: n_atoms, slot, attr, slot, attr, ...) into out."""
    cdef int slots[N_SLOTS]
    cdef int t, a, n_atoms
    cdef uint64_t h
    _slots(s, slots)
    for t in range(templates.shape[0]):
        h = _mix(<uint64_t>0x1234567 + <uint64_t>t, <uint64_t>t)
        n_atoms = templates[t, 0]
        for a in range(n_atoms):
            h = _mix(h, <uint64_t>(_attr(s, slots, words, tags,
                                         templates[t, 1 + 2 * a], templates[t, 2 + 2 * a]) + 2))
        out[t] = h | 1   # 0 marks an empty hash-table slot


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


cdef class State:
    """A configuration of one transition system over one :class:`Sentence`."""
    cdef StateC* c
    cdef readonly int system
    cdef readonly Sentence sentence

    def __cinit__(self, Sentence sentence, int system):
        if system < 0 or system > 3:
            raise ValueError(f"unknown system code {system}")
        self.sentence = sentence
        self.system = system
        self.c = _state_new(sentence.n)

    def __dealloc__(self):
        if self.c is not NULL:
            _state_free(self.c)

    def copy(self):
        cdef State other = State(self.sentence, self.system)
        _state_copy(other.c, self.c)
        return other

    def is_final(self):
        return _final(self.system, self.c)

    def valid(self, int move):
        return _valid(self.system, self.c, move)

    def spine(self, int root, str side):
        """The left or right spine of root's tree (root first)."""
        out = []
        cdef int x = root
        while x >= 0:
            out.append(x)
            x = self.c.l1[x] if side == "left" else self.c.r1[x]
        return out

    def apply(self, int move, int label=-1):
        if not _valid(self.system, self.c, move):
            raise ValueError(f"move {move} is not valid in this configuration")
        _apply(self.system, self.c, move, label)

    @property
    def stack(self):
        return [self.c.stack[i] for i in range(self.c.stack_len)]

    @property
    def buffer(self):
        return list(range(self.c.b, self.c.n + 1))

    @property
    def arcs(self):
        """Head of each position built so far (-1 if none); arcs[0] == -1."""
        return [self.c.head[i] for i in range(self.c.n + 1)]

    @property
    def arc_labels(self):
        return [self.c.label[i] for i in range(self.c.n + 1)]

    def features(self, const int[:, ::1] templates):
        cdef cnp.ndarray[cnp.uint64_t, ndim=1] out = np.empty(templates.shape[0], dtype=np.uint64)
        cdef const int64_t[::1] w = self.sentence.words
        cdef const int64_t[::1] t = self.sentence.tags
        _extract(self.c, &w[0], &t[0], templates, <uint64_t*>out.data)
        return out

    def static_move(self):
        """The canonical gold move (static oracle) for a projective gold tree, or -1."""
        return _static(self.system, self.c, self.sentence)


cdef int _static(int system, const StateC* s, Sentence sent):
    """Canonical transition sequence: attach as soon as possible (seed 000, section 8)."""
    cdef const int[::1] gold = sent.heads
    cdef int L = s.stack_len, n = s.n
    cdef int s0 = s.stack[L - 1] if L >= 1 else -1
    cdef int s1 = s.stack[L - 2] if L >= 2 else -1
    cdef int b0 = s.b if s.b <= n else -1
    cdef int k, x
    if system == LR_SPINE:
        # attach as soon as possible, to the spine node that is the gold head
        if L >= 2 and s1 != 0:
            k, x = 1, s0
            while x >= 0:
                if gold[s1] == x:
                    return LEFT + 4 * (k - 1)
                x, k = s.l1[x], k + 1
        if L >= 2:
            k, x = 1, s1
            while x >= 0:
                if gold[s0] == x:
                    return RIGHT + 4 * (k - 1)
                x, k = s.r1[x], k + 1
        return SHIFT if b0 >= 0 else -1
    if system == ARC_STANDARD:
        if L >= 3 and gold[s1] == s0:
            return LEFT
        if L >= 2 and gold[s0] == s1 and _complete(s, gold, s0):
            return RIGHT
        return SHIFT if b0 >= 0 else -1
    if system == ARC_HYBRID:
        if L >= 2 and b0 >= 0 and gold[s0] == b0:
            return LEFT
        if L >= 2 and gold[s0] == s1 and _complete(s, gold, s0):
            return RIGHT
        return SHIFT if b0 >= 0 else -1
    # arc-eager
    if L >= 2 and b0 >= 0 and gold[s0] == b0 and s.head[s0] == -1:
        return LEFT
    if b0 >= 0 and gold[b0] == s0:
        return RIGHT
    if L >= 2 and b0 >= 0 and s.head[s0] != -1:
        # reduce s0 once no remaining buffer node is attached to or from it
        for k in range(b0, n + 1):
            if gold[k] == s0 or gold[s0] == k:
                break
        else:
            return REDUCE
    return SHIFT if b0 >= 0 else -1


cdef bint _complete(const StateC* s, const int[::1] gold, int h):
    """Every gold dependent of h is attached (to h)."""
    cdef int d
    for d in range(1, s.n + 1):
        if gold[d] == h and s.head[d] != h:
            return False
    return True


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

    def rda_update(self, const uint64_t[::1] feats, const double[::1] direction):
        """One AdaGrad-RDA step (seed 004, Algorithm 2) along direction[c] = f_c - p_c."""
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
        """Fill from export()'s output (for a fresh Weights)."""
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
    cdef const int64_t[::1] w = state.sentence.words
    cdef const int64_t[::1] t = state.sentence.tags
    cdef int c
    _extract(state.c, &w[0], &t[0], templates, <uint64_t*>feats.data)
    weights._scores(<uint64_t*>feats.data, templates.shape[0], &scores[0])
    for c in range(cls_move.shape[0]):
        valid[c] = _valid(state.system, state.c, cls_move[c])
    return feats


def greedy_parse(State state, Weights weights, const int[:, ::1] templates,
                 const int[::1] cls_move, const int[::1] cls_label):
    """Parse to the end, always taking the best valid class; returns the classes taken."""
    cdef int C = cls_move.shape[0], c, best
    cdef int nf = templates.shape[0]
    cdef double* scores = <double*>malloc(C * sizeof(double))
    cdef uint64_t* feats = <uint64_t*>malloc(nf * sizeof(uint64_t))
    cdef const int64_t[::1] w = state.sentence.words
    cdef const int64_t[::1] t = state.sentence.tags
    taken = []
    try:
        while not _final(state.system, state.c):
            _extract(state.c, &w[0], &t[0], templates, feats)
            weights._scores(feats, nf, scores)
            best = -1
            for c in range(C):
                if _valid(state.system, state.c, cls_move[c]) and (best < 0 or scores[c] > scores[best]):
                    best = c
            if best < 0:
                raise RuntimeError("no valid transition in a non-final configuration")
            _apply(state.system, state.c, cls_move[best], cls_label[best])
            taken.append(best)
    finally:
        free(scores)
        free(feats)
    return taken


def arc_of(State state, int move):
    """(head, dependent) of the arc move would add in state, or None."""
    cdef StateC* s = state.c
    cdef int L = s.stack_len
    if not _valid(state.system, s, move) or move == SHIFT:
        return None
    if state.system == LR_SPINE:
        if (move & 3) == LEFT:
            return (_spine(s, s.stack[L - 1], LEFT, (move >> 2) + 1), s.stack[L - 2])
        return (_spine(s, s.stack[L - 2], RIGHT, (move >> 2) + 1), s.stack[L - 1])
    if state.system == ARC_STANDARD:
        if move == LEFT:
            return (s.stack[L - 1], s.stack[L - 2])
        return (s.stack[L - 2], s.stack[L - 1])
    if state.system == ARC_HYBRID:
        if move == LEFT:
            return (s.b, s.stack[L - 1])
        return (s.stack[L - 2], s.stack[L - 1])
    if move == LEFT:
        return (s.b, s.stack[L - 1])
    if move == RIGHT:
        return (s.stack[L - 1], s.b)
    return None

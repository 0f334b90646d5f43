# cython: language_level=3, wraparound=False, cdivision=True
"""The hot loops of :mod:`semiparse.treebank.conllu` in C: cutting a byte stream
into sentence blocks, and reading the ID and HEAD columns of a block.

Both follow the Python rules of ``semiparse.treebank.conllu`` exactly (line breaks as
``bytes.splitlines``, blank lines as ``bytes.strip``); :func:`parse_words`
only accepts the plain case -- every word line with 10 columns, IDs in
sequence, integer heads -- and leaves anything else (and every error
message) to the Python code.
"""
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp

from semiparse.heads._checks cimport projective, reaches_root

cdef enum Kind:  # what parse_words says about a block's basic tree
    NOT_SINGLE_TREE_  # not a tree, or not exactly one word on the root: Python checks it
    NON_PROJECTIVE_  # a tree with one root word, with crossing edges
    PROJECTIVE_  # a tree with one root word (or no words), no crossing edges

NOT_SINGLE_TREE, NON_PROJECTIVE, PROJECTIVE = NOT_SINGLE_TREE_, NON_PROJECTIVE_, PROJECTIVE_

cdef enum:
    MAX_DIGITS = 9  # longer numbers go to the Python path (no overflow here)


cdef inline bint _space(unsigned char c) nogil:
    """``bytes.strip`` whitespace: space, tab, LF, VT, FF, CR."""
    return c == 32 or 9 <= c <= 13


cdef inline bint _blank(const unsigned char* p, Py_ssize_t start, Py_ssize_t end) nogil:
    cdef Py_ssize_t i
    for i in range(start, end):
        if not _space(p[i]):
            return False
    return True


cdef class BlockScanner:
    """Cuts a byte stream, fed in pieces of any size, into sentence blocks:
    a sentence's lines and the blank lines after it (blank lines at the
    start go with the first block).  Lines end in LF, CRLF or a lone CR; a
    UTF-8 byte order mark on line 1 does not make that line non-blank.

    Each line is looked at once, however the stream is cut, and the buffer
    holds only the current block and what follows it.
    """

    cdef bytearray buf
    cdef Py_ssize_t start  # the current block's first byte in buf
    cdef Py_ssize_t scan  # the first byte of buf not yet cut into lines
    cdef Py_ssize_t lines  # lines cut so far
    cdef Py_ssize_t first  # the current block's first line (1-based)
    cdef bint started, after_blank, content

    def __cinit__(self):
        self.buf = bytearray()

    def feed(self, chunk):
        """Append the bytes ``chunk`` to the stream."""
        if self.start:
            del self.buf[:self.start]  # O(1) amortized at the front of a bytearray
            self.scan -= self.start
            self.start = 0
        self.buf += chunk

    def next(self, bint eof=False):
        """``(raw, first_line)`` of the next complete block, or None when more
        input is needed to tell where it ends (``eof``: there is no more; the
        last block ends with the stream)."""
        cdef const unsigned char* p = <const unsigned char*> PyByteArray_AS_STRING(self.buf)
        cdef Py_ssize_t size = PyByteArray_GET_SIZE(self.buf)
        cdef Py_ssize_t i, end, text
        cdef bint blank
        while True:
            i = self.scan
            if i >= size:
                if eof and self.started:
                    self.started = False
                    return PyBytes_FromStringAndSize(<const char*> p + self.start, size - self.start), self.first
                return None
            while i < size and p[i] != 10 and p[i] != 13:
                i += 1
            if i == size:  # no line ending yet
                if not eof:
                    return None
                end = size
            elif p[i] == 10:
                end = i + 1
            elif i + 1 < size:
                end = i + 2 if p[i + 1] == 10 else i + 1
            elif not eof:  # a CR whose LF may come next
                return None
            else:
                end = i + 1
            text = self.scan
            if self.lines == 0 and end - text >= 3 and memcmp(p + text, b"\xef\xbb\xbf", 3) == 0:
                text += 3
            blank = _blank(p, text, end)
            result = None
            if not self.started or (not blank and self.after_blank and self.content):
                if self.started:
                    result = (PyBytes_FromStringAndSize(<const char*> p + self.start, self.scan - self.start),
                              self.first)
                self.started, self.content = True, False
                self.start, self.first = self.scan, self.lines + 1
            self.after_blank = blank
            if not blank:
                self.content = True
            self.lines += 1
            self.scan = end
            if result is not None:
                return result


cdef inline Py_ssize_t _number(const unsigned char* p, Py_ssize_t start, Py_ssize_t end, bint zero) nogil:
    """The decimal number ``p[start:end]`` (no sign, no leading zero; ``0``
    itself only if ``zero``), or -1."""
    cdef Py_ssize_t i, value = 0
    if end <= start or end - start > MAX_DIGITS:
        return -1
    if p[start] == 48:
        return 0 if zero and end - start == 1 else -1
    for i in range(start, end):
        if not 48 <= p[i] <= 57:
            return -1
        value = value * 10 + (p[i] - 48)
    return value


cdef bint _other_id(const unsigned char* p, Py_ssize_t start, Py_ssize_t end, Py_ssize_t word,
                    Py_ssize_t* last) noexcept nogil:
    """Whether ``p[start:end]`` is a multiword range ``A-B`` (A <= B) right
    before word A (``word``, the next word; ``last`` the largest B so far)
    or an empty node ``A.B``, as ``conllu.parser.parse_id_value`` reads
    them."""
    cdef Py_ssize_t i, a, b
    for i in range(start, end):
        if p[i] == 45:  # '-'
            a, b = _number(p, start, i, False), _number(p, i + 1, end, False)
            last[0] = max(last[0], b)
            return a == word and b >= a
        if p[i] == 46:  # '.'
            if i == start or i - start > MAX_DIGITS:
                return False
            for a in range(start, i):
                if not 48 <= p[a] <= 57:
                    return False
            return _number(p, i + 1, end, False) > 0
    return False


cdef Kind _kind(const int* heads, int m, int* work) noexcept nogil:
    """NOT_SINGLE_TREE, NON_PROJECTIVE or PROJECTIVE for ``heads[0..m-1]``
    (``heads[0] == -1``); ``work`` has room for 3 * m ints."""
    cdef int d, roots = 0
    for d in range(1, m):
        if heads[d] == 0:
            roots += 1
    if (m > 1 and roots != 1) or not reaches_root(heads, m, work):
        return NOT_SINGLE_TREE_
    return PROJECTIVE_ if projective(heads, m, work) else NON_PROJECTIVE_


def parse_words(bytes raw):
    """``(heads, spans, word_lines, kind)`` of a block as ``semiparse.treebank.conllu`` reads
    it (``kind``: NOT_SINGLE_TREE, NON_PROJECTIVE or PROJECTIVE), or None if
    some word line is not plain: not 10 columns, an empty column but MISC,
    an ID that is neither the next word nor a multiword range (right before
    its first word, ending at a word) or empty node, a HEAD that is not a
    number.  The Python reader then reads the block (and reports what is
    wrong)."""
    cdef const unsigned char* p = raw
    cdef Py_ssize_t size = len(raw), s = 0, body, end, i, tab_id, tab_head, word, last_range = 0
    cdef int tabs, head, line = 0
    cdef int* heads
    cdef int* work
    heads_list, spans, word_lines = [-1], [], []
    if size == 0:
        return heads_list, spans, word_lines, PROJECTIVE_
    cdef Py_ssize_t room = 2  # more than the lines of the block
    for i in range(size):
        if p[i] == 10 or p[i] == 13:
            room += 1
    heads = <int*> malloc(4 * room * sizeof(int))
    if heads == NULL:
        raise MemoryError()
    work = heads + room
    try:
        word = 1
        heads[0] = -1
        while s < size:
            i = s
            while i < size and p[i] != 10 and p[i] != 13:
                i += 1
            body = i
            if i == size:
                end = size
            else:
                end = i + 2 if i + 1 < size and p[i] == 13 and p[i + 1] == 10 else i + 1
            if p[s] != 35 and not _blank(p, s, end):  # '#': a comment
                tabs, tab_id, tab_head = 0, -1, -1
                for i in range(s, body):
                    if p[i] == 9:
                        if i == s or p[i - 1] == 9:  # an empty column before MISC
                            return None
                        tabs += 1
                        if tabs == 1:
                            tab_id = i
                        elif tabs == 6:
                            tab_head = i
                if tabs != 9:
                    return None
                if _number(p, s, tab_id, False) == word:
                    i = tab_head + 1
                    while p[i] != 9:
                        i += 1
                    head = <int> _number(p, tab_head + 1, i, True)
                    if head < 0:
                        return None
                    heads[word] = head
                    heads_list.append(head)
                    spans.append((s, body))
                    word_lines.append(line)
                    word += 1
                elif not _other_id(p, s, tab_id, word, &last_range):
                    return None
            s = end
            line += 1
        if last_range >= word:  # a multiword range ends after the last word
            return None
        return heads_list, spans, word_lines, _kind(heads, <int> word, work)
    finally:
        free(heads)

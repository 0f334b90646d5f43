cdef Py_ssize_t stack_and_buffer_top(tuple stack, tuple buffer, Py_ssize_t n, int root) except -3
cdef int* check_scratch(Py_ssize_t count) except NULL

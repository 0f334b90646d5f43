# cython: language_level=3, wraparound=False, cdivision=True
"""What the machine's cores give threads, whatever the code: a compute-only
loop without the GIL and without memory traffic.  Its speed-up on several
threads is the ceiling of any batch speed-up measured in the same run (a
virtual machine's cores may be hyperthreads of one physical core, or
throttled when both run)."""
from libc.stdint cimport uint64_t


def busy_loop(long long steps):
    """Run ``steps`` rounds of eight independent xorshift generators without
    the GIL, as many operations at once as a core can issue (a loop of one
    chain would hide cores that share their units); return their combined
    state, so that the compiler cannot drop the loop."""
    cdef uint64_t x[8]
    cdef long long i
    cdef int j
    for j in range(8):
        x[j] = 88172645463325252ULL + j
    with nogil:
        for i in range(steps):
            for j in range(8):
                x[j] ^= x[j] << 13
                x[j] ^= x[j] >> 7
                x[j] ^= x[j] << 17
    return x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[6] ^ x[7]

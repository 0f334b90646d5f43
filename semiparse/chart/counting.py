"""Exact counts past a double: residues modulo primes below 2**31 (the Cython
counting kernels) and the Chinese remainder theorem."""
import math

import numpy as np

from semiparse.chart import kernels
from semiparse.chart.inputs import NEG_INF

# Counts below this are exact in a double.
EXACT_DOUBLE = 2.0 ** 51

def log_derivations(rules, pl, pr, w):
    """log of the number of derivations that use only the edges ``w``
    allows (scores > -inf), whatever their scores; -inf when there is none."""
    return kernels.inside("log", rules, pl, pr, np.where(w == NEG_INF, w, 0.0))


def exact_count(kernel, rules, pl, pr, w, approx):
    """Exact count from residues modulo primes whose product exceeds a bound."""
    if math.isfinite(approx):
        bits = math.frexp(approx)[1] + 1  # double rounding is far below a factor 2
    else:
        # Overflowed: bound by the total number of derivations, from the log kernel.
        bits = int(log_derivations(rules, pl, pr, w) / math.log(2)) + 2
    residues, moduli, product = [], [], 1
    for p in _primes():
        if product.bit_length() > bits:
            break
        value = kernels.inside(kernel, rules, pl, pr, w, p)
        residues.append(value[1] if isinstance(value, tuple) else value)
        moduli.append(p)
        product *= p
    total = 0
    for r, p in zip(residues, moduli):
        q = product // p
        total += r * q * pow(q, -1, p)
    return total % product


_PRIMES = []


def _primes():
    """Primes below 2**31, largest first (generated on demand, cached)."""
    yield from _PRIMES
    candidate = (_PRIMES[-1] if _PRIMES else 2 ** 31) - 1
    while True:
        if _is_prime(candidate):
            _PRIMES.append(candidate)
            yield candidate
        candidate -= 2 if candidate % 2 else 1


def _is_prime(n):
    if n % 2 == 0:
        return n == 2
    return all(n % f for f in range(3, math.isqrt(n) + 1, 2))

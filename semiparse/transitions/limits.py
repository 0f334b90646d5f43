"""Sizes every part of the transition machinery agrees on."""

# The most words a configuration takes: every size the C state computes
# (10 * (n + 1) ints) stays far inside an int.
MAX_WORDS = 2 ** 24

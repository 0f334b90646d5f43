"""Benchmarks behind ``semiparse bench NAME``: one module each.

Every benchmark times the thing measured and its baseline in the same run and
reports ratios; none of them is a test.
"""

"""Benchmarks behind ``semiparse bench NAME``: one module each.

Every benchmark times the thing measured and its baseline in the same run and
reports ratios; none of them is a test.
"""
import os
from pathlib import Path


def missing_data(path, what="not found"):
    """Why the shared data a benchmark reads by default is not at ``path``,
    under :func:`semiparse.resources.data_root` (``what`` says what is
    wrong there), for its error message: where the folder came from
    (``$SEMIPARSE_DATA``, or the default ``../shared/data``, relative to
    the working directory) and what to do."""
    given = os.environ.get("SEMIPARSE_DATA")
    if given:
        where = f"SEMIPARSE_DATA is {given}"
    else:
        where = (f"SEMIPARSE_DATA is not set, and the default ../shared/data is relative to the "
                 f"working directory, {Path.cwd()}")
    return (f"{path} {what} ({where}): set SEMIPARSE_DATA to the shared data folder, the "
            f"one that holds ud/, or name the files")

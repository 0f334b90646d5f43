"""Where the shipped grammar and transition-system files are, and the shared
treebanks that benchmarks and experiments read.

An installed package has them as ``semiparse.grammars`` / ``semiparse.systems``
(package data, see setup.py); an editable or in-place development checkout
reads them from the repository's top-level ``grammars/`` and ``systems/``.
"""
import importlib.util
import os
from pathlib import Path


def data_dir(kind):
    """Directory (a Path) of the shipped ``"grammars"`` or ``"systems"``.

    Both are folders without an ``__init__.py`` (namespace packages once
    installed), so their one folder is read from the import system rather than
    through ``importlib.resources``, whose answer for a namespace package
    cannot be globbed."""
    if kind not in ("grammars", "systems"):
        raise ValueError(f"unknown data kind {kind!r}: expected 'grammars' or 'systems'")
    try:
        spec = importlib.util.find_spec(f"semiparse.{kind}")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parent.parent / kind


def data_root():
    """The shared treebanks' folder (``ud/``, ``ptb/``): ``$SEMIPARSE_DATA``,
    else ``../shared/data`` from the current directory."""
    return Path(os.environ.get("SEMIPARSE_DATA") or Path("..") / "shared" / "data")

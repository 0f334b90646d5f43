"""Where the shipped grammar and transition-system files are.

An installed package has them as ``semiparse.grammars`` / ``semiparse.systems``
(package data, see setup.py); an editable or in-place development checkout
reads them from the repository's top-level ``grammars/`` and ``systems/``.
"""
import importlib.resources
from pathlib import Path


def data_dir(kind):
    """Directory (a Traversable) of the shipped ``"grammars"`` or ``"systems"``."""
    if kind not in ("grammars", "systems"):
        raise ValueError(f"unknown data kind {kind!r}: expected 'grammars' or 'systems'")
    try:
        return importlib.resources.files(f"semiparse.{kind}")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / kind

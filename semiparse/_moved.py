"""The module paths of the previous layout, kept for one release.

``import semiparse.engine`` (or ``semiparse.oracles.api``, ...) still works:
it warns with a :class:`DeprecationWarning` naming the new path and gives a
module that forwards every attribute to the module now there.  Installed
from :mod:`semiparse` on import; nothing in the package uses the old paths.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

# old dotted prefix -> new one (names an old module had that its new one does
# not are looked up in EXTRA)
MOVED = {  # the more specific first
    "semiparse.constituency.checking": "semiparse.testing.constituent_checking",
    "semiparse.transitions.api": "semiparse.transitions.stepping",
    "semiparse.transitions.system": "semiparse.transitions.loading",
    "semiparse.transitions._configs": "semiparse.transitions._validation",
    "semiparse.oracles.checking": "semiparse.testing.checking",
    "semiparse.queries.labels": "semiparse.chart.labels",
    "semiparse.engine": "semiparse.chart.engine",
    "semiparse.conllu_io": "semiparse.treebank.conllu",
    "semiparse.treebank_columns": "semiparse.treebank.columns",
    "semiparse.projectivity": "semiparse.treebank.projectivity",
    "semiparse.encoding": "semiparse.treebank.encoding",
    "semiparse.outputs": "semiparse.treebank.outputs",
    "semiparse.oracles": "semiparse.transitions",
    "semiparse.commands": "semiparse.cli",
}

EXTRA = {"semiparse.constituency.checking": ("semiparse.cli._constituent_check",),  # run
         "semiparse.queries.labels": ("semiparse.chart.engine",),  # parse_labelled
         "semiparse.engine": ("semiparse.chart.inputs", "semiparse.chart.shift", "semiparse.chart.generic",
                              "semiparse.chart.batch", "semiparse.chart.result")}


def new_name(name):
    """The path ``name`` has now, or None if it did not move."""
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            moved = new + name[len(old):]
            return new_name(moved) or moved  # a path that moved twice goes to the last one
    return None


_ABSENT = object()


class _Forward(types.ModuleType):
    """An old path: every attribute read (or set) goes to the new module.

    Deleting an attribute set through the old path gives the new module its
    own value back, so that a patch made and undone there (pytest's
    ``monkeypatch``) leaves the new module as it was."""

    def __init__(self, name, target, extra=()):
        super().__init__(name, target.__doc__)
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_extra", extra)
        object.__setattr__(self, "_replaced", {})  # attribute -> the new module's own value
        if hasattr(target, "__path__"):  # a package: its old submodule paths resolve too
            object.__setattr__(self, "__path__", [])

    def __getattr__(self, attr):
        for module in (self._target, *map(importlib.import_module, self._extra)):
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __setattr__(self, attr, value):
        if attr.startswith("__") or isinstance(value, _Forward):  # old submodules stay old
            object.__setattr__(self, attr, value)
        else:
            self._replaced.setdefault(attr, getattr(self._target, attr, _ABSENT))
            setattr(self._target, attr, value)

    def __delattr__(self, attr):
        if attr not in self._replaced:
            raise AttributeError(f"module {self.__name__!r}: only what was set through it can "
                                 f"be deleted, not {attr!r}")
        own = self._replaced.pop(attr)
        if own is _ABSENT:
            delattr(self._target, attr)
        else:
            setattr(self._target, attr, own)

    def __dir__(self):
        return dir(self._target)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if new_name(name) is None:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=name in MOVED)

    def create_module(self, spec):
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} has moved to {new}; the old path will be removed in the next "
                      f"release", DeprecationWarning, stacklevel=2)
        return _Forward(spec.name, importlib.import_module(new), EXTRA.get(spec.name, ()))

    def exec_module(self, module):
        pass


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

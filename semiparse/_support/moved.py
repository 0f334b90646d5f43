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
    # score shifting, not the shift transition
    "semiparse.chart.shift": "semiparse.chart.score_shift",
    # train/ became the perceptron's room; its data and scoring serve every parser
    "semiparse.train.data": "semiparse.treebank.data",
    "semiparse.train.evaluate": "semiparse.treebank.scoring",
    "semiparse.train": "semiparse.perceptron",
    # one oracle family: the constituent systems in transitions/, their trees in treebank/
    "semiparse.constituency.systems": "semiparse.transitions.constituent.systems",
    "semiparse.constituency.dynamic": "semiparse.transitions.constituent.oracle",
    "semiparse.constituency.exhaustive": "semiparse.transitions.constituent.exhaustive",
    "semiparse.constituency.trees": "semiparse.treebank.brackets",
    "semiparse.constituency.evaluation": "semiparse.treebank.evalb",
    "semiparse._heads": "semiparse.heads._checks",
    # transitions/ in rooms: systems/ (and its format/), runtime/, oracles/
    "semiparse.transitions.interface": "semiparse.transitions.systems.interface",
    "semiparse.transitions.registry": "semiparse.transitions.systems.registry",
    "semiparse.transitions.loading": "semiparse.transitions.systems.loading",
    "semiparse.transitions.stepping": "semiparse.transitions.systems.compiled",
    "semiparse.transitions.declared": "semiparse.transitions.systems.declared",
    "semiparse.transitions.declaration": "semiparse.transitions.systems.declared",
    "semiparse.transitions.system_file": "semiparse.transitions.systems.format.system_file",
    "semiparse.transitions.rules": "semiparse.transitions.systems.format.rules",
    "semiparse.transitions.completion": "semiparse.transitions.systems.format.completion",
    "semiparse.transitions.loops": "semiparse.transitions.systems.format.loops",
    "semiparse.transitions.limits": "semiparse.transitions.systems.format.limits",
    "semiparse.transitions._state": "semiparse.transitions.runtime._state",
    "semiparse.transitions._machine": "semiparse.transitions.runtime._machine",
    "semiparse.transitions._lr_spine_moves": "semiparse.transitions.runtime._lr_spine_moves",
    "semiparse.transitions._configuration": "semiparse.transitions.runtime._configuration",
    "semiparse.transitions._validation": "semiparse.transitions.runtime._validation",
    # not semiparse.transitions.oracle: that name is the function oracle(), and
    # importing a forwarding module there would replace it
    "semiparse.oracles.oracle": "semiparse.transitions.oracles.oracle",
    "semiparse.transitions.gold": "semiparse.transitions.oracles.gold",
    "semiparse.transitions.grammar_path": "semiparse.transitions.oracles.grammar_method",
    "semiparse.transitions._grammar_rows": "semiparse.transitions.oracles._grammar_rows",
    "semiparse.transitions.exhaustive": "semiparse.transitions.oracles.exhaustive",
    "semiparse.transitions._exhaustive": "semiparse.transitions.oracles._exhaustive",
    "semiparse.transitions._memo": "semiparse.transitions.oracles._memo",
    "semiparse.transitions.static": "semiparse.transitions.oracles.static",
    "semiparse.transitions.viability": "semiparse.transitions.oracles.viability",
    "semiparse.transitions.family": "semiparse.transitions.oracles.protocol",
    "semiparse.transitions._rows": "semiparse.transitions.oracles._row_kernels",
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

EXTRA = {"semiparse.train.evaluate": ("semiparse.perceptron.calibration",),  # calibration
         "semiparse.train.trainer": ("semiparse.training.trees", "semiparse.training.loop",
                                     "semiparse.errors"),  # prepare's helpers, bar_off, DeadEndWarning
         "semiparse.constituency.checking": ("semiparse.cli._constituent_check",),  # run
         "semiparse.queries.labels": ("semiparse.chart.engine",),  # parse_labelled
         "semiparse.engine": ("semiparse.chart.inputs", "semiparse.chart.score_shift",
                              "semiparse.chart.generic", "semiparse.chart.batch",
                              "semiparse.chart.result")}


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

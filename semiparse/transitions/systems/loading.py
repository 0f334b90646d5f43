"""Loading transition systems: by shipped or registered name, system file
(read by :mod:`semiparse.transitions.systems.declared` into a
:class:`~semiparse.transitions.systems.declared.RewriteSystem`), or ``module:attr``;
the definitions' fingerprints, and the oracle methods bound to shipped
definitions."""
import copyreg
import os
import re
from pathlib import Path

from semiparse.resources import data_dir
from semiparse.transitions.systems.declared import RewriteSystem
from semiparse.transitions.oracles.grammar_method import MASKED_MIN_SIZE, masked_method
from semiparse.transitions.systems.interface import SystemProtocol, TransitionSystem
from semiparse.transitions.systems.registry import Method, lookup_system, register_method, registered_systems
from semiparse.transitions.systems.format.system_file import is_file, parse_text, read_system_file


_SYSTEM_CACHE = {}


def _reduced(system):
    """A declared system pickles (and deep-copies) as its definition: the
    rules it compiled to functions do not pickle.  It comes back a new
    system, the shipped one's twin where it is the shipped definition."""
    return system_from_text, (system.text, system.path, system.grammar_text)


copyreg.pickle(RewriteSystem, _reduced)


def _shipped(name):
    """The shipped system ``systems/NAME.toml`` (loaded once), or None."""
    if name not in _SYSTEM_CACHE:
        path = data_dir("systems") / f"{name}.toml"
        if not (name.isidentifier() and is_file(path)):
            return None
        _SYSTEM_CACHE[name] = _from_file(path, shipped=True)
    return _SYSTEM_CACHE[name]


_MODULE_ATTR = re.compile(r"^([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)$")


def load_system(spec, grammar_file=None):
    """A transition system: a registered or shipped name, a TOML path,
    ``module:attr`` (a system object, e.g. a :class:`TransitionSystem` instance,
    found by importing ``module`` and following the dotted ``attr``), or a
    system.  Anything else is a ValueError saying what was expected.
    ``grammar_file``: a TOML path's completion grammar, read instead of the
    file its ``[completion]`` names (which need not exist); a system given
    otherwise has its own."""
    if isinstance(spec, TransitionSystem):
        return spec
    if isinstance(getattr(spec, "definition", None), TransitionSystem):  # semiparse.system(...)
        return spec.definition
    if isinstance(spec, SystemProtocol):  # a constituent system
        return spec
    text_name = str(spec)
    registered = lookup_system(text_name)
    if registered is not None:
        return registered
    m = _MODULE_ATTR.match(text_name)
    if m and not is_file(Path(text_name)):
        return _imported(text_name, *m.groups())
    if "/" not in text_name and not text_name.endswith(".toml"):
        system = _shipped(text_name)
        if system is None:
            raise ValueError(f"unknown transition system {text_name!r}: expected one of "
                             f"{', '.join(available_systems())}, a .toml file or module:attr")
        return system
    path = Path(text_name)
    if not is_file(path):
        raise ValueError(f"{text_name}: is a directory, not a transition system file" if path.is_dir()
                         else f"no transition system file {text_name!r}")
    return _from_file(path, grammar_file=grammar_file)


def definition_files(spec):
    """The files a system spec reads: its TOML file and the completion
    grammar that file names, where ``spec`` is a path to one (none for a
    name or ``module:attr``); a file that does not load gives its path
    alone (loading it says what is wrong).  For commands that refuse to
    write over their inputs."""
    if not isinstance(spec, (str, os.PathLike)) or not is_file(Path(spec)):
        return []
    try:
        system = load_system(spec)
    except ValueError:
        return [str(spec)]
    grammar = getattr(getattr(system, "completion_spec", None), "grammar_file", None)
    return [str(spec)] + ([str(grammar)] if grammar is not None else [])


def _imported(spec, module, attr):
    """The system object ``attr`` of ``module`` (see :func:`load_system`)."""
    import importlib

    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"transition system {spec!r}: cannot import module {module!r} "
                         f"({exc})") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"transition system {spec!r}: module {module!r} has no "
                             f"attribute {attr!r}")
        obj = getattr(obj, part)
    if not isinstance(obj, (TransitionSystem, SystemProtocol)):
        raise ValueError(f"transition system {spec!r}: {attr} is of type {type(obj).__name__}, "
                         f"not a transition system (expected a TransitionSystem instance, e.g. "
                         f"from load_system)")
    return obj


def available_systems(kind=None):
    """Names of the shipped and registered systems; of ``kind`` only, if
    given (``"dependency"``: the system files and the registered dependency
    definitions; ``"constituent"``: ``top_down`` and ``in_order``)."""
    if kind not in (None, "dependency", "constituent"):
        raise ValueError(f"unknown kind of system {kind!r}: expected 'dependency' or 'constituent'")
    shipped = [p.name[:-5] for p in data_dir("systems").iterdir() if p.name.endswith(".toml")]
    return sorted(set(shipped if kind in (None, "dependency") else ()) | set(registered_systems(kind)))


def system_from_text(text, where, grammar_text=None):
    """A declared system rebuilt from its TOML text (e.g. the copy a model
    records); ``where`` names it in error messages.  Its completion grammar is
    ``grammar_text`` if given (the copy recorded with it), else looked for as
    a system file's would be."""
    return _build(where, *parse_text(text, where), grammar_text=grammar_text)


def definition_sha256(system):
    """The sha256 (hex) of a declared system's parsed definition, so that
    formatting, comments and key order do not count; None for a system
    written in Python."""
    import hashlib
    import json

    if not isinstance(system, RewriteSystem):
        return None
    normal = json.dumps(system.declaration.data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def _from_file(path, shipped=False, grammar_file=None):
    """Load a system file (see :func:`_build`)."""
    text, data = read_system_file(path)
    return _build(path, text, data, shipped, grammar_file=grammar_file)


def _build(path, text, data, shipped=False, grammar_text=None, grammar_file=None):
    """The system of a parsed definition.  Registered oracle methods are bound
    to definitions, never to names alone: a shipped file registers its
    ``projective_masked`` method (exact for every gold tree, rank 90, used by
    ``auto`` from k + m = ``MASKED_MIN_SIZE`` on) and gets every method
    registered under its name; another definition gets them only
    if it is the same (the same parsed content and completion grammar) as the
    shipped file of its name, else only its own ``projective_masked``."""
    name = data.get("name")
    twin = None if shipped or not isinstance(name, str) else _shipped(name)
    system = RewriteSystem(path, text, data, grammar_text, shipped, twin, grammar_file)
    if system.projective_form:
        if shipped:
            register_method(system.name, "projective_masked", masked_method(system), ("none",),
                            projective_only=False, rank=90, min_size=MASKED_MIN_SIZE)
        elif system.method_key is None:
            system.own_methods = {"projective_masked": Method(
                system.name, "projective_masked", masked_method(system), ("none",), False, 90.0,
                MASKED_MIN_SIZE)}
    return system

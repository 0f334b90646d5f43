"""One family of errors: every public error derives from SemiparseError."""
import ast
import inspect
import warnings
from pathlib import Path

import pytest

import semiparse
from semiparse import errors
from semiparse.treebank.brackets import TreeError
from semiparse.grammar import Grammar, GrammarError, GrammarWarning
from semiparse.treebank.data import read_trees
from semiparse.treebank.scoring import ScorerRefused
from semiparse.perceptron.model import ModelError
from semiparse.errors import DeadEndWarning
from semiparse.transitions.systems.format.system_file import SystemFileError
from semiparse.treebank.conllu import ConlluError, UnknownHead
from semiparse.treebank.encoding import EncodingError
from semiparse.treebank.outputs import OutputError
from semiparse.treebank.projectivity import NoProjectiveTree, TreeTooLarge
from semiparse.cli import UserError

PACKAGE = Path(semiparse.__file__).parent

PUBLIC_ERRORS = [GrammarError, ConlluError, UnknownHead, OutputError, EncodingError,
                 NoProjectiveTree, TreeTooLarge, SystemFileError, TreeError, ModelError,
                 ScorerRefused, UserError]


def _family(module):
    return {name: value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, (BaseException, Warning))
            and value.__module__ == module.__name__}


def test_the_old_names_are_the_classes_of_the_family():
    family = _family(errors)
    for cls in PUBLIC_ERRORS:
        assert family[cls.__name__] is cls
        assert issubclass(cls, errors.SemiparseError)
    for cls in (GrammarWarning, DeadEndWarning):
        assert family[cls.__name__] is cls and issubclass(cls, errors.SemiparseWarning)
    from semiparse.testing.constituent_checking import ConstituentMismatch
    assert issubclass(ConstituentMismatch, (errors.SemiparseError, AssertionError))
    assert semiparse.SemiparseError is errors.SemiparseError
    assert semiparse.SemiparseWarning is errors.SemiparseWarning


def test_errors_about_values_stay_value_errors():
    for cls in PUBLIC_ERRORS:
        if cls is not UserError:
            assert issubclass(cls, ValueError), cls


def test_no_module_defines_a_public_error_of_its_own():
    """Exceptions and warnings are defined in semiparse/errors.py only (a
    leading underscore marks a private one; the mismatches of `check` are
    reports that mix in the family)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "errors.py" and path.parent == PACKAGE or "_vendor" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {ast.unparse(base) for base in node.bases}
                if bases & {"Exception", "ValueError", "RuntimeError", "TypeError", "UserWarning",
                            "Warning", "AssertionError", "KeyError", "BaseException"}:
                    if "SemiparseError" not in bases and "SemiparseWarning" not in bases:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.name}")
    assert found == []


def test_every_warning_names_a_category_of_the_family():
    """A bare warnings.warn(message) is a UserWarning, outside the family:
    every call names a SemiparseWarning subclass, or DeprecationWarning for
    the old names and paths kept for one release."""
    family = {name for name, value in _family(errors).items() if issubclass(value, Warning)}
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_vendor" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn" and ast.unparse(node.func.value) == "warnings"):
                category = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "category"), None)
                name = ast.unparse(category) if category is not None else "UserWarning"
                if name not in family | {"DeprecationWarning"}:
                    bare.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}")
    assert bare == []


def test_one_except_clause_catches_what_the_api_raises(tmp_path):
    with pytest.raises(errors.SemiparseError, match=r"^<string>:1"):
        Grammar.from_text("this is not a grammar")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\t_\t_\t_\t_\tX\troot\t_\t_\n\n")
    with pytest.raises(errors.SemiparseError, match=rf"^{bad}:1: "):
        read_trees(bad)


def test_grammar_warnings_are_semiparse_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Grammar.from_text("start S\n(S, S) -> s\nS -> (S, S)\nT -> (S, S)\n")
    assert caught and all(issubclass(w.category, errors.SemiparseWarning) for w in caught)

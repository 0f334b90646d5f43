"""The package's layout: layers without upward imports or cycles (the check
that CI runs, and that the check finds what it should), the previous module
paths with their DeprecationWarning, and the optional ``plot`` extra."""
import importlib
import subprocess
import sys
import warnings

import pytest

import semiparse
from semiparse.cli import main
from semiparse.testing import imports


def test_the_package_has_no_upward_import_and_no_cycle(tmp_path):
    done = subprocess.run([sys.executable, "-m", "semiparse.testing.imports", "--graph"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    graph = dict(line.split(" -> ") for line in done.stdout.splitlines() if " -> " in line)
    assert "semiparse.chart.engine [chart]" in graph
    assert "semiparse.chart.inputs" in graph["semiparse.queries.marginals [queries]"]
    assert done.stdout.splitlines()[-1].endswith("0 private, 0 upward, 0 cycles")


def test_the_check_finds_upward_imports_and_cycles():
    edges = {"semiparse.chart.engine": {"semiparse.queries.labels"},
             "semiparse.queries.labels": {"semiparse.chart.engine"},
             "semiparse.heads": {"semiparse.grammar"}, "semiparse.grammar": set(),
             "semiparse.cli": {"semiparse"}, "semiparse": set(),
             "semiparse.perceptron.trainer": {"semiparse"}}
    assert imports.upward(edges) == [("semiparse.chart.engine", "semiparse.queries.labels"),
                                     ("semiparse.perceptron.trainer", "semiparse")]
    assert imports.cycles(edges) == [["semiparse.chart.engine", "semiparse.queries.labels"]]
    assert imports.cycles({"semiparse.chart": {"semiparse.chart.engine"},
                           "semiparse.chart.engine": {"semiparse.chart"}}) == []  # a package and its module
    with pytest.raises(ValueError, match="in no layer"):
        imports.layer_of("semiparse.nowhere")


def test_the_check_finds_private_imports_of_the_chart():
    edges = {"semiparse.queries.marginals": {"semiparse.chart._inside", "semiparse.chart.kernels"},
             "semiparse.transitions._grammar_rows": {"semiparse.chart.cky"},
             "semiparse.chart.engine": {"semiparse.chart._inside"},
             "semiparse.chart": {"semiparse.chart._layout"},
             "semiparse.bench.engine": {"semiparse.transitions._machine"}}
    assert imports.private(edges) == [("semiparse.queries.marginals", "semiparse.chart._inside")]


def test_the_check_reads_lazy_and_cython_imports(tmp_path):
    root = tmp_path / "semiparse"
    (root / "chart").mkdir(parents=True)
    (root / "queries").mkdir()
    for name in ("__init__.py", "chart/__init__.py", "queries/__init__.py", "queries/labels.py"):
        (root / name).write_text("")
    (root / "chart" / "engine.py").write_text("def f():\n    from semiparse.queries.labels import x\n")
    (root / "chart" / "_inside.pyx").write_text("from semiparse.queries cimport labels\n")
    edges = imports.graph(root)
    assert edges["semiparse.chart.engine"] == {"semiparse.queries.labels"}
    assert edges["semiparse.chart._inside"] == {"semiparse.queries.labels"}


def test_the_check_reads_imports_by_name(tmp_path):
    root = tmp_path / "semiparse"
    for folder in ("chart", "queries", "experiments"):
        (root / folder).mkdir(parents=True)
    for name in ("__init__.py", "chart/__init__.py", "queries/__init__.py", "queries/labels.py",
                 "queries/sampling.py", "experiments/one.py", "experiments/two.py"):
        (root / name).write_text("")
    (root / "chart" / "engine.py").write_text(
        "import importlib\ndef f():\n    importlib.import_module('semiparse.queries.labels')\n")
    (root / "chart" / "plugins.py").write_text(
        "from importlib import import_module\nPLUGINS = ('semiparse.queries.sampling',)\n"
        "def load():\n    for m in PLUGINS:\n        import_module(m)\n")
    (root / "chart" / "prefix.py").write_text(
        "import importlib\ndef f(x):\n    return importlib.import_module(f'semiparse.queries.{x}')\n")
    (root / "experiments" / "__init__.py").write_text(
        "import importlib\ndef f(x):\n    return importlib.import_module(f'{__name__}.{x}')\n")
    edges = imports.graph(root)
    assert edges["semiparse.chart.engine"] == {"semiparse.queries.labels"}
    assert edges["semiparse.chart.plugins"] == {"semiparse.queries.sampling"}
    assert edges["semiparse.chart.prefix"] == {"semiparse.queries"}
    assert edges["semiparse.experiments"] == {"semiparse.experiments.one", "semiparse.experiments.two"}
    assert ("semiparse.chart.plugins", "semiparse.queries.sampling") in imports.upward(edges)


@pytest.mark.parametrize("old, new, name", [
    ("semiparse.engine", "semiparse.chart.engine", "parse"),
    ("semiparse.engine", "semiparse.chart.inputs", "real_array"),
    ("semiparse.conllu_io", "semiparse.treebank.conllu", "read_conllu"),
    ("semiparse.projectivity", "semiparse.treebank.projectivity", "projectivize"),
    ("semiparse.oracles", "semiparse.transitions", "oracle"),
    ("semiparse.oracles.fast.arc_standard", "semiparse.transitions.fast.arc_standard", "__doc__"),
    ("semiparse.oracles.checking", "semiparse.testing.checking", "check"),
    ("semiparse.queries.labels", "semiparse.chart.engine", "parse_labelled"),
    ("semiparse.chart.shift", "semiparse.chart.score_shift", "shifted"),
    ("semiparse.commands.count", "semiparse.cli.count", "add_parser"),
    ("semiparse.train", "semiparse.perceptron", "Trainer"),
    ("semiparse.train.model", "semiparse.perceptron.model", "Model"),
    ("semiparse.train.trainer", "semiparse.perceptron.trainer", "Trainer"),
    ("semiparse.train.trainer", "semiparse.training.trees", "prepare"),
    ("semiparse.train.trainer", "semiparse.training.loop", "bar_off"),
    ("semiparse.train.data", "semiparse.treebank.data", "read_trees"),
    ("semiparse.train.evaluate", "semiparse.treebank.scoring", "attachment_scores"),
    ("semiparse.train.evaluate", "semiparse.perceptron.calibration", "calibration"),
    ("semiparse.transitions.registry", "semiparse.transitions.systems.registry", "register_method"),
    ("semiparse.transitions.declaration", "semiparse.transitions.systems.declared", "Declaration"),
    ("semiparse.transitions.stepping", "semiparse.transitions.systems.compiled", "System"),
    ("semiparse.transitions.api", "semiparse.transitions.systems.compiled", "System"),
    ("semiparse.transitions.system_file", "semiparse.transitions.systems.format.system_file",
     "SystemFileError"),
    ("semiparse.transitions.grammar_path", "semiparse.transitions.oracles.grammar_method",
     "grammar_scores"),
    ("semiparse.transitions.family", "semiparse.transitions.oracles.protocol", "DynamicOracle"),
    ("semiparse.transitions._configuration", "semiparse.transitions.runtime._configuration",
     "Configuration"),
    ("semiparse.oracles.oracle", "semiparse.transitions.oracles.oracle", "Oracle"),
    ("semiparse.constituency.systems", "semiparse.transitions.constituent.systems", "TopDown"),
    ("semiparse.constituency.dynamic", "semiparse.transitions.constituent.oracle", "Oracle"),
    ("semiparse.constituency.dynamic", "semiparse.transitions.constituent.oracle", "Gold"),
    ("semiparse.constituency.exhaustive", "semiparse.transitions.constituent.exhaustive", "Search"),
    ("semiparse.constituency.trees", "semiparse.treebank.brackets", "read_ptb"),
    ("semiparse.constituency.evaluation", "semiparse.treebank.evalb", "evaluate"),
])
def test_previous_module_paths_warn_and_give_the_same_objects(old, new, name):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:   # a moved parent package warns too
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert any(issubclass(w.category, DeprecationWarning) and f"{old} has moved to" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.import_module(new)  # the new paths warn about nothing


def test_the_public_api_is_unchanged():
    assert sorted(semiparse.__all__) == sorted([
        "Grammar", "GrammarError", "ParseResult", "count_optimal_projectivizations", "count_projective",
        "SemiparseError", "SemiparseWarning", "entropy", "expected", "is_projective", "load_grammar", "marginals", "max_marginals",
        "oracle", "parse", "parse_labelled", "projectivize", "sample", "system", "__version__"])
    for name in semiparse.__all__:
        assert getattr(semiparse, name) is not None


def test_plot_without_matplotlib_says_which_extra(tmp_path, capsys, monkeypatch):
    source = tmp_path / "in.conllu"
    source.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert main(["count", "--plot", str(tmp_path / "plot.png"), str(source)]) == 2
    assert "--plot needs matplotlib: pip install 'semiparse[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "plot.png").exists()


def test_the_check_knows_installed_extensions_without_their_sources(tmp_path):
    """An installed copy has heads/_checks.so but no _checks.pyx: an import
    of it is an import of that module, not of the package above it."""
    root = tmp_path / "semiparse"
    (root / "heads").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "heads" / "_checks.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (root / "heads" / "__init__.py").write_text("from semiparse.heads._checks import is_tree\n")
    edges = imports.graph(root)
    assert edges["semiparse.heads"] == {"semiparse.heads._checks"}
    assert imports.upward(edges) == []


def test_one_oracle_entry_for_dependency_and_constituent_systems():
    from semiparse.transitions.constituent.oracle import Oracle as ConstituentOracle
    from semiparse.transitions import Oracle

    assert isinstance(semiparse.oracle("arc_hybrid", method="grammar"), Oracle)
    for name in ("top_down", "in_order"):
        assert isinstance(semiparse.oracle(name), ConstituentOracle)
        assert semiparse.oracle(name, chain="general").name == name
        with pytest.raises(ValueError, match="has no strategies or methods"):
            semiparse.oracle(name, strategy="lbr")
    with pytest.raises(ValueError, match="unknown options chain"):
        semiparse.oracle("arc_standard", chain="lis")


def test_get_system_is_a_deprecated_name_of_load_system():
    from semiparse.transitions import get_system, load_system

    with pytest.warns(DeprecationWarning, match="get_system is load_system"):
        assert get_system("arc_standard") is load_system("arc_standard")

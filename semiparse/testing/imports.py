"""The package's import graph, its layers, and the check that they hold.

``python -m semiparse.testing.imports`` prints every module's imports of
other semiparse modules (``--graph``), then each import that goes up a layer
and each import cycle, and exits with status 1 if there is any.  Imports
inside functions count as well: a lazy import still ties the two modules,
and so does an import by name (``importlib.import_module``, see
:func:`by_name`).

Layers, lowest first; a module may import its own layer and those below:

1. basics: ``errors``, ``heads`` (its C checks in ``heads._checks``), ``semiring``, ``grammar``,
   ``resources``, ``_support`` (threads, seeds), ``_vendor``
2. ``chart``: the engine
3. ``queries``: marginals, expectations, samples, labels
4. ``treebank``: CoNLL-U, projectivization, encodings, outputs
5. ``transitions``: configurations, systems, oracles
6. parsers: ``training`` (what every trainer shares), ``perceptron``, ``constituency``,
   ``neural``, ``torch``
7. tools: ``cli``, ``bench``, ``experiments``, ``testing``, ``__main__``

``semiparse`` itself (``__init__``) only names the public API lazily, and
``_support.moved`` forwards the previous layout's paths to today's modules: both
stand above every layer, and the
tools may import ``semiparse`` (``semiparse.__version__``, ``semiparse.parse``), as a
user's program does.

The private modules (a leading underscore) of a sealed package, ``chart``,
are imported and cimported only inside it: other modules reach its kernels
through ``semiparse.chart.kernels`` (Python) and ``semiparse/chart/cky.pxd``
(C), so that the kernels can move between its modules.
"""
import argparse
import ast
import re
import sys
from pathlib import Path

LAYERS = (
    ("basics", ("errors", "heads", "semiring", "grammar", "resources", "_support", "_vendor")),
    ("chart", ("chart",)),
    ("queries", ("queries",)),
    ("treebank", ("treebank",)),
    ("transitions", ("transitions",)),
    ("parsers", ("training", "perceptron", "constituency", "neural", "torch")),
    ("tools", ("cli", "bench", "experiments", "testing", "__main__")),
)
TOP = "semiparse"
MOVED = "semiparse._support.moved"  # the old paths: part of the public API, above every layer
SEALED = ("semiparse.chart",)
CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+([\w, ()]+)|c?import\s+([\w.]+))", re.M)


def layer_of(module):
    """``(rank, name)`` of a dotted module name's layer."""
    if module in (TOP, MOVED):
        return len(LAYERS), "semiparse"
    first = module.split(".")[1]
    for rank, (name, members) in enumerate(LAYERS):
        if first in members:
            return rank, name
    raise ValueError(f"{module}: in no layer (add its folder to LAYERS in {__name__})")


def module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name, modules):
    """The longest prefix of ``name`` that is a module of the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _loads_by_name(node):
    """Whether ``node`` calls ``importlib.import_module``, ``import_module``
    or ``__import__``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "import_module"
            or isinstance(f, ast.Name) and f.id in ("import_module", "__import__"))


def by_name(tree, name):
    """The modules a file may import by name (``importlib.import_module``):
    the argument where it is a string or an f-string starting with one or
    with ``{__name__}`` (every module under that prefix), and, where it is
    anything else, every string in the file that names a semiparse module
    (a table of module names that the call walks).  A few extra names cost
    nothing; a missed upward import is what the check is for."""
    calls = [node for node in ast.walk(tree) if _loads_by_name(node) and node.args]
    if not calls:
        return set()
    found = set()
    for call in calls:
        arg = call.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
        elif isinstance(arg, ast.JoinedStr) and arg.values:
            head = arg.values[0]
            if isinstance(head, ast.Constant):
                found.add(str(head.value).rstrip("."))
            elif (isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name)
                  and head.value.id == "__name__"):
                found.add(name + ".*")
        else:
            found.update(node.value for node in ast.walk(tree)
                         if isinstance(node, ast.Constant) and isinstance(node.value, str)
                         and re.fullmatch(rf"{TOP}(\.\w+)+", node.value))
    return found


def imported(path, name, modules):
    """The semiparse modules that the file at ``path`` imports."""
    text = path.read_text(encoding="utf-8")
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found = set()

    def add(target, names=()):
        if not target.startswith(TOP):
            return
        if target.endswith(".*"):  # every module below a package
            found.update(m for m in modules if m.startswith(target[:-1]))
            return
        for leaf in names:  # "from semiparse.chart import kernels" imports a module
            if f"{target}.{leaf}" in modules:
                found.add(f"{target}.{leaf}")
                break
        else:
            hit = _resolve(target, modules)
            if hit:
                found.add(hit)

    if path.suffix == ".py":
        tree = ast.parse(text, str(path))
        for target in by_name(tree, name):
            add(target)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for alias in node.names:
                    add(base, [alias.name])
    else:  # Cython: import and cimport lines
        for m in CIMPORT.finditer(text):
            if m.group(1):
                names = [x.strip() for x in m.group(2).replace("(", "").replace(")", "").split(",")]
                for leaf in names:
                    add(m.group(1), [leaf.split()[0]] if leaf else [])
            else:
                add(m.group(3))
    found.discard(name)
    return found


def graph(root):
    """``{module: set of imported modules}`` of every module under ``root``."""
    files, compiled = {}, set()
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        if path.suffix in (".py", ".pyx", ".pxd"):
            files.setdefault(module_name(path, root), []).append(path)
        elif path.suffix in (".so", ".pyd"):  # an installed extension, without its .pyx
            compiled.add(module_name(path.with_name(path.name.split(".")[0] + ".py"), root))
    modules = set(files) | compiled
    edges = {name: set().union(*(imported(p, name, modules) for p in paths))
             for name, paths in files.items()}
    for name in compiled - set(files):
        edges[name] = set()  # its imports are in the .pyx, which an installed copy lacks
    return edges


def upward(edges):
    """``(importer, imported)`` pairs that go up a layer (the tools may use
    the public API, ``semiparse`` itself)."""
    tools = len(LAYERS) - 1
    return [(a, b) for a in sorted(edges) for b in sorted(edges[a])
            if layer_of(b)[0] > layer_of(a)[0] and not (b == TOP and layer_of(a)[0] == tools)]


def private(edges):
    """``(importer, imported)`` pairs where a module outside a sealed package
    imports one of its private modules."""
    out = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            for package in SEALED:
                inside = a == package or a.startswith(package + ".")
                leaf = b[len(package) + 1:].split(".")[0] if b.startswith(package + ".") else ""
                if not inside and leaf.startswith("_") and not leaf.startswith("__"):
                    out.append((a, b))
    return out


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan),
    each sorted; a package importing its own submodules is no cycle."""
    def tie(a, b):  # a module and its parent package are one unit
        return not (b.startswith(a + ".") or a.startswith(b + "."))

    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if not tie(v, w):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m semiparse.testing.imports",
                                     description="Check semiparse's import layers and cycles.")
    parser.add_argument("--graph", action="store_true", help="print every module's imports first")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    edges = graph(root)
    if args.graph:
        for name in sorted(edges):
            print(f"{name} [{layer_of(name)[1]}] -> {', '.join(sorted(edges[name])) or '-'}")
    up, loops, hidden = upward(edges), cycles(edges), private(edges)
    for a, b in hidden:
        print(f"private import: {a} imports {b} (use its package's public modules)")
    for a, b in up:
        print(f"upward import: {a} [{layer_of(a)[1]}] imports {b} [{layer_of(b)[1]}]")
    for loop in loops:
        print(f"import cycle: {' <-> '.join(loop)}")
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports, "
          f"{len(hidden)} private, {len(up)} upward, {len(loops)} cycles")
    return 1 if up or loops or hidden else 0


if __name__ == "__main__":
    sys.exit(main())

"""The package's import graph: layers that import only downward, and no circle (issue 30).

Every ``import`` of the package's own modules counts, at module level or inside a function (an
import deferred into a function still ties the two modules together). The layers, lowest first:

- the base modules (errors, outputs, seeds, rng, stats, progress, ...), which import no layer above;
- ``compute`` (tasks, cache, executors), which imports neither model;
- the models ``rising`` and ``commit``, which do not import each other;
- ``experiments`` (grids and figure builders over the models), ``claims``, ``plotting`` and ``testing``
  (the helpers tests and notebooks use to compare kernels with references);
- ``workbook`` and ``cli``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import horizonbandits

PACKAGE = Path(horizonbandits.__file__).parent
LAYERS = {"compute": 1, "rising": 2, "commit": 2, "experiments": 3, "claims": 3, "plotting": 3, "testing": 3,
          "workbook": 4, "cli": 4}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The package's modules that ``path`` imports (a ``from X import name`` that names a submodule
    counts as that submodule)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    for block in [n for n in ast.walk(tree) if isinstance(n, ast.If) and _is_type_checking(n.test)]:
        block.body = []  # imports for type hints only never run
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("horizonbandits")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("horizonbandits"):
                target = node.module
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    return {m for m in found if _exists(m)}


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    return LAYERS.get(top.removesuffix(".py"), 0)


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_a_circle_and_an_upward_import_would_be_seen(tmp_path):
    """The walker resolves relative imports, deferred ones, and skips type-checking blocks."""
    pkg = tmp_path / "horizonbandits"
    (pkg / "rising").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "rising" / "__init__.py").write_text("")
    (pkg / "rising" / "a.py").write_text("def f():\n    from ..workbook import x\n")
    (pkg / "workbook.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .rising import b\n")
    (pkg / "rising" / "b.py").write_text("from . import a\n")
    globals()["PACKAGE"] = pkg
    try:
        assert _imports(pkg / "rising" / "a.py") == {"horizonbandits.workbook"}
        assert _imports(pkg / "workbook.py") == set()
        assert _imports(pkg / "rising" / "b.py") == {"horizonbandits.rising.a"}
    finally:
        globals()["PACKAGE"] = Path(horizonbandits.__file__).parent


def test_no_import_runs_upward_and_the_models_stay_apart():
    bad = []
    for module, targets in _graph().items():
        for target in targets:
            if _layer(target) > _layer(module) or (
                    _layer(module) == 2 and _layer(target) == 2 and _top(module) != _top(target)):
                bad.append(f"{module} -> {target}")
    assert not bad, "imports against the layers: " + "; ".join(sorted(bad))


def test_the_import_graph_has_no_circle():
    graph = _graph()
    # a package's __init__ importing its own submodules is how a package is built, not a circle
    state, stack, circles = {}, [], []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt.startswith(node + "."):
                continue  # a package importing its own submodule
            if state.get(nxt) == 1:
                circles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not circles, "import circles: " + "; ".join(circles)


def test_the_graph_sees_deferred_imports():
    """The check reads imports inside functions too (the kind the old circles hid in)."""
    graph = _graph()
    assert "horizonbandits.compute.tasks" in graph["horizonbandits.commit.grid"]

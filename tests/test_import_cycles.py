"""No import cycles among the project's own modules (app.py, cli.py, models/, viz/, ui/, pages/).

The graph is read with ast, so it holds every import a module can run: at its top, inside
functions, in try blocks. Only imports under `if TYPE_CHECKING:` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("app.py", "cli.py", "models", "viz", "ui", "pages")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path, sources: tuple[str, ...] = SOURCES) -> dict[str, Path]:
    """Returns dotted name → file for every .py file under `sources` of `root`."""
    files: list[Path] = []
    for source in sources:
        path = root / source
        files += [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
    return {module_name(path, root): path for path in files}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str) -> set[str]:
    # Every dotted name an import statement of `tree` names, at any depth; for `from a import b`,
    # both "a" and "a.b" (b may be a submodule). Relative imports are resolved against `package`.
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph(root: Path, sources: tuple[str, ...] = SOURCES) -> dict[str, set[str]]:
    """Returns module → the project modules it imports (its own name never among them)."""
    modules = project_modules(root, sources)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        named = _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)), package)
        graph[name] = {target for target in named if target in modules and target != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Returns one import cycle as a path [a, b, …, a], or None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_project_has_no_import_cycle():
    graph = import_graph(ROOT)
    assert len(graph) > 50 and graph["ui.widgets"]  # the graph read the tree, not an empty folder
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    package = tmp_path / "models"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from models.b import helper\n")
    (package / "b.py").write_text("def helper():\n    from models import a\n    return a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import models.a\n")
    graph = import_graph(tmp_path, ("models",))
    assert graph["models.b"] == {"models", "models.a"} and graph["models.c"] == set()
    assert find_cycle(graph) == ["models.a", "models.b", "models.a"]


def test_a_relative_import_is_resolved(tmp_path):
    package = tmp_path / "viz"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("from .two import x\n")
    (package / "two.py").write_text("from . import one\nx = 1\n")
    assert find_cycle(import_graph(tmp_path, ("viz",))) == ["viz.one", "viz.two", "viz.one"]

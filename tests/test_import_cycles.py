"""No import cycles among the project's own modules (app.py, cli.py, models/, viz/, ui/, pages/), and
families are leaves (docs/ARCHITECTURE.md, "Folders and what they may import"): a module under
models/<family>/ never imports the registry (REGISTRY, or a core module that reaches it), and imports another
family's modules only for its task.py or where FAMILY_IMPORTS says why.

The graph is read with ast, so it holds every import a module can run: at its top, inside
functions, in try blocks. Only imports under `if TYPE_CHECKING:` are left out (they never run).
"""

from __future__ import annotations

import ast
from collections.abc import Collection
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


# Packages under models/ that are the shared core, not a family: every other package there is a family.
CORE_PACKAGES = ("heads",)
# What lists the families: a family that imports it asks the registry about itself.
REGISTRY = ("models.registry", "models.registry_lm", "models.registry_vit", "models.registry_variants",
            "models.registry_explanation", "models.registry_translation", "models.pages")
# (family, other family) → why the first imports the second beyond its task.py. Keep it short.
FAMILY_IMPORTS = {
    ("variants", "lm"): "RoPE is turned by the decoder LMs' apply_rope (models/lm/layers.py): one rotation in one place",
    ("variants", "playground"): "the variants are built on the Playground's q, k and v, read and checked by its records.py",
    ("corpus", "transformer"): "the corpus statistics run MiniLM's forward over many inputs",
    ("corpus", "lm"): "the corpus statistics run the decoder LMs' forward over many inputs",
    ("han", "transformer"): "the HAN's contextual word features are MiniLM's hidden states",
    ("induction", "lm"): "the attention-only induction model runs the decoder LMs' one forward (GPT-2 without biases "
                         "or MLPs) and their next-token loss",
    ("encdec", "seq2seq"): "the Transformer learns the RNNs' date task with their encoding and batches (config.py)",
    **{("attribution", family): "the attribution methods read each architecture's one forward and its runner"
       for family in ("lm", "transformer", "encdec")},
    **{("counterfactual", family): "the 2019 tests put another α into the Bahdanau model's or the HAN's own forward"
       for family in ("seq2seq", "han")},
    ("translation", "encdec"): "translation folders run the encoder–decoder forward's KindCapture and KindInterventions "
                               "(models/encdec/forward.py), so every view of the date model reads them",
    **{("explain", family): "the scoreboard scores the date models' α and the attribution methods against the dates' "
                            "true fields" for family in ("attribution", "encdec", "seq2seq")},
    ("attribution", "seq2seq"): "the date Transformer's inputs are the RNNs' date encoding and batches",
    **{("flow", family): "the information-flow graph splits the sums of each architecture's one forward into parts"
       for family in ("lm", "transformer", "encdec", "induction")},
}


def _imports(tree: ast.AST, package: str, modules: Collection[str] | None = None) -> set[str]:
    # Every dotted name an import statement of `tree` names, at any depth; for `from a import b`,
    # both "a" and "a.b" (b may be a submodule), or with `modules` only "a.b" when it is one of them.
    # Relative imports are resolved against `package`.
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
            named = {f"{base}.{alias.name}" for alias in node.names}
            submodules = named if modules is None else {name for name in named if name in modules}
            found |= submodules | ({base} if modules is None or named - submodules else set())
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph(root: Path, sources: tuple[str, ...] = SOURCES, *, precise: bool = False) -> dict[str, set[str]]:
    """Returns module → the project modules it imports (its own name never among them). precise: `from a
    import b` of a submodule b counts as importing a.b only (else a too: a's __init__ runs first)."""
    modules = project_modules(root, sources)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        named = _imports(tree, package, modules if precise else None)
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


def families(graph: dict[str, set[str]], core: tuple[str, ...] = CORE_PACKAGES) -> set[str]:
    """Returns the family names: the packages under models/ (those with modules of their own) not in `core`."""
    return {m.split(".")[1] for m in graph if m.startswith("models.") and m.count(".") >= 2} - set(core)


def _family_of(graph: dict[str, set[str]], core: tuple[str, ...]):
    names = families(graph, core)

    def family(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == "models" and parts[1] in names else None

    return family


def registry_imports(graph: dict[str, set[str]], core: tuple[str, ...] = CORE_PACKAGES) -> list[str]:
    """Returns "module -> module" for each import of a family module that reaches the registry: REGISTRY, or a
    core module that imports it directly or through others. graph: from import_graph(precise=True)."""
    family = _family_of(graph, core)
    above = set(REGISTRY)
    while grown := {m for m in graph if family(m) is None and m not in above and graph[m] & above}:
        above |= grown
    return [f"{m} -> {t}" for m in sorted(graph) if family(m) for t in sorted(graph[m] & above)]


def cross_family_imports(graph: dict[str, set[str]], core: tuple[str, ...] = CORE_PACKAGES,
                         allowed: dict[tuple[str, str], str] = FAMILY_IMPORTS) -> list[str]:
    """Returns "module -> module" for each import of a family module from another family, other than its
    task.py and the `allowed` (family, other family) pairs. graph: from import_graph(precise=True)."""
    family = _family_of(graph, core)
    return [f"{m} -> {t}" for m in sorted(graph) if family(m) for t in sorted(graph[m])
            if family(t) not in (None, family(m)) and t != f"models.{family(t)}.task" and (family(m), family(t)) not in allowed]


def test_the_project_has_no_import_cycle():
    graph = import_graph(ROOT)
    assert len(graph) > 50 and graph["ui.widgets"]  # the graph read the tree, not an empty folder
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _write_tree(root: Path, files: dict[str, str]) -> None:
    """Writes each file ({path under root: source}); every folder on its way is a package (an empty __init__.py)."""
    for name, source in files.items():
        path = root / name
        for package in reversed([p for p in path.parents if root in p.parents]):
            package.mkdir(exist_ok=True)
            (package / "__init__.py").touch()
        path.write_text(source)


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    _write_tree(tmp_path, {"models/a.py": "from models.b import helper\n",
                           "models/b.py": "def helper():\n    from models import a\n    return a\n",
                           "models/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import models.a\n"})
    graph = import_graph(tmp_path, ("models",))
    assert graph["models.b"] == {"models", "models.a"} and graph["models.c"] == set()
    assert find_cycle(graph) == ["models.a", "models.b", "models.a"]


def test_a_relative_import_is_resolved(tmp_path):
    _write_tree(tmp_path, {"viz/one.py": "from .two import x\n", "viz/two.py": "from . import one\nx = 1\n"})
    assert find_cycle(import_graph(tmp_path, ("viz",))) == ["viz.one", "viz.two", "viz.one"]


def test_no_family_asks_the_registry_about_itself():
    graph = import_graph(ROOT, precise=True)
    assert families(graph) >= {"transformer", "lm", "seq2seq", "corpus"}  # it read the families, not the core
    assert "heads" not in families(graph) and "models.heads.detectors" in graph
    assert registry_imports(graph) == []


def test_a_family_imports_another_only_where_the_table_says_why():
    graph = import_graph(ROOT, precise=True)
    assert cross_family_imports(graph) == []
    for (family, other), reason in FAMILY_IMPORTS.items():  # every exception is still needed and says why
        used = any(m.startswith(f"models.{family}.") and t.startswith(f"models.{other}.") for m in graph for t in graph[m])
        assert reason and used, f"FAMILY_IMPORTS: {family} no longer imports {other}; drop the entry"


def test_a_family_asking_the_registry_or_reaching_into_another_is_found(tmp_path):
    _write_tree(tmp_path, {
        "models/registry.py": "", "models/train.py": "import models.registry\n", "models/record.py": "",
        "models/heads/detectors.py": "from models import record\n", "models/beta/task.py": "", "models/beta/model.py": "",
        "models/alpha/records.py": "from models import record\nfrom models.heads import detectors\n"
                                   "from models.beta import task\ndef build():\n    from models.registry import mechanism_of\n",
        "models/alpha/train.py": "from models import train\nfrom .records import build\n",
        "models/alpha/model.py": "from models.beta.model import Net\n"})
    graph = import_graph(tmp_path, ("models",), precise=True)
    assert graph["models.alpha.records"] == {"models.record", "models.heads.detectors", "models.beta.task",
                                             "models.registry"}
    assert registry_imports(graph, core=("heads",)) == [
        "models.alpha.records -> models.registry", "models.alpha.train -> models.train"]
    assert cross_family_imports(graph, core=("heads",), allowed={}) == ["models.alpha.model -> models.beta.model"]
    assert cross_family_imports(graph, core=("heads",), allowed={("alpha", "beta"): "why"}) == []

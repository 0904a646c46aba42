"""Every pointer into the docs leads somewhere: a section named in a comment or doc, a link, an anchor.

Two kinds of pointer, in every file git tracks (code, Makefile, docs):
  quoted   `docs/PERFORMANCE.md, "The page"`: a heading of that file contains the quoted words
  link     `[text](docs/models/lm.md#parity)` in Markdown: the file exists and, with an anchor, one of
           its headings has that anchor (GitHub's rule: lower case, punctuation dropped, spaces → -)
The last tests feed the checker made-up text and show that each kind of broken pointer is reported.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUOTED = re.compile(r'(?:docs/)?((?:[A-Za-z_]+/)*[A-Z_]+\.md), "([^"]+)"')
LINK = re.compile(r"\]\(([^)\s]+)\)")
SCANNED = (".py", ".md", ".sh", ".toml", ".cfg", "Makefile", "run")


def headings(path: Path) -> list[str]:
    """Returns the Markdown headings of a file, without their #s."""
    return [line.lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")]


def anchor_of(heading: str) -> str:
    """Returns the anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_pointers(text: str, source: Path) -> list[str]:
    """Returns a line for each pointer in `text` (read from `source`) that leads nowhere."""
    broken = []
    for name, section in QUOTED.findall(text):
        section = re.sub(r"\s*\n\s*(?:#\s*)?", " ", section)  # a name wrapped over comment lines
        target = ROOT / "docs" / name
        if not target.is_file():
            broken.append(f'{source.name}: "{name}" is not a file under docs/')
        elif not any(section.lower() in heading.lower() for heading in headings(target)):
            broken.append(f'{source.name}: {name} has no heading "{section}"')
    if source.suffix == ".md":
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):  # http:, mailto:, …
                continue
            path, _, anchor = target.partition("#")
            dest = (source.parent / path).resolve() if path else source
            if not dest.exists():
                broken.append(f"{source.name}: link to {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in {anchor_of(h) for h in headings(dest)}:
                broken.append(f"{source.name}: link to {target}: no such heading")
    return broken


def tracked_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in names.split() if name.endswith(SCANNED) and (ROOT / name).is_file()
            and ROOT / name != Path(__file__).resolve()]  # this file's broken pointers are examples


def test_every_pointer_into_the_docs_leads_to_a_file_and_a_heading():
    files = tracked_files()
    assert len(files) > 100  # the scan read the tree, not an empty list
    broken = [line for path in files for line in broken_pointers(path.read_text(encoding="utf-8"), path)]
    assert not broken, "\n".join(broken)


def test_the_readme_and_the_performance_reference_stay_short():
    # A README a newcomer reads in one sitting; a reference, not a lab notebook (history lives in git).
    assert (ROOT / "README.md").stat().st_size <= 10_000
    assert (ROOT / "docs" / "PERFORMANCE.md").stat().st_size <= 40_000


def test_the_checker_reports_each_kind_of_broken_pointer():
    readme = ROOT / "README.md"
    assert broken_pointers('see docs/ARCHITECTURE.md, "The seams"', readme) == []
    assert broken_pointers("[perf](docs/PERFORMANCE.md#known-limits)", readme) == []
    assert broken_pointers('# docs/PERFORMANCE.md, "Known\n    # limits"', ROOT / "cli.py") == []
    assert broken_pointers('docs/ARCHITECTURE.md, "No such section"', readme) == [
        'README.md: ARCHITECTURE.md has no heading "No such section"']
    assert broken_pointers('docs/NOWHERE.md, "Tests"', readme) == ['README.md: "NOWHERE.md" is not a file under docs/']
    assert broken_pointers("[x](docs/nowhere.md)", readme) == ["README.md: link to docs/nowhere.md: no such file"]
    assert broken_pointers("[x](docs/PERFORMANCE.md#no-such-heading)", readme) == [
        "README.md: link to docs/PERFORMANCE.md#no-such-heading: no such heading"]
    # Links are read in Markdown only: a Python comment may hold brackets of its own.
    assert broken_pointers("x[0](nowhere)", ROOT / "cli.py") == []

"""No control characters in the tracked source: a raw TAB, BEL or backspace inside a string is what
Python made of an escape such as "\t" in "\text", "\a" in "\alpha" or "\b" in "\bar" written in a
non-raw string, and KaTeX then drew α as an error and \\text as "ext"."""

import subprocess

from tests.pages.conftest import ROOT

# Makefile recipes need their tabs; every other text file holds none.
TABS_ALLOWED = ("Makefile",)
TEXT_SUFFIXES = (".py", ".md", ".po", ".toml", ".cfg", ".sh", ".txt", ".json", ".yml", ".yaml", ".html", ".css")


def _tracked_text_files():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [n for n in names if n.endswith(TEXT_SUFFIXES) or n.split("/")[-1] in TABS_ALLOWED]


def control_characters(text: str, *, tabs: bool = False) -> list[tuple[int, str]]:
    """Returns (line, character) for every control character in `text` but the newline (and TAB if `tabs`)."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        for character in line:
            if (ord(character) < 32 or ord(character) == 127) and not (tabs and character == "\t"):
                found.append((number, repr(character)))
    return found


def test_no_tracked_text_file_holds_a_control_character():
    files = _tracked_text_files()
    assert any(name.startswith("pages/") for name in files)
    bad = {}
    for name in files:
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        found = control_characters(text, tabs=name.split("/")[-1] in TABS_ALLOWED)
        if found:
            bad[name] = found[:5]
    assert not bad, f"control characters (an unescaped \\t, \\a, \\b … in a LaTeX string?): {bad}"


def test_the_check_finds_what_python_makes_of_latex_in_a_plain_string():
    latex = "\alpha_{ij}, \bar h_s, \text{[CLS]}, \tau"  # what Python makes of it: BEL, BS, TAB, TAB
    assert len(control_characters(latex)) == 4
    assert control_characters(r"\alpha_{ij},\ \bar h_s, \text{[CLS]}, \tau") == []
    assert control_characters("a\tb", tabs=True) == []

"""LaTeX and markdown strings for a page's formulas: a registry formula one clause per line, a
row of formulas under their names, a small matrix. Strings only: no streamlit, no plotly."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np


def formula_lines(formula: str) -> str:
    """Returns a registry formula with one clause per line (a gathered block, small), for a column
    too narrow for the whole formula on one line: clauses are the parts joined by ",\\quad",
    ";\\quad" or ",\\ "."""
    clauses = formula.replace(r",\quad ", r",\\ ").replace(r";\quad ", r";\\ ").replace(r",\ ", r",\\ ")
    return r"\small\begin{gathered}" + clauses + r"\end{gathered}"


def formula_table(columns: Sequence[tuple[str, str]], *, row_label: str, prefix: str = "") -> str:
    """Returns a markdown table of one row: a header of names and, under each, its formula as inline
    LaTeX, with `prefix` (e.g. "\\operatorname{score}(s, h) = ") taken off where a formula starts with
    it and named once in the row's label cell. For a page's reference line of several formulas, drawn
    once outside the sections a control reruns (a changed formula costs ~18 ms of typesetting).

    columns: (name, LaTeX formula) pairs, left to right.
    """
    def text(value: str) -> str:  # a cell of prose: no markup, no column break
        return html.escape(value, quote=False).replace("|", "&#124;").replace("\n", " ")

    def math(formula: str) -> str:  # inline LaTeX, small, in braces (one unbroken line); a bar is \vert
        return r"${\small " + formula.removeprefix(prefix).replace("|", r"\vert ").replace("\n", " ") + "}$"

    lines = ["| " + " | ".join(["", *(text(name) for name, _ in columns)]) + " |",
             "|" + "---|" * (len(columns) + 1),
             "| " + " | ".join([text(row_label), *(math(f) for _, f in columns)]) + " |"]
    return "\n".join(lines)


def matrix_latex(name: str, matrix: np.ndarray, *, digits: int = 2) -> str:
    """Returns `name = [matrix]` as LaTeX (a bmatrix; a vector is one row), for a small parameter
    shown beside a formula: prose costs a rerun almost nothing, a table ~15 ms in the browser."""
    rows = np.atleast_2d(np.asarray(matrix, np.float64))
    if rows.ndim != 2:
        raise ValueError(f"matrix_latex takes a vector or a matrix, got shape {rows.shape}")
    body = r" \\ ".join(" & ".join(f"{x:.{digits}f}" for x in row) for row in rows)
    symbol = "".join(ch if ch.isalnum() else ("\\_" if ch == "_" else "") for ch in name)
    return rf"\mathtt{{{symbol}}} = \begin{{bmatrix}} {body} \end{{bmatrix}}"


def legend_table(rows: Sequence[tuple[str, ...]], *, headers: Sequence[str]) -> str:
    """Returns a formula's legend as a markdown table: one row per symbol, the symbol as inline LaTeX
    and the other cells as prose (what it is, its shape), under `headers` (one per column).

    rows: (LaTeX symbol, text, …) tuples with as many cells as `headers`; texts arrive translated.
    """
    def text(value: str) -> str:
        return html.escape(value, quote=False).replace("|", "&#124;").replace("\n", " ").replace("$", r"\$")

    if any(len(row) != len(headers) for row in rows):
        raise ValueError(f"every legend row needs {len(headers)} cells")
    lines = ["| " + " | ".join(text(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    for symbol, *cells in rows:
        lines.append("| " + " | ".join([r"$" + symbol.replace("|", r"\vert ") + r"$", *(text(c) for c in cells)]) + " |")
    return "\n".join(lines)


_QUERY_S = re.compile(r"(?<![\\A-Za-z])s(?![A-Za-z])")
_KEY_H = re.compile(r"(?<![\\A-Za-z])h(?![A-Za-z])")


def query_key_notation(formula: str) -> str:
    """Returns a score written with the papers' s (query) and h (key) in the general view's q and k:
    `\\operatorname{score}(s, h) = s^\\top h` → `\\operatorname{score}(q, k) = q^\\top k`. Only a lone
    s or h is renamed, never a letter of a command or a word (\\tanh, \\sqrt, softmax)."""
    return _KEY_H.sub("k", _QUERY_S.sub("q", formula))

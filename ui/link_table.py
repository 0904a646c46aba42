"""Links that reopen a table: the Playground's rows travel in the URL as compact JSON.

Split from ui/links.py (the bound controls), so each file stays short.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from ui.i18n import translator
from ui.links import LINK_TEXT_MAX, _link_cell, _opening_value, _remember


def linked_rows(key: str, default: list[dict[str, Any]], columns: tuple[str, ...], max_rows: int) -> list[dict[str, Any]]:
    """Returns the rows a table starts from: the link's (compact JSON under `key`) if it gives a
    usable list of at most max_rows rows with those columns, else `default` (with one line).

    The rows the link gave are kept for the session's later runs: a table widget's identity includes
    the data it starts from, so starting a later run from the default would reset the table and
    lose the link's rows and every edit made to them.
    """
    kept = f"_links_start_rows_{key}"
    raw = _opening_value(key)
    if not raw:
        return st.session_state.get(kept, default)
    try:
        rows = json.loads(raw[-1])
        if not isinstance(rows, list) or not 0 < len(rows) <= max_rows:
            raise ValueError
        rows = [{c: _cell(row[c]) for c in columns} for row in rows if isinstance(row, dict)] or default
        rows = _uniform_columns(rows, columns, default)
    except (ValueError, TypeError, KeyError, RecursionError):
        st.warning(translator()("The link's table is not one this page can read (at most {count} rows of {columns}); "
                                "the default table is shown.").format(count=max_rows, columns=", ".join(columns)),
                   icon=":material/link_off:")
        rows = default
    st.session_state[kept] = rows
    return rows


def _cell(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) and value is not None:
        raise ValueError
    return value[:100] if isinstance(value, str) else value


def _uniform_columns(rows: list[dict[str, Any]], columns: tuple[str, ...], default: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns the rows with one type per column, as a table widget needs (Arrow takes no column of
    text and numbers mixed, nor an int beyond 64 bits: the page broke on either, for the session).

    A column whose default cells are numbers holds floats, or, if the link put text in it that is
    no number, text throughout (the page's check then names the cell); other columns hold text.
    Empty cells stay None."""
    numeric = {c for c in columns if all(isinstance(r.get(c), (int, float)) for r in default)}
    out = [dict(row) for row in rows]
    for column in columns:
        cells = [row[column] for row in out]
        if column in numeric:
            cells = [_number_or_text(v) for v in cells]
            if any(isinstance(v, str) for v in cells):
                cells = [v if v is None or isinstance(v, str) else repr(v) for v in cells]
        else:
            cells = [None if v is None else str(v)[:100] for v in cells]
        for row, value in zip(out, cells):
            row[column] = value
    return out


def _number_or_text(value: Any) -> Any:
    if value is None:
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):  # text that is no number; an int beyond a float's range
        return str(value)[:100]


def link_rows(key: str, rows: list[dict[str, Any]], default: list[dict[str, Any]]) -> None:
    """Puts a table's rows into the URL (compact JSON) unless they are the default or too long.

    A cell the table cannot read (empty, not a number, infinite) is written as null, which reopens
    as an empty cell; a number as the shortest text that gives the same float32 (the precision the
    models compute in), so 0.1 goes as 0.1 and not 0.10000000149011612."""
    linked = [{column: _link_cell(value) for column, value in row.items()} for row in rows]
    text = json.dumps(linked, separators=(",", ":"), allow_nan=False, default=str) if rows != default else ""
    if text and len(text) <= LINK_TEXT_MAX:
        st.query_params[key] = text
    else:
        st.query_params.pop(key, None)
    _remember(key)

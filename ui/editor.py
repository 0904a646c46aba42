"""Table editors whose state a browser sends: whole-number indices and the check of a pending edit.

Split from ui/widgets.py (which re-exports both functions), so each file stays short.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from ui.i18n import translator


def index_or_none(value: Any, count: int) -> int | None:
    """Returns `value` as an int in 0..count-1 if it is a whole number there, else None (a value a
    browser sent: other text, a list, NaN, ±inf, a bool, 2.5 and out of range all give None; "3" is 3)."""
    if isinstance(value, bool):
        return None
    try:
        index = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if isinstance(value, float) and value != index:
        return None
    return index if 0 <= index < count else None


_CELL_TYPES = (str, int, float, bool, type(None))


def editor_key(key: str, rows: int, columns: Sequence[str], max_added: int) -> str:
    """Returns the key to draw a st.data_editor of `rows` starting rows under: `key`, or, after a
    pending edit the table cannot take, a fresh one (one line says so; the table starts again
    from its rows).

    A browser sends a table's edits as row positions and cells. Streamlit applies them before the
    page sees the table: a position past the table's end, an unknown column or a non-list raised
    there, and every added row cost more than the last (8,000 rows took 17 s). Only a scripted
    client sends such edits; a new key makes the browser drop them, where a reset state would be
    sent again with the next run.
    """
    generation = st.session_state.get(f"_editor_generation_{key}", 0)
    current = f"{key}_{generation}" if generation else key
    state = st.session_state.get(current)
    if state is None or _editable(state, rows, set(columns) | {"_index"}, max_added):
        return current
    st.session_state[f"_editor_generation_{key}"] = generation + 1
    _ = translator()
    st.warning(_("That edit of the table could not be applied (at most {count} added rows, cells of {columns} "
                 "only); the table starts again from its rows.").format(count=max_added, columns=", ".join(columns)),
               icon=":material/table:")
    return f"{key}_{generation + 1}"


def _editable(state: Any, rows: int, columns: set[str], max_added: int) -> bool:
    def cells(row: Any) -> bool:
        return isinstance(row, Mapping) and all(c in columns and isinstance(v, _CELL_TYPES) for c, v in row.items())

    if not isinstance(state, Mapping):
        return False
    edited, added, deleted = (state.get(name) or empty for name, empty in
                              (("edited_rows", {}), ("added_rows", []), ("deleted_rows", [])))
    return (isinstance(edited, Mapping) and isinstance(added, list) and isinstance(deleted, list)
            and len(added) <= max_added and all(cells(row) for row in added)
            and all(index_or_none(i, rows) is not None and cells(row) for i, row in edited.items())
            and all(isinstance(i, int) and index_or_none(i, rows) is not None for i in deleted))

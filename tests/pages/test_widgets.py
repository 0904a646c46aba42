"""ui.widgets: one-line errors with markdown specials escaped, and Export menus that offer a made image only for its own figure."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.markdown import MARKDOWN_SPECIALS, escape_markdown


@given(st.text(max_size=80))
def test_escaping_leaves_no_bare_special_and_unescapes_to_the_text(text):
    escaped = escape_markdown(text)
    assert re.sub(r"\\(.)", r"\1", escaped) == text  # CommonMark drops a backslash before punctuation
    bare = re.sub(r"\\.", "", escaped)
    assert not MARKDOWN_SPECIALS.search(bare)


def _show():
    from models.record import InputError
    from ui.widgets import show_input_error

    show_input_error(InputError("found columns: $x$, *stars*\nsecond line"))


def test_show_input_error_is_one_escaped_line():
    at = AppTest.from_function(_show).run()
    assert [e.value for e in at.error] == [r"found columns: \$x\$, \*stars\*"]


def _notices():
    from models.text import N_, Notice
    from ui.widgets import show_notice

    show_notice(None)
    show_notice("")
    # A notice may quote what the user typed: it shows as typed, never as markup.
    show_notice(Notice(N_("the CSV has no column {column}; its columns: {shown}"), column="'<img src=x onerror=alert(1)>'",
                       shown="$x$, *b*"), icon=":material/help:")


def test_show_notice_is_one_escaped_warning_and_nothing_for_none():
    at = AppTest.from_function(_notices).run()
    assert [w.value for w in at.warning] == [
        r"the CSV has no column '\<img src=x onerror=alert(1)\>'; its columns: \$x\$, \*b\*"]
    assert at.warning[0].icon == ":material/help:"


def _menu():
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    from models.record import AttentionRecord
    from ui.widgets import export_buttons

    sharp = st.session_state.get("sharp", False)  # a control that changes the figure, not the menu's key
    weights = np.array([[1, 0, 0], [0, 1, 0]], np.float32) if sharp else np.full((2, 3), 1 / 3, np.float32)
    record = AttentionRecord(mechanism="qkv-dot", weights=weights, axes=("query", "key"), query_labels=("a", "b"),
                             key_labels=("c", "d", "e"))
    export_buttons(record, go.Figure(go.Heatmap(z=weights)), key="menu", name="sharp" if sharp else "flat")


def test_a_made_image_is_offered_only_for_the_figure_it_was_made_from(monkeypatch):
    import ui.widgets

    made = []
    monkeypatch.setattr(ui.widgets, "image_export_available", lambda: (True, None))
    monkeypatch.setattr(ui.widgets, "figure_bytes", lambda fig, fmt: made.append(fig.data[0].z) or b"\x89PNG")
    at = AppTest.from_function(_menu)
    at.session_state["menu-menu"] = True  # the Export menu is open
    at.run()
    at.button(key="menu-make-svg").click().run()
    assert len(made) == 1 and "Save SVG" in [b.label for b in at.get("download_button")]
    at.session_state["sharp"] = True  # same menu, another figure: the old SVG is not offered under it
    at.run()
    labels = [b.label for b in at.get("download_button")] + [b.label for b in at.button]
    assert "Save SVG" not in labels and "SVG (vector)" in labels
    at.button(key="menu-make-svg").click().run()
    assert len(made) == 2 and np.array_equal(made[1], np.eye(2, 3))
    assert "Save SVG" in [b.label for b in at.get("download_button")]


@pytest.mark.parametrize("value, expected", [
    (0, 0), (3, 3), (3.0, 3), ("3", 3), (np.int64(2), 2),
    (4, None), (-1, None), (2.5, None), ("2.5", None), ("abc", None), ([1], None), (None, None),
    (True, None), (float("inf"), None), (float("-inf"), None), (float("nan"), None), (10**40, None),
])
def test_index_or_none_takes_whole_numbers_in_range_only(value, expected):
    from ui.widgets import index_or_none

    assert index_or_none(value, 4) == expected

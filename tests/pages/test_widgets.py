"""The one-line error helper shows user text as typed: markdown specials are escaped."""

import re

from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.widgets import MARKDOWN_SPECIALS, escape_markdown


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

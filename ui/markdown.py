"""Text shown through Streamlit's markdown exactly as typed."""

from __future__ import annotations

import re

MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>#~|$])")


def escape_markdown(text: str) -> str:
    """Returns `text` with every character Streamlit's markdown would format (emphasis, code,
    links, HTML, headings, tables, $…$ maths) backslash-escaped, so it shows as typed."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", str(text))

"""Labels as plotly receives them: HTML-escaped (plotly renders a subset of HTML in ticks and hover,
so a token such as ``<b>`` shows as text), control characters written out, and repeats made unique
by invisible suffixes, because plotly merges repeated categories ("the", "the") into one column."""

from __future__ import annotations

import html
from collections.abc import Sequence

_ZERO_WIDTH = "\u200b"


def visible_text(label: object) -> str:
    """Returns the label as it is shown: control characters written as \\xNN (not escaped)."""
    return "".join(ch if ch.isprintable() or ch == " " else f"\\x{ord(ch):02x}" for ch in str(label))


def safe_label(label: object) -> str:
    """Returns the label escaped for plotly: HTML-escaped, control characters made visible."""
    text = visible_text(label)
    return html.escape(text, quote=True) if text else "&#8203;"


def unique_labels(labels: Sequence[object]) -> list[str]:
    """Returns escaped labels, each repeat given an invisible suffix so categories stay apart."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        text = safe_label(label)
        count = seen.get(text, 0)
        seen[text] = count + 1
        out.append(text + _ZERO_WIDTH * count)
    return out

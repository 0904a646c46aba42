"""The HAN page's highlighted text (st.markdown with unsafe_allow_html): every word is escaped."""

import html
import re

import numpy as np

from models.record import AttentionRecord
from viz.han import highlighted_html

XSS = "<img src=x onerror=alert(1)>"
QUOTE = '" onmouseover="alert(2)'


def _record(words: list[list[str]]) -> AttentionRecord:
    width = max(len(row) for row in words)
    padded = np.array([row + [""] * (width - len(row)) for row in words], dtype=object)
    weights = np.full((len(words), width), 1.0 / width, np.float32)
    return AttentionRecord(
        mechanism="han", weights=weights, axes=("sentence", "word"),
        query_labels=tuple(f"s{i}" for i in range(len(words))), key_labels=tuple(f"w{j}" for j in range(width)),
        extras={"words": padded, "sentence_weights": np.full(len(words), 1.0 / len(words), np.float32)},
    )


def test_markup_and_quotes_in_words_stay_text():
    out = highlighted_html(_record([[XSS, "fine"], [QUOTE, "&amp;", "<script>alert(3)</script>"]]))
    assert "<img" not in out and "<script" not in out
    assert html.escape(XSS) in out and html.escape("<script>alert(3)</script>") in out
    assert "&amp;amp;" in out  # an entity a user typed is shown as typed, not decoded
    # A quote cannot close a title attribute: every attribute holds no raw double quote.
    titles = re.findall(r'title="([^"]*)"', out)
    assert len(titles) == 2 + 5  # two sentences, five words
    assert any("onmouseover=&quot;alert(2)" in t for t in titles)
    assert 'onmouseover="' not in out
    tags = re.findall(r"<(/?)(\w+)", out)
    assert {name for _, name in tags} == {"div", "span"}

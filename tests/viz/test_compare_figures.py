"""The difference view's figure (viz/compare.py) and the default heights of heatmaps (viz/figures.py)."""

import html
import re

import numpy as np

from models.compare import row_difference_record
from viz import figures
from viz.chart_style import for_the_page
from viz.compare import MAX_TICK_CHARS, difference_heatmap

SENTENCES_A = ["We went there on a Friday evening with my sister.", "The table by the window was free.",
               "The waiter forgot our order twice and was rude when we asked about it.", "We took the bus home."]
SENTENCES_B = [*SENTENCES_A[:2], "<img src=x onerror=alert(1)> The waiter was friendly and quick.", SENTENCES_A[3]]


def sentence_difference():
    return row_difference_record(SENTENCES_A, np.array([0.1, 0.2, 0.6, 0.1]), SENTENCES_B,
                                 np.array([0.1, 0.25, 0.55, 0.1]), mechanism="han", row="α_i")


def test_a_row_of_long_sentences_keeps_its_map_readable():
    fig = for_the_page(difference_heatmap(sentence_difference(), title="Sentence α: B − A", query_title="",
                                          key_title="sentence"))
    layout = fig.layout
    # Labels are cut on the axis, each keeping the mark of the document it is only in; the tick values,
    # which the hover shows, stay whole.
    shown = [str(t) for t in layout.xaxis.ticktext]
    assert any("(A only)" in t for t in shown) and any("(B only)" in t for t in shown)
    plain = [html.unescape(re.sub(r"<span[^>]*>|</span>", "", t)) for t in shown]
    assert max(len(t) for t in plain) <= MAX_TICK_CHARS + len(" (A only)") and plain[0] == "We went there on a Frid…"
    assert "The waiter forgot our order twice and was rude when we asked about it. (A only)" in layout.xaxis.tickvals
    assert not any("<img" in t for t in shown) and any("&lt;img" in t for t in shown)  # escaped
    # The one row keeps at least 80 px under its title once the turned labels have their margin
    # (it was squeezed to a few px, its colour bar with it, when the height ignored the labels).
    assert layout.height - layout.margin.t - layout.margin.b >= 80
    assert layout.yaxis.title.text is None  # query_title "": no y title, and no room left for one
    assert fig.data[0].hovertemplate.startswith("%{y}<br>sentence: %{x}")


def test_default_heights_grow_only_for_long_labels():
    short = [f"t{i}" for i in range(24)]
    assert figures.heatmap(np.zeros((24, 24)), short, short).layout.height == 22 * 24 + 140  # as before
    assert figures.heatmap(np.zeros((1, 3)), ["q"], ["a", "b", "c"]).layout.height == 260
    long = figures.heatmap(np.zeros((1, 3)), ["q"], ["a sentence of some forty characters long"] * 3, title="t")
    reserved = for_the_page(long).layout
    assert reserved.height > 260 and reserved.height - reserved.margin.t - reserved.margin.b >= 80
    assert figures.heatmap(np.zeros((2, 2)), ["a", "b"], ["c", "d"]).layout.yaxis.title.text == "query"

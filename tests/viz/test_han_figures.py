"""The HAN figures: bars with a row for every class, map cells whose words fit them, and the tour's
sentence and word bars, readable in a narrow column."""

import html

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.record import AttentionRecord
from tests.viz.readability import problems
from viz import han
from viz.chart_style import for_the_page
from viz.han import (
    BAR_RANGE,
    CELL_FONT,
    NOMINAL_WIDTH,
    WORD_SHARE_LEFT,
    fit_word,
    han_heatmap,
    probability_bars,
    score_bars,
    sentence_word_bars,
    text_px,
)
from viz.margins import TICK_LEN, label_height, label_width, reserve_tick_margins


def _plot_height(fig) -> float:
    layout = for_the_page(fig).layout
    return layout.height - layout.margin.t - layout.margin.b


@pytest.mark.parametrize("classes", [("negative", "positive"), ("quality", "service", "price", "ambience")])
@pytest.mark.parametrize("title", [None, "sentiment: negative"])
def test_probability_bars_give_every_class_a_row(classes, title):
    fig = probability_bars(classes, np.linspace(0.9, 0.1, len(classes)), title=title)
    # A two-class chart had an 18 px plot once the x axis had its margin: plotly.js labelled one bar.
    assert _plot_height(fig) >= 28 * len(classes)


@pytest.mark.parametrize("rows", [1, 2, 4, 12, 30])
def test_score_bars_give_every_bar_a_row(rows):
    labels = [f"s{i + 1}: The waiter forgot our…" for i in range(rows)]
    fig = score_bars(labels, np.linspace(-2, 2, rows), title="This document's sentences against u_s", value_name="uᵀu_s")
    assert _plot_height(fig) >= 20 * max(rows, 3)


def test_readying_the_bars_for_the_page_keeps_their_margins():
    fig = probability_bars(("negative", "positive"), np.array([0.9, 0.1]))
    before = fig.layout.margin.to_plotly_json()
    after = for_the_page(fig).layout.margin.to_plotly_json()
    assert {k: after[k] for k in "lrtb"} == {k: before[k] for k in "lrtb"}


def _record(sentences: list[list[str]]) -> AttentionRecord:
    width = max(len(s) for s in sentences)
    words = np.array([s + [""] * (width - len(s)) for s in sentences])
    weights = np.where(words == "", 0.0, 1.0) / np.maximum((words != "").sum(1, keepdims=True), 1)
    return AttentionRecord(mechanism="han", weights=weights.astype(np.float32), axes=("sentence", "word"),
                           query_labels=tuple(" ".join(s) for s in sentences), key_labels=tuple(f"w{j + 1}" for j in range(width)),
                           extras={"words": words, "sentence_weights": np.full(len(sentences), 1 / len(sentences), np.float32)})


def _cell_px(fig, columns: int) -> float:
    margin = fig.layout.margin
    return (NOMINAL_WIDTH - margin.l - margin.r) * (1 - WORD_SHARE_LEFT - 0.01) / columns


@pytest.mark.parametrize("words", [
    "We went there on a Friday evening with my sister.".split(),
    "The waiter forgot our order twice and was rude when we asked about it and then again later on".split(),
    ["Extraordinarily", "uncomfortable", "<b>chairs</b>", "&amp;", "ok"],
])
def test_map_cells_show_words_that_fit_them_and_hover_names_them_whole(words):
    fig = han_heatmap(_record([words, ["Short", "one."]]), title="Word α per sentence, and sentence α")
    trace = fig.data[1]
    cell = _cell_px(fig, len(words))
    shown = [html.unescape(t) for row in trace.text for t in row if t]
    assert shown, "no word was written in any cell"
    assert all(text_px(t, CELL_FONT) <= cell - 4 for t in shown)
    assert all(t in words + ["Short", "one."] or (t.endswith("…") and len(t) >= 4) for t in shown)
    assert [html.unescape(c) for c in trace.customdata[0]] == words  # the hover: every word whole
    assert "<b>" not in "".join(str(t) for row in trace.text for t in row)  # escaped, never markup


def test_a_sentence_of_a_few_words_is_written_whole():
    words = "The table by the window was free.".split()
    fig = han_heatmap(_record([words]))
    assert [html.unescape(t) for t in fig.data[1].text[0]] == words


def test_word_slot_labels_are_thinned_to_fit_the_axis():
    fig = han_heatmap(_record([[f"x{j}" for j in range(60)]]))
    shown = fig.layout.xaxis2.tickvals
    assert len(shown) < 60 and shown[0] == "w1"


@given(st.text(min_size=1, max_size=30), st.floats(min_value=0, max_value=200))
@settings(max_examples=200, deadline=None)
def test_fit_word_returns_the_word_a_head_of_it_or_nothing(word, room):
    fitted = fit_word(word, room, CELL_FONT)
    if fitted == word:
        assert text_px(word, CELL_FONT) <= room
    elif fitted:
        assert fitted.endswith("…") and word.startswith(fitted[:-1]) and len(fitted) >= 4
        assert text_px(fitted, CELL_FONT) <= room
    else:
        assert text_px(word[:3] + "…", CELL_FONT) > room or len(word) <= 3


def test_maps_reserve_their_ticks_length_under_upright_labels():
    fig = for_the_page(han_heatmap(_record([["a", "b", "c"]])))
    assert fig.layout.margin.b >= label_height(label_width("w3"), 0) + TICK_LEN  # "w3" upright, plus the ticks
    assert fig.layout.xaxis2.tickcolor  # the house style draws them


def test_no_tick_room_where_a_map_draws_no_ticks():
    def bottom(**axis) -> int:
        fig = go.Figure(go.Heatmap(z=[[0, 1], [1, 0]], x=["a", "b"], y=["c", "d"]), layout={"margin": {"b": 0}})
        fig.update_xaxes(**axis)
        return reserve_tick_margins(fig).layout.margin.b

    assert bottom() - bottom(ticks="") == TICK_LEN


def test_wide_characters_and_control_characters_are_fitted_as_drawn():
    room = 34.5
    assert text_px(fit_word("東京タワー展望台", room, CELL_FONT), CELL_FONT) <= room  # each 1 em
    assert text_px("東京", CELL_FONT) == 2 * CELL_FONT
    fig = han_heatmap(_record([["a\x07b\x07c\x07d\x07e"] + [f"w{j}" for j in range(7)]]))
    shown = html.unescape(fig.data[1].text[0][0])
    assert "\x07" not in shown and text_px(shown, CELL_FONT) <= _cell_px(fig, 8) - 4  # written out, then fitted


def test_fitting_a_long_word_measures_each_character_once(monkeypatch):
    # A 50,000-character document's words are fitted on every rerun: re-measuring every shorter head
    # of a word took 0.4 s a map.
    calls = []
    measure = han._char_em
    monkeypatch.setattr(han, "_char_em", lambda ch: calls.append(ch) or measure(ch))
    word = "x" * 2_000
    fitted = fit_word(word, 100, CELL_FONT)
    assert len(calls) <= len(word) + 1
    assert fitted.endswith("…") and text_px(fitted, CELL_FONT) <= 100


REVIEW = [
    "We went there on a Friday evening with my sister.".split(),
    "The table by the window was free.".split(),
    "The waiter forgot our order twice and was rude when we asked about it.".split(),
    "We took the bus home afterwards.".split(),
]


def _review() -> AttentionRecord:
    record = _record(REVIEW)
    weights = record.weights.copy()
    weights[2] = 0.0
    weights[2, REVIEW[2].index("rude")] = 0.96
    weights[2, 0] = 0.04
    return AttentionRecord(mechanism="han", weights=weights, axes=record.axes, query_labels=record.query_labels,
                           key_labels=record.key_labels,
                           extras={**record.extras, "sentence_weights": np.array([0.01, 0.01, 0.96, 0.02], np.float32)})


@pytest.mark.parametrize("width", [360, 560])  # a phone's column, the tour's figure column at a desk
def test_sentence_word_bars_give_every_word_its_own_labelled_row(width):
    # In the tour's column the sentences × words map wrote "andwaude" and hid "rude"; here each word of
    # the sentence with the most weight has its own row, its label at its own position.
    fig = for_the_page(sentence_word_bars(_review(), title="Where the network looked"))
    words = fig.layout.yaxis2
    assert [html.unescape(t) for t in words.ticktext] == REVIEW[2]  # every word, "rude" too, in order, whole
    assert len(set(words.tickvals)) == len(words.tickvals) == len(REVIEW[2])  # no two at one position
    assert list(fig.data[1].y) == list(words.tickvals) and fig.data[1].x[REVIEW[2].index("rude")] == pytest.approx(0.96)
    assert [t.split(":")[0] for t in fig.layout.yaxis.ticktext] == ["s1", "s2", "s3", "s4"]
    assert "Word α within s3" in [html.unescape(a.text).replace("<b>", "").replace("</b>", "")
                                  for a in fig.layout.annotations]
    # Each bar's number sits inside the figure: the axis leaves room for it beside a bar at 1, and the
    # panels' titles start at the figure's left edge.
    margin = fig.layout.margin
    plot_px = width - margin.l - margin.r
    assert plot_px > 100, "no room left for the bars"
    for trace in fig.data:
        assert trace.cliponaxis is False and trace.textposition == "outside"
        room = (BAR_RANGE - max(trace.x)) / BAR_RANGE * plot_px
        assert max(text_px(t, CELL_FONT) for t in trace.text) + 4 <= room + margin.r
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range == (0, BAR_RANGE)  # one scale for both panels
    assert all(note.x == 0 and note.xanchor == "left" and note.xshift == 10 - margin.l for note in fig.layout.annotations)
    assert problems(fig.to_plotly_json()) == []


def test_sentence_word_bars_show_the_sentence_asked_for_and_refuse_one_not_there():
    fig = sentence_word_bars(_review(), sentence=1)
    assert [html.unescape(t) for t in fig.layout.yaxis2.ticktext] == REVIEW[1]
    assert fig.layout.yaxis2.ticktext.count("the") == 1 and len(fig.data[1].x) == len(REVIEW[1])  # The … the: two rows
    with pytest.raises(ValueError, match="sentence 4"):
        sentence_word_bars(_review(), sentence=4)

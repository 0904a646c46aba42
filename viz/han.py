"""Figures and safe HTML for the hierarchical attention network (HAN).

Inputs are a HAN AttentionRecord (models.han.result_record): weights [S, W] word α per
sentence (zero-padded), extras "sentence_weights" [S] and "words" [S, W]. No streamlit,
no jax. Every user string is HTML-escaped before it reaches HTML or plotly.
"""

from __future__ import annotations

import bisect
import html
import itertools
import json
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.fonts import TEXT_PX
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label, unique_labels, visible_text
from viz.margins import height_for_rows, reserve_tick_margins
from viz.plotly_json import quick_figure, subplot_grid, tick_stride
from viz.plotly_private import layout_of, traces_of

SENTENCE_RGB = (255, 170, 40)  # amber: sentence α
WORD_RGB = (40, 110, 255)  # blue: word α
MAX_LABEL_CHARS = 22
CLASS_ROW_PX = 30  # plot height per class of a probability chart
SCORE_ROW_PX = 20  # per bar of a score chart (30 context words, a document's sentences)
NOMINAL_WIDTH = 820  # px: the page's full column on a 1,280 px window, which the map's cell words are fitted to
CELL_FONT = 13  # px: the least a class reads on a projector (tests/viz/readability.py)
WORD_SHARE_LEFT = 0.07  # of the plot width: the sentence α column
_NARROW = set("iljtfrI.,;:'!|()[]- ")
_WIDE = set("mwMW@%")


def short_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """Returns text cut to `limit` characters with an ellipsis (not escaped)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sentence_labels(sentences: Sequence[str]) -> list[str]:
    """Returns "s1: The pasta was…" style labels (not escaped)."""
    return [f"s{i + 1}: {short_label(s)}" for i, s in enumerate(sentences)]


def highlighted_html(record: AttentionRecord, *, gettext: Gettext = untranslated) -> str:
    """Returns HTML of the document: each sentence shaded by its α (amber, scaled to the
    largest sentence α), each word highlighted by its α (blue, scaled to the largest word α
    in its sentence). Every word is HTML-escaped; hover titles give the numbers."""
    sentence_alpha = np.asarray(record.extras["sentence_weights"], np.float32)
    words = np.asarray(record.extras["words"])
    weights = np.asarray(record.weights, np.float32)
    s_max = max(float(sentence_alpha.max(initial=0.0)), 1e-9)
    sentence_title = gettext("sentence {number}")
    parts = ['<div class="han-text" style="line-height:2.1;font-size:1.05rem">']
    for i, a_s in enumerate(sentence_alpha):
        row = [str(w) for w in words[i] if str(w)]
        w_max = max(float(weights[i, : len(row)].max(initial=0.0)), 1e-9)
        strength = float(a_s) / s_max
        parts.append(
            f'<span class="han-sentence" title="{html.escape(sentence_title.format(number=i + 1), quote=True)}: '
            f'α = {float(a_s):.3f}" '
            f'style="background:rgba({SENTENCE_RGB[0]},{SENTENCE_RGB[1]},{SENTENCE_RGB[2]},{0.08 + 0.5 * strength:.3f});'
            f'border-radius:4px;padding:3px 2px;margin-right:4px">'
        )
        for j, word in enumerate(row):
            a_w = float(weights[i, j])
            parts.append(
                f'<span class="han-word" title="{html.escape(word, quote=True)}: α = {a_w:.3f}" '
                f'style="background:rgba({WORD_RGB[0]},{WORD_RGB[1]},{WORD_RGB[2]},{0.75 * a_w / w_max:.3f});'
                f'border-radius:3px;padding:1px 2px">{html.escape(word)}</span> '
            )
        parts.append("</span>")
    parts.append("</div>")
    return "".join(parts)


def han_heatmap(record: AttentionRecord, *, title: str | None = None, width: float = NOMINAL_WIDTH,
                gettext: Gettext = untranslated) -> go.Figure:
    """Returns the sentences × word-slots heatmap: word α with each cell's word written in it, and
    beside it one column of sentence α. Rows are sentences (top to bottom).

    A word is written whole where it fits its cell at a figure `width` px wide (the page's full
    column on a 1,280 px window), cut with "…" where three letters or more fit, and left out where
    fewer do: words wider than their cells ran into each other. The hover names every word whole."""
    _ = gettext
    sentence_name, word_name = _("sentence α"), _("word α")
    weights = np.asarray(record.weights, np.float32)
    words = np.asarray(record.extras["words"])
    sentence_alpha = np.asarray(record.extras["sentence_weights"], np.float32).reshape(-1, 1)
    ys = unique_labels(sentence_labels(record.query_labels))
    n_rows, n_cols = weights.shape
    xs = [f"w{j + 1}" for j in range(n_cols)]
    z = np.where(words == "", np.nan, weights)  # padding shows as blank, not as α = 0
    layout_json, axes = subplot_grid(1, 2, shared_yaxes=True, column_widths=(WORD_SHARE_LEFT, 1 - WORD_SHARE_LEFT),
                                     horizontal_spacing=0.01, subplot_titles=(sentence_name, word_name))
    left, right = axes[0]
    data = [
        {"type": "heatmap", "z": sentence_alpha, "x": ["α_s"], "y": ys, "zmin": 0.0, "zmax": 1.0, "colorscale": "Oranges",
         "showscale": False, "text": [[f"{a:.2f}"] for a in sentence_alpha[:, 0]], "texttemplate": "%{text}",
         "textfont": {"size": CELL_FONT}, "hovertemplate": f"%{{y}}<br>{sentence_name} = %{{z:.4f}}<extra></extra>", **left},
        {"type": "heatmap", "z": z, "x": xs, "y": ys,
         "zmin": 0.0, "zmax": max(float(np.nanmax(z)) if np.isfinite(z).any() else 1.0, 1e-9),
         "colorscale": COLORSCALE, "texttemplate": "%{text}", "textfont": {"size": CELL_FONT},
         "customdata": [[safe_label(w) if str(w) else "" for w in row] for row in words],
         "colorbar": {"title": {"text": word_name}},
         "hovertemplate": f"%{{y}}<br>%{{x}}: %{{customdata}}<br>{word_name} = %{{z:.4f}}<extra></extra>", **right},
    ]
    layout = json.loads(layout_json)
    layout.update(
        title={"text": html.escape(title) if title else None},
        height=int(min(max(260, 56 * n_rows + 120), 1100)),
        margin={"l": 10, "r": 10, "t": 60 if title else 40, "b": 10},
    )
    shown = xs[:: tick_stride(n_cols, max(1, int(width // 2 // 28)))]  # "w10" needs about 28 px
    layout["yaxis"].update(autorange="reversed", tickmode="array", tickvals=ys, ticktext=ys)
    layout["xaxis2"].update(side="bottom", tickangle=0, tickmode="array", tickvals=shown, ticktext=shown)
    layout["yaxis2"].update(ticks="")  # no tick marks over the sentence α column beside it
    fig = reserve_tick_margins(quick_figure(data, layout))
    margin = layout_of(fig)["margin"]
    cell = (width - margin["l"] - margin["r"]) * (1 - WORD_SHARE_LEFT - 0.01) / max(n_cols, 1)
    # Fitted as shown (control characters written out), then escaped: an entity is never cut.
    fitted = [[fit_word(visible_text(w), cell - 4, CELL_FONT) for w in row] for row in words]
    traces_of(fig)[1]["text"] = [[html.escape(w, quote=True) for w in row] for row in fitted]
    return fig


BAR_ROW_PX = 24  # per bar of the sentence-and-word bars: a 13 px label with room around it
BAR_RANGE = 1.3  # the x axes run to 1.3: a bar at α = 1 keeps room for its number ("0.98") beside it
PANEL_TITLE_PX = 30  # above each panel of the sentence-and-word bars, for its title
BAR_LABEL_CHARS = 16  # a sentence's label there, "s3: The waiter forgo…": on a phone the bars keep ~150 px


def sentence_word_bars(record: AttentionRecord, *, sentence: int | None = None, title: str | None = None,
                       gettext: Gettext = untranslated) -> go.Figure:
    """Returns two panels of horizontal bars, one above the other: the sentence α of every sentence,
    then the word α of each word of one sentence (default: the sentence with the most weight), one
    row per word, its number beside its bar. For a column too narrow for the sentences × words map
    (the tour's ~560 px, a phone's ~350 px): there a map's cells are ~30 px and the words ran into
    each other, while a row per word keeps every word whole and legible at any width.

    Rows sit at numeric positions labelled by tick text: a category axis would merge two rows of
    the same word ("The … the"). Both axes run from 0 to BAR_RANGE, the same scale for both."""
    _ = gettext
    weights = np.asarray(record.weights, np.float32)
    words = np.asarray(record.extras["words"])
    sentence_alpha = np.asarray(record.extras["sentence_weights"], np.float32).reshape(-1)
    chosen = int(np.argmax(sentence_alpha)) if sentence is None else int(sentence)
    if not 0 <= chosen < len(sentence_alpha):
        raise ValueError(f"sentence {chosen} is not one of the record's {len(sentence_alpha)} sentences")
    row = [(str(w), float(a)) for w, a in zip(words[chosen], weights[chosen]) if str(w)]
    sentence_name, word_name = _("sentence α"), _("word α")
    # The panels' titles, outside the f-strings below: Babel does not read a call inside one.
    sentence_title = _("Sentence α: the weight of each sentence")
    word_title = _("Word α within s{number}").format(number=chosen + 1)
    n_s, n_w = len(sentence_alpha), max(len(row), 1)
    # Plot heights in px: the sentence panel, the gap holding the word panel's title, the word panel.
    top_px, gap_px, bottom_px = n_s * BAR_ROW_PX, PANEL_TITLE_PX + 14, n_w * BAR_ROW_PX
    plot_px = top_px + gap_px + bottom_px
    split = bottom_px / plot_px  # the word panel's top, in paper coordinates
    labels = [f"s{i + 1}: {short_label(s, BAR_LABEL_CHARS)}" for i, s in enumerate(record.query_labels)]

    def bars(values, hover_names, colour, axis: str) -> dict:
        return {"type": "bar", "orientation": "h", "x": np.asarray(values, np.float64), "y": np.arange(len(values)),
                "marker": {"color": f"rgb{colour}"}, "text": [f"{v:.2f}" for v in values], "textposition": "outside",
                "textfont": {"size": CELL_FONT}, "cliponaxis": False, "customdata": hover_names,
                "xaxis": f"x{axis}", "yaxis": f"y{axis}", "showlegend": False}

    sentence_bars = bars(sentence_alpha, [safe_label(s) for s in record.query_labels], SENTENCE_RGB, "")
    sentence_bars["hovertemplate"] = f"%{{customdata}}<br>{html.escape(sentence_name)} = %{{x:.4f}}<extra></extra>"
    word_bars = bars([a for _w, a in row], [safe_label(w) for w, _a in row], WORD_RGB, "2")
    word_bars["hovertemplate"] = f"%{{customdata}}<br>{html.escape(word_name)} = %{{x:.4f}}<extra></extra>"

    def y_axis(ticks: list[str], domain: list[float], anchor: str) -> dict:
        return {"domain": domain, "anchor": anchor, "autorange": False, "range": [max(len(ticks), 1) - 0.5, -0.5],
                "tickmode": "array", "tickvals": list(range(len(ticks))), "ticktext": [html.escape(t) for t in ticks],
                "automargin": True}

    x_axis = {"range": [0, BAR_RANGE], "tickmode": "array", "tickvals": [0, 0.5, 1], "ticktext": ["0", "0.5", "1"],
              "showgrid": True, "zeroline": False}
    word_ticks = [short_label(visible_text(w), MAX_LABEL_CHARS) for w, _a in row]
    note = {"xref": "paper", "yref": "paper", "x": 0, "xanchor": "left", "yanchor": "bottom", "showarrow": False,
            "font": {"size": 14}}
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "xaxis": {**x_axis, "anchor": "y", "showticklabels": False},
        "yaxis": y_axis(labels, [1 - top_px / plot_px, 1.0], "x"),
        "xaxis2": {**x_axis, "anchor": "y2"},
        "yaxis2": y_axis(word_ticks, [0.0, split], "x2"),
        "annotations": [
            {**note, "text": f"<b>{html.escape(sentence_title)}</b>", "y": 1.0},
            {**note, "text": f"<b>{html.escape(word_title)}</b>", "y": split, "yshift": 4},
        ],
        "bargap": 0.3,
        "showlegend": False,
        "font": {"size": TEXT_PX},  # the page's text size, so that the margins reserved here are final
        "margin": {"l": 10, "r": 10, "t": (50 if title else 10) + PANEL_TITLE_PX, "b": 30},
    }
    fig = reserve_tick_margins(quick_figure([sentence_bars, word_bars], layout))
    margin = layout_of(fig)["margin"]
    # The panels' titles start at the figure's left edge, over the row labels: from the plot's edge a
    # title ran past the figure's right edge on a phone.
    for annotation in layout_of(fig)["annotations"]:
        annotation["xshift"] = 10 - margin["l"]
    fig.update_layout(height=int(margin["t"] + margin["b"] + plot_px))
    return fig


def _char_em(ch: str) -> float:
    if unicodedata.east_asian_width(ch) in "WF":
        return 1.0
    if unicodedata.category(ch) == "Cf":  # zero-width format characters
        return 0.0
    return 0.3 if ch in _NARROW else 0.85 if ch in _WIDE else 1.0 if ch == "…" \
        else 0.6 if ch.isupper() or ch.isdigit() else 0.53


def text_px(text: str, font: float) -> float:
    """Returns an estimate, in px, of `text`'s width in the house font (Source Sans) at `font` px:
    narrow letters 0.3 em, wide ones 0.85 em, other capitals and digits 0.6 em, an ellipsis and East
    Asian wide characters 1 em, the rest 0.53 em. Against the widths Chromium drew on the HAN page
    (words, numbers, accents and cut words) it came out between 0.96 and 1.2 times the real width."""
    return font * sum(_char_em(ch) for ch in text)


def fit_word(word: str, room: float, font: float) -> str:
    """Returns `word` if it fits `room` px at `font` px, else its longest head of three letters or
    more with "…" that fits, else "". One pass over the word (a document may hold 50,000 characters)."""
    widths = list(itertools.accumulate(font * _char_em(ch) for ch in word))
    if not widths or widths[-1] <= room:
        return word
    room -= font * _char_em("…")
    keep = bisect.bisect_right(widths, room)  # widths only grow: the longest head within the room
    return word[:keep] + "…" if keep >= 3 else ""


def probability_bars(classes: Sequence[str], probabilities: np.ndarray, *, title: str | None = None,
                     gettext: Gettext = untranslated) -> go.Figure:
    """Returns horizontal bars of class probabilities [C], the predicted class highlighted."""
    probabilities = np.asarray(probabilities, np.float32).reshape(-1)
    labels = unique_labels(classes)
    best = int(np.argmax(probabilities))
    bar = {"type": "bar", "x": probabilities, "y": labels, "orientation": "h",
           "marker": {"color": ["#d62728" if i == best else "#9ab" for i in range(len(labels))]},
           "text": [f"{p:.1%}" for p in probabilities], "textposition": "auto",
           "hovertemplate": "%{y}: %{x:.4f}<extra></extra>"}
    fig = quick_figure([bar], {
        "title": {"text": html.escape(title) if title else None},
        "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "xaxis": {"range": [0, 1], "title": {"text": gettext("probability")}},
        "yaxis": {"autorange": "reversed"},
    })
    return height_for_rows(fig, len(labels), CLASS_ROW_PX)


def score_bars(labels: Sequence[str], scores: np.ndarray, *, title: str | None = None, value_name: str = "uᵀu_w",
               gettext: Gettext = untranslated) -> go.Figure:
    """Returns horizontal bars of context-vector scores [n] (highest at the top); gettext translates the
    axis title's words (the score's formula stays)."""
    scores = np.asarray(scores, np.float32).reshape(-1)
    ys = unique_labels(labels)
    bar = {"type": "bar", "x": scores, "y": ys, "orientation": "h",
           "marker": {"color": ["#1f77b4" if s >= 0 else "#ff7f0e" for s in scores]},
           "hovertemplate": f"%{{y}}<br>{html.escape(value_name)} = %{{x:.3f}}<extra></extra>"}
    fig = quick_figure([bar], {
        "title": {"text": html.escape(title) if title else None},
        "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "xaxis": {"title": {"text": html.escape(gettext("score {formula}").format(formula=value_name))}},
        "yaxis": {"autorange": "reversed"},
    })
    return height_for_rows(fig, max(len(ys), 3), SCORE_ROW_PX)

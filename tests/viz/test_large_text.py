"""The projector's text size (viz.chart_style.with_text_scaled, the sidebar's "Large text")."""

import json

import numpy as np
import plotly.graph_objects as go

from viz.chart_style import for_the_page, with_text_scaled
from viz.fonts import TEXT_PX


def _sizes(fig) -> list[float]:
    found = []

    def walk(node, key=""):
        if isinstance(node, dict):
            if key in ("font", "tickfont", "textfont") and isinstance(node.get("size"), (int, float)):
                found.append(node["size"])
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)

    walk(json.loads(fig.to_json()))
    return found


def _figure():
    fig = go.Figure(go.Heatmap(z=np.eye(3), x=["a", "b", "c"], y=["a", "b", "c"], colorbar={"title": {"text": "α"}}),
                    layout={"title": {"text": "a title"}, "height": 400, "margin": {"t": 40, "l": 10},
                            "annotations": [{"text": "note", "x": 0, "y": 0, "font": {"size": 11}}]})
    return for_the_page(fig)


def test_every_text_grows_and_the_shared_figure_stays_as_it_was():
    fig = _figure()
    before = fig.to_json()
    large = with_text_scaled(fig, 1.4)
    assert fig.to_json() == before  # a figure a page shares between sessions is not touched
    assert max(_sizes(large)) > max(_sizes(fig))
    assert min(_sizes(large)) >= round(min(_sizes(fig)) * 1.4, 1) - 0.05
    assert large.layout.font.size == round(TEXT_PX * 1.4, 1)
    assert large.layout.annotations[0].font.size == round(11 * 1.4, 1)
    assert large.layout.height > fig.layout.height and large.layout.margin.t > fig.layout.margin.t
    assert large.layout.margin.l >= fig.layout.margin.l  # room for the larger labels
    assert with_text_scaled(fig, 1) is fig

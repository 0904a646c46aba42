"""Figures a class can read: every text of every mechanism's default figure is drawn at ≥ 13 px and
with contrast ≥ 4.5:1 (WCAG AA) against its background, as the page and the exports draw it."""


import plotly.graph_objects as go
import pytest

from models.registry import MECHANISMS
from tests.viz.readability import MIN_CONTRAST, MIN_PX, contrast, problems
from viz.chart_style import for_the_page
from viz.figures import record_figure


def test_contrast_matches_the_wcag_examples():
    assert contrast("#000", "#fff") == pytest.approx(21.0)
    assert contrast("#fff", "#fff") == pytest.approx(1.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic just-failing grey
    assert contrast("rgba(0,0,0,0.5)", "#ffffff") == pytest.approx(contrast("#808080", "#ffffff"), abs=0.05)


def test_the_check_finds_small_and_faint_text():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[1, 2], name="a", text=["x", "y"], mode="markers+text"),
                    layout={"xaxis": {"tickfont": {"size": 10}}, "yaxis": {"title": {"text": "weight"}},
                            "font": {"color": "#aaaaaa", "size": 13}})
    found = problems(fig.to_plotly_json())
    assert any(f.startswith("xaxis.tickfont: 10 px") for f in found)
    assert any("yaxis.title: colour #aaaaaa" in f for f in found)
    assert any(f.startswith("data[0].textfont") for f in found)
    assert MIN_PX == 13 and MIN_CONTRAST == 4.5


@pytest.fixture(scope="module")
def default_figures():
    figures = {}
    for mechanism in MECHANISMS:
        record = mechanism.build(mechanism.example)
        figures[mechanism.id] = for_the_page(record_figure(record)).to_plotly_json()
    return figures


@pytest.mark.parametrize("mechanism", [m.id for m in MECHANISMS])
def test_every_mechanisms_default_figure_is_readable(default_figures, mechanism):
    assert problems(default_figures[mechanism]) == []

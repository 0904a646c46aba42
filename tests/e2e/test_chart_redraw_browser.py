"""plotly.js in Chromium: a shown figure, handed to Plotly.react again as Streamlit's chart component
does after mounting it (the same spec, JSON out and back in), is not drawn a second time; nor is a
figure whose labels need more margin than its builder gave (viz.margins)."""

import json
from pathlib import Path

import numpy as np
import plotly
import plotly.io as pio
import pytest

from models.registry import get_mechanism
from tests.e2e.conftest import VIEWPORT
from viz.chart_style import for_the_page
from viz.feedforward import alpha_over_time
from viz.figures import bars_over_heatmap, heatmap, vectors_2d, weight_bars
from viz.plotly_json import side_by_side

pytestmark = pytest.mark.e2e

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

# newPlot, then react to a fresh copy of the same spec: whether plotly.js computed the traces
# again (gd.calcdata is rebuilt when a react finds changed data, then everything is drawn anew; a
# react that finds nothing new keeps it and redraws nothing).
RECOMPUTED_ON_REACT = """async (spec) => {
    const host = document.getElementById('host');
    Plotly.purge(host);
    let fig = JSON.parse(spec);
    await Plotly.newPlot(host, fig.data, fig.layout);
    const before = host.calcdata;
    fig = JSON.parse(JSON.stringify(JSON.parse(spec)));
    await Plotly.react(host, fig.data, fig.layout);
    return host.calcdata !== before;
}"""


def playground_like():
    """Bars, bars over a one-row map, and points: the Playground's three panels, as one figure."""
    labels = ["cat", "dog", "car", "truck", "bicycle"]
    alpha = np.array([0.4, 0.34, 0.06, 0.07, 0.13], np.float32)
    points = np.random.default_rng(0).random((5, 2)).astype(np.float32)
    weights = bars_over_heatmap(weight_bars(alpha, labels, title="α"),
                                heatmap(alpha[None, :], ["query"], labels, title="", height=220))
    return side_by_side([weight_bars(alpha * 3, labels, title="scores"), weights,
                         vectors_2d(points, labels, weights=alpha, highlight=alpha @ points)], height=480)


HOST = "<div id='host' style='width:940px'></div>"


@pytest.fixture(scope="module")
def _plotly_tab(browser):
    """A tab of the module's own with plotly.js loaded once: loading its 4.6 MB took about 2 s a test."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_content(f"<html><body>{HOST}</body></html>")
    page.add_script_tag(path=str(PLOTLY_JS))  # into <head>
    yield page
    context.close()


@pytest.fixture
def plot_page(_plotly_tab):
    """The plotly.js tab with its body as a fresh page has it: one empty host, 940 px wide."""
    _plotly_tab.evaluate("html => { document.body.innerHTML = html; }", HOST)
    assert _plotly_tab.evaluate("() => typeof Plotly.newPlot === 'function' && document.body.children.length === 1")
    return _plotly_tab


def test_a_shown_figure_is_not_drawn_again_by_the_second_pass(plot_page):
    shown = pio.to_json(for_the_page(playground_like()), validate=False)  # as show_panels sends it
    vectors = [t[k] for t in json.loads(shown)["data"] for k in ("y", "customdata") if t["type"] != "heatmap" and k in t]
    assert vectors and all(isinstance(v, list) for v in vectors)  # not {"dtype", "bdata"}
    assert plot_page.evaluate(RECOMPUTED_ON_REACT, shown) is False


def test_a_base64_vector_would_be_drawn_again(plot_page):
    # Why the vectors go as lists: plotly.js decodes a base64 vector into a new typed array on
    # every pass, and its diff takes that for changed data, datarevision or not.
    fig = for_the_page(playground_like())
    fig.data[0].y = np.asarray(fig.data[0].y, np.float32)  # back to numpy: sent as base64
    sent = pio.to_json(fig, validate=False)
    assert "bdata" in json.loads(sent)["data"][0]["y"]
    assert plot_page.evaluate(RECOMPUTED_ON_REACT, sent) is True


# newPlot at a given width: the sides whose margin plotly.js widened after the first draw (as
# tests/e2e/conftest.pushed_margins, on one chart).
PUSHED_AT_WIDTH = """async ([spec, width]) => {
    const host = document.getElementById('host');
    Plotly.purge(host);
    host.style.width = width + 'px';
    const fig = JSON.parse(spec);
    await Plotly.newPlot(host, fig.data, fig.layout);
    const size = host._fullLayout._size, asked = host._fullLayout.margin, out = {};
    for (const side of ['l', 'b', 'r', 't']) if (size[side] > asked[side] + 0.5) out[side] = [asked[side], size[side]];
    return out;
}"""


@pytest.mark.parametrize("steps", [101, 301, 1_001, 1_004, 2_001, 5_000, 9_999])
def test_a_time_axis_ending_at_a_round_number_keeps_its_label_inside(plot_page, steps):
    # The feed-forward figure's time axis ends just past (or, at 5,000, just before) a tick plotly.js
    # labels: without room reserved for half that label, plotly.js widened the right margin after
    # the first draw and drew the figure again, at every width (viz.margins).
    record = get_mechanism("feedforward").build({"length": steps, "seed": 0})
    shown = pio.to_json(for_the_page(alpha_over_time(record, title=f"α over {steps:,} steps")), validate=False)
    for width in (420, 700, 1_300):
        assert plot_page.evaluate(PUSHED_AT_WIDTH, [shown, width]) == {}, width

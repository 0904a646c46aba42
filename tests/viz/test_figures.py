"""Figure builders, checked on the figure object (no browser)."""

import base64
import io

import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import Image
from plotly.subplots import make_subplots

from models.record import AttentionRecord
from viz import figures, labels, margins, plotly_json

XSS = "<img src=x onerror=alert(1)>"


def record(q=("a", "b"), k=("x", "y", "z")):
    w = np.arange(len(q) * len(k), dtype=np.float32).reshape(len(q), len(k)) / 10
    return AttentionRecord("qkv-dot", w, ("query", "key"), q, k)


def test_heatmap_puts_queries_on_y_keys_on_x_with_colorbar_and_hover():
    fig = figures.attention_heatmap(record())
    trace = fig.data[0]
    np.testing.assert_allclose(np.asarray(trace.z), record().weights)
    assert list(trace.y) == ["a", "b"] and list(trace.x) == ["x", "y", "z"]
    assert "%{z:.4f}" in trace.hovertemplate and "%{y}" in trace.hovertemplate and "%{x}" in trace.hovertemplate
    assert trace.colorbar.title.text == "α"
    assert fig.layout.yaxis.range == (1.5, -0.5) and not fig.layout.yaxis.autorange  # first query on top
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "category"


def test_tokens_that_look_like_numbers_stay_tokens():
    # plotly.js would read mostly numeric labels as a linear axis and drop [CLS], cat and [SEP].
    tokens = ("[CLS]", *"12345678", "cat", "[SEP]")
    fig = figures.attention_heatmap(record(q=tokens, k=tokens))
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "category"
    assert list(fig.data[0].y) == list(tokens) and fig.layout.yaxis.range == (10.5, -0.5)


def test_labels_are_escaped_and_repeats_stay_separate():
    fig = figures.attention_heatmap(record(q=("<b>", XSS), k=("the", "the", "&")))
    assert list(fig.data[0].y) == ["&lt;b&gt;", "&lt;img src=x onerror=alert(1)&gt;"]
    xs = list(fig.data[0].x)
    assert len(set(xs)) == 3 and xs[0].startswith("the") and xs[1].startswith("the") and xs[2] == "&amp;"
    assert "<" not in "".join(fig.data[0].y)


def test_control_characters_are_made_visible():
    assert labels.safe_label("a\x00b") == "a\\x00b"
    assert labels.safe_label("") != ""


def test_long_axes_show_a_subset_of_ticks():
    n = 300
    w = np.full((n, n), 1.0 / n, np.float32)
    labels = [f"t{i}" for i in range(n)]
    fig = figures.heatmap(w, labels, labels)
    assert len(fig.layout.xaxis.tickvals) <= figures.MAX_TICKS
    assert len(fig.data[0].x) == n


def test_heatmap_grid_shares_one_colour_axis():
    maps = np.random.default_rng(0).random((2, 3, 4, 4)).astype(np.float32)
    fig = figures.heatmap_grid(maps, ["L0", "L1"], ["H0", "H1", "H2"], title="grid")
    assert len(fig.data) == 6
    assert all(t.coloraxis == "coloraxis" for t in fig.data)
    np.testing.assert_allclose(np.asarray(fig.data[4].z), maps[1, 1])


def test_weight_bars_and_compare():
    fig = figures.weight_bars([0.2, 0.8], ["a", XSS], compare=[0.25, 0.75], compare_name="freq")
    assert len(fig.data) == 2 and fig.layout.barmode == "group"
    assert list(fig.data[0].y) == pytest.approx([0.2, 0.8])
    assert "<img" not in fig.data[0].x[1]


def test_bars_over_heatmap_is_one_figure_with_both_panels_on_one_key_axis():
    alpha = np.array([[0.1, 0.6, 0.3]], np.float32)
    bars = figures.weight_bars(alpha[0], ["a", XSS, "c"], title="α & co", compare=[0.2, 0.5, 0.3], compare_name="freq")
    heat = figures.heatmap(alpha, ["q"], ["a", XSS, "c"], height=220)
    fig = figures.bars_over_heatmap(bars, heat)
    assert [t.type for t in fig.data] == ["bar", "bar", "heatmap"]
    assert [(t.xaxis, t.yaxis) for t in fig.data] == [("x", "y"), ("x", "y"), ("x2", "y2")]
    np.testing.assert_allclose(np.asarray(fig.data[2].z), alpha)
    assert list(fig.data[0].x) == list(fig.data[2].x)  # the same (escaped) key categories
    assert "<img" not in "".join(fig.data[2].x) and fig.layout.title.text == "α &amp; co"  # escaped once
    top, low = fig.layout.yaxis.domain, fig.layout.yaxis2.domain
    assert low[1] < top[0] and fig.layout.xaxis.matches == "x2" and fig.layout.barmode == "group"
    assert fig.layout.xaxis.showticklabels is False and fig.layout.xaxis2.ticktext == fig.data[2].x
    assert fig.data[2].colorbar.len == pytest.approx(low[1] - low[0])


def test_reserve_tick_margins_fits_the_outer_labels_and_never_shrinks():
    long_word = "antidisestablishment"  # 20 characters
    fig = make_subplots(rows=1, cols=2)
    for col, rows in ((1, ["a", "b", long_word]), (2, ["a", long_word * 3, "c"])):
        fig.add_trace(go.Heatmap(z=np.zeros((3, 3)), x=["k1", "k2", "k3"], y=rows), row=1, col=col)
    fig.update_yaxes(title_text="query", row=1, col=1)
    fig.update_layout(margin={"l": 10, "r": 10, "t": 40, "b": 10})
    margins.reserve_tick_margins(fig)
    # The left panel's y labels and title set the left margin; the right panel's longer labels sit
    # between the panels and need no margin.
    plain = 12  # the figure has no look (no font size): plotly.js draws it at its default 12 px
    assert margins.label_width(long_word, plain) + 50 <= fig.layout.margin.l < margins.label_width(long_word * 3, plain)
    assert fig.layout.margin.b > 10 and fig.layout.margin.t == 40
    # The heatmaps' colour bar sits right of the plot: room for the bar and its tick labels (plotly.js
    # widened a 10 px margin to 91–94 px for the app's bars in Chromium).
    assert 94 <= fig.layout.margin.r <= 130
    assert margins.label_width(long_word, plain) + 50 + 12 <= fig.layout.margin.l  # 2 px to spare besides the 12 px pad
    fig.update_layout(margin={"l": 300})
    assert margins.reserve_tick_margins(fig).layout.margin.l == 300  # a wider margin stays
    # Labels turned upright take their width downwards; hidden axes need nothing.
    turned = go.Figure(go.Heatmap(z=np.zeros((2, 2)), x=["k", long_word], y=["a", "b"]),
                       layout={"xaxis": {"tickangle": -90}, "yaxis": {"visible": False}, "margin": {"l": 5, "b": 5}})
    margins.reserve_tick_margins(turned)
    assert turned.layout.margin.b >= margins.label_width(long_word, plain) and turned.layout.margin.l == 5
    assert 94 <= turned.layout.margin.r <= 130  # plotly's default 80 px is widened for the bar too
    assert margins.label_width("<b>ab</b>") == margins.label_width("ab")  # markup is not text


def test_reserve_tick_margins_makes_room_only_for_colour_bars_outside_the_plot():
    hidden = go.Figure(go.Heatmap(z=np.zeros((2, 2)), showscale=False), layout={"margin": {"r": 10}})
    assert margins.reserve_tick_margins(hidden).layout.margin.r == 10
    unused = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), layout={"margin": {"r": 10}, "coloraxis": {"cmax": 1}})
    assert margins.reserve_tick_margins(unused).layout.margin.r == 10  # no trace shows that bar
    shared = go.Figure(go.Heatmap(z=np.zeros((2, 2)), coloraxis="coloraxis"),
                       layout={"margin": {"r": 10}, "coloraxis": {"colorbar": {"title": {"text": "a much longer title"}}}})
    assert margins.reserve_tick_margins(shared).layout.margin.r >= margins.label_width("a much longer title", 14)
    flat = go.Figure(go.Heatmap(z=np.zeros((2, 2)), colorbar={"orientation": "h"}), layout={"margin": {"r": 10}})
    inside = go.Figure(go.Heatmap(z=np.zeros((2, 2)), colorbar={"x": 0.8}), layout={"margin": {"r": 10}})
    edge = go.Figure(go.Heatmap(z=np.zeros((2, 2)), colorbar={"x": 0.98}), layout={"margin": {"r": 10}})
    assert 10 < margins.reserve_tick_margins(edge).layout.margin.r < 94  # partly inside: the part outside
    assert margins.reserve_tick_margins(flat).layout.margin.r == 10
    assert margins.reserve_tick_margins(inside).layout.margin.r == 10
    assert margins.label_width("日本") == 2 * margins.label_width("ab")  # wide characters count twice
    assert margins.label_width("ab\u200b\u200b") == margins.label_width("ab")  # what keeps repeated labels apart: unseen


def test_image_overlay_stretches_the_grid_over_the_image():
    image = np.zeros((64, 64, 3), np.uint8)
    amap = np.eye(8, dtype=np.float32)
    fig = figures.image_overlay(image, amap, opacity=0.4)
    assert fig.data[0].type == "image" and fig.data[1].type == "heatmap"
    assert fig.data[1].dx == 8 and fig.data[1].opacity == pytest.approx(0.4)


def test_image_overlay_sends_the_photo_as_a_png_with_every_pixel_kept():
    # A 256 × 256 photo as `z` was 1.5 MB of JSON numbers per message; as a PNG it is a few KB,
    # and the browser draws the same pixels.
    rng = np.random.default_rng(0)
    photo = rng.integers(0, 256, (256, 192, 3), dtype=np.uint8)
    fig = figures.image_overlay(photo, np.full((8, 6), 1 / 48, np.float32))
    picture = fig.data[0]
    assert picture.z is None and picture.source.startswith("data:image/png;base64,")
    decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(picture.source.split(",", 1)[1]))))
    np.testing.assert_array_equal(decoded, photo)
    # Random pixels barely compress (base64 PNG ≈ 1.4 characters a byte), while z took ≈ 4.6 a value.
    assert len(fig.to_json()) < 2 * photo.size


def test_record_figure_picks_a_view_by_axes():
    layered = AttentionRecord("t", np.zeros((2, 3, 4, 4)), ("layer", "head", "query", "key"), list("abcd"), list("abcd"))
    assert len(figures.record_figure(layered).data) == 6
    grid = AttentionRecord("soft", np.zeros((2, 3, 3)), ("word", "row", "col"), ["a", "b"], [f"c{i}" for i in range(9)])
    assert len(figures.record_figure(grid).data) == 2
    one_d = AttentionRecord("ff", np.ones(5) / 5, ("time",), ["c"], [str(i) for i in range(5)])
    assert figures.record_figure(one_d).data[0].type == "bar"
    assert figures.record_figure(record()).data[0].type == "heatmap"


def test_side_by_side_moves_each_panel_into_its_own_slot():
    a = figures.heatmap(np.eye(3, dtype=np.float32), ["a", "b", "c"], ["a", "b", "c"], title="left")
    b = figures.bars_over_heatmap(
        figures.weight_bars(np.array([0.2, 0.8], np.float32), ["k", "m"], title="α"),
        figures.heatmap(np.array([[0.2, 0.8]], np.float32), ["q"], ["k", "m"], title=""),
    )
    fig = plotly_json.side_by_side([a, b], share_y=False)
    # every trace of both figures, in order, with its numbers unchanged
    assert len(fig.data) == len(a.data) + len(b.data)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), np.eye(3))
    np.testing.assert_allclose(np.asarray(fig.data[1].y), [0.2, 0.8], rtol=1e-6)
    spec = fig.to_plotly_json()
    # each panel's axes are its own, and the panels' x domains do not overlap, left to right
    pairs = [(t["xaxis"], t["yaxis"]) for t in spec["data"]]
    assert pairs[0] == ("x", "y") and len(set(pairs)) == 3
    domains = [spec["layout"][f"xaxis{x[1:]}"]["domain"] for x in ("x", pairs[1][0], pairs[2][0])]
    assert domains[0][1] < domains[1][0] and domains[1] == domains[2]
    # the heatmap's colour bar sits right of its own panel, inside the figure
    assert domains[0][1] < spec["data"][0]["colorbar"]["x"] < domains[1][0]
    # the titles become headings over their panels
    assert any(n["text"] == "<b>left</b>" for n in spec["layout"]["annotations"])
    with pytest.raises(ValueError):
        plotly_json.side_by_side([a, b], widths=[1.0])


def test_side_by_side_shares_rows_when_asked():
    maps = [figures.heatmap(np.full((2, 2), 0.5, np.float32), ["r1", "r2"], ["k1", "k2"], title=t) for t in "ab"]
    layout = plotly_json.side_by_side(maps, share_y=True).to_plotly_json()["layout"]
    assert layout["yaxis2"]["matches"] == "y" and layout["yaxis2"]["showticklabels"] is False
    assert "showticklabels" not in layout["yaxis"] or layout["yaxis"]["showticklabels"]


def test_vectors_2d_draws_each_point_sized_by_its_weight_and_the_sum_as_a_star():
    points = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]], np.float32)
    weights = np.array([0.2, 0.7, 0.1], np.float32)
    fig = figures.vectors_2d(points, ["a", "<b>", "a"], weights=weights, highlight=np.array([1.5, -0.4]),
                             highlight_name="c <sum>", title="3 · Sum")
    go.Figure(fig.to_dict())  # the figure, built without validation, passes plotly's validation
    values, star = fig.data
    np.testing.assert_allclose(values.x, points[:, 0])
    np.testing.assert_allclose(values.y, points[:, 1])
    np.testing.assert_allclose(values.marker.size, 10 + 40 * weights)
    np.testing.assert_allclose(values.customdata, weights)
    assert list(values.text) == ["a", "&lt;b&gt;", "a"]
    np.testing.assert_allclose([*star.x, *star.y], [1.5, -0.4], rtol=1e-6)
    assert star.marker.symbol == "star"
    assert "&lt;sum&gt;" in star.hovertemplate and "<sum>" not in star.hovertemplate


def test_reserve_tick_margins_makes_room_for_a_legend_over_the_plot():
    def legend_figure(y=1.03, names=("α_t", "marked steps"), **legend):
        traces = [{"type": "scatter", "y": [1.0, 2.0], "name": n} for n in names]
        return plotly_json.quick_figure(traces, {"height": 760, "margin": {"l": 60, "r": 10, "t": 10, "b": 45},
                                                 "legend": {"orientation": "h", "yanchor": "bottom", "y": y, **legend}})
    # What plotly.js pushed the top margin to in Chromium (29 px legend + 10 px pad, raised with y):
    assert margins.reserve_tick_margins(legend_figure(1.0)).layout.margin.t == 39
    assert margins.reserve_tick_margins(legend_figure(1.03)).layout.margin.t == 59
    assert margins.reserve_tick_margins(legend_figure(1.1)).layout.margin.t == 101  # drawn at 100
    # Legends that do not sit over the plot, or may wrap to a second row, are left to plotly.js.
    for other in (legend_figure(0.5), legend_figure(yanchor="top"), legend_figure(orientation="v"),
                  legend_figure(names=[f"a rather long series name {i}" for i in range(6)]),
                  legend_figure(names=["one trace"])):
        assert margins.reserve_tick_margins(other).layout.margin.t == 10


def test_reserve_tick_margins_makes_room_for_the_last_number_at_the_right_end():
    def line(end, margin_r=20, **xaxis):
        xaxis = {"range": [-0.5, end], **xaxis}
        return plotly_json.quick_figure([{"type": "scatter", "x": [0.0, end], "y": [0.0, 1.0]}],
                                        {"margin": {"l": 60, "r": margin_r, "t": 20, "b": 45}, "xaxis": xaxis})
    # The feed-forward time axis at T = 1,001 ends 0.5 past its tick at 1,000, and at T = 5,000 the
    # tick at 5,000 is drawn 0.5 past the end: plotly.js widened a 20 px margin to 24 and 26 px in Chromium.
    assert margins.reserve_tick_margins(line(1000.5)).layout.margin.r >= 24
    assert margins.reserve_tick_margins(line(4999.5)).layout.margin.r >= 26
    # Ends far from any tick plotly.js may draw (800 or 500 at T = 1,000; 50 at T = 51, whose label is short) keep theirs.
    assert margins.reserve_tick_margins(line(999.5)).layout.margin.r == 20
    assert margins.reserve_tick_margins(line(50.5)).layout.margin.r == 20
    assert margins.reserve_tick_margins(line(1000.5, tickvals=[0, 500])).layout.margin.r == 20  # its own last tick
    assert margins.reserve_tick_margins(line(1000.5, tickvals=[0, 1000])).layout.margin.r >= 24
    assert margins.reserve_tick_margins(line(1000.5, margin_r=40)).layout.margin.r == 40  # never narrower
    # Text labels, formatted or turned labels, log and reversed axes are left to automargin, and so is
    # an axis inside the figure.
    for other in (line(1000.5, tickvals=[0, 1000], ticktext=["a", "b"]), line(1000.5, type="log"),
                  line(1000.5, tickangle=-90), line(1000.5, tickformat=".1%"), line(1000.5, range=[1000.5, -0.5]),
                  line(1000.5, domain=[0, 0.4]).update_layout(xaxis2={"domain": [0.6, 1]})):
        assert margins.reserve_tick_margins(other).layout.margin.r == 20
    # Steps set by hand are left to automargin too (with dtick 300 the last tick is 900), and a range
    # that is not finite is no error.
    for other in (line(1000.5, dtick=300), line(1000.5, nticks=3), line(1000.5, tickmode="linear"),
                  line(1000.5, range=[0, float("inf")]), line(1000.5, range=[-1e308, 1e308])):
        assert margins.reserve_tick_margins(other).layout.margin.r == 20
    # Large numbers are written short, as plotly.js does ("1T", not "1000000000000").
    assert margins._tick_label(1e12, 0)[1] == "1T" and margins._tick_label(25_000, 0)[1] == "25k"
    assert margins._tick_label(1_000, 0)[1] == "1000"
    assert margins.reserve_tick_margins(line(1e12 + 0.5)).layout.margin.r <= 24
    assert margins._auto_ticks(-0.5, 999.5) == [200, 500]  # a rough step of exactly 2 × 100 rounds up to 5 × 100

"""The app's chart look written into each figure (viz/chart_style.py), and its data revision."""

import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from viz import chart_style as cs
from viz.export import figure_bytes
from viz.plotly_json import quick_figure, side_by_side
from viz.transformer import statistic_heatmap


def spec(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def heatmap(z=None, **layout) -> go.Figure:
    z = np.arange(6, dtype=np.float32).reshape(2, 3) if z is None else z
    return go.Figure(go.Heatmap(z=z, x=["a", "b", "c"], y=["p", "q"], colorscale="Viridis"), layout=layout)


def test_the_look_is_the_pinned_streamlits_own():
    # The look copies the chart theme of Streamlit's browser component; no Python API gives it. An
    # upgrade of Streamlit fails here until the values are read again from its new version.
    requirements = (Path(__file__).resolve().parents[2] / "requirements.txt").read_text()
    assert streamlit.__version__ == re.search(r"^streamlit==(\S+)", requirements, re.M).group(1)
    bundle = "".join(path.read_text(errors="ignore") for path in
                     (Path(streamlit.__file__).parent / "static").rglob("*.js")).lower()
    colours = {cs.TEXT, cs.HEADING, cs.GRID, cs.BACKGROUND, *cs.COLORWAY, *cs.SEQUENTIAL}
    assert not [colour for colour in sorted(colours) if f"`{colour.lower()}`" not in bundle]


def test_the_look_is_in_the_layout_and_no_template_is_sent():
    fig = cs.house_style(heatmap(template="plotly_dark"))
    layout = spec(fig)["layout"]
    assert "template" not in layout
    assert layout["font"]["family"] == cs.FONT_FAMILY and layout["font"]["color"] == cs.TEXT
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == cs.BACKGROUND
    assert layout["colorway"] == list(cs.COLORWAY)
    assert layout["title"]["font"]["weight"] == 700 and layout["title"]["x"] == 0
    assert layout["xaxis"]["showgrid"] is False and layout["yaxis"]["gridcolor"] == cs.GRID
    assert layout["xaxis"]["tickcolor"] == cs.GRID  # a map's axes have ticks anyway


def test_the_figures_own_settings_win():
    fig = cs.house_style(heatmap(title={"text": "t", "x": 0.5}, margin={"l": 10, "t": 90},
                                 font={"size": 15}, xaxis={"showgrid": True, "side": "top"}))
    layout = spec(fig)["layout"]
    assert layout["title"]["x"] == 0.5 and layout["title"]["text"] == "t"
    assert layout["margin"] == {"l": 10, "t": 90, "pad": 8, "r": 0}
    assert layout["font"]["size"] == 15 and layout["font"]["family"] == cs.FONT_FAMILY
    assert layout["xaxis"]["showgrid"] is True and layout["xaxis"]["side"] == "top"


def test_plain_text_titles_take_the_house_font():
    fig = cs.house_style(quick_figure([{"type": "scatter", "y": [1, 2]}], {"title": "α", "xaxis": {"title": "t"}}))
    layout = spec(fig)["layout"]
    assert layout["title"] == {"text": "α", **cs.LAYOUT["title"]}
    assert layout["xaxis"]["title"]["text"] == "t" and layout["xaxis"]["title"]["font"]["color"] == cs.TEXT


def test_running_it_twice_changes_nothing():
    once = spec(cs.house_style(statistic_heatmap(np.random.default_rng(0).random((3, 4)), statistic="s", selected=(1, 2))))
    twice = spec(cs.house_style(cs.house_style(statistic_heatmap(np.random.default_rng(0).random((3, 4)),
                                                                 statistic="s", selected=(1, 2)))))
    assert once == twice


def test_bars_keep_their_category_axis_bare():
    # A grid or zero-line colour in a layout turns them on where plotly.js draws none by default.
    bars = cs.house_style(go.Figure([go.Bar(x=[0.2, 0.8], y=["a", "b"], orientation="h"), go.Bar(x=["u", "v"], y=[1, 2])]))
    layout = spec(bars)["layout"]
    assert layout["yaxis"]["showgrid"] is False and layout["yaxis"]["zeroline"] is False  # horizontal bars: y
    assert layout["xaxis"]["showgrid"] is False and layout["xaxis"]["zeroline"] is False  # upright bars: x
    assert "tickcolor" not in layout["yaxis"]  # a tick colour would turn ticks on


def test_map_axes_have_ticks_unless_they_show_no_labels():
    # Two maps side by side on one y axis: the right one's y axis shows no labels, and its tick marks
    # alone were drawn over the left map.
    maps = go.Figure([go.Heatmap(z=[[0, 1], [1, 0]]), go.Heatmap(z=[[1, 0], [0, 1]], xaxis="x2", yaxis="y2")])
    maps.update_layout(xaxis2={"anchor": "y2", "domain": [0.55, 1]}, xaxis={"domain": [0, 0.45]},
                       yaxis2={"anchor": "x2", "matches": "y", "showticklabels": False})
    layout = spec(cs.house_style(maps))["layout"]
    assert layout["yaxis"]["tickcolor"] and layout["xaxis2"]["tickcolor"] and layout["xaxis"]["tickcolor"]
    assert layout["yaxis2"]["ticks"] == "" and "tickcolor" not in layout["yaxis2"]


def test_traces_without_a_colour_of_their_own_get_the_house_one():
    fig = cs.house_style(go.Figure([go.Heatmap(z=[[0, 1]]), go.Scatter(y=[1, 2], mode="markers", marker={"size": [5, 9]})]))
    data = spec(fig)["data"]
    assert [stop[1] for stop in data[0]["colorscale"]] == list(cs.SEQUENTIAL)
    assert data[1]["marker"]["line"]["width"] == 0  # plotly.js outlines bubbles; Streamlit's look does not
    own = cs.house_style(heatmap())
    assert spec(own)["data"][0]["colorscale"][0][1] == "#440154"  # Viridis stays


def test_colour_axes_of_panel_figures_get_the_colour_bar_look():
    def panel(z):
        return go.Figure(go.Heatmap(z=z, coloraxis="coloraxis"), layout={"coloraxis": {"cmin": 0}})
    fig = cs.house_style(side_by_side([panel(np.zeros((2, 3))), panel(np.ones((2, 3)))]))
    layout = spec(fig)["layout"]
    axes = {k: layout[k] for k in layout if k.startswith("coloraxis")}
    assert len(axes) == 2
    for axis in axes.values():
        assert axis["cmin"] == 0 and axis["colorbar"]["outlinecolor"] == "transparent" and axis["colorbar"]["tickfont"]["color"] == cs.TEXT
        assert [stop[1] for stop in axis["colorscale"]] == list(cs.SEQUENTIAL)
    axes = [k for k in layout if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) >= 4 and all(layout[k]["gridcolor"] == cs.GRID for k in axes)


def test_data_revision_follows_the_data_and_nothing_else():
    z = np.random.default_rng(1).random((2, 3)).astype(np.float32)
    same = [cs.house_style(heatmap(z.copy(), title=title)) for title in ("one", "two")]
    assert same[0].layout.datarevision == same[1].layout.datarevision  # a layout change is not new data
    changed = z.copy()
    changed[1, 2] += 1e-6
    assert cs.house_style(heatmap(changed)).layout.datarevision != same[0].layout.datarevision
    relabelled = heatmap(z.copy())
    relabelled.data[0].x = ["a", "b", "d"]
    assert cs.house_style(relabelled).layout.datarevision != same[0].layout.datarevision
    as_f64 = cs.house_style(heatmap(z.astype(np.float64)))
    assert as_f64.layout.datarevision != same[0].layout.datarevision


ANY_VALUES = [[1, 2], (1, 2.5), {"a": [1, 2]}, "12", None, 1.5, np.array(["x", None], dtype=object), [True, "a"]]


def test_data_revision_takes_any_plotly_value_and_tells_them_apart():
    # Each kind of value plotly takes is digested (no TypeError), the same value always gives the
    # same digest, and different values give different ones.
    digests = [cs.data_revision([{"type": "scatter", "customdata": v}]) for v in ANY_VALUES]
    again = [cs.data_revision([{"type": "scatter", "customdata": v}]) for v in ANY_VALUES]
    assert digests == again
    assert len(set(digests)) == len(ANY_VALUES)
    assert all(re.fullmatch(r"[0-9a-f]+", d) for d in digests)


def test_html_export_carries_the_look_and_leaves_the_figure_alone():
    fig = go.Figure(go.Scatter(y=[1.0, 2.0]), layout={"template": pio.templates["plotly"]})
    page = figure_bytes(fig, "html").decode()
    assert json.dumps(list(cs.COLORWAY))[1:-1].replace(" ", "") in page.replace(" ", "")
    assert '"datarevision"' in page
    assert fig.layout.template.layout.colorway is not None and fig.layout.datarevision is None  # not changed


def test_vectors_go_as_short_lists_and_maps_stay_base64():
    third = np.array([1 / 3, 2 / 3, 0.1], np.float32)
    fig = quick_figure([{"type": "bar", "x": np.arange(3), "y": third},
                        {"type": "scatter", "x": third, "y": third, "marker": {"size": 10 + 40 * third}},
                        {"type": "heatmap", "z": np.outer(third, third)}], {})
    data = json.loads(pio.to_json(cs.house_style(fig), validate=False))["data"]
    assert data[0]["x"] == [0, 1, 2] and data[0]["y"] == [0.3333333, 0.6666667, 0.1]
    assert data[1]["marker"]["size"] == [23.33333, 36.66667, 14.0]
    assert "bdata" in data[2]["z"]  # a 2-D z is decoded into an Array of rows, which react passes


def test_gaps_in_a_vector_go_as_null_and_long_vectors_stay_base64():
    gappy = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], np.float32)
    long = np.zeros(cs.MAX_PLAIN + 1, np.float32)
    fig = quick_figure([{"type": "scatter", "y": gappy}, {"type": "scatter", "y": long}], {})
    data = json.loads(pio.to_json(cs.house_style(fig), validate=False))["data"]
    assert data[0]["y"] == [1.0, None, None, None, 2.0]
    assert "bdata" in data[1]["y"]


@given(arrays(np.float32, st.integers(1, 50), elements=st.floats(allow_nan=False, allow_infinity=False, width=32)))
def test_rounded_vectors_keep_seven_significant_digits(values):
    shown = np.array(cs._rounded(values), np.float64)
    exact = values.astype(np.float64)
    # Half a unit in the 7th digit, and at most the float32 value's own rounding beyond 10^±22.
    assert np.all(np.abs(shown - exact) <= 5.000001e-7 * np.abs(exact))
    assert all(len(repr(v)) <= 24 for v in shown.tolist())
    tame = (np.abs(exact) >= 1e-15) & (np.abs(exact) <= 1e15)
    assert all(len(repr(v)) <= 18 for v in shown[tame].tolist())  # short: 7 digits, a sign, a point and zeros


def test_data_revision_of_a_vector_sent_as_a_list_follows_its_values():
    base = cs.data_revision([{"y": [1.0, 2.0, None]}])
    assert base == cs.data_revision([{"y": [1.0, 2.0, None]}])
    for changed in ([1.0, 2.0, 3.0], [1.0, 2.0000001, None], [1.0, 2.0], ["1.0", 2.0, None]):
        assert cs.data_revision([{"y": changed}]) != base, changed


def _coloraxis_map() -> go.Figure:
    # a map whose colour bar is the layout's (coloraxis), as the images and Transformer builders draw theirs
    return go.Figure(go.Heatmap(z=np.eye(3, dtype=np.float32), coloraxis="coloraxis", x=["a", "b", "c"], y=["p", "q", "r"]),
                     layout={"margin": {"l": 10, "r": 10, "t": 60, "b": 10}, "coloraxis": {"colorbar": {"title": "α"}}})


def test_a_readied_figure_is_final_and_its_colour_bar_has_its_room_from_the_first_call():
    from models.induction.records import training_record
    from viz.induction import training_curves
    from viz.margins import _colorbar_room

    for fig in (_coloraxis_map(), training_curves(training_record("induction"))):
        once = spec(cs.for_the_page(fig))
        assert spec(cs.for_the_page(fig)) == once  # a figure shared between sessions is sent alike to all
    layout = spec(cs.for_the_page(_coloraxis_map()))["layout"]
    bar = layout["coloraxis"]["colorbar"]
    assert (bar["thickness"], bar["xpad"]) == (16, 24)  # the house look's bar ...
    assert layout["margin"]["r"] >= _colorbar_room(bar, 12)  # ... and the room that bar needs

"""AppTest for every page, and the router: registered pages == files in pages/."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from models.registry import PAGES
from tests.pages.conftest import ROOT, chart_data, chart_specs, decode, open_page


def test_registered_pages_are_exactly_the_files_in_pages():
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert on_disk == {p.file for p in PAGES}
    assert sum(p.default for p in PAGES) == 1
    for page in PAGES:
        assert page.url_path == Path(page.file).stem  # deep links work even before st.navigation runs


def test_app_routes_to_home_by_default():
    at = open_page("pages/home.py")
    assert not at.exception
    assert at.title[0].value == "Attention Lab"
    assert any("Catalogue" in h.value for h in at.header)


def test_home_shows_the_catalogue_and_a_live_example():
    at = open_page("pages/home.py")
    latex = [e.value for e in at.get("latex")] if at.get("latex") else []
    assert any("sqrt{d}" in x for x in latex)  # the scaled-dot formula from the registry
    before = chart_data(at, 0, "y")
    at.slider(key="home_temperature").set_value(0.1).run()
    after = chart_data(at, 0, "y")
    assert not at.exception
    assert after.max() > before.max()  # a colder softmax concentrates α


def test_playground_three_stages_and_widgets_change_the_figures():
    at = open_page("pages/playground.py")
    assert not at.exception
    specs = chart_specs(at)
    # One figure of four panels: the scores; α as bars over its heatmap row; the weighted sum; the query and
    # the keys. A control redraws this one figure.
    assert len(specs) == 2  # and, under it, the same q, k and v through a variant after 2017
    types = [t["type"] for t in specs[0]["data"]]
    assert types[:3] == ["bar", "bar", "heatmap"] and set(types[3:]) == {"scatter"}
    domains = [specs[0]["layout"][f"xaxis{t.get('xaxis', 'x')[1:]}"]["domain"] for t in specs[0]["data"][:4]]
    assert domains[0][1] < domains[1][0] and domains[1] == domains[2] and domains[2][1] < domains[3][0]
    weights_before = chart_data(at, 0, "y", trace=1)
    np.testing.assert_allclose(chart_data(at, 0, "z", trace=2), [weights_before], rtol=1e-6)  # the same α
    np.testing.assert_allclose(weights_before.sum(), 1.0, rtol=1e-5)
    assert [b.proto.popover.label for b in at.get("popover")][:5] == [
        "Export scores", "Export α", "Export sum", "Export q and k", "Export the whole figure"]
    at.slider(key="query_x").set_value(-2.0).run()
    assert not at.exception
    assert not np.allclose(chart_data(at, 0, "y", trace=1), weights_before)
    at.radio(key="mode").set_value("argmax").run()
    hard = chart_data(at, 0, "y", trace=1)
    assert sorted(hard.tolist()) == [0, 0, 0, 0, 1]


def test_playground_draws_the_query_and_the_keys_with_their_scores():
    at = open_page("pages/playground.py")
    traces = chart_specs(at)[0]["data"]  # the plane is the stages' last panel: its keys, then its query
    keys, query = traces[-2], traces[-1]
    assert keys["name"] == "keys k_j" and query["name"] == "query q"
    assert query["xaxis"] == keys["xaxis"] != traces[0]["xaxis"]  # a panel of its own
    layout = chart_specs(at)[0]["layout"]
    # the same scale on both of its axes, so that angles and lengths show as they are
    assert layout["yaxis" + query["yaxis"][1:]]["scaleanchor"] == query["xaxis"]
    assert (query["x"], query["y"]) == ([1.5], [0.5])
    scores = chart_data(at, 0, "y", trace=0)
    np.testing.assert_allclose(np.asarray(decode(keys["customdata"]))[:, 0], scores, rtol=1e-5)
    at.slider(key="query_x").set_value(-1.2).run()
    assert chart_specs(at)[0]["data"][-1]["x"] == [pytest.approx(-1.2)]


def test_playground_additive_score_starts_where_the_query_changes_alpha():
    # The additive score's tanh saturates: at τ = 1 its α stayed near 1/5 whatever the query. It opens at τ = 0.3,
    # where moving the query moves α.
    at = open_page("pages/playground.py")
    at.radio(key="mechanism").set_value("qkv-additive").run()
    assert at.slider(key="temperature_additive").value == 0.3
    before = chart_data(at, 0, "y", trace=1)
    at.slider(key="query_x").set_value(-3.0).run()
    at.slider(key="query_y").set_value(3.0).run()
    after = chart_data(at, 0, "y", trace=1)
    assert np.abs(after - before).max() > 0.2
    assert any("τ = 0.3" in c.value for c in at.caption)


def test_playground_sampling_converges_with_more_samples():
    at = open_page("pages/playground.py")
    at.radio(key="mode").set_value("sample").run()
    at.slider(key="samples").set_value(2000).run()
    spec = chart_specs(at)[0]
    soft = np.asarray(chart_data(at, 0, "y", trace=1))
    freq = np.asarray(chart_data(at, 0, "y", trace=2))
    # scores; soft α, frequency and the heatmap row; then the weighted sum
    assert [t["type"] for t in spec["data"]][:4] == ["bar", "bar", "bar", "heatmap"]
    assert spec["layout"]["showlegend"] is True  # which bar is which
    assert np.abs(soft - freq).max() < 0.05


def test_playground_sampling_controls_stay_drawn_and_are_greyed_out_unless_sampling():
    # Drawn in every mode (a mode change changes their state instead of mounting them), usable only
    # when the mode samples; a value set while sampling is kept through a soft run and used again.
    at = open_page("pages/playground.py")
    assert at.slider(key="samples").disabled and at.number_input(key="seed").disabled
    at.radio(key="mode").set_value("sample").run()
    assert not at.slider(key="samples").disabled and not at.number_input(key="seed").disabled
    at.slider(key="samples").set_value(40).run()
    assert "α vs. 40 samples" in chart_specs(at)[0]["layout"]["annotations"][1]["text"]
    at.radio(key="mode").set_value("soft").run()
    assert at.slider(key="samples").disabled and at.slider(key="samples").value == 40
    assert "samples" not in json.dumps(chart_specs(at)[0]["layout"])
    at.radio(key="mode").set_value("sample").run()
    assert "α vs. 40 samples" in chart_specs(at)[0]["layout"]["annotations"][1]["text"]


def test_playground_shows_every_formula_and_parameter_outside_the_fragment():
    at = open_page("pages/playground.py")
    # One table of the seven formulas, the score's prefix said once; the four parameterised scores'
    # hand-set matrices in one expander: all drawn by the page, not by the fragment a control reruns.
    table = next(m.value for m in at.markdown if m.value.startswith("| "))
    assert table.count("$") == 14 and r"\frac{q^\top k}{\sqrt{d}}" in table and "score(q, k)" not in table.split("\n")[0]
    assert any("hand-set" in e.label for e in at.expander)
    shown = [re.findall(r"mathtt\{(\w+)\\_(\w+)\}", x.value) for x in at.latex if "mathtt" in x.value]
    assert shown == [[("w", "general")], [("w", "concat"), ("v", "concat")],
                     [("w", "additive"), ("u", "additive"), ("v", "additive")], [("w", "location")]]
    before, tables = chart_data(at, 0, "y"), len(at.dataframe)  # the key/value editor
    at.radio(key="mechanism").set_value("qkv-additive").run()
    assert not at.exception
    assert not np.allclose(chart_data(at, 0, "y"), before)
    assert "Bahdanau" in " ".join(c.value for c in at.caption)  # the chosen score's summary and paper
    assert len(at.dataframe) == tables


def test_playground_exports_the_whole_figure_as_one_picture(monkeypatch):
    # Besides each panel's menu, one menu exports the four panels as the page shows them side by side:
    # pictures only (the numbers are in the panels' menus), wide enough for four panels.
    import ui.widgets

    drawn = []
    monkeypatch.setattr(ui.widgets, "image_export_available", lambda: (True, None))
    monkeypatch.setattr(ui.widgets, "figure_bytes", lambda fig, fmt: drawn.append((fig, fmt)) or b"%PDF")
    at = open_page("pages/playground.py")
    at.session_state["stages-menu"] = True
    at.run()
    assert not at.exception
    downloads = [b for b in at.get("download_button") if "stages-export-" in b.proto.id]
    assert [b.proto.label for b in downloads] == ["PNG image", "HTML (interactive, offline)"]
    made = [b.key for b in at.button if b.key and b.key.startswith("stages-")]
    assert made == ["stages-make-svg", "stages-make-pdf"]
    at.button(key="stages-make-pdf").click().run()
    assert not at.exception
    (fig, fmt), = drawn
    shown = chart_specs(at)[0]
    assert fmt == "pdf" and fig.layout.width == 4 * ui.widgets.WHOLE_PANEL_PX
    assert [t.type for t in fig.data] == [t["type"] for t in shown["data"]]  # the figure the page shows
    np.testing.assert_allclose(decode(fig.data[1].y), chart_data(at, 0, "y", trace=1))
    assert "Save PDF" in [b.label for b in at.get("download_button")]
    assert shown["layout"].get("width") is None  # the page's chart keeps its column's width

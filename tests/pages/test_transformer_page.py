"""AppTest of the Transformer page: three kinds of attention, a decoding step, Bahdanau beside the best
cross head, the encoder rollout, training snapshots, every Export menu, bad input."""

import numpy as np
import pytest

from models.encdec.records import best_cross_head, snapshot_steps
from tests.pages.conftest import chart_data, chart_specs, decode, open_page
from tests.pages.exports import assert_export_is_the_figure, recording_exports

PAGE = "pages/transformer.py"
TABS = {"encoder": "Encoder self-attention", "decoder": "Decoder masked self-attention", "cross": "Cross-attention"}
# Charts: the tab's head map and head grid, the decoding step (decoder and cross panels in one figure),
# Bahdanau, best head, rollout, snapshot grid.
MAP, GRID, STEP, BAHDANAU, BEST, ROLLOUT, SNAPSHOT = range(7)


@pytest.fixture(scope="module")
def session():
    """One AppTest session (the models load and compile once), recording every Export menu it shows."""
    patch = pytest.MonkeyPatch()
    calls = recording_exports(patch)
    app = open_page(PAGE, timeout=300)
    assert not app.exception, app.exception
    yield app, calls
    patch.undo()


@pytest.fixture
def at(session):
    return session[0]


def _title(app, index):
    return chart_specs(app)[index]["layout"]["title"]["text"]


def _tab(app, kind):
    app.session_state["tf_view"] = kind
    app.run()
    assert not app.exception, app.exception


def test_default_view_decodes_and_shows_the_encoder(at):
    assert at.title[0].value == "Transformer: three kinds of attention"
    assert any("`2018-05-09`" in m.value for m in at.markdown)
    assert len(chart_specs(at)) == 7
    assert _title(at, MAP) == "Encoder self-attention: layer 0, head 0"
    z = chart_data(at, MAP)
    assert z.shape == (10, 10) and np.allclose(z.sum(1), 1.0, atol=1e-4)
    grid = chart_specs(at)[GRID]["data"]
    assert len(grid) == 1  # 2 layers × 4 heads tiled as one heatmap, an empty line between the maps
    assert np.asarray(decode(grid[0]["z"]), dtype=float).shape == (2 * 11 - 1, 4 * 11 - 1)


def test_layer_and_head_pickers_change_the_map_and_leave_the_grid_as_it_was(at):
    before = chart_data(at, MAP)
    grid_before = at.get("plotly_chart")[GRID].proto.spec
    at.selectbox(key="tf_layer").set_value(1).run()
    at.selectbox(key="tf_head").set_value(3).run()
    assert _title(at, MAP) == "Encoder self-attention: layer 1, head 3"
    assert not np.allclose(chart_data(at, MAP), before)
    # An unchanged spec is not drawn again by the browser: the pickers cost one figure's redraw.
    assert at.get("plotly_chart")[GRID].proto.spec == grid_before


def test_decoder_tab_draws_the_masked_cells_blank(at):
    _tab(at, "decoder")
    # The views share their pickers: the layer and head picked on the encoder's view stay picked.
    assert _title(at, MAP) == "Decoder masked self-attention: layer 1, head 3"
    z = chart_data(at, MAP)
    upper = np.triu(np.ones((10, 10), bool), k=1)
    assert np.all(np.isnan(z[upper])) and np.all(z[~upper] > 0)
    assert np.allclose(np.nansum(z, 1), 1.0, atol=1e-4)
    assert chart_specs(at)[MAP]["layout"]["xaxis"]["ticktext"][:2] == ["&lt;s&gt;", "2"]


def test_cross_tab_and_the_best_head_beside_bahdanau(at):
    _tab(at, "cross")
    z = chart_data(at, MAP)
    assert z.shape == (10, 10) and np.allclose(z.sum(1), 1.0, atol=1e-4)
    layer, head = best_cross_head()
    assert _title(at, BEST) == f"Transformer: layer {layer}, head {head}"
    assert _title(at, BAHDANAU) == "Bahdanau (RNN): α over the input"
    assert chart_data(at, BAHDANAU).shape == chart_data(at, BEST).shape == (10, 10)
    assert at.dataframe, "the measured per-head table"


def test_decoding_step_slider_grows_the_prefix(at):
    assert chart_data(at, STEP).shape == (8, 1)  # step 0: every head reads only <s>
    at.slider(key="tf_position").set_value(6).run()
    assert not at.exception
    decoder, cross = chart_data(at, STEP, trace=0), chart_data(at, STEP, trace=1)
    assert decoder.shape == (8, 7) and cross.shape == (8, 10)
    layout = chart_specs(at)[STEP]["layout"]
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0]  # decoder left, cross right
    assert layout["yaxis2"]["matches"] == "y"  # the same layer · head rows
    assert np.allclose(decoder.sum(1), 1.0, atol=1e-4) and np.allclose(cross.sum(1), 1.0, atol=1e-4)
    assert any("t = 6" in m.value for m in at.markdown)


def test_rollout_fusion_and_method(at):
    mean = chart_data(at, ROLLOUT)
    np.testing.assert_allclose(mean.sum(1), 1.0, atol=1e-4)
    at.radio(key="tf_rollout_fusion").set_value("max").run()
    assert _title(at, ROLLOUT) == "Encoder rollout, heads fused by max"
    assert not np.allclose(chart_data(at, ROLLOUT), mean)
    at.radio(key="tf_rollout_method").set_value("flow").run()
    assert not at.exception and _title(at, ROLLOUT) == "Encoder flow, heads fused by max"


def test_training_snapshots(at):
    final = chart_data(at, SNAPSHOT)
    # the grid is one tiled heatmap: each row of each map sums to 1, the empty lines between them are blank
    assert np.isnan(final).any() and np.allclose(np.nansum(final, 1)[~np.isnan(final).all(1)], 4.0, atol=1e-3)
    at.select_slider(key="tf_step").set_value(0).run()
    assert not at.exception
    assert _title(at, SNAPSHOT).endswith("at training step 0")
    assert not np.allclose(chart_data(at, SNAPSHOT), final, equal_nan=True)
    assert any("**Output at step 0:**" in m.value and "`2018-05-09`" not in m.value for m in at.markdown)
    at.radio(key="tf_snapshot_kind").set_value("decoder").run()
    assert _title(at, SNAPSHOT) == "Decoder masked self-attention at training step 0"
    at.select_slider(key="tf_step").set_value(snapshot_steps()[-1]).run()


def test_random_example_outlines_the_true_alignment(at):
    at.button(key="tf_random").click().run()
    assert not at.exception and at.text_input(key="tf_text").value != "9 May 2018"
    assert "true alignment" in [t.get("name") for t in chart_specs(at)[BAHDANAU]["data"]]
    assert "true alignment" in [t.get("name") for t in chart_specs(at)[BEST]["data"]]


def test_every_export_menu_is_its_figure(session):
    """Runs after the tests above, which walk every tab and control: each menu they showed is checked."""
    at, calls = session
    seen = set()
    for key, record, fig in calls:
        if key == "home_example":
            continue
        assert_export_is_the_figure(key, record, fig)
        seen.add(key)
    assert {"tf_map", "tf_grid", "tf_step_decoder", "tf_step_cross", "tf_bahdanau", "tf_best_head", "tf_rollout",
                       "tf_snapshot"} == seen


def test_bad_input_gets_one_line(at):
    at.text_input(key="tf_text").input("   ").run()
    assert not at.exception and "empty" in at.error[0].value
    at.text_input(key="tf_text").input("<img src=x onerror=alert(1)>").run()
    assert not at.exception and any("does not look like a date" in w.value for w in at.warning)


def test_a_translation_folder_shows_its_cross_attention(monkeypatch):
    from pathlib import Path

    from models.registry import get_mechanism
    from tests.pages.conftest import chart_specs, decode, open_page

    root = Path(__file__).resolve().parents[1] / "fixtures" / "translation"
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(root))
    app = open_page("pages/transformer.py", timeout=300)
    assert not app.exception
    before = len(chart_specs(app))
    app.text_input(key="tf_model_dir").set_value("marian").run()
    app.text_input(key="tf_target").set_value("猫坐在垫子上。").run()
    assert not app.exception, app.exception
    expected = get_mechanism("transformer-cross").build(
        {"text": "The cat sat on the mat.", "model_dir": str(root / "marian"), "target": "猫坐在垫子上。"})
    specs = chart_specs(app)
    assert len(specs) == before + 2  # the head mean and one head
    np.testing.assert_allclose(np.asarray(decode(specs[before]["data"][0]["z"]), float), expected.extras["alignment"],
                               atol=1e-6)
    import html

    assert [html.unescape(y) for y in specs[before]["data"][0]["y"]] == list(expected.query_labels)  # its own pieces
    assert any("teacher forcing" in m.value for m in app.markdown)
    app.text_input(key="tf_model_dir").set_value("../..").run()
    assert not app.exception and app.error

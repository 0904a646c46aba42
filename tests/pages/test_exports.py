"""Every Export menu of every page hands out the record its figure was drawn from.

One AppTest per page walks the page's states that show a figure (modes, tabs, views) and, for
each Export menu shown, checks that the numbers of its CSV and JSON exports are the numbers
the figure draws (tests/pages/exports.py).
"""

import json

import numpy as np

from tests.pages.conftest import open_page
from tests.pages.exports import assert_export_is_the_figure, recording_exports
from viz.chart_style import FONT_FAMILY


def walk(at, calls, *, allow_blocks=(), home=False):
    """Checks every recorded export; returns the keys seen (open_page runs Home first: its
    menu is left out of other pages' walks)."""
    assert not at.exception, at.exception
    for chart in at.get("plotly_chart"):  # the look is in the figure, not in a theme (viz/chart_style.py)
        spec = json.loads(chart.proto.spec)
        assert chart.proto.theme == "" and "template" not in spec["layout"]
        assert "autoScale2d" in json.loads(chart.proto.config)["modeBarButtonsToRemove"]
        assert spec["layout"]["font"]["family"] == FONT_FAMILY
        assert spec["layout"]["datarevision"] and isinstance(spec["layout"]["datarevision"], str)
    seen = set()
    for key, record, fig in calls:
        if key == "home_example" and not home:
            continue
        assert_export_is_the_figure(key, record, fig, allow_blocks=key in allow_blocks)
        seen.add(key)
    calls.clear()
    return seen


def test_home_export(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/home.py")
    assert walk(at, calls, home=True) == {"home_example"}


def test_playground_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/playground.py")
    assert walk(at, calls) == {"scores", "weights", "context", "plane", "variant_weights"}
    at.radio(key="mode").set_value("sample").run()
    at.radio(key="mechanism").set_value("qkv-additive").run()
    assert walk(at, calls) == {"scores", "weights", "context", "plane", "variant_weights"}


def test_seq2seq_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/seq2seq.py", timeout=600)
    assert walk(at, calls) == {"s2s_main", "s2s_compare_a", "s2s_compare_b"}
    at.radio(key="s2s_variant").set_value("local-p").run()
    assert "s2s_main" in walk(at, calls)
    for view, keys in (("inputs", {"s2s_cmp_a", "s2s_cmp_b", "s2s_cmp_diff"}), ("learn", {"s2s_step"})):
        at.session_state["s2s_view"] = view
        at.run()
        assert walk(at, calls) == {"s2s_main"} | keys


def test_sentence_alignment_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/sentence_alignment.py", timeout=300)
    assert walk(at, calls) == {"al_heatmap"}
    at.radio(key="al_window_mode").set_value("local").run()
    assert walk(at, calls) == {"al_heatmap"}


def test_images_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/images.py", timeout=300)
    assert walk(at, calls) == {"export_soft", "export_hard"}
    at.session_state["img_view"] = "patches"
    at.run()
    assert walk(at, calls) == {"export_patch"}
    at.radio(key="patch_mode").set_value("sample").run()
    assert "export_patch" in walk(at, calls)


def test_feedforward_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/feedforward.py", timeout=300)
    assert walk(at, calls) == {"feedforward"}  # one figure, both models' rows


def test_han_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/han.py", timeout=300)
    assert walk(at, calls) == {"han_probs_sentiment", "han_probs_topic", "han_main_heatmap", "han_uw", "han_us",
                                   "han_b_heatmap", "han_cmp_sentences", "han_cmp_words"}


def test_self_attention_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/self_attention.py", timeout=300)
    neuron = {"sa_neuron_figure"}  # the neuron view, under every view
    assert walk(at, calls) == {"sa_head"} | neuron
    at.radio(key="sa_combine").set_value("mean").run()
    assert walk(at, calls) == {"sa_head"} | neuron
    for view, keys in (("model", {"sa_model", "sa_enlarged"}), ("flow", {"sa_rollout"}),
                       ("compare", {"sa_cmp_a", "sa_cmp_b", "sa_cmp_diff"}),
                       ("stats", {"sa_stats"})):
        at.session_state["sa_view"] = view
        at.run()
        assert walk(at, calls) == keys | neuron
    at.text_area(key="sa_pair").input("The dog barked at the mailman.").run()
    assert walk(at, calls) == {"sa_stats"} | neuron  # still on the statistics, now of the pair
    at.session_state["sa_view"] = "pair"
    at.run()
    assert walk(at, calls, allow_blocks={"sa_pair_blocks"}) == {"sa_pair_blocks"} | neuron


def test_transformer_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/transformer.py", timeout=300)
    assert walk(at, calls) == {"tf_map", "tf_grid", "tf_step_decoder", "tf_step_cross",
                               "tf_bahdanau", "tf_best_head", "tf_rollout", "tf_snapshot"}
    at.session_state["tf_view"] = "cross"
    at.run()
    grids = [record.meta.get("attention") for key, record, _ in calls if key == "tf_grid"]
    assert {"tf_map", "tf_grid"} <= walk(at, calls)
    assert grids == ["cross"]  # the views share their menus' keys: the menu exports the view shown


def test_induction_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/induction.py", timeout=300)
    assert walk(at, calls) == {"ind_curves", "ind_head_map", "ind_copy"}
    at.select_slider(key="ind_step").set_value(0).run()
    assert walk(at, calls) == {"ind_curves", "ind_head_map", "ind_copy"}


def test_language_model_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/language_model.py", timeout=300)
    assert walk(at, calls) == {"lm_head_view", "lm_model_view", "lm_curves"}


def test_inside_lm_exports(monkeypatch):
    import tests.pages.exports as ex

    drawn = ex.drawn_arrays

    def with_lines(fig):  # the sink rate over training is a line: its values are checked too
        return drawn(fig) + [(f"line {i}", np.asarray(t.y, np.float64)) for i, t in enumerate(fig.data)
                             if t.type == "scatter" and t.mode and "lines" in t.mode and t.y is not None]

    monkeypatch.setattr(ex, "drawn_arrays", with_lines)
    calls = recording_exports(monkeypatch)
    at = open_page("pages/inside_lm.py", timeout=300)
    assert walk(at, calls) == {"inside_step_view", "inside_probabilities"}
    for view, keys in (("head", {"inside_head_view"}), ("model", {"inside_model_view"})):
        at.segmented_control(key="inside_view").set_value(view).run()
        assert walk(at, calls) == keys
    for section, keys in (("lens", {"inside_lens_position", "inside_lens_grid"}), ("knockout", {"inside_knockout"}),
                          ("neuron", {"inside_neuron_figure"}),
                          ("sinks", {"inside_sinks", "inside_sink_rate", "inside_sink_history"})):
        at.segmented_control(key="inside_section").set_value(section).run()
        assert walk(at, calls) == keys


def test_explanation_exports(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page("pages/explanation.py", timeout=300)
    assert walk(at, calls) == {"ex_panels", "ex_pair", "ex_flow", "ex_flow_heads"}
    at.radio(key="ex_test_model").set_value("han").run()
    at.radio(key="ex_flow_model").set_value("gpt").run()
    assert walk(at, calls) == {"ex_panels", "ex_pair", "ex_flow", "ex_flow_heads"}


def test_an_export_menu_draws_its_buttons_only_while_open():
    # Closed, a menu is one popover element; opened (its state, as a click sets it), it holds
    # three image buttons and four downloads, and only that menu does.
    from ui.widgets import DATA_FORMATS, FORMAT_LABELS, IMAGE_FORMATS

    at = open_page("pages/images.py", timeout=300)
    assert not at.exception
    assert not at.get("download_button") and not [b for b in at.button if b.key and b.key.startswith("export_")]
    at.session_state["export_hard-menu"] = True
    at.run()
    assert not at.exception
    downloads = at.get("download_button")
    assert [b.proto.label for b in downloads] == [FORMAT_LABELS[f] for f in DATA_FORMATS]
    assert all(b.proto.id and "export_hard-export-" in b.proto.id for b in downloads)
    image_buttons = [b for b in at.button if b.key and b.key.startswith("export_")]
    assert [b.key for b in image_buttons] == [f"export_hard-make-{f}" for f in IMAGE_FORMATS]
    at.session_state["export_hard-menu"] = False
    at.run()
    assert not at.get("download_button")


def test_a_panel_built_on_export_exports_the_figure_it_builds(monkeypatch):
    # A page may hand a panel's figure as a builder (the images page does): an export calls it
    # then, and exports the figure it returns.
    import ui.widgets
    from models.registry import PLAYGROUND, mechanisms_on_page
    from viz.figures import attention_heatmap

    mechanism = mechanisms_on_page(PLAYGROUND.file)[0]
    record = mechanism.build(dict(mechanism.example))
    figure = attention_heatmap(record)
    exported = []
    monkeypatch.setattr(ui.widgets, "export_bytes", lambda rec, fmt, fig: exported.append((rec, fmt, fig)) or b"")
    ui.widgets._deferred_export(record, lambda: figure, "html")
    assert exported == [(record, "html", figure)]
    ui.widgets._deferred_export(record, figure, "svg")  # a figure as such is exported as it is
    assert exported[-1] == (record, "svg", figure)

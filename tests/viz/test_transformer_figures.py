"""Transformer figures, checked on the figure objects: model view, statistics, pair blocks."""

import numpy as np
import pytest

from models.heads.statistics import model_view_record
from models.record import AttentionRecord
from models.transformer.sentence_pairs import pair_block_shares
from viz import transformer as tv

XSS = "<img src=x onerror=alert(1)>"


def record(length=8, layers=2, heads=3, seed=0, tokens=None, segments=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(layers, heads, length, length))
    w = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    tokens = tokens or ["[CLS]", *[f"t{i}" for i in range(length - 2)], "[SEP]"]
    meta = {"segments": segments or [0] * length}
    return AttentionRecord("transformer", w, ("layer", "head", "query", "key"), tokens, tokens, meta=meta)


def test_model_view_has_one_map_per_layer_and_head():
    r = record(length=8)
    view = model_view_record(r)
    np.testing.assert_array_equal(view.weights, r.weights)  # short inputs: every cell as it is
    fig = tv.model_view(view)
    assert len(fig.data) == 1  # one heatmap: layers are bands of rows, heads bands of columns
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    assert z.shape == (2 * 8 + 1, 3 * 8 + 2)
    for layer in range(2):
        for head in range(3):
            rows, cols = tv.model_view_cell((8, 8), layer, head)
            np.testing.assert_allclose(z[rows, cols], r.weights[layer, head], rtol=1e-6)
    assert np.isnan(z[8]).all() and np.isnan(z[:, 8]).all() and np.isnan(z[:, 17]).all()  # the gaps
    assert np.count_nonzero(~np.isnan(z)) == r.weights.size
    assert list(fig.layout.yaxis.ticktext) == ["layer 0", "layer 1"]
    assert list(fig.layout.xaxis.ticktext) == ["head 0", "head 1", "head 2"]
    assert fig.data[0].y[9] == "layer 1 · [CLS] (0)" and fig.data[0].x[10] == "head 1 · t0 (1)"  # hover: token, position
    assert len(set(fig.data[0].x)) == len(fig.data[0].x) and len(set(fig.data[0].y)) == len(fig.data[0].y)  # categories stay apart
    assert "block-averaged" not in fig.layout.title.text
    assert "2 layers × 3 heads, 8 tokens" in fig.layout.title.text


@pytest.mark.parametrize("length", [7, 8])
def test_model_view_ticks_sit_between_rows_so_hover_names_every_token(length):
    # A tick on a category made plotly.js's %{y} show "layer 0" for the band's middle row.
    fig = tv.model_view(model_view_record(record(length=length)))
    for axis, size in ((fig.layout.yaxis, 2), (fig.layout.xaxis, 3)):
        ticks = list(axis.tickvals)
        assert len(ticks) == size and all(isinstance(t, float) and not t.is_integer() for t in ticks)
    for layer, tick in enumerate(fig.layout.yaxis.tickvals):  # each within its band, at most half a row off centre
        rows, _ = tv.model_view_cell((length, length), layer, 0)
        assert rows.start <= tick <= rows.stop - 1 and abs(tick - (rows.start + rows.stop - 1) / 2) <= 0.5


def test_model_view_names_a_space_and_tells_repeated_characters_apart():
    r = record(length=4, layers=1, heads=1, tokens=["1", " ", "1", "x"])
    fig = tv.model_view(model_view_record(r))
    assert [y.replace("\u200b", "") for y in fig.data[0].y] == ["layer 0 · 1 (0)", "layer 0 · ␣ (1)", "layer 0 · 1 (2)",
                                                                 "layer 0 · x (3)"]


def test_model_view_of_512_tokens_is_downsampled_and_says_so():
    r = record(length=512, layers=1, heads=2)
    view = model_view_record(r)
    fig = tv.model_view(view)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (64, 2 * 64 + 1)
    rows, cols = tv.model_view_cell((64, 64), 0, 1)
    np.testing.assert_array_equal(z[rows, cols], view.weights[0, 1])  # the export holds what the view draws
    assert view.meta["block_averaged"] and view.query_labels[0] == "[CLS] … t6 (0–7)"
    assert "block-averaged to 64×64" in fig.layout.title.text
    assert "512 tokens" in fig.layout.title.text
    assert fig.data[0].y[1] == "layer 0 · t7 … t14 (8–15)"  # block labels name the tokens they cover
    np.testing.assert_allclose(z[0, 0], r.weights[0, 0, :8, :8].mean(), rtol=1e-5)


def test_model_view_needs_layer_and_head_axes():
    flat = AttentionRecord("x", np.eye(2), ("query", "key"), ["a", "b"], ["a", "b"])
    with pytest.raises(ValueError):
        tv.model_view(flat)


def test_statistic_heatmap_values_hover_and_click_targets():
    values = np.arange(12, dtype=np.float32).reshape(3, 4) / 12
    fig = tv.statistic_heatmap(values, statistic="Share to [CLS]", selected=(2, 1))
    np.testing.assert_allclose(np.asarray(fig.data[0].z), values)
    assert list(fig.data[0].y) == ["layer 0", "layer 1", "layer 2"] and fig.data[0].x[3] == "head 3"
    assert fig.data[0].texttemplate == "%{z:.2f}"
    clicks = fig.data[1]
    assert len(clicks.x) == 12
    custom = np.asarray(clicks.customdata)
    assert custom[6].tolist()[:2] == [1, 2] and clicks.x[6] == "head 2" and clicks.y[6] == "layer 1"
    np.testing.assert_allclose(custom[:, 2], values.ravel())
    assert "%{customdata[2]:.4f}" in clicks.hovertemplate
    assert "Share to [CLS]" in fig.layout.title.text
    assert fig.layout.shapes[0].x0 == 0.5 and fig.layout.shapes[0].y0 == 1.5


def test_pair_blocks_figure_slices_the_four_blocks_with_escaped_labels():
    tokens = ["[CLS]", XSS, "[SEP]", "b", "b", "[SEP]"]
    segments = [0, 0, 0, 1, 1, 1]
    r = record(length=6, tokens=tokens, segments=segments)
    m = r.weights[0, 0]
    shares = {k: float(v[0, 0]) for k, v in pair_block_shares(r.weights, segments).items()}
    fig = tv.pair_blocks_figure(m, tokens, segments, shares=shares, title="pair")
    assert len(fig.data) == 4
    np.testing.assert_allclose(np.asarray(fig.data[1].z), m[:3, 3:], rtol=1e-6)  # A→B
    np.testing.assert_allclose(np.asarray(fig.data[2].z), m[3:, :3], rtol=1e-6)  # B→A
    assert [a.text.split(" ")[0] for a in fig.layout.annotations] == ["A→A", "A→B", "B→A", "B→B"]
    assert "mean row mass" in fig.layout.annotations[1].text
    assert "<img" not in "".join(fig.data[0].y) and "&lt;img" in fig.data[0].y[1]
    assert len(set(fig.data[3].x)) == 3  # repeated "b" kept apart
    assert tv.segment_title(segments) == "A: 3 tokens, B: 3 tokens"
    axes = [fig.layout[name] for name in fig.layout if name[1:5] == "axis"]
    assert len(axes) == 8 and all(axis.type == "category" for axis in axes)  # "1", "2" stay tokens


def test_head_heatmap_titles_axes():
    r = record(length=5)
    fig = tv.head_heatmap(r.weights[0, 1], r.query_labels, title="Layer 0, head 1")
    np.testing.assert_allclose(np.asarray(fig.data[0].z), r.weights[0, 1], rtol=1e-6)
    assert fig.layout.title.text == "Layer 0, head 1"
    assert fig.layout.xaxis.title.text == "key token"


def test_alignment_figure_outlines_local_windows():
    w = np.full((3, 6), 1 / 6, dtype=np.float32)
    extras = {"window_center": np.array([0.0, 2.0, 4.0], np.float32), "window_half_width": np.int32(1)}
    r = AttentionRecord("sentence-alignment", w, ("query", "key"), ["a", "b", XSS], list("uvwxyz"), extras=extras)
    fig = tv.alignment_figure(r, title="α")
    assert fig.layout.yaxis.title.text == "sentence 1" and fig.layout.xaxis.title.text == "sentence 2"
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(s.x0, s.x1) for s in rects] == [(-0.5, 1.5), (0.5, 3.5), (2.5, 5.5)]
    assert len([s for s in fig.layout.shapes if s.type == "circle"]) == 3
    assert "&lt;img" in fig.data[0].y[2]
    glob = AttentionRecord("sentence-alignment", w, ("query", "key"), ["a", "b", "c"], list("uvwxyz"))
    assert not tv.alignment_figure(glob).layout.shapes

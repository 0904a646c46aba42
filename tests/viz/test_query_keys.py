"""The Playground's query–key plane, and the seq2seq and encoder–decoder figures' texts in Chinese."""

import numpy as np
import pytest

from models.record import AttentionRecord
from viz.encdec import decoding_step_figure
from viz.i18n_text import gettext_for
from viz.query_keys import query_key_plane, query_key_record
from viz.seq2seq import alignment_heatmap, bottleneck_curve, context_bars

KEYS = np.array([[2.0, 0.1], [0.1, 2.0], [-1.0, -1.0]], np.float32)
QUERY = np.array([1.5, 0.5], np.float32)


def test_the_plane_draws_the_query_the_keys_and_their_scores_and_weights():
    scores = KEYS @ QUERY  # the dot product's scores
    weights = np.exp(scores) / np.exp(scores).sum()
    fig = query_key_plane(QUERY, KEYS, ["cat", "car", "<b>x</b>"], scores, weights, title="0 · q and k")
    lines, query_line, keys, query = fig.data
    np.testing.assert_allclose(np.c_[keys.x, keys.y], KEYS)
    np.testing.assert_allclose(keys.customdata, np.c_[scores, weights], rtol=1e-6)
    assert list(keys.text) == ["cat", "car", "&lt;b&gt;x&lt;/b&gt;"]  # escaped
    assert "score = %{customdata[0]:.3f}" in keys.hovertemplate and "α = %{customdata[1]:.3f}" in keys.hovertemplate
    assert (query.x[0], query.y[0]) == (1.5, 0.5) and query.marker.symbol == "star"
    sizes = np.asarray(keys.marker.size)
    assert sizes.argmax() == weights.argmax()  # the highest α, the largest dot
    assert list(lines.x) == [0.0, 2.0, None, 0.0, pytest.approx(0.1), None, 0.0, -1.0, None]  # a ray per key
    reach = fig.layout.xaxis.range[1]
    assert reach >= 2.0 and fig.layout.yaxis.range[1] == reach  # every point in view, the same scale


def test_the_plane_refuses_mismatched_arrays():
    with pytest.raises(ValueError):
        query_key_plane(QUERY, KEYS, ["a", "b"], np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError):
        query_key_plane(np.zeros(3), KEYS, ["a", "b", "c"], np.zeros(3), np.zeros(3))


def test_figure_texts_come_in_chinese():
    zh = gettext_for("zh")
    plane = query_key_plane(QUERY, KEYS, ["a", "b", "c"], np.zeros(3), np.full(3, 1 / 3), gettext=zh)
    assert plane.layout.xaxis.title.text == "第 1 维" and plane.data[3].name == "查询 q"
    record = AttentionRecord(mechanism="bahdanau", weights=np.full((2, 3), 1 / 3, np.float32), axes=("query", "key"),
                             query_labels=("2", "0"), key_labels=("9", " ", "M"))
    heat = alignment_heatmap(record, truth=[(0, 1), (1, 2)], gettext=zh)
    assert heat.layout.xaxis.title.text == "输入字符" and heat.data[1].name == "真实对齐"
    assert "输出 %{customdata[0]} (行 %{customdata[2]})" in heat.data[0].hovertemplate
    assert alignment_heatmap(record).layout.xaxis.title.text == "input character"  # English by default
    bars = context_bars(np.zeros(4), ["0", "1", "2", "3"], gettext=zh)
    assert bars.layout.xaxis.title.text.startswith("c 的单元")
    curve = bottleneck_curve(["10", "20"], {"bahdanau": [1.0, 0.9]}, gettext=zh)
    assert curve.layout.yaxis.title.text == "完全匹配率（%）"
    assert not curve.layout.shapes  # no bucket past training: nothing shaded


def test_the_bottleneck_curve_shades_the_buckets_past_training():
    names = ["1–30", "31–120", "121–240", "241–480"]
    curve = bottleneck_curve(names, {"bahdanau": [1.0, 1.0, 0.9, 0.8], "no-attention": [1.0, 0.9, 0.5, 0.2]},
                             first_past_training=2)
    (shade,) = curve.layout.shapes
    # Categories sit at x = 0, 1, 2, 3: the shade covers the last two, from half-way after "31–120".
    assert (shade.x0, shade.x1, shade.xref, shade.yref) == (1.5, 3.5, "x", "paper")
    (label,) = curve.layout.annotations
    assert label.text == "longer than any training input" and 1.5 <= label.x < 2
    zh = bottleneck_curve(names, {"bahdanau": [1.0, 1.0, 0.9, 0.8]}, first_past_training=2, gettext=gettext_for("zh"))
    assert zh.layout.annotations[0].text == "比任何训练输入都长"


def test_the_decoders_step_0_says_what_it_shows():
    weights = np.ones((4, 1), np.float32)  # 4 heads, one key: <s>
    record = AttentionRecord(mechanism="transformer-decoder", weights=weights, axes=("head", "key"),
                             query_labels=tuple(f"layer {i // 2} · head {i % 2}" for i in range(4)), key_labels=("<s>",),
                             meta={"attention": "decoder", "decoding_step": 0})
    fig = decoding_step_figure(record, title="Step 0")
    note = fig.layout.annotations[0].text
    assert "only the start token &lt;s&gt;" in note
    assert fig.layout.margin.t > 50  # its line sits between the title and the map
    later = AttentionRecord(mechanism="transformer-decoder", weights=np.full((4, 2), 0.5, np.float32),
                            axes=("head", "key"), query_labels=record.query_labels, key_labels=("<s>", "2"),
                            meta={"attention": "decoder", "decoding_step": 1})
    assert not decoding_step_figure(later, title="Step 1").layout.annotations
    assert "起始符" in decoding_step_figure(record, gettext=gettext_for("zh")).layout.annotations[0].text


def test_the_playground_figure_holds_the_three_stages_and_the_plane_and_says_the_samples():
    from models.playground.records import context_record, score_record
    from models.registry import get_mechanism
    from viz.query_keys import stages_figure

    options = {"query": QUERY, "keys": KEYS, "values": KEYS, "labels": ["cat", "car", "x"], "temperature": 1.0,
               "seed": 0, "samples": 40}
    dot = get_mechanism("qkv-dot")
    for mode in ("soft", "sample"):
        record = dot.build({**options, "mode": mode})
        scores, points = score_record(record), context_record(record)
        figure, panels = stages_figure(record, scores, points, QUERY, KEYS)
        assert len(panels) == 4
        # the panels' traces, in order, the plane's four last (rays, the query's ray, the keys, the query)
        assert len(figure.data) == sum(len(s.data) for s in panels) and len(panels[-1].data) == 4
        np.testing.assert_allclose(figure.data[-1].x, [QUERY[0]])
        heads = [a.text for a in figure.layout.annotations]
        assert any("40 samples" in h for h in heads) == (mode == "sample")
        names = {t.name for t in figure.data if t.showlegend is not False}
        assert ("sample frequency" in names) == (mode == "sample")  # α and the frequency told apart in the legend


def test_the_plane_exports_the_record_it_draws():
    # "Why a key scores high" has an Export menu: its record holds each key where the plane draws it,
    # with the score and α its hover gives, and the query the star marks.
    from models.playground.records import context_record, score_record
    from models.registry import get_mechanism
    from viz.export import record_bytes
    from viz.query_keys import stages_figure

    record = get_mechanism("qkv-scaled-dot").build({"query": QUERY, "keys": KEYS, "values": KEYS,
                                                    "labels": ["cat", "car", "x"], "temperature": 0.5,
                                                    "mode": "soft", "seed": 0, "samples": 40})
    plane = stages_figure(record, score_record(record), context_record(record), QUERY, KEYS)[1][-1]
    table = query_key_record(record)
    assert table.axes == ("key", "quantity") and table.query_labels == ("cat", "car", "x")
    keys = next(t for t in plane.data if t.mode == "markers+text" and t.name != "query q")
    np.testing.assert_allclose(table.weights[:, :2], np.c_[keys.x, keys.y])
    np.testing.assert_allclose(table.weights[:, 2:], np.asarray(keys.customdata), rtol=1e-6)  # score, α
    np.testing.assert_allclose(table.weights[:, 3], record.weights[0])
    np.testing.assert_allclose(table.meta["query"], QUERY)
    csv = record_bytes(table, "csv").decode().splitlines()
    assert csv[0].endswith("dim 1,dim 2,score,α") and csv[1].startswith("cat,2,0.1,")

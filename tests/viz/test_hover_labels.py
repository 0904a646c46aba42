"""Hover text of the date heatmaps (Seq2seq and Transformer pages), read the way plotly.js writes it.

The figures are built from real records, as the pages build them, and sent through JSON as
Streamlit sends them. `hover` then fills in each hovertemplate for one point as plotly.js does:
%{customdata[k]} from the point's customdata, %{z:.4f} with the format, and a bare %{x} or %{y}
as the axis's hover label, which on an axis with tickvals/ticktext is the tick text of the tick
at that point (plotly.js Axes.tickText with hover = true), i.e. the character, not the index.
"""

import json
import re

import numpy as np
import pytest

from models.encdec.records import decoding_step_record, encoder_rollout_record, head_record
from models.registry import get_mechanism
from models.seq2seq.records import random_example
from tests.pages.conftest import decode
from viz.encdec import attention_map, decoding_step_figure, rollout_figure
from viz.labels import safe_label
from viz.plotly_json import side_by_side
from viz.seq2seq import alignment_heatmap

TEXT = "Wednesday 9 May 2018"  # output "2018-05-09": characters that are digits, but not their positions
FIELD = re.compile(r"%{([^\s%{}:|]*)([:|][^}]*)?}")  # plotly.js's hovertemplate field


def spec(fig) -> dict:
    """Returns the figure as the browser receives it."""
    return json.loads(fig.to_json())


def _axis_label(layout: dict, axis_id: str, values, index: int) -> str:
    # What plotly.js shows for a bare %{x} / %{y}: the tick text of a tick at the point, else the
    # category name or the number.
    axis = layout.get(axis_id[0] + "axis" + axis_id[1:], {})
    value = values[index]
    category = isinstance(value, str) or axis.get("type") == "category"
    categories = [str(v) for v in values]
    position = float(index if category else value)
    ticktext, tickvals = axis.get("ticktext"), axis.get("tickvals")
    if axis.get("tickmode") == "array" and ticktext is not None and tickvals is not None:
        span = axis.get("range") or [-0.5, len(values) - 0.5]
        close = abs(span[1] - span[0]) / 10000
        for tick, text in zip(tickvals, ticktext):
            at = categories.index(tick) if category and isinstance(tick, str) else float(tick)
            if abs(position - at) < close:
                return str(text)
    if category:
        return str(value)
    return str(int(value)) if float(value).is_integer() else str(value)


def hover(figure: dict, trace_index: int, point) -> str:
    """Returns the hover text plotly.js shows for `point` ((row, column) of a heatmap, the index of
    a scatter point) of trace `trace_index` of a figure spec, without its <extra> part."""
    trace, layout = figure["data"][trace_index], figure["layout"]
    xs, ys = list(decode(trace["x"])), list(decode(trace["y"]))
    if trace["type"] == "heatmap":
        i, j = point
        at = {"x": j, "y": i}
        values = {"z": np.asarray(decode(trace["z"]))[i][j], "customdata": trace["customdata"][i][j]}
    else:
        at = {"x": point, "y": point}
        values = {"customdata": trace["customdata"][point] if "customdata" in trace else None}
    axes = {"x": trace.get("xaxis", "x"), "y": trace.get("yaxis", "y")}

    def field(match: re.Match) -> str:
        key, form = match.group(1), match.group(2)
        name = re.match(r"\w+", key).group(0)
        if name in "xy" and not form:
            return _axis_label(layout, axes[name], xs if name == "x" else ys, at[name])
        value = values[name] if name in values else (xs if name == "x" else ys)[at[name]]
        for index in re.findall(r"\[(\d+)\]", key):
            value = value[int(index)]
        return format(value, form[1:]) if form else str(value)

    return re.sub(r"<extra>.*?</extra>", "", FIELD.sub(field, trace["hovertemplate"]))


def shown(label) -> str:
    """Returns a character as the maps write it: escaped, a space as "␣"."""
    return safe_label("␣" if str(label) == " " else label)


def cell_hover(query_name: str, query, i: int, key_name: str, key, j: int, alpha: float) -> str:
    query_part = f"{query_name} " if query_name else ""
    return (f"{query_part}{shown(query)} (row {i})<br>{key_name} {shown(key)} (pos {j})"
            f"<br>α = {alpha:.4f}")


def _check_cells(figure: dict, record, cells, query_name: str, key_name: str, trace: int = 0) -> None:
    weights = np.asarray(record.matrix(), dtype=np.float32)
    for i, j in cells:
        expected = cell_hover(query_name, record.query_labels[i], i, key_name, record.key_labels[j], j, weights[i, j])
        assert hover(figure, trace, (i, j)) == expected, (i, j)


# Seq2seq page ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seq2seq_record():
    return get_mechanism("local-p").build({"text": TEXT, "window": 3, "step": None})


def test_seq2seq_hover_shows_each_cells_row_and_position(seq2seq_record):
    record = seq2seq_record
    assert "".join(record.query_labels) == "2018-05-09"
    fig = alignment_heatmap(record, title="Luong local-p: α over the input")  # as pages/seq2seq.py draws it
    figure = spec(fig)
    # Cells whose characters are not their positions: "2" at row 0, "9" at position 10, "M" at 12, ...
    cells = [(0, 0), (0, 10), (3, 12), (4, 9), (7, 16), (9, len(TEXT) - 1)]
    _check_cells(figure, record, cells, "output", "input")
    assert hover(figure, 0, (0, 10)) == f"output 2 (row 0)<br>input 9 (pos 10)<br>α = {record.weights[0, 10]:.4f}"
    # Still light: four entries per cell, and the weights as float32.
    assert np.asarray(fig.data[0].customdata).shape == (10, len(TEXT), 4)
    assert np.asarray(decode(figure["data"][0]["z"])).dtype == np.float32


def test_seq2seq_truth_markers_hover_with_their_cells_indices():
    example = random_example(1001)  # the page's "Random example" (seed 1000 + 1)
    record = get_mechanism("bahdanau").build({"text": example.source, "window": 3, "step": None})
    truth = [list(span) for span in example.spans]
    figure = spec(alignment_heatmap(record, truth=truth, title="Bahdanau: α over the input"))
    markers = figure["data"][1]
    assert markers["name"] == "true alignment"
    expected = [(i, j) for i, (start, end) in enumerate(truth) for j in range(start, end) if start >= 0]
    assert len(markers["x"]) == len(expected) > 0
    for k, (i, j) in enumerate(expected):
        assert (markers["y"][k], markers["x"][k]) == (i, j)
        assert hover(figure, 1, k) == (f"output {shown(record.query_labels[i])} (row {i})<br>"
                                       f"input {shown(example.source[j])} (pos {j})<br>in the true span")


def test_hover_keeps_labels_and_names_escaped():
    text = "<b>9 May 2018 & %{y}"
    record = get_mechanism("bahdanau").build({"text": text, "window": 3, "step": None})
    figure = spec(alignment_heatmap(record, query_name="<i>row%{y}</i>", key_name="col & co"))
    trace = figure["data"][0]
    assert "<i>" not in trace["hovertemplate"] and "%{y}" not in trace["hovertemplate"]
    assert trace["customdata"][0][0][1] == "&lt;"  # the user's characters as escaped text
    weights = np.asarray(record.matrix(), dtype=np.float32)
    for j in (0, 1, 2, text.index("&"), text.index("%")):
        assert hover(figure, 0, (1, j)) == (
            f"&lt;i&gt;row&#37;{{y}}&lt;/i&gt; {shown(record.query_labels[1])} (row 1)<br>"
            f"col &amp; co {shown(text[j])} (pos {j})<br>α = {weights[1, j]:.4f}")


# Transformer page -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def transformer_records():
    return {kind: get_mechanism(f"transformer-{kind}").build({"text": TEXT, "step": None})
            for kind in ("encoder", "decoder", "cross")}


def test_encoder_self_attention_hover_names_both_sides_input_queries_and_keys(transformer_records):
    one = head_record(transformer_records["encoder"], 1, 2)
    figure = spec(attention_map(one, title="Encoder self-attention: layer 1, head 2"))
    assert one.query_labels == one.key_labels == tuple(TEXT)
    cells = [(0, 0), (3, 9), (10, 12), (14, 5), (len(TEXT) - 1, 0)]  # (3, 9): "n" → the space
    _check_cells(figure, one, cells, "query: input", "key: input")
    assert hover(figure, 0, (3, 9)).startswith("query: input n (row 3)<br>key: input ␣ (pos 9)<br>")


def test_decoder_self_attention_hover_names_output_queries_and_the_keys_read(transformer_records):
    one = head_record(transformer_records["decoder"], 0, 1)
    figure = spec(attention_map(one, title="Decoder masked self-attention: layer 0, head 1"))
    assert one.key_labels[0] == "<s>"
    _check_cells(figure, one, [(0, 0), (6, 0), (5, 3), (9, 4), (9, 9)], "query: output", "key: read so far")
    assert hover(figure, 0, (6, 0)).startswith("query: output 5 (row 6)<br>key: read so far &lt;s&gt; (pos 0)<br>")


def test_cross_attention_hover_and_truth_markers(transformer_records):
    example = random_example(2001)  # the page's "Random example" (seed 2000 + 1)
    record = get_mechanism("transformer-cross").build({"text": example.source, "step": None})
    one = head_record(record, 1, 3)
    truth = [list(span) for span in example.spans]
    figure = spec(attention_map(one, title="Cross-attention: layer 1, head 3", truth=truth))
    cells = [(i, j) for i in (0, 4, 9) for j in (0, len(example.source) // 2, len(example.source) - 1)]
    _check_cells(figure, one, cells, "query: output", "key: input")
    markers = figure["data"][1]
    for k in range(len(markers["x"])):
        i, j = markers["y"][k], markers["x"][k]
        assert hover(figure, 1, k) == (f"query: output {shown(one.query_labels[i])} (row {i})<br>"
                                       f"key: input {shown(example.source[j])} (pos {j})<br>in the true span")


@pytest.mark.parametrize("position", [0, 6])
def test_decoding_step_hover_names_the_head_row_and_the_key(transformer_records, position):
    # As pages/transformer.py draws it: the decoder's and the cross panel side by side.
    steps = {kind: decoding_step_record(transformer_records[kind], position) for kind in ("decoder", "cross")}
    panels = [decoding_step_figure(steps[kind], title=f"Step {position}: {kind}") for kind in ("decoder", "cross")]
    figure = spec(side_by_side(panels, share_y=True, gap=0.06))
    heatmaps = [index for index, trace in enumerate(figure["data"]) if trace["type"] == "heatmap"]
    assert len(heatmaps) == 2
    for trace, kind, key_name in zip(heatmaps, ("decoder", "cross"), ("key: read so far", "key: input")):
        step = steps[kind]
        width = len(step.key_labels)
        assert step.query_labels[3] == "layer 0 · head 3"
        cells = [(0, 0), (3, 0), (5, width - 1), (7, width // 2)]
        weights = np.asarray(step.matrix(), dtype=np.float32)
        for i, j in cells:
            assert hover(figure, trace, (i, j)) == (
                f"{shown(step.query_labels[i])} (row {i})<br>{key_name} {shown(step.key_labels[j])} (pos {j})"
                f"<br>α = {weights[i, j]:.4f}"), (kind, i, j)
    assert hover(figure, heatmaps[0], (3, 0)).startswith("layer 0 · head 3 (row 3)<br>key: read so far &lt;s&gt; (pos 0)")


def test_rollout_hover_names_input_rows_and_columns():
    rolled = encoder_rollout_record(get_mechanism("transformer-encoder"), TEXT, method="rollout", fusion="mean")
    figure = spec(rollout_figure(rolled, title="Encoder rollout, heads fused by mean"))
    _check_cells(figure, rolled, [(0, 0), (3, 9), (10, 12), (len(TEXT) - 1, 2)],
                 "after the last layer: input", "embedding: input")


def test_bahdanau_beside_the_best_head_keeps_output_and_input():
    # The Transformer page draws Bahdanau's map with alignment_heatmap's own names.
    record = get_mechanism("bahdanau").build({"text": TEXT})
    figure = spec(alignment_heatmap(record, title="Bahdanau (RNN): α over the input", height=380))
    _check_cells(figure, record, [(0, 0), (2, 14), (9, 19)], "output", "input")

"""The playground mechanisms: records, validation and the registry entries."""

import numpy as np
import pytest

from models.playground import records as pg
from models.record import InputError
from models.registry import MECHANISMS, get_mechanism


def test_soft_record_is_softmax_of_dot_scores():
    r = get_mechanism("qkv-dot").build({"query": "1,2"})
    scores = pg.DEFAULT_KEYS @ np.array([1.0, 2.0])
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(r.weights[0], expected, rtol=1e-5)
    np.testing.assert_allclose(r.extras["context"], expected @ pg.DEFAULT_VALUES, rtol=1e-5)
    assert r.axes == ("query", "key") and r.key_labels == pg.DEFAULT_LABELS


def test_argmax_and_sample_modes():
    hard = get_mechanism("qkv-dot").build({"query": "0,3", "mode": "argmax"})
    assert hard.weights[0].tolist() == [0, 0, 1, 0, 0]  # "car" has the largest dim-2 key
    np.testing.assert_allclose(hard.extras["context"], pg.DEFAULT_VALUES[2])
    sampled = get_mechanism("qkv-dot").build({"mode": "sample", "samples": 400, "seed": 1})
    assert sampled.extras["samples"].shape == (400,)
    np.testing.assert_allclose(sampled.weights[0].sum(), 1.0, rtol=1e-6)
    again = get_mechanism("qkv-dot").build({"mode": "sample", "samples": 400, "seed": 1})
    np.testing.assert_array_equal(sampled.extras["samples"], again.extras["samples"])


@pytest.mark.parametrize("mechanism", [m.id for m in MECHANISMS if m.id.startswith("qkv-")])
def test_every_playground_score_gives_a_distribution(mechanism):
    r = get_mechanism(mechanism).build({"temperature": 0.5})
    assert r.weights.shape == (1, 5)
    np.testing.assert_allclose(r.weights.sum(), 1.0, rtol=1e-5)


def test_location_score_ignores_key_contents():
    a = get_mechanism("qkv-location").build({"keys": "1,0;0,1;2,2", "values": "1;2;3", "query": "1,1"})
    b = get_mechanism("qkv-location").build({"keys": "9,9;-5,3;0,0", "values": "1;2;3", "query": "1,1"})
    np.testing.assert_allclose(a.weights, b.weights)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"query": "1"}, "exactly 2"),
        ({"keys": "a,b"}, "numbers"),
        ({"keys": "1,2;3,4", "values": "1;2;3"}, "one value per key"),
        ({"temperature": 0.0}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"mode": "sample", "samples": 0}, "samples"),
        ({"keys": ";".join(["1,1"] * 40), "values": ";".join(["1"] * 40)}, "at most"),
        ({"query": "1e9,0"}, "within"),
    ],
)
def test_bad_input_raises_one_line_input_error(options, message):
    with pytest.raises(InputError, match=message) as info:
        get_mechanism("qkv-dot").build({**options})
    assert "\n" not in str(info.value)


def test_table_to_kv_reports_the_bad_cell():
    rows = pg.default_table()
    rows[1]["k2"] = "x"
    with pytest.raises(InputError, match="row 2: column k2"):
        pg.table_to_kv(rows)
    empty = {"label": None, "k1": None, "k2": None, "v1": None, "v2": None}
    with pytest.raises(InputError, match="row 3: column k2"):  # its place in the table, the empty row counted
        pg.table_to_kv([rows[0], empty, rows[1]])
    with pytest.raises(InputError, match="row 1: column v1"):  # an int no float holds
        pg.table_to_kv([{**rows[0], "v1": 10**400}])
    with pytest.raises(InputError, match="empty"):
        pg.table_to_kv([{"label": "a", "k1": None, "k2": None, "v1": None, "v2": None}])
    labels, keys, values = pg.table_to_kv([{"label": None, "k1": 1, "k2": 2, "v1": 3, "v2": 4}])
    assert labels == ["k1"] and keys.shape == (1, 2)


def test_score_and_context_records_hold_the_numbers_their_figures_draw():
    record = get_mechanism("qkv-additive").build({"query": "0.3,1.2", "temperature": 0.5})
    scores = pg.score_record(record)
    np.testing.assert_array_equal(scores.weights[0], record.extras["scores"])
    assert scores.key_labels == record.key_labels
    points = pg.context_record(record)
    assert points.axes == ("point", "coordinate") and points.key_labels == ("dim 1", "dim 2", "α")
    np.testing.assert_array_equal(points.weights[:-1, :2], pg.DEFAULT_VALUES)
    np.testing.assert_array_equal(points.weights[:-1, 2], record.weights[0])
    np.testing.assert_allclose(points.weights[-1, :2], record.weights[0] @ pg.DEFAULT_VALUES, rtol=1e-5)
    assert points.query_labels[:-1] == record.key_labels

"""The canonical attention record: validation, the matrix view, and its JSON and npz forms."""

import io
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.record import AttentionRecord
from viz.export import record_bytes


def test_labels_axes_and_meta_are_validated():
    with pytest.raises(ValueError, match="key labels"):
        AttentionRecord("x", np.zeros((2, 3)), ("query", "key"), ("a", "b"), ("a",))
    with pytest.raises(ValueError, match="query labels"):
        AttentionRecord("x", np.zeros((2, 3)), ("query", "key"), ("a",), ("a", "b", "c"))
    with pytest.raises(ValueError, match="axes name"):
        AttentionRecord("x", np.zeros((2, 3)), ("query",), ("a", "b"), ("a", "b", "c"))
    with pytest.raises(TypeError):
        AttentionRecord("x", np.zeros((1, 1)), ("query", "key"), ("a",), ("b",), meta={"bad": object()})


def test_matrix_fixes_leading_axes_and_flattens_trailing_ones():
    w = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
    r = AttentionRecord("x", w, ("layer", "head", "query", "key"), list("abcd"), list("abcd"))
    assert r.leading_axes == ("layer", "head") and r.query_axis == 2
    np.testing.assert_array_equal(r.matrix(layer=1, head=2), w[1, 2])
    np.testing.assert_array_equal(r.matrix(), w[0, 0])
    with pytest.raises(KeyError, match="cannot fix"):
        r.matrix(word=1)
    grid = AttentionRecord("x", np.ones((2, 3, 3)), ("word", "row", "col"), ["a", "b"], [f"c{i}" for i in range(9)])
    assert grid.leading_axes == () and grid.matrix().shape == (2, 9)
    line = AttentionRecord("x", np.ones(5), ("time",), ["c"], list("abcde"))
    assert line.query_axis is None and line.matrix().shape == (1, 5)


def test_json_and_npz_round_trip_with_extras_and_non_finite_values():
    w = np.array([[0.25, np.nan, 0.75]], np.float32)
    r = AttentionRecord("m", w, ("query", "key"), ["q"], ["a", "b", "c"], meta={"k": 1},
                        extras={"scores": np.array([1.0, np.inf, 3.0]), "words": np.array(["x", "y"])})
    data = json.loads(record_bytes(r, "json"))
    assert data["weights"] == [[0.25, None, 0.75]] and data["scores"] == [1.0, None, 3.0]
    assert data["axes"] == ["query", "key"] and data["shape"] == [1, 3] and data["meta"] == {"k": 1}
    z = np.load(io.BytesIO(record_bytes(r, "npz")))
    assert z["weights"].dtype == np.float32 and str(z["mechanism"]) == "m"
    assert z["key_labels"].tolist() == ["a", "b", "c"] and json.loads(str(z["meta_json"])) == {"k": 1}
    assert z["words"].tolist() == ["x", "y"]
    with pytest.raises(ValueError, match="overwrite a standard field"):
        AttentionRecord("m", w, ("query", "key"), ["q"], ["a", "b", "c"], extras={"weights": 1}).to_npz_dict()


def test_npz_is_uncompressed_unless_asked_and_both_hold_the_same_arrays():
    r = AttentionRecord("m", np.random.default_rng(0).random((64, 64)), ("query", "key"), [str(i) for i in range(64)],
                        [str(i) for i in range(64)])
    plain, packed = record_bytes(r, "npz"), record_bytes(r, "npz", compress=True)
    assert len(packed) < len(plain)
    a, b = np.load(io.BytesIO(plain)), np.load(io.BytesIO(packed))
    assert all(np.array_equal(a[k], b[k]) for k in a.files)


@given(st.lists(st.floats(0, 1, width=32), min_size=1, max_size=12), st.integers(1, 4))
def test_csv_of_any_2d_record_holds_its_weights(values, rows):
    w = np.resize(np.asarray(values, np.float32), (rows, len(values)))
    r = AttentionRecord("m", w, ("query", "key"), [f"q{i}" for i in range(rows)], [f"=k{i}" for i in range(len(values))])
    lines = record_bytes(r, "csv").decode().splitlines()
    assert lines[0].split(",")[1] == "'=k0"  # a formula-looking label is defused
    got = np.array([[float(x) for x in line.split(",")[1:]] for line in lines[1:]], np.float32)
    np.testing.assert_allclose(got, w, rtol=1e-7)

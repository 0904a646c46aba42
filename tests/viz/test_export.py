"""Every export format: bytes with the right signature, and data round-trips."""

import csv
import io
import json

import numpy as np
import pytest

from models.record import AttentionRecord
from viz import export
from viz.figures import attention_heatmap


@pytest.fixture(scope="module")
def record():
    w = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)
    return AttentionRecord(
        "qkv-dot", w, ("query", "key"), ("q1", "=cmd"), ("a", "<b>", "c"),
        meta={"temperature": 1.0}, extras={"scores": np.array([1.0, 2.0, 3.0], np.float32), "caption": "hi"},
    )


def test_json_round_trip(record):
    data = json.loads(export.record_bytes(record, "json"))
    np.testing.assert_array_equal(np.asarray(data["weights"], np.float32), record.weights)
    assert data["query_labels"] == ["q1", "=cmd"] and data["key_labels"] == ["a", "<b>", "c"]
    assert data["mechanism"] == "qkv-dot" and data["scores"] == [1.0, 2.0, 3.0] and data["caption"] == "hi"


def test_npy_and_npz_round_trip(record):
    np.testing.assert_array_equal(np.load(io.BytesIO(export.record_bytes(record, "npy"))), record.weights)
    z = np.load(io.BytesIO(export.record_bytes(record, "npz")))
    assert z["weights"].dtype == np.float32
    np.testing.assert_array_equal(z["weights"], record.weights)
    assert z["query_labels"].tolist() == ["q1", "=cmd"] and str(z["mechanism"]) == "qkv-dot"
    assert str(z["caption"]) == "hi"


def test_csv_matrix_with_formula_injection_guard(record):
    rows = list(csv.reader(io.StringIO(export.record_bytes(record, "csv").decode())))
    assert rows[0] == ["query \\ key", "a", "<b>", "c"]
    assert rows[2][0] == "'=cmd"
    np.testing.assert_allclose([float(x) for x in rows[1][1:]], record.weights[0])


def test_csv_long_form_for_layered_records():
    w = np.random.default_rng(0).random((2, 2, 2, 2)).astype(np.float32)
    r = AttentionRecord("t", w, ("layer", "head", "query", "key"), ["x", "y"], ["x", "y"])
    rows = list(csv.reader(io.StringIO(export.record_bytes(r, "csv").decode())))
    assert rows[0] == ["layer", "head", "query", "key", "weight"] and len(rows) == 1 + 16
    assert float(rows[-1][-1]) == pytest.approx(w[1, 1, 1, 1], rel=1e-6)


def test_html_is_standalone_and_offline(record):
    page = export.figure_bytes(attention_heatmap(record), "html").decode()
    assert page.lstrip().lower().startswith("<html") or page.lstrip().lower().startswith("<!doctype")
    import re

    assert not re.search(r"<script[^>]*src=", page)  # no external script: plotly.js is inline
    assert len(page) > 1_000_000  # plotly.js is embedded


def test_the_cli_html_sets_its_axes_as_the_app_does(record):
    page = export.export_bytes(record, "html").decode()  # no figure given: the record's default one
    assert page.count('"ticklabeloverflow":"allow"') >= 2  # x and y, as ui.widgets.show_figure sets them


@pytest.mark.parametrize("fmt, signature", [("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-"), ("svg", b"<svg")])
def test_image_formats(record, fmt, signature):
    ok, hint = export.image_export_available()
    assert ok, hint  # the test command installs Chromium; without it this must fail, not skip
    data = export.figure_bytes(attention_heatmap(record), fmt)
    assert data.startswith(signature)
    if fmt == "svg":
        assert b"</svg>" in data[-200:]
        assert b"&lt;b&gt;" in data or b"&#60;b&#62;" in data  # the label shows as text


def test_missing_browser_gives_an_install_hint(monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chrome")
    ok, hint = export.image_export_available()
    assert not ok and "install" in hint and "chromium" in hint.lower()


def test_unknown_formats_raise(record):
    with pytest.raises(ValueError):
        export.record_bytes(record, "xlsx")
    with pytest.raises(ValueError):
        export.figure_bytes(attention_heatmap(record), "gif")

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
    assert '"datarevision"' in page and page.count('"automargin":true') >= 2  # as ui.widgets.show_figure readies it


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


# ------------------------------------------------------------------ streamed CSV and JSON

TRICKY_LABELS = ["a,b", 'say "hi"', "line\nbreak", "", "=SUM(A1)", "-1", "café 東京", " lead", "tab\tx", "\rcr"]


def _csv_as_one_writer_writes_it(record):
    """The oracle: every row through one csv.writer, as the unstreamed export wrote it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    cell = export._csv_cell
    if not record.leading_axes:
        writer.writerow(["query \\ key", *(cell(k) for k in record.key_labels)])
        for label, row in zip(record.query_labels, record.matrix()):
            writer.writerow([cell(label), *(f"{x:.8g}" for x in row)])
        return out.getvalue().encode()
    lead = record.leading_axes
    writer.writerow([*lead, "query", "key", "weight"])
    for index in np.ndindex(*record.weights.shape[: len(lead)]):
        matrix = record.matrix(**dict(zip(lead, index)))
        for qi, qlabel in enumerate(record.query_labels):
            for ki, klabel in enumerate(record.key_labels):
                writer.writerow([*index, cell(qlabel), cell(klabel), f"{matrix[qi, ki]:.8g}"])
    return out.getvalue().encode()


def _odd_weights(shape, seed=0):
    # Values whose text is tricky: tiny, huge, negative zero, NaN and ±inf among ordinary weights.
    w = np.random.default_rng(seed).random(shape).astype(np.float32).ravel()
    w[:7] = [np.nan, np.inf, -np.inf, -0.0, 1e-30, 3.4e38, 1 / 3]
    return w.reshape(shape)


@pytest.mark.parametrize("block", [1, 5, export.TEXT_BLOCK_CELLS])
def test_streamed_csv_is_what_one_csv_writer_writes(monkeypatch, block):
    monkeypatch.setattr(export, "TEXT_BLOCK_CELLS", block)  # pieces of one row, of a few rows, whole
    n = len(TRICKY_LABELS)
    layered = AttentionRecord("t", _odd_weights((2, 3, n, n)), ("layer", "head", "query", "key"),
                              TRICKY_LABELS, TRICKY_LABELS[::-1])
    flat = AttentionRecord("t", _odd_weights((n, 4), 1), ("query", "key"), TRICKY_LABELS, ["k,1", '"', "", "+x"])
    for r in (layered, flat):
        assert export.record_bytes(r, "csv") == _csv_as_one_writer_writes_it(r)


@pytest.mark.parametrize("block", [1, 7, export.TEXT_BLOCK_CELLS])
def test_streamed_json_is_what_json_dumps_writes(monkeypatch, block):
    monkeypatch.setattr(export, "TEXT_BLOCK_CELLS", block)
    n = len(TRICKY_LABELS)
    extras = {"input_ids": np.arange(n, dtype=np.int32), "scores": np.array([1.5, np.nan], np.float32),
              "caption": "ünï \"q\"", "step": np.int64(3), "pair": (np.float32(0.25), np.inf)}
    for weights in (_odd_weights((2, 3, n, n)), np.random.default_rng(2).random((2, 3, n, n)).astype(np.float32)):
        r = AttentionRecord("t", weights, ("layer", "head", "query", "key"), TRICKY_LABELS, TRICKY_LABELS,
                            meta={"notice": "cut at 512 tokens", "segments": [0, 1]}, extras=extras)
        expected = json.dumps(r.to_json_dict(), ensure_ascii=False, allow_nan=False).encode()
        assert export.record_bytes(r, "json") == expected
    shadowing = AttentionRecord("t", np.eye(2), ("query", "key"), ["a", "b"], ["a", "b"], extras={"weights": [1]})
    assert export.record_bytes(shadowing, "json") == json.dumps(shadowing.to_json_dict(), ensure_ascii=False).encode()


@pytest.mark.parametrize("fmt", export.RECORD_FORMATS)
def test_write_export_to_a_file_writes_what_export_bytes_returns(tmp_path, record, fmt):
    import zipfile

    path = tmp_path / f"a.{fmt}"
    with path.open("wb") as file:
        export.write_export(record, fmt, file)
    in_memory = export.export_bytes(record, fmt)
    if fmt != "npz":
        assert path.read_bytes() == in_memory
        return
    # A zip member carries the time it was written, so npz bytes differ from second to second:
    # the members, their names, order and bytes, are what must match.
    with zipfile.ZipFile(path) as written, zipfile.ZipFile(io.BytesIO(in_memory)) as returned:
        assert written.namelist() == returned.namelist()
        assert all(written.read(name) == returned.read(name) for name in written.namelist())

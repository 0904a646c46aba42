"""The command line: list, export in every format, batch files, bad input."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.registry import mechanism_ids

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_list_prints_every_registered_id():
    result = cli("list")
    assert result.returncode == 0
    assert result.stdout.split() == mechanism_ids()


@pytest.mark.parametrize("fmt", ["npz", "json", "csv", "npy", "png", "svg", "pdf", "html"])
def test_export_every_format(tmp_path, fmt):
    out = tmp_path / f"a.{fmt}"
    result = cli("export", "--mechanism", "qkv-scaled-dot", "--query", "1,2", "--format", fmt, "--out", str(out))
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    signatures = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<svg", "npy": b"\x93NUMPY", "npz": b"PK"}
    if fmt in signatures:
        assert data.startswith(signatures[fmt])
    if fmt == "npz":
        z = np.load(io.BytesIO(data))
        assert z["weights"].dtype == np.float32 and z["weights"].shape == (1, 5)
        assert str(z["mechanism"]) == "qkv-scaled-dot"
        assert z["key_labels"].tolist() == ["cat", "dog", "car", "truck", "bicycle"]
        np.testing.assert_allclose(z["weights"].sum(), 1.0, rtol=1e-5)
    if fmt == "json":
        assert json.loads(data)["query_labels"] == ["query"]


def test_input_file_writes_one_file_per_line_in_order(tmp_path):
    lines = tmp_path / "queries.txt"
    lines.write_text("3,0\n\n0,3\n-1,-1\n")
    out = tmp_path / "out"
    result = cli("export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["0001.json", "0002.json", "0003.json"]
    first = json.loads((out / "0001.json").read_text())
    second = json.loads((out / "0002.json").read_text())
    assert np.argmax(first["weights"][0]) == 0 and np.argmax(second["weights"][0]) == 2  # cat, then car


@pytest.mark.parametrize(
    "args, message",
    [
        (["export", "--mechanism", "nope", "--format", "json", "--out", "x.json"], "unknown mechanism"),
        (["export", "--mechanism", "qkv-dot", "--query", "a,b", "--format", "json", "--out", "x.json"], "numbers"),
        (["export", "--mechanism", "qkv-dot", "--format", "gif", "--out", "x.gif"], "invalid choice"),
        (["export", "--mechanism", "qkv-dot", "--input-file", "missing.txt", "--format", "json", "--out", "d"], "not found"),
        (["export", "--mechanism", "qkv-dot", "--temperature", "0", "--format", "json", "--out", "x.json"], "temperature"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr

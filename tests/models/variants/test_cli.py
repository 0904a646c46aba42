"""`cli.py export` of the variants: the same records as the registry builds (needs VARIANT_MECHANISMS in the
registry: models/registry.py appends them)."""

import json

import numpy as np
import pytest

from models.registry_variants import VARIANT_MECHANISMS
from tests.cli.in_process import cli


def export_gqa(capsys, heads: int, kv_heads: int, fmt: str, out, *more: str) -> tuple[int, str, str]:
    """Runs `cli.py export --mechanism gqa` with heads query heads over kv_heads groups, into out."""
    return cli(
        capsys,
        "export",
        "--mechanism",
        "gqa",
        "--num-heads",
        str(heads),
        "--kv-heads",
        str(kv_heads),
        *more,
        "--format",
        fmt,
        "--out",
        str(out),
    )


def test_export_npz_of_grouped_query_attention(capsys, tmp_path):
    out = tmp_path / "gqa.npz"
    status, _, err = export_gqa(capsys, 6, 3, "npz", out, "--query", "1,-1")
    assert status == 0, err
    z = np.load(out)
    want = next(m for m in VARIANT_MECHANISMS if m.id == "gqa").build({"num_heads": 6, "kv_heads": 3, "query": "1,-1"})
    assert z["axes"].tolist() == ["head", "query", "key"] and str(z["mechanism"]) == "gqa"
    np.testing.assert_allclose(z["weights"], want.weights, atol=1e-6)
    assert int(z["kv_bytes_per_token"]) == 3 * 2 * 2 * 4


@pytest.mark.parametrize("mechanism", ["differential", "online-softmax"])
def test_export_json_keeps_the_extras(capsys, tmp_path, mechanism):
    out = tmp_path / "r.json"
    status, _, err = cli(capsys, "export", "--mechanism", mechanism, "--format", "json", "--out", str(out))
    assert status == 0, err
    data = json.loads(out.read_text())
    assert data["mechanism"] == mechanism and len(data["weights"][0]) == 5
    assert ("first_map" in data) if mechanism == "differential" else ("log_sum_exp" in data)


def test_bad_group_count_is_one_line(capsys, tmp_path):
    status, _, err = export_gqa(capsys, 4, 3, "json", tmp_path / "r.json")
    assert status == 2 and "do not divide" in err and len(err.strip().splitlines()) == 1

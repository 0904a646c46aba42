"""`cli.py export` for rollout of MiniLM and for the induction model (the encoder–decoder's
three records: tests/models/encdec/test_records.py)."""

import json

import numpy as np

from tests.cli.in_process import cli


def test_rollout_exports_a_query_by_key_map_whose_rows_sum_to_one(capsys, tmp_path):
    out = tmp_path / "r.npz"
    status, _, err = cli(capsys, "export", "--mechanism", "transformer-rollout", "--text", "The cat sat on the mat.",
                         "--format", "npz", "--out", str(out))
    assert status == 0, err
    z = np.load(out)
    assert z["axes"].tolist() == ["query", "key"] and z["weights"].shape == (9, 9)  # [CLS] the cat sat on the mat . [SEP]
    np.testing.assert_allclose(z["weights"].sum(1), 1.0, atol=1e-5)
    assert json.loads(str(z["meta_json"]))["method"] == "rollout"
    flow = tmp_path / "f.json"
    status, _, err = cli(capsys, "export", "--mechanism", "transformer-rollout", "--text", "The cat sat.",
                         "--method", "flow", "--fusion", "max", "--format", "json", "--out", str(flow))
    assert status == 0, err
    data = json.loads(flow.read_text())
    assert data["meta"]["fusion"] == "max" and len(data["weights"]) == 6  # [CLS] the cat sat . [SEP]
    status, _, err = cli(capsys, "export", "--mechanism", "transformer-rollout", "--text", "word " * 60,
                         "--method", "flow", "--format", "npz", "--out", str(tmp_path / "x.npz"))
    assert status == 2 and "up to 40 tokens" in err and len(err.strip().splitlines()) == 1


def test_induction_from_text_or_from_a_seed(capsys, tmp_path):
    out = tmp_path / "i.npz"
    status, _, err = cli(capsys, "export", "--mechanism", "induction", "--seed", "0", "--length", "21",
                         "--format", "npz", "--out", str(out))
    assert status == 0, err
    z = np.load(out)
    assert z["weights"].shape == (2, 4, 21, 21) and z["tokens"].shape == (21,)
    np.testing.assert_allclose(z["weights"].sum(-1), 1.0, atol=1e-5)
    assert np.all(z["weights"][..., np.triu_indices(21, k=1)[0], np.triu_indices(21, k=1)[1]] == 0), "causal"
    status, _, err = cli(capsys, "export", "--mechanism", "induction", "--text", "a b zebra",
                         "--format", "npz", "--out", str(tmp_path / "bad.npz"))
    assert status == 2 and "zebra" in err and len(err.strip().splitlines()) == 1

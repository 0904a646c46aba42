"""The CLI for the 2019 tests and the attribution methods: the arrays each record holds, and one line (exit 2) for a
method that does not apply."""

import json

import numpy as np

import cli


def _export(tmp_path, *args):
    out = tmp_path / "out.npz"
    return cli.main(["export", *args, "--format", "npz", "--out", str(out)]), out


def test_the_adversary_exports_alpha_and_alpha_tilde_with_the_outputs(tmp_path):
    code, out = _export(tmp_path, "--mechanism", "bahdanau-adversary", "--text", "9 May 2018", "--seed", "1")
    assert code == 0
    z = np.load(out)
    meta = json.loads(str(z["meta_json"]))
    assert z["weights"].shape[:2] == (2, 10) and np.allclose(z["weights"].sum(-1), 1.0, atol=1e-5)
    assert meta["output_alpha"] == meta["output_tilde"] == "2018-05-09" and meta["max_tvd"] <= 0.01
    assert z["jsd"].shape == (10,) and np.all(z["jsd"] >= 0)


def test_an_attribution_method_exports_and_one_that_does_not_apply_is_one_line(tmp_path, capsys):
    code, out = _export(tmp_path, "--mechanism", "transformer-cross-attribution", "--text", "9 May 2018",
                        "--method", "integrated-gradients")
    assert code == 0
    z = np.load(out)
    assert z["weights"].shape == (10, 10) and np.all(np.abs(z["completeness_gap"]) < 0.2)
    code, _ = _export(tmp_path, "--mechanism", "transformer-cross-attribution", "--text", "9 May 2018",
                      "--method", "alti", "--force")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "alti" in err[0]

"""`cli.py export` for feed-forward attention: the seeded sequence, α (T,), marks, prediction, bad input."""

import numpy as np
import pytest

from cli import main
from models.feedforward.task import make_sequence


def cli(capsys, *args):
    """Runs cli.py in this process (the models load once); returns (exit status, stdout, stderr)."""
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("mechanism, length, model", [("feedforward", 250, "paper-T100"), ("feedforward-unbounded", 3_000, "unbounded")])
def test_export_npz_holds_weights_marks_prediction_and_target(capsys, tmp_path, mechanism, length, model):
    out = tmp_path / "f.npz"
    status, _, err = cli(capsys, "export", "--mechanism", mechanism, "--length", str(length), "--seed", "4",
                         "--format", "npz", "--out", str(out))
    assert status == 0, err
    z = np.load(out)
    inputs, marked, target = make_sequence(length, seed=4)
    assert z["weights"].shape == (length,) and z["weights"].dtype == np.float32
    assert z["axes"].tolist() == ["time"] and str(z["mechanism"]) == mechanism
    assert z["weights"].sum() == pytest.approx(1.0, abs=1e-4)
    assert z["marked"].tolist() == list(marked)
    assert float(z["target"]) == pytest.approx(target, abs=1e-6)
    assert abs(float(z["prediction"]) - target) < 0.3
    np.testing.assert_array_equal(z["values"], inputs[:, 0])
    assert model in str(z["meta_json"])  # feedforward: the model trained nearest to T


@pytest.mark.parametrize(
    "args, message",
    [
        (["--length", "1"], "length must be a whole number from 2 to 10,000, got '1'"),
        (["--length", "10001"], "from 2 to 10,000"),
        (["--length", "100", "--seed", "-3"], "seed"),
        (["--length", "ten"], "length must be a whole number from 2 to 10,000, got 'ten'"),
        (["--length", "100", "--patch", "8"], "feedforward does not take --patch; it takes --seed, --length, --marked"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, args, message):
    status, _, err = cli(capsys, "export", "--mechanism", "feedforward", *args, "--format", "npz",
                         "--out", str(tmp_path / "x.npz"))
    assert status == 2
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "x.npz").exists()

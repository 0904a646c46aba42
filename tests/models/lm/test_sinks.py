"""Attention sinks: first-token shares and the sink rate against a numpy oracle, on a fixture model and
on the training log's snapshots (read from the file, whatever the run logged)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from models.lm import sinks
from models.lm.records import load_runner

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"


def oracle_share(maps: np.ndarray) -> np.ndarray:
    """A loop over heads and query rows 1..T-1: the mean weight on key 0."""
    out = np.zeros(maps.shape[:-2])
    for index in np.ndindex(*maps.shape[:-2]):
        rows = [maps[index][q, 0] for q in range(1, maps.shape[-1])]
        out[index] = sum(rows) / len(rows)
    return out


def test_shares_and_rate_on_made_up_maps():
    rng = np.random.default_rng(0)
    maps = np.tril(rng.random((2, 3, 5, 5)))
    maps /= maps.sum(-1, keepdims=True)
    maps[0, 1, 1:, 0] = 0.9  # a sink, and rows no longer sum to 1: the share reads the column only
    shares = sinks.first_token_share(maps)
    np.testing.assert_allclose(shares, oracle_share(maps), atol=1e-12)
    expected = np.mean(oracle_share(maps) > 0.3)
    assert sinks.sink_rate(shares) == pytest.approx(expected)
    assert sinks.sink_rate(np.array([[0.3, 0.31]])) == 0.5  # strictly above ε


def test_sink_record_of_a_models_attention():
    runner = load_runner(FIXTURES / "llama")
    lm = runner.attention("the lazy dog sleeps on the mat")
    record = sinks.sink_record(lm)
    assert record.axes == ("layer", "head") and record.weights.shape == lm.weights.shape[:2]
    np.testing.assert_allclose(record.weights, oracle_share(lm.weights), atol=1e-6)
    assert record.meta["sink_rate"] == pytest.approx(np.mean(oracle_share(lm.weights) > sinks.SINK_EPSILON))
    assert record.meta["first_token"] == lm.query_labels[0] and record.meta["epsilon"] == 0.3


def test_training_snapshots_of_the_committed_log():
    log = json.loads(sinks.TRAINING_LOG.read_text())["log"]
    history = sinks.training_sinks()
    kept = [(s, v) for s, v in zip(log["step"], log["first_token"]) if v is not None]
    assert history.steps.tolist() == [s for s, _ in kept]
    assert history.shares.shape[0] == len(kept)
    expected = [np.mean(np.asarray(v) > 0.3) for _, v in kept]
    np.testing.assert_allclose(history.rates, expected)


def test_a_log_without_shares_gives_none_and_a_broken_one_one_line(tmp_path):
    assert sinks.training_sinks(tmp_path / "missing.json") is None
    (tmp_path / "old.json").write_text(json.dumps({"log": {"step": [0, 10], "loss": [1, 2]}}))
    assert sinks.training_sinks(tmp_path / "old.json") is None
    (tmp_path / "made.json").write_text(json.dumps({"log": {"step": [0, 10, 20],
                                                           "first_token": [[[0.1, 0.5]], None, [[0.4, 0.5]]]}}))
    made = sinks.training_sinks(tmp_path / "made.json")
    assert made.steps.tolist() == [0, 20] and made.rates.tolist() == [0.5, 1.0]
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(sinks.InputError, match="training log"):
        sinks.training_sinks(tmp_path / "broken.json")


def test_the_sink_figures():
    from viz.lm_lens import SINK_TEXT, sink_grid, sink_rate_curve

    runner = load_runner(FIXTURES / "gpt2")
    record = sinks.sink_record(runner.attention("the lazy dog sleeps on the mat"))
    fig = sink_grid(record)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, np.float64), record.weights, atol=1e-7)
    assert sum(cell == "sink" for row in fig.data[0].text for cell in row) == int(np.sum(record.weights > 0.3))
    history = sinks.training_sinks()
    curve = sink_rate_curve(history.steps, history.shares, epsilon=history.epsilon)
    np.testing.assert_allclose(curve.data[0].y, history.rates)
    np.testing.assert_allclose(curve.data[1].y, history.shares.reshape(len(history.steps), -1).max(1))
    assert "sum to 1" in SINK_TEXT

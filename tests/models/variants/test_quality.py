"""The variants' measures (models/variants/quality.py) against hand-made cases, and the committed table
(checkpoints/variants/quality.json) against the committed seed-0 checkpoints."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.variants import quality, tasks
from models.variants.checkpoint import CHECKPOINT, TABLE
from models.variants.train import GRID_SEEDS, GRID_VARIANTS


def _uniform_causal(b, h, t):
    return np.broadcast_to(np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None], (b, h, t, t)).copy()


def test_sink_rate_counts_heads_over_epsilon():
    t = 8
    plain = _uniform_causal(2, 4, t)  # mean weight on key 0 over queries 1..7: mean(1/2..1/8) ≈ 0.24 < 0.3
    sunk = plain.copy()
    sunk[:, 1:] = 0.0
    sunk[:, 1:, :, 0] = 1.0  # three heads put everything on the first token
    assert quality.sink_rate([plain, sunk]) == pytest.approx(3 / 8)
    assert quality.sink_rate([plain], epsilon=0.2) == 1.0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), scale=st.floats(0.1, 10), shift=st.floats(-5, 5))
def test_kurtosis_is_the_fourth_standardised_moment(seed, scale, shift):
    x = np.random.default_rng(seed).standard_normal(500)
    want = np.mean((x - x.mean()) ** 4) / np.var(x) ** 2
    assert quality.kurtosis(x * scale + shift) == pytest.approx(want, rel=1e-6)
    assert quality.kurtosis(np.array([-1.0, 1.0])) == pytest.approx(1.0)


def test_answer_noise_is_answer_mass_over_noise_mass():
    batch = tasks.mqar_batch(np.random.default_rng(0), 3)
    t, context = batch.tokens.shape[1], 2 * tasks.PAIRS
    weights = np.zeros((3, 2, t, t))
    for b in range(3):
        for q in range(1 + context, t, 2):
            key = 1 + 2 * list(batch.tokens[b, 1 : 1 + context : 2]).index(batch.tokens[b, q])
            noise = np.full(context, 0.5 / (context - 2))  # half on the other pairs' tokens
            noise[key - 1 : key + 1] = 0.0
            weights[b, 0, q, 1 : 1 + context] = noise
            weights[b, 1, q, 1 : 1 + context] = -0.5 * noise  # negative (differential): counted by its size
            weights[b, :, q, key : key + 2] = [0.3, 0.2]
    # head 0: 0.5 / 0.5; head 1: 0.5 / 0.25 (without the absolute value it would be −2)
    assert quality.answer_noise(weights, batch.tokens) == pytest.approx(2.0)
    assert quality.answer_noise(weights[:, :1], batch.tokens) == pytest.approx(1.0)


def test_accuracy_counts_scored_positions_only():
    batch = tasks.mqar_batch(np.random.default_rng(2), 4)
    logits = np.eye(tasks.MQAR_VOCAB)[batch.targets] * 5
    assert quality.accuracy(logits, batch) == 1.0
    logits[batch.scored] = np.roll(logits[batch.scored], 1, axis=-1)
    assert quality.accuracy(logits, batch) == 0.0


def test_the_committed_table_has_every_variant_task_and_seed():
    rows = quality.committed_rows()
    have = {(r["task"], r["variant"], r["seed"]) for r in rows}
    assert have == {(t, v, s) for t in tasks.TASKS for v in GRID_VARIANTS for s in GRID_SEEDS}
    summary = quality.table(rows)
    assert all(values["accuracy"][2] == len(GRID_SEEDS) for values in summary.values())
    assert TABLE.stat().st_size < 100_000


@pytest.mark.parametrize(
    ("task", "variant"),
    [
        ("mqar", "mha"),
        ("mqar", "mla"),
        ("mqar", "linear"),
        ("induction", "differential"),
        ("induction", "sink"),
        ("induction", "gqa"),
    ],
)
def test_seed0_checkpoints_reproduce_the_committed_numbers(task, variant):
    row = next(r for r in quality.committed_rows() if (r["task"], r["variant"], r["seed"]) == (task, variant, 0))
    cfg, graphdef, params, _ = CHECKPOINT.load(CHECKPOINT.path(f"{task}-{variant}"))
    got = quality.measure(graphdef, params, cfg, task, extrapolate=False)
    assert abs(got["accuracy"] - row["accuracy"]) <= 0.02
    assert got["sink_rate"] == pytest.approx(row["sink_rate"], abs=1e-3)
    assert got["kv_bytes_per_token"] == row["kv_bytes_per_token"]


def test_committed_checkpoints_are_small_and_seed0_only():
    files = sorted(CHECKPOINT.folder.glob("*.safetensors"))
    assert {f.stem for f in files} == {f"{t}-{v}" for t in tasks.TASKS for v in GRID_VARIANTS}
    assert sum(f.stat().st_size for f in CHECKPOINT.folder.iterdir()) < 4 * 2**20

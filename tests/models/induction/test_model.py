"""The attention-only transformer on a tiny config: a numpy oracle of the whole forward pass,
causal rows, padding, strict checkpoints and a few-step training smoke test."""

import argparse
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.checkpoint import CheckpointError, flat_params
from models.induction import model as m
from models.induction import quality, task
from models.induction.checkpoint import CHECKPOINT
from models.induction.train import choose_snapshots, learning_rate, train

TINY = m.PRESETS["tiny"]


@functools.cache
def _tiny_model():
    return m.make_model(TINY, seed=3)


@pytest.fixture
def tiny():
    return _tiny_model()


def _layer_norm(x, scale, bias, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * scale + bias


def oracle(flat, tokens, cfg):
    """The forward pass written out with loops over heads, from the formula in model.py's docstring."""
    t = len(tokens)
    x = flat["token_embed"][tokens] + flat["position_embed"][:t]
    maps = np.zeros((cfg.layers, cfg.heads, t, t))
    for layer in range(cfg.layers):
        p = {k.split(".", 2)[2]: v for k, v in flat.items() if k.startswith(f"layers.{layer}.")}
        normed = _layer_norm(x, p["norm_scale"], p["norm_bias"])
        delta = np.zeros_like(x)
        for h in range(cfg.heads):
            q, k, v = (normed @ p[w][:, h, :] for w in ("w_q", "w_k", "w_v"))
            scores = q @ k.T / np.sqrt(cfg.head_dim)
            scores[np.triu_indices(t, 1)] = -np.inf
            a = np.exp(scores - scores.max(1, keepdims=True))
            a /= a.sum(1, keepdims=True)
            maps[layer, h] = a
            delta += a @ v @ p["w_o"][h]
        x = x + delta
    return _layer_norm(x, flat["final_scale"], flat["final_bias"]) @ flat["unembed"], maps


def test_forward_matches_the_numpy_oracle(tiny):
    graphdef, params = tiny
    flat = {k: v.astype(np.float64) for k, v in flat_params(params).items()}
    tokens = task.generated_sequence(5, 21)
    logits, weights = (np.asarray(a) for a in m.apply(graphdef, params, tokens[None]))
    want_logits, want_maps = oracle(flat, tokens, TINY)
    assert logits.shape == (1, len(tokens), TINY.vocab) and weights.shape == (1, 2, 2, len(tokens), len(tokens))
    np.testing.assert_allclose(weights[0], want_maps, atol=2e-5)
    np.testing.assert_allclose(logits[0], want_logits, atol=2e-4)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, len(task.VOCAB) - 1), min_size=1, max_size=40))
def test_rows_are_distributions_and_the_future_gets_exactly_zero(tokens):
    graphdef, params = _tiny_model()
    padded = m.pad_tokens([np.asarray(tokens)])
    _, weights = m.apply(graphdef, params, padded)
    weights = np.asarray(weights)[0]
    t = padded.shape[1]
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert np.all(weights[..., np.triu(np.ones((t, t), bool), 1)] == 0.0)


def test_padding_changes_nothing_for_the_real_positions(tiny):
    graphdef, params = tiny
    tokens = task.generated_sequence(1, 13)
    alone = [np.asarray(a)[0] for a in m.apply(graphdef, params, tokens[None])]
    padded = m.pad_tokens([tokens, task.generated_sequence(2, 40)])
    assert padded.shape == (8, 64)
    batch = [np.asarray(a)[0] for a in m.apply(graphdef, params, padded)]
    n = len(tokens)
    np.testing.assert_allclose(batch[0][:n], alone[0], atol=1e-5)
    np.testing.assert_allclose(batch[1][..., :n, :n], alone[1], atol=1e-6)


def test_checkpoint_round_trip_is_strict(tmp_path, tiny):
    graphdef, params = tiny
    final = flat_params(params)
    early = {k: v * 0.5 for k, v in final.items()}
    path = CHECKPOINT.save(tmp_path / "model.safetensors", TINY, final, {0: early}, {"final_step": 9, "log": {}})
    cfg, _, loaded, info = CHECKPOINT.load(path)
    assert cfg == TINY and info["snapshot_steps"] == [0] and info["final_step"] == 9
    for name, value in flat_params(loaded).items():
        np.testing.assert_array_equal(value, final[name])
    snaps = CHECKPOINT.load_snapshots(path, loaded)
    for name, value in flat_params(snaps[0]).items():
        np.testing.assert_allclose(value, early[name], rtol=1e-3, atol=1e-4)  # stored as float16
    broken = dict(final)
    broken.pop("unembed")
    CHECKPOINT.save(tmp_path / "broken.safetensors", TINY, broken, {}, {})
    with pytest.raises(CheckpointError, match="unembed"):
        CHECKPOINT.load(tmp_path / "broken.safetensors")


def test_snapshots_are_dense_inside_the_drop():
    steps = list(range(0, 4001, 25))
    loss = [3.9 - 2.5 / (1 + np.exp(-(s - 2400) / 60)) for s in steps]
    start, end = quality.drop_window(np.asarray(steps), np.asarray(loss))
    assert start < 2400 < end and end - start < 400
    chosen = choose_snapshots(steps, loss, 20)
    assert chosen[0] == 0 and chosen[-1] == 4000 and 16 <= len(chosen) <= 20
    pad = (end - start) // 2
    inside = [s for s in chosen if start - pad <= s <= end + pad]  # the fall, widened by half its width
    assert len(inside) >= 10, chosen  # half the snapshots in under a sixth of the run
    flat = choose_snapshots(steps, [3.9] * len(steps), 5)
    assert flat == [0, 1000, 2000, 3000, 4000]


def test_learning_rate_warms_up_holds_then_decays():
    schedule = learning_rate(1e-3, 1000)
    assert float(schedule(0)) == 0.0 and float(schedule(100)) == pytest.approx(1e-3)
    assert float(schedule(700)) == pytest.approx(1e-3) and float(schedule(1000)) == pytest.approx(1e-4, rel=1e-3)


def test_a_few_training_steps_log_scores_and_keep_snapshots():
    args = argparse.Namespace(steps=4, batch=4, lr=1e-2, seed=0, preset="tiny", log_every=2, snapshots=3,
                              mixture="always", mix_delay=0)
    cfg, final, snapshots, info = train(args)
    log = info["log"]
    assert log["step"] == [0, 2, 4] and info["final_step"] == 4 and cfg == TINY
    assert np.asarray(log["prefix_matching"]).shape == (3, 2, 2)
    assert all(np.isfinite(x) for x in log["loss"][1:]) and log["loss"][0] is None
    assert set(snapshots) == {0, 2} and set(final) == set(snapshots[0])
    assert not np.allclose(final["unembed"], snapshots[0]["unembed"])

"""Every view of MiniLM on one text agrees with the one forward: the runner's record maps and hidden states, the
neuron view's softmax, knocking out no heads, an "all on the first token" override and value zeroing (against a
numpy oracle of the layer), and the corpus statistics of the text (against models/heads/statistics.py on the
record). A view that computed the encoder its own way, or an intervention applied in the wrong place, would
disagree here."""

from __future__ import annotations

import numpy as np
import pytest

from models.capture import Capture, Interventions
from models.corpus.run import CorpusModel, corpus_statistics
from models.transformer.neuron import neuron_parts
from models.transformer.records import shared_runner
from tests.models.corpus.test_pass import reference
from tests.models.transformer.tiny_bert import _gelu, _layer_norm

TEXT = "The cat sat on the mat, and the dog sat on the rug. The cat sat on the mat!"
EVERYTHING = Capture(logits=False, maps=True, queries=True, keys=True, values=True, scores=True, heads=True,
                     residual=True)
LAYER = 2  # the layer an intervention changes


@pytest.fixture(scope="module")
def runner():
    return shared_runner(None)


@pytest.fixture(scope="module")
def inputs(runner):
    return runner.padded([runner.encode(TEXT)], 1)


@pytest.fixture(scope="module")
def plain(runner, inputs):
    """Returns (the record of TEXT, every capture of the plain forward as numpy, real tokens T)."""
    record = runner.attention(TEXT)
    out = runner.forward(inputs, EVERYTHING, final=True)
    captured = {name: np.asarray(value) if name in ("final", "residual") else np.stack([np.asarray(v) for v in value])
                for name, value in out.items()}  # per-layer captures stacked: [L, B, H, T, ...]
    return record, captured, len(record.query_labels)


def changed(runner, inputs, interventions: Interventions) -> dict[str, np.ndarray]:
    out = runner.forward(inputs, Capture(logits=False, maps=True, residual=True), final=True,
                         interventions=interventions)
    return {"maps": np.stack([np.asarray(m) for m in out["maps"]]), "residual": np.asarray(out["residual"]),
            "final": np.asarray(out["final"])}


def numpy_layer(params: dict, layer: int, x: np.ndarray, context: np.ndarray, eps: float) -> np.ndarray:
    """Returns the stream after `layer` [T, D] in float64 numpy, given its input x [T, D] and its heads' merged
    output context [T, D]: output projection, residual and LayerNorm, then the feed-forward block."""
    p = {name.removeprefix(f"encoder.layer.{layer}."): np.asarray(value, np.float64) for name, value in params.items()
         if name.startswith(f"encoder.layer.{layer}.")}
    x = _layer_norm(context @ p["attention.output.dense.kernel"] + p["attention.output.dense.bias"] + x,
                    p["attention.output.LayerNorm.scale"], p["attention.output.LayerNorm.bias"], eps)
    hidden = _gelu(x @ p["intermediate.dense.kernel"] + p["intermediate.dense.bias"])
    return _layer_norm(hidden @ p["output.dense.kernel"] + p["output.dense.bias"] + x,
                       p["output.LayerNorm.scale"], p["output.LayerNorm.bias"], eps)


def values_of(params: dict, layer: int, x: np.ndarray, heads: int) -> np.ndarray:
    """Returns the value vectors [H, T, d] of `layer` in float64 numpy from its input x [T, D]."""
    prefix = f"encoder.layer.{layer}.attention.self.value."
    v = x @ np.asarray(params[prefix + "kernel"], np.float64) + np.asarray(params[prefix + "bias"], np.float64)
    return v.reshape(len(x), heads, -1).transpose(1, 0, 2)


def merged(context: np.ndarray) -> np.ndarray:
    # [H, T, d] -> [T, H·d]
    return context.transpose(1, 0, 2).reshape(context.shape[1], -1)


def test_the_records_maps_and_hidden_states_are_the_captured_ones(runner, plain):
    record, captured, t = plain
    maps = captured["maps"][:, 0, :, :t, :t]
    np.testing.assert_allclose(record.weights, maps, atol=1e-6)
    scores = captured["scores"][:, 0, :, :t, :t].astype(np.float64)
    softmax = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(softmax / softmax.sum(-1, keepdims=True), maps, atol=1e-5)
    np.testing.assert_allclose(captured["heads"][:, 0, :, :t], maps @ captured["values"][:, 0, :, :t], atol=1e-5)
    np.testing.assert_array_equal(captured["residual"][-1], captured["final"])
    tokens, hidden = runner.hidden_states(TEXT)
    assert tuple(tokens) == record.query_labels
    np.testing.assert_allclose(hidden, captured["final"][0, :t], atol=1e-5)
    (by_ids,) = runner.hidden_of_ids([record.extras["input_ids"]])
    np.testing.assert_allclose(by_ids, hidden, atol=1e-5)


def test_the_neuron_views_softmax_equals_the_maps_row(runner, plain):
    record, captured, t = plain
    for layer in range(runner.config.num_hidden_layers):
        for head in (0, 7, 11):
            for query in (0, t // 2, t - 1):
                parts = neuron_parts(runner, TEXT, layer, head, query)
                np.testing.assert_allclose(parts.weights, record.weights[layer, head, query], atol=1e-6)
                np.testing.assert_allclose(parts.q, captured["queries"][layer, 0, head, query], atol=1e-6)


@pytest.mark.parametrize("mode", ["zero", "first"])
def test_knocking_out_no_heads_is_the_plain_forward(runner, inputs, plain, mode):
    _, captured, _ = plain
    cfg = runner.config
    keep = np.ones((cfg.num_hidden_layers, cfg.num_attention_heads), np.float32)
    out = changed(runner, inputs, Interventions(head_keep=keep, head_mode=mode,
                                                value_keep={LAYER: np.ones(inputs[0].shape, np.float32)}))
    np.testing.assert_allclose(out["maps"], captured["maps"], atol=1e-6)
    np.testing.assert_allclose(out["final"], captured["final"], atol=1e-5)


def test_all_on_the_first_token_is_the_numpy_layer_reading_the_first_value(runner, inputs, plain):
    _, captured, t = plain
    cfg, params = runner.config, runner.params
    first = np.zeros(captured["maps"].shape[1:], np.float32)  # [B, H, T, T]
    first[..., 0] = 1.0
    out = changed(runner, inputs, Interventions(attention={LAYER: first}))
    # Below the layer nothing changes; the layer's maps are the override.
    np.testing.assert_allclose(out["residual"][: LAYER + 1], captured["residual"][: LAYER + 1], atol=1e-6)
    np.testing.assert_array_equal(out["maps"][LAYER], first)
    x = captured["residual"][LAYER, 0].astype(np.float64)  # [T', D], padding included (keys see key 0 only)
    v = values_of(params, LAYER, x, cfg.num_attention_heads)
    context = np.broadcast_to(v[:, :1], v.shape)  # every query reads key 0's value
    expected = numpy_layer(params, LAYER, x, merged(context), cfg.layer_norm_eps)
    np.testing.assert_allclose(out["residual"][LAYER + 1, 0, :t], expected[:t], atol=1e-4)
    assert np.abs(out["residual"][LAYER + 1, 0, :t] - captured["residual"][LAYER + 1, 0, :t]).max() > 0.1
    # Knocking every head of the layer out in "first" mode is the same intervention.
    heads = np.ones((cfg.num_hidden_layers, cfg.num_attention_heads), np.float32)
    heads[LAYER] = 0.0
    knocked = changed(runner, inputs, Interventions(head_keep=heads, head_mode="first"))
    np.testing.assert_allclose(knocked["final"], out["final"], atol=1e-5)


def test_zeroing_one_keys_value_is_the_numpy_layer_without_it(runner, inputs, plain):
    _, captured, t = plain
    cfg, params = runner.config, runner.params
    key = 3
    keep = np.ones(inputs[0].shape, np.float32)  # [B, T']
    keep[0, key] = 0.0
    out = changed(runner, inputs, Interventions(value_keep={LAYER: keep}))
    np.testing.assert_allclose(out["maps"][: LAYER + 1], captured["maps"][: LAYER + 1], atol=1e-6)
    x = captured["residual"][LAYER, 0].astype(np.float64)
    v = values_of(params, LAYER, x, cfg.num_attention_heads)
    v[:, key] = 0.0
    context = captured["maps"][LAYER, 0].astype(np.float64) @ v  # [H, T', d]
    expected = numpy_layer(params, LAYER, x, merged(context), cfg.layer_norm_eps)
    np.testing.assert_allclose(out["residual"][LAYER + 1, 0, :t], expected[:t], atol=1e-4)
    assert np.abs(out["maps"][LAYER + 1] - captured["maps"][LAYER + 1]).max() > 1e-3  # the next layer reads it


def test_the_corpus_statistics_of_the_text_are_those_of_its_record(runner, plain):
    record, _, _ = plain
    stats = corpus_statistics([TEXT], CorpusModel(runner))
    assert stats.count == 1 and stats.tokens == len(record.query_labels)
    np.testing.assert_allclose(stats.mean, reference(record), atol=1e-5, rtol=1e-6)  # float32 sums over T² pairs

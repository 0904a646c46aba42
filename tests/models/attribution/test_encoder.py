"""Every method on a tiny random BERT, against a numpy BERT written from the tensors (norm-based, value zeroing,
occlusion), ALTI's reconstruction, IG's completeness, and the records' shapes and labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.attribution.methods import METHODS
from models.attribution.records import attribution_record
from models.transformer.records import AttentionRunner
from tests.models.transformer.tiny_bert import TINY_CONFIG, make_tiny_bert, tiny_tensors

TEXT = "the cat sat on the mat"
STEPS = 64


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    return AttentionRunner(make_tiny_bert(tmp_path_factory.mktemp("bert")))


@pytest.fixture(scope="module")
def records(runner):
    return {method: attribution_record("encoder", method, runner, TEXT, steps=STEPS) for method in METHODS}


def _layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps) * w + b


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


class NumpyBert:
    """BERT in float64 numpy from Hugging Face-named tensors, layer by layer, with a value mask per layer."""

    def __init__(self):
        self.t = {k: v.astype(np.float64) for k, v in tiny_tensors(TINY_CONFIG).items() if v.dtype.kind == "f"}
        self.heads, self.layers = TINY_CONFIG["num_attention_heads"], TINY_CONFIG["num_hidden_layers"]

    def embed(self, ids):
        t, n = self.t, len(ids)
        x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
        x = x + t["embeddings.token_type_embeddings.weight"][0]
        return _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])

    def layer(self, i, x, keep=None):
        """Returns (layer output [T, D], α [H, T, T], v [H, T, d], W_O as x @ W_O [D, D])."""
        t, p, n = self.t, f"encoder.layer.{i}.", len(x)

        def linear(h, name):
            return h @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = (
            linear(x, f"attention.self.{name}").reshape(n, self.heads, -1).transpose(1, 0, 2)
            for name in ("query", "key", "value")
        )
        if keep is not None:
            v = v * keep[None, :, None]
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, -1)
        a = _layer_norm(
            linear(context, "attention.output.dense") + x,
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
        )
        out = _layer_norm(
            linear(_gelu(linear(a, "intermediate.dense")), "output.dense") + a,
            t[p + "output.LayerNorm.weight"],
            t[p + "output.LayerNorm.bias"],
        )
        return out, probs, v, t[p + "attention.output.dense.weight"].T

    def final(self, x):
        for i in range(self.layers):
            x = self.layer(i, x)[0]
        return x


@pytest.fixture(scope="module")
def oracle(runner):
    ids = np.asarray(runner.encode(TEXT).input_ids)
    return NumpyBert(), ids


def test_norm_based_matches_numpy(records, oracle):
    bert, ids = oracle
    x, width = bert.embed(ids), TINY_CONFIG["hidden_size"] // bert.heads
    for i in range(bert.layers):
        out, probs, v, w_o = bert.layer(i, x)
        f = np.stack([v[h] @ w_o[h * width : (h + 1) * width] for h in range(bert.heads)])  # [H, T, D]
        expected = np.linalg.norm(np.einsum("hij,hjd->ijd", probs, f), axis=-1)
        np.testing.assert_allclose(records["norm"].weights[i], expected, rtol=1e-4, atol=1e-5)
        x = out


def test_value_zeroing_matches_numpy(records, oracle):
    bert, ids = oracle
    x, n = bert.embed(ids), len(ids)
    for i in range(bert.layers):
        out = bert.layer(i, x)[0]
        distance = np.zeros((n, n))
        for j in range(n):
            zeroed = bert.layer(i, x, keep=np.arange(n) != j)[0]
            distance[:, j] = 1 - np.sum(zeroed * out, -1) / np.linalg.norm(zeroed, axis=-1) / np.linalg.norm(
                out, axis=-1
            )
        expected = distance / distance.sum(-1, keepdims=True)
        np.testing.assert_allclose(records["value-zeroing"].weights[i], expected, rtol=1e-3, atol=2e-5)
        x = out


def test_occlusion_is_the_target_with_the_token_replaced_by_pad(records, oracle):
    bert, ids = oracle
    final = bert.final(bert.embed(ids))
    direction = final / np.linalg.norm(final, axis=-1, keepdims=True)
    expected = np.zeros((len(ids), len(ids)))
    for j in range(len(ids)):
        occluded = bert.final(bert.embed(np.where(np.arange(len(ids)) == j, 0, ids)))
        expected[:, j] = np.linalg.norm(final, axis=-1) - np.sum(occluded * direction, -1)
    np.testing.assert_allclose(records["occlusion"].weights, expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(records["occlusion"].extras["targets"], np.linalg.norm(final, axis=-1), rtol=1e-4)


def test_alti_rebuilds_each_block_and_rolls_out(records):
    record = records["alti"]
    assert np.all(record.extras["reconstruction_error"] < 1e-5)
    per_layer = record.extras["per_layer"]
    np.testing.assert_allclose(per_layer.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(record.weights[1], per_layer[1] @ per_layer[0], rtol=1e-4, atol=1e-6)


def test_integrated_gradients_is_complete_and_gradient_x_input_is_its_first_order(records):
    assert np.all(np.abs(records["integrated-gradients"].extras["completeness_gap"]) < 1e-3)
    assert np.all(np.isfinite(records["gradient-x-input"].weights))


def test_chefer_relevance_starts_from_the_identity(records):
    weights = records["chefer"].weights
    assert np.all(weights >= np.eye(weights.shape[-1]) - 1e-6)  # R = I + non-negative terms
    assert np.all(weights[1] >= weights[0] - 1e-6)


def test_every_method_gives_a_labelled_record(records, runner):
    tokens = runner.encode(TEXT).tokens
    for method, record in records.items():
        layered = record.axes == ("layer", "query", "key")
        assert layered != (method in ("gradient-x-input", "integrated-gradients", "occlusion")), method
        assert record.weights.shape[-2:] == (len(tokens), len(tokens)) and record.key_labels == tokens
        assert record.meta["method"] == method and record.meta["architecture"] == "encoder"
        assert np.all(np.isfinite(record.weights))


def test_alti_contributions_match_numpy(records, oracle):
    bert, ids = oracle
    x, n, width = bert.embed(ids), len(ids), TINY_CONFIG["hidden_size"] // bert.heads
    for i in range(bert.layers):
        p = f"encoder.layer.{i}."
        out, probs, v, w_o = bert.layer(i, x)
        xv = x @ bert.t[p + "attention.self.value.weight"].T  # x_j W_V: the value without its bias
        terms = np.zeros((n, n, x.shape[1]))
        for h in range(bert.heads):
            part = xv[:, h * width : (h + 1) * width] @ w_o[h * width : (h + 1) * width]  # [T, D]
            terms += probs[h][:, :, None] * part[None]
        terms += np.eye(n)[:, :, None] * x[:, None, :]
        summed = (
            terms.sum(1) + bert.t[p + "attention.self.value.bias"] @ w_o + bert.t[p + "attention.output.dense.bias"]
        )
        sigma = np.sqrt(summed.var(-1, keepdims=True) + 1e-12)
        gamma, beta = bert.t[p + "attention.output.LayerNorm.weight"], bert.t[p + "attention.output.LayerNorm.bias"]
        terms = gamma * (terms - terms.mean(-1, keepdims=True)) / sigma[:, None]
        output = gamma * (summed - summed.mean(-1, keepdims=True)) / sigma + beta
        near = np.maximum(0, np.abs(output).sum(-1)[:, None] - np.abs(output[:, None] - terms).sum(-1))
        np.testing.assert_allclose(
            records["alti"].extras["per_layer"][i], near / near.sum(-1, keepdims=True), rtol=1e-3, atol=1e-5
        )
        x = out


def test_a_text_too_long_is_refused_in_one_line(runner, monkeypatch):
    from models.attribution import records as module
    from models.record import InputError

    monkeypatch.setattr(module, "MAX_TOKENS", 5)  # the tiny BERT's 64 positions stay below the real bound
    with pytest.raises(InputError, match="at most 5 tokens"):
        attribution_record("encoder", "norm", runner, TEXT)

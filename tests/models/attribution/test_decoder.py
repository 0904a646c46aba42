"""Every method on two tiny random decoder LMs (GPT-2: LayerNorm, learned positions; Llama: RMSNorm, RoPE,
grouped keys): ALTI's reconstruction, IG's completeness, value zeroing and occlusion against the forward run
one change at a time, causality, the targets against the next-token loss, and the records' shapes."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from models.attribution.adapters import DecoderAdapter
from models.attribution.contributions import cosine_distance
from models.attribution.methods import METHODS
from models.attribution.records import attribution_record
from models.capture import Capture, Interventions
from models.lm.forward import decoder, embed, next_token_loss
from models.lm.loader import load_folder
from models.lm.records import LMRunner

TEXT = "the cat sat on the mat"
FIXTURES = "tests/fixtures/lm"


# Llama (RMSNorm, grouped keys, value biases) runs the methods whose maths its differences touch; GPT-2 all.
LLAMA_METHODS = ("norm", "alti", "integrated-gradients")
# IG's quadrature points: the random Llama's embeddings are ~5 long against random projections, so log p turns
# sharply on the path (a step of 0.019 per 1/2000 of it): 64 points leave a gap of 0.11 there, 256 leave 2e-6.
STEPS = {"gpt2": 64, "llama": 256}


@functools.cache
def _case(name: str):
    runner = LMRunner(load_folder(f"{FIXTURES}/{name}"))
    methods = METHODS if name == "gpt2" else LLAMA_METHODS
    return runner, {method: attribution_record("decoder", method, runner, TEXT, steps=STEPS[name]) for method in methods}


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def case(request):
    return _case(request.param)


@pytest.fixture(scope="module")
def gpt2():
    return _case("gpt2")


@functools.partial(jax.jit, static_argnames=("graphdef",))
def _run(state, ids, keep, stream, *, graphdef):
    # The plain forward with one value mask in every layer ({layer: [1, T]}) and the input stream given.
    change = Interventions(value_keep=keep)
    return decoder(
        nnx.merge(graphdef, state),
        ids,
        stream=stream,
        capture=Capture(logits=True, residual=True),
        interventions=change,
    )


def test_alti_rebuilds_each_block(case):
    record = case[1]["alti"]
    assert np.all(record.extras["reconstruction_error"] < 1e-5)
    np.testing.assert_allclose(record.extras["per_layer"].sum(-1), 1.0, atol=1e-5)


def test_integrated_gradients_is_complete(case):
    assert np.all(np.abs(case[1]["integrated-gradients"].extras["completeness_gap"]) < 1e-3)


def test_the_targets_are_the_next_token_log_probabilities(gpt2):
    runner, records = gpt2
    ids = jnp.asarray(runner.encode(TEXT).ids[None])
    logits = decoder(nnx.merge(runner.lm.graphdef, runner.lm.state), ids)["logits"]
    expected = -np.asarray(next_token_loss(logits, ids))[0, :-1]
    for method in ("gradient-x-input", "integrated-gradients", "occlusion"):
        np.testing.assert_allclose(records[method].extras["targets"], expected, rtol=1e-4, atol=1e-5)


def test_value_zeroing_and_occlusion_match_one_change_at_a_time(gpt2):
    runner, records = gpt2
    lm, ids = runner.lm, jnp.asarray(runner.encode(TEXT).ids[None])
    n, layers = ids.shape[1], runner.config.num_layers
    model = nnx.merge(lm.graphdef, lm.state)
    stream = embed(model, ids, jnp.arange(n))
    ones = {k: jnp.ones((1, n)) for k in range(layers)}
    plain = _run(lm.state, ids, ones, stream, graphdef=lm.graphdef)
    base_targets = -np.asarray(next_token_loss(plain["logits"], ids))[0, :-1]
    assert "average token" in records["occlusion"].meta["baseline"]
    table = np.asarray(model.embed[...])  # the average token (the tiny fixtures scale no embedding)
    mean = table.mean(0)
    average = mean * (np.linalg.norm(table, axis=-1).mean() / np.linalg.norm(mean))
    baseline = stream[0] + (average - table[ids[0]])
    for layer in range(layers):
        distance = np.zeros((n, n))
        for j in range(n):
            keep = {**ones, layer: jnp.asarray((np.arange(n) != j)[None], jnp.float32)}
            out = _run(lm.state, ids, keep, stream, graphdef=lm.graphdef)["residual"][layer + 1, 0]
            distance[:, j] = np.maximum(np.asarray(cosine_distance(out, plain["residual"][layer + 1, 0])), 0)
        expected = distance / distance.sum(-1, keepdims=True)
        np.testing.assert_allclose(records["value-zeroing"].weights[layer], expected, rtol=2e-3, atol=2e-5)
    for j in range(n):  # occlusion: the token's stream replaced by the baseline, one at a time
        occluded = stream.at[0, j].set(baseline[j])
        out = _run(lm.state, ids, ones, occluded, graphdef=lm.graphdef)
        expected = base_targets + np.asarray(next_token_loss(out["logits"], ids))[0, :-1]
        np.testing.assert_allclose(records["occlusion"].weights[:, j], expected, rtol=1e-3, atol=2e-5)
    occlusion = records["occlusion"].weights
    assert np.all(np.abs(np.triu(occlusion, 1)) < 1e-5)  # row t (predicting t + 1) sees tokens up to t only


def test_causality_of_every_map(case):
    for method, record in case[1].items():
        weights = record.weights if record.weights.ndim == 3 else record.weights[None]
        upper = np.triu(np.ones(weights.shape[-2:], bool), 1)
        assert np.all(np.abs(weights[:, upper]) < 1e-5), method


def test_every_method_gives_a_labelled_record(gpt2):
    runner, records = gpt2
    labels = runner.encode(TEXT).labels
    n = len(labels)
    for method, record in records.items():
        if method in ("norm", "alti", "value-zeroing"):
            assert record.weights.shape == (runner.config.num_layers, n, n) and record.query_labels == labels
        elif method == "chefer":
            assert record.weights.shape == (runner.config.num_layers, n - 1, n)
            assert np.all(record.weights >= np.eye(n - 1, n) - 1e-6)  # R = I + non-negative terms
        else:
            assert record.weights.shape == (n - 1, n) and record.query_labels == labels[:-1]
        assert record.key_labels == labels and np.all(np.isfinite(record.weights)), method


def test_alti_splits_each_value_vector_into_its_tokens_part_and_a_constant(case):
    # The reconstruction holds for any constant taken out of the values (each row of α sums to 1), so the split
    # is checked on its own: v_j − c must be (norm(x_j) − β) W_V, the part that depends on token j only.
    runner = case[0]
    lm, cfg = runner.lm, runner.config
    ids = jnp.asarray(runner.encode(TEXT).ids[None])

    @jax.jit
    def parts(state):
        adapter = DecoderAdapter(nnx.merge(lm.graphdef, state), ids, jnp.ones_like(ids, bool))
        captured = adapter.captures()
        return captured["residual"], [
            captured["values"][i] - adapter.value_bias(i)[:, None] for i in range(cfg.num_layers)
        ]

    residual, got = parts(lm.state)
    model = nnx.merge(lm.graphdef, lm.state)
    for i, layer in enumerate(model.layers):
        x = np.asarray(residual[i], np.float64)
        if layer.attn_norm.bias is not None:
            x = x - x.mean(-1, keepdims=True)
        scaled = x / np.sqrt((x * x).mean(-1, keepdims=True) + cfg.norm_eps) * np.asarray(layer.attn_norm.scale[...])
        expected = (scaled @ np.asarray(layer.v.kernel[...])).reshape(len(x), cfg.num_kv_heads, -1).transpose(1, 0, 2)
        np.testing.assert_allclose(got[i], expected, rtol=1e-4, atol=1e-5)


def test_the_registry_builder_reads_its_options(gpt2):
    from pathlib import Path

    from models.attribution.records import decoder_attribution_record

    options = {"text": TEXT, "method": "norm", "model_dir": str(Path(FIXTURES, "gpt2").resolve())}
    record = decoder_attribution_record("lm-attribution", options)
    assert record.mechanism == "lm-attribution" and record.meta["method"] == "norm"
    np.testing.assert_allclose(record.weights, gpt2[1]["norm"].weights, rtol=1e-6, atol=1e-7)


def test_gradient_x_input_is_the_derivative_of_scaling_each_token(gpt2):
    # Σ_d ∂f/∂x_jd · x_jd = d/dε f(x with x_j scaled by 1 + ε) at 0: one central difference per token.
    runner, records = gpt2
    lm, ids = runner.lm, jnp.asarray(runner.encode(TEXT).ids[None])
    n, eps = ids.shape[1], 1e-2
    stream = embed(nnx.merge(lm.graphdef, lm.state), ids, jnp.arange(n))
    ones = {k: jnp.ones((1, n)) for k in range(runner.config.num_layers)}

    def targets(x):
        return -np.asarray(
            next_token_loss(_run(lm.state, ids, ones, x, graphdef=lm.graphdef)["logits"], ids), np.float64
        )[0, :-1]

    for j in range(n):
        up, down = (stream.at[0, j].multiply(1 + s) for s in (eps, -eps))
        expected = (targets(up) - targets(down)) / (2 * eps)
        np.testing.assert_allclose(records["gradient-x-input"].weights[:, j], expected, rtol=2e-2, atol=2e-3)

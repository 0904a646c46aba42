"""The one forward: its captures agree with each other, and each intervention equals another way of making
the same change (on a random Qwen2 with a sliding window on some layers, and grouped keys)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from models.lm.config import LMConfig
from models.lm.forward import Capture, Interventions, decoder, empty_cache
from models.lm.layers import visible_keys
from models.lm.model import DecoderLM

CONFIG = {"model_type": "qwen2", "vocab_size": 50, "hidden_size": 24, "intermediate_size": 32,
          "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2, "rope_theta": 1e4,
          "use_sliding_window": True, "sliding_window": 4, "max_window_layers": 1}
T = 11
EVERYTHING = Capture(maps=True, queries=True, keys=True, values=True, scores=True, heads=True, residual=True)


@pytest.fixture(scope="module")
def model():
    cfg = LMConfig.from_hf(CONFIG)
    graphdef, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(5)))
    state = jax.tree.map(lambda v: v * 4.0 if v.ndim == 2 else v, state)  # sharper maps than the init's
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, (1, T)).astype(np.int32)
    return cfg, graphdef, state, ids


@functools.partial(jax.jit, static_argnames=("graphdef", "capture"))
def call(state, ids, interventions, *, graphdef, capture=EVERYTHING):
    return decoder(nnx.merge(graphdef, state), ids, capture=capture, interventions=interventions)


def test_the_captures_agree_with_each_other(model):
    cfg, graphdef, state, ids = model
    out = jax.tree.map(np.asarray, call(state, ids, None, graphdef=graphdef))
    assert len(out["maps"]) == cfg.num_layers and out["residual"].shape == (cfg.num_layers + 1, 1, T, 24)
    np.testing.assert_array_equal(out["residual"][-1], out["final"])
    for layer in range(cfg.num_layers):
        visible = visible_keys(cfg, layer, np.arange(T), np.arange(T))
        assert np.all(out["maps"][layer][..., ~visible] == 0) and (layer == 0) == bool(visible[-1, 0])
        scores = np.where(visible, out["scores"][layer].astype(np.float64), -np.inf)
        expected = np.exp(scores - scores.max(-1, keepdims=True))
        np.testing.assert_allclose(out["maps"][layer], expected / expected.sum(-1, keepdims=True), atol=1e-6)
        g = cfg.queries_per_kv
        q, k = out["queries"][layer][0], np.repeat(out["keys"][layer][0], g, axis=0)  # [H, T, d]
        np.testing.assert_allclose(out["scores"][layer][0], q @ k.transpose(0, 2, 1) / np.sqrt(cfg.head_dim),
                                   rtol=1e-5, atol=1e-5)
        v = np.repeat(out["values"][layer][0], g, axis=0)
        np.testing.assert_allclose(out["heads"][layer][0], out["maps"][layer][0] @ v, rtol=1e-5, atol=1e-5)


def test_patching_a_models_own_values_back_changes_nothing(model):
    cfg, graphdef, state, ids = model
    plain = call(state, ids, None, graphdef=graphdef)
    ones = {layer: jnp.ones((1, T)) for layer in range(cfg.num_layers)}
    for interventions in (Interventions(head_keep=jnp.ones((cfg.num_layers, cfg.num_heads))),
                          Interventions(attention=dict(enumerate(plain["maps"]))),
                          Interventions(heads=dict(enumerate(plain["heads"]))),
                          Interventions(value_keep=ones)):
        np.testing.assert_allclose(call(state, ids, interventions, graphdef=graphdef)["logits"], plain["logits"],
                                   atol=1e-5)


@pytest.mark.parametrize("layer", [0, 2])
def test_each_intervention_equals_another_way_of_making_the_same_change(model, layer):
    cfg, graphdef, state, ids = model
    plain = call(state, ids, None, graphdef=graphdef)
    knocked = jnp.ones((cfg.num_layers, cfg.num_heads)).at[layer].set(0.0)
    # every head's output zeroed = every value vector zeroed
    zero = call(state, ids, Interventions(head_keep=knocked), graphdef=graphdef)
    no_values = call(state, ids, Interventions(value_keep={layer: jnp.zeros((1, T))}), graphdef=graphdef)
    np.testing.assert_allclose(zero["logits"], no_values["logits"], atol=1e-5)
    # all attention on the first token = the weights of a one-hot map on key 0
    first = call(state, ids, Interventions(head_keep=knocked, head_mode="first"), graphdef=graphdef)
    one_hot = jnp.zeros((1, cfg.num_heads, T, T)).at[..., 0].set(1.0)
    overridden = call(state, ids, Interventions(attention={layer: one_hot}), graphdef=graphdef)
    np.testing.assert_allclose(first["logits"], overridden["logits"], atol=1e-5)
    assert np.abs(np.asarray(first["logits"]) - np.asarray(plain["logits"])).max() > 1e-3
    # the layers below are untouched
    for below in range(layer):
        np.testing.assert_array_equal(first["maps"][below], plain["maps"][below])


def test_a_prefill_and_decode_steps_with_the_cache_equal_one_forward(model):
    cfg, graphdef, state, ids = model

    @jax.jit
    def prefill_then_steps(state, ids):
        m = nnx.merge(graphdef, state)
        out = decoder(m, ids[:, :6], start=0, cache=empty_cache(cfg, 1, 16), capture=Capture(maps=True))
        logits, maps, cache = [out["logits"]], [out["maps"]], out["cache"]
        for position in range(6, T):
            out = decoder(m, ids[:, position:position + 1], start=position, cache=cache, capture=Capture(maps=True))
            logits.append(out["logits"])
            maps.append(out["maps"])
            cache = out["cache"]
        return jnp.concatenate(logits, 1), [jnp.concatenate([step[i] for step in maps], 2) for i in range(cfg.num_layers)]

    logits, maps = prefill_then_steps(state, ids)
    plain = call(state, ids, None, graphdef=graphdef)
    np.testing.assert_allclose(logits, plain["logits"], atol=1e-5)
    for layer in range(cfg.num_layers):
        np.testing.assert_allclose(np.asarray(maps[layer])[..., :T], plain["maps"][layer], atol=1e-6)
        assert np.all(np.asarray(maps[layer])[..., T:] == 0)

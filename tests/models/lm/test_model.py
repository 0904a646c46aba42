"""DecoderLM's maths against numpy oracles: RoPE, RMSNorm/LayerNorm, grouped-query attention; causal
maps and length buckets as properties."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from models.lm.config import LMConfig
from models.lm.forward import Capture, attention, captured, run
from models.lm.layers import apply_rope, local_rope, normalize, rope_frequencies, rope_tables, softcap, visible_keys
from models.lm.model import DecoderLM

GQA = {"model_type": "qwen2", "vocab_size": 50, "hidden_size": 24, "intermediate_size": 32,
       "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2, "rope_theta": 1e6}


def _split(hf: dict, seed: int = 0):
    cfg = LMConfig.from_hf(hf)
    model = DecoderLM(cfg, rngs=nnx.Rngs(seed))
    # Larger weights than the init, so that maps are far from uniform.
    graphdef, state = nnx.split(model)
    state = nnx.from_flat_state([(p, nnx.Param(v[...] * (8.0 if v[...].ndim == 2 else 1.0)))
                                 for p, v in nnx.to_flat_state(state)])
    return cfg, graphdef, state


def numpy_rope(x, theta, positions):
    # x [T, d]: Hugging Face's rotate_half convention, written out pair by pair (i, i + d/2).
    d = x.shape[-1]
    out = np.empty_like(x, dtype=np.float64)
    for t, pos in enumerate(positions):
        for i in range(d // 2):
            angle = pos / theta ** (2 * i / d)
            a, b = x[t, i], x[t, i + d // 2]
            out[t, i] = a * np.cos(angle) - b * np.sin(angle)
            out[t, i + d // 2] = b * np.cos(angle) + a * np.sin(angle)
    return out


def test_rope_equals_the_oracle_and_keeps_only_relative_position():
    cfg = LMConfig.from_hf({**GQA, "head_dim": 8, "rope_theta": 5e5})
    inv_freq, factor = rope_frequencies(cfg)
    assert factor == 1.0
    np.testing.assert_allclose(inv_freq, 1 / 5e5 ** (np.arange(0, 8, 2) / 8), rtol=1e-6)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 8)).astype(np.float32)
    angles = np.arange(7)[:, None] * inv_freq[None]
    angles = np.concatenate([angles, angles], -1)
    rotated = np.asarray(apply_rope(x[None, None], np.cos(angles), np.sin(angles)))[0, 0]
    np.testing.assert_allclose(rotated, numpy_rope(x, 5e5, range(7)), atol=1e-5)
    # q at m and k at n: the score depends on m - n only.
    q, k = rng.normal(size=8), rng.normal(size=8)
    scores = [numpy_rope(q[None], 5e5, [m])[0] @ numpy_rope(k[None], 5e5, [n])[0] for m, n in ((3, 1), (10, 8), (40, 38))]
    np.testing.assert_allclose(scores, scores[0], atol=1e-9)


@settings(max_examples=8, deadline=None)  # each shape compiles
@given(heads=st.integers(1, 3), half=st.integers(1, 6), turned=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_partial_rotary_turns_the_first_dimensions_and_passes_the_rest(heads, half, turned, seed):
    # GPT-NeoX / Phi-3: RoPE of the first r = rope_dim dimensions (with base^(2i/r)), the others unchanged.
    d, r = 2 * half + 2 * turned, 2 * turned
    cfg = LMConfig.from_hf({**GQA, "model_type": "phi3", "num_attention_heads": heads, "num_key_value_heads": heads,
                            "head_dim": d, "rope_theta": 1e3, "partial_rotary_factor": r / d})
    assert cfg.rope_dim == r
    x = np.random.default_rng(seed).normal(size=(1, heads, 5, d)).astype(np.float32)
    out = np.asarray(apply_rope(x, *rope_tables(cfg, np.arange(5))))
    for h in range(heads):
        np.testing.assert_allclose(out[0, h, :, :r], numpy_rope(x[0, h, :, :r], 1e3, range(5)), atol=1e-5)
    np.testing.assert_array_equal(out[..., r:], x[..., r:])


@settings(max_examples=50, deadline=None)
@given(cap=st.floats(0.5, 100.0), values=st.lists(st.floats(-1e4, 1e4), min_size=16, max_size=16))
def test_soft_capping_is_cap_tanh_x_over_cap_in_numpy_and_jax(cap, values):
    x = np.asarray(values, np.float32)  # one length: one compile
    expected = cap * np.tanh(x.astype(np.float64) / cap)
    np.testing.assert_allclose(softcap(x, cap), expected, atol=1e-5 * cap)
    np.testing.assert_allclose(np.asarray(softcap(jnp.asarray(x), cap)), expected, atol=1e-5 * cap)
    assert np.all(np.abs(softcap(x, cap)) <= np.float32(cap)) and softcap(x, None) is x
    assert np.all(np.diff(softcap(np.sort(x), cap)) >= 0)  # order kept: the argmax of capped logits is the same


def test_gemma3s_local_layers_turn_with_their_own_base():
    cfg = LMConfig.from_hf({**GQA, "model_type": "gemma3_text", "head_dim": 8, "num_hidden_layers": 3,
                            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                            "sliding_window": 4, "rope_theta": 1e6, "rope_local_base_freq": 10.0})
    assert [local_rope(cfg, i) for i in range(3)] == [True, False, True]
    np.testing.assert_allclose(rope_frequencies(cfg, local=True)[0], 1 / 10.0 ** (np.arange(0, 8, 2) / 8), rtol=1e-6)
    np.testing.assert_allclose(rope_frequencies(cfg)[0], 1 / 1e6 ** (np.arange(0, 8, 2) / 8), rtol=1e-6)


def test_olmo2s_qk_norm_is_over_the_whole_projection():
    # OLMo 2: RMSNorm of q = x W_q over all H·d numbers at once (one scale for the whole vector), then cut into heads.
    cfg = LMConfig.from_hf({**GQA, "model_type": "olmo2"})
    model = DecoderLM(cfg, rngs=nnx.Rngs(2))
    layer = model.layers[0]
    rng = np.random.default_rng(3)
    layer.q_norm.scale[...] = jnp.asarray(rng.normal(size=cfg.num_heads * cfg.head_dim).astype(np.float32))
    assert not hasattr(layer, "attn_norm")  # OLMo 2 has no norm before attention: the layer reads the stream itself
    ids = np.asarray([[1, 2, 3, 4]], np.int32)
    graphdef, state = nnx.split(model)
    out = captured(state, ids, np.ones_like(ids, bool), graphdef=graphdef, capture=Capture(logits=False, queries=(0,)))
    x = np.asarray(model.embed[...])[ids]
    q = x[0].astype(np.float64) @ np.asarray(layer.q.kernel[...], np.float64)
    q = q / np.sqrt(np.mean(q * q, -1, keepdims=True) + cfg.norm_eps) * np.asarray(layer.q_norm.scale[...])
    q = q.reshape(4, cfg.num_heads, cfg.head_dim).transpose(1, 0, 2)
    cos, sin = (np.asarray(t) for t in rope_tables(cfg, np.arange(4)))
    expected = q * cos + np.concatenate([-q[..., cfg.head_dim // 2:], q[..., :cfg.head_dim // 2]], -1) * sin
    np.testing.assert_allclose(np.asarray(out["queries"][0][0]), expected, atol=1e-4)


def test_linear_scaling_divides_positions():
    cfg = LMConfig.from_hf({**GQA, "rope_scaling": {"type": "linear", "factor": 4.0}})
    plain = LMConfig.from_hf(GQA)
    np.testing.assert_allclose(rope_frequencies(cfg)[0], rope_frequencies(plain)[0] / 4, rtol=1e-6)


def test_norms_equal_the_oracle():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 12)).astype(np.float32) * 3 + 1

    class Holder(nnx.Module):
        def __init__(self, bias):
            self.scale = nnx.Param(rng.normal(size=12).astype(np.float32))
            self.bias = nnx.Param(rng.normal(size=12).astype(np.float32)) if bias else None

    rms, layer = Holder(False), Holder(True)
    expected_rms = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * rms.scale[...]
    np.testing.assert_allclose(normalize(rms, x, 1e-6), expected_rms, rtol=1e-5, atol=1e-5)
    centred = x - x.mean(-1, keepdims=True)
    expected = centred / np.sqrt((centred**2).mean(-1, keepdims=True) + 1e-5) * layer.scale[...] + layer.bias[...]
    np.testing.assert_allclose(normalize(layer, x, 1e-5), expected, rtol=1e-5, atol=1e-5)


def numpy_gqa(x, layer, cfg, cos, sin):
    # One layer's attention, head by head: query head h reads key/value head h // G.
    def project(dense):
        y = x @ np.asarray(dense.kernel[...], np.float64)
        return y if dense.bias is None else y + np.asarray(dense.bias[...])

    t, hd, g = x.shape[0], cfg.head_dim, cfg.queries_per_kv
    q, k, v = project(layer.q), project(layer.k), project(layer.v)

    def rope(a):
        return a * cos + np.concatenate([-a[:, hd // 2:], a[:, :hd // 2]], -1) * sin

    maps, outputs = [], []
    for h in range(cfg.num_heads):
        kv = h // g
        qh, kh, vh = rope(q[:, h * hd:(h + 1) * hd]), rope(k[:, kv * hd:(kv + 1) * hd]), v[:, kv * hd:(kv + 1) * hd]
        scores = qh @ kh.T / np.sqrt(hd)
        scores[np.triu_indices(t, 1)] = -np.inf
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        maps.append(probs)
        outputs.append(probs @ vh)
    out = np.concatenate(outputs, -1) @ np.asarray(layer.o.kernel[...], np.float64)
    return np.stack(maps), out


def test_grouped_query_attention_equals_the_oracle():
    cfg, graphdef, state = _split(GQA)
    model = nnx.merge(graphdef, state)
    rng = np.random.default_rng(2)
    t = 9
    x = rng.normal(size=(1, t, cfg.hidden_size)).astype(np.float32)
    inv_freq, _ = rope_frequencies(cfg)
    angles = np.arange(t)[:, None] * inv_freq[None]
    angles = np.concatenate([angles, angles], -1)
    sown = {"maps": []}
    out, _ = attention(model.layers[0], cfg, 0, x, (np.cos(angles), np.sin(angles)),
                       visible_keys(cfg, 0, np.arange(t), np.arange(t)), capture=Capture(maps=True), sown=sown)
    probs = sown["maps"][0]
    maps, expected = numpy_gqa(x[0].astype(np.float64), model.layers[0], cfg, np.cos(angles), np.sin(angles))
    assert probs.shape == (1, cfg.num_heads, t, t)
    np.testing.assert_allclose(probs[0], maps, atol=2e-6)
    np.testing.assert_allclose(out[0], expected, atol=2e-4, rtol=1e-4)
    assert not np.allclose(maps[0], maps[1])  # heads sharing a key/value head still differ through their queries


def test_a_sliding_window_zeroes_keys_too_far_back():
    cfg, graphdef, state = _split({**GQA, "model_type": "mistral", "sliding_window": 3})
    _, attention = run(graphdef, state, np.arange(10)[None] % 50, logits=False)
    q, k = np.indices((10, 10))
    assert np.all(attention[..., q - k >= 3] == 0) and np.all(attention[..., (q - k < 3) & (k <= q)] > 0)


ARCHS = [GQA, {"model_type": "gpt2", "vocab_size": 50, "n_embd": 16, "n_layer": 2, "n_head": 2, "n_positions": 40},
         {**GQA, "model_type": "qwen3", "head_dim": 8, "tie_word_embeddings": True}]


@pytest.fixture(scope="module", params=range(len(ARCHS)), ids=["qwen2", "gpt2", "qwen3"])
def model(request):
    return _split(ARCHS[request.param], seed=request.param)


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_causal_maps_and_buckets_do_not_change_outputs(model, data):
    cfg, graphdef, state = model
    length = data.draw(st.integers(1, 40))
    ids = np.asarray([data.draw(st.lists(st.integers(0, 49), min_size=length, max_size=length))])
    logits, attention = run(graphdef, state, ids)
    assert attention.shape == (cfg.num_layers, 1, cfg.num_heads, length, length)
    np.testing.assert_allclose(attention.sum(-1), 1, atol=1e-5)
    assert np.all(attention[..., np.triu_indices(length, 1)[0], np.triu_indices(length, 1)[1]] == 0)
    assert np.all(attention >= 0)
    # Another padding (a larger bucket) gives the same numbers.
    other_logits, other_attention = run(graphdef, state, ids, buckets=(64,))
    np.testing.assert_allclose(other_attention, attention, atol=1e-5)
    np.testing.assert_allclose(other_logits, logits, atol=1e-4)
    # A prefix's outputs do not depend on what follows (causality).
    if length > 2:
        _, prefix = run(graphdef, state, ids[:, : length // 2])
        np.testing.assert_allclose(prefix, attention[..., : length // 2, : length // 2], atol=1e-5)

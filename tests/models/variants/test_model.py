"""The variants' decoder (models/variants/model.py): every variant equals a numpy forward written from the papers
(tests/models/variants/oracle.py's pieces, float64, head by head), is causal, and its cache sizes are the formulas'."""

import math

import jax
import numpy as np
import pytest
from flax import nnx

from models.variants import model as vm
from tests.models.variants import oracle

CFG = dict(vocab=11, max_length=24, layers=2, heads=4, width=16, mlp=8)
T = 6


def _params(cfg: vm.VariantConfig) -> dict[str, np.ndarray]:
    return {
        ".".join(map(str, path)): np.asarray(value, np.float64)
        for path, value in nnx.to_flat_state(nnx.state(vm.VariantModel(cfg, rngs=nnx.Rngs(3)), nnx.Param))
    }


def _layer_norm(x, scale, bias):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * scale + bias


def _gelu(x):  # jax.nn.gelu's default, the tanh form
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _inv_freq(dim):
    return 1.0 / 10_000.0 ** (np.arange(0, dim, 2) / dim)


def _head(cfg, p, layer, x, h, causal):
    """One head's (output, weights) of normalised hidden states x [T, D], from the formulas."""
    spec, d, t = cfg.spec, cfg.head_dim, len(x)
    pos = np.arange(t)
    g = f"layers.{layer}."
    if spec.kind == "mla":
        c_q, c_kv = x @ p[g + "w_dq"], x @ p[g + "w_dkv"]
        inv = _inv_freq(vm.MLA_ROPE)
        k_r = oracle.rotate_pairs(x @ p[g + "w_kr"], pos, inv)
        q_r = oracle.rotate_pairs(c_q @ p[g + "w_qr"][:, h], pos, inv)
        scores = (c_q @ p[g + "w_uq"][:, h] @ (c_kv @ p[g + "w_uk"][:, h]).T + q_r @ k_r.T) / math.sqrt(d + vm.MLA_ROPE)
        a = oracle.softmax(scores, causal)
        return a @ (c_kv @ p[g + "w_uv"][:, h]), a
    if spec.kind == "differential":
        cut = slice(2 * d * h, 2 * d * (h + 1))
        q, k, v = (x @ p[g + n][:, cut] for n in ("w_q", "w_k", "w_v"))
        q = np.concatenate(
            [oracle.rotate_pairs(q[:, :d], pos, _inv_freq(d)), oracle.rotate_pairs(q[:, d:], pos, _inv_freq(d))], -1
        )
        k = np.concatenate(
            [oracle.rotate_pairs(k[:, :d], pos, _inv_freq(d)), oracle.rotate_pairs(k[:, d:], pos, _inv_freq(d))], -1
        )
        lq1, lk1, lq2, lk2 = p[g + "lambdas"][:, h]
        init = 0.8 - 0.6 * math.exp(-0.3 * layer)
        lam = math.exp(lq1 @ lk1) - math.exp(lq2 @ lk2) + init
        a = oracle.softmax(q[:, :d] @ k[:, :d].T / math.sqrt(d), causal) - lam * oracle.softmax(
            q[:, d:] @ k[:, d:].T / math.sqrt(d), causal
        )
        o = a @ v
        o = o / np.sqrt((o**2).mean(-1, keepdims=True) + 1e-5) * p[g + "diff_norm"][h, 0]
        return (1 - init) * o, a
    kv = h // (cfg.heads // cfg.kv_heads)
    q = x @ p[g + "w_q"][:, h * d : (h + 1) * d]
    k, v = (x @ p[g + n][:, kv * d : (kv + 1) * d] for n in ("w_k", "w_v"))
    if spec.positions == "rope":
        q, k = oracle.rotate_pairs(q, pos, _inv_freq(d)), oracle.rotate_pairs(k, pos, _inv_freq(d))
    if spec.kind == "linear":
        return oracle.linear_parallel(q, k, v)
    scores = q @ k.T / math.sqrt(d)
    if spec.positions == "alibi":
        scores = scores - oracle.alibi_slopes(cfg.heads)[h] * (pos[:, None] - pos[None, :])
    if spec.normaliser == "sigmoid":
        a = oracle.sigmoid_weights(scores, causal)
    elif spec.normaliser in ("sink", "softmax1"):
        sink = p[g + "sink"][h, 0, 0] if spec.normaliser == "sink" else 0.0
        a = np.where(causal, oracle.sink_softmax(np.where(causal, scores, -np.inf), sink), 0.0)
    else:
        a = oracle.softmax(scores, causal)
    o = a @ v
    if spec.gate:
        o = o / (1 + np.exp(-(x @ p[g + "w_gate"][:, h])))[:, None]
    return o, a


def numpy_forward(cfg: vm.VariantConfig, p: dict, tokens: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Returns (logits [T, V], per layer weights [H', T, T]) of one sequence."""
    t = len(tokens)
    causal = np.tril(np.ones((t, t), bool))
    x = p["token_embed"][tokens] + (p["position_embed"][:t] if cfg.spec.positions == "learned" else 0)
    maps = []
    for layer in range(cfg.layers):
        g = f"layers.{layer}."
        normed = _layer_norm(x, p[g + "norm_scale"], p[g + "norm_bias"])
        count = cfg.heads // 2 if cfg.spec.kind == "differential" else cfg.heads
        outs, ws = zip(*(_head(cfg, p, layer, normed, h, causal) for h in range(count)))
        x = x + np.concatenate(outs, -1) @ p[g + "w_o"]
        x = x + _gelu(_layer_norm(x, p[g + "mlp_scale"], p[g + "mlp_bias"]) @ p[g + "w_in"]) @ p[g + "w_out"]
        maps.append(np.stack(ws))
    return _layer_norm(x, p["final_scale"], p["final_bias"]) @ p["unembed"], maps


@pytest.mark.parametrize("variant", sorted(vm.VARIANTS))
def test_variant_equals_numpy_forward_and_is_causal(variant):
    cfg = vm.VariantConfig(variant=variant, **CFG)
    graphdef, params = vm.make_model(cfg, seed=3)
    tokens = np.random.default_rng(0).integers(0, cfg.vocab, size=(2, T)).astype(np.int32)
    logits, maps, stream = vm.run(graphdef, params, tokens)
    p = _params(cfg)
    for b in range(2):
        want_logits, want_maps = numpy_forward(cfg, p, tokens[b])
        np.testing.assert_allclose(np.asarray(logits[b]), want_logits, atol=2e-4, rtol=2e-4)
        for got, want in zip(maps, want_maps):
            np.testing.assert_allclose(np.asarray(got[b]), want, atol=2e-5)
    assert stream.shape == (cfg.layers + 1, 2, T, cfg.width)
    changed = tokens.copy()
    changed[:, -1] = (changed[:, -1] + 1) % cfg.vocab
    later = vm.run(graphdef, params, changed)[0]
    np.testing.assert_allclose(np.asarray(later[:, :-1]), np.asarray(logits[:, :-1]), atol=1e-6)


def test_training_softmax_equals_the_library_forms_without_nan_gradients():
    """The model premasks its softmax (core.masked_softmax's exp of a masked score can overflow): same weights as
    heads.mla_attention; and a future score 200 above the visible ones leaves the gradient finite."""
    from models.variants import heads, positions

    cfg = vm.VariantConfig(variant="mla", **CFG)
    layer = vm.VariantModel(cfg, rngs=nnx.Rngs(1)).layers[0]
    x = jax.random.normal(jax.random.key(0), (2, T, cfg.width))
    w = heads.LatentWeights(*(getattr(layer, n)[...] for n in heads.LatentWeights._fields))
    rope = positions.rope_tables(np.arange(T), positions.rope_inverse_frequencies(vm.MLA_ROPE))
    want = heads.mla_attention(x, heads.mla_cache(x, w, rope), w, rope, np.tril(np.ones((T, T), bool)))
    got = vm.attend(layer, cfg, 0, x)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5)
    scores = np.zeros((T, T), np.float32)
    scores[0, -1] = 200.0  # a future key
    grad = jax.grad(lambda s: vm._softmax(s, np.tril(np.ones((T, T), bool)))[1:, 0].sum())(scores)
    assert bool(np.all(np.isfinite(grad)))


@pytest.mark.parametrize(
    ("variant", "per_token", "state"),
    [
        ("mha", 2 * 2 * 4 * 4 * 4, 0),  # layers · (k + v) · H · d · 4 bytes
        ("gqa", 2 * 2 * 2 * 4 * 4, 0),
        ("mqa", 2 * 2 * 1 * 4 * 4, 0),
        ("mla", 2 * (vm.MLA_LATENT + vm.MLA_ROPE) * 4, 0),
        ("differential", 2 * 2 * 2 * 8 * 4, 0),  # H/2 heads of 2d: as many numbers as MHA
        ("linear", 0, 2 * 4 * (4 * 4 + 4) * 4),  # layers · H · (d · d + d) · 4 bytes, whatever the length
    ],
)
def test_cache_bytes_are_the_formulas(variant, per_token, state):
    assert vm.cache_bytes(vm.VariantConfig(variant=variant, **CFG)) == (per_token, state)


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown variant"):
        vm.VariantConfig(variant="nonesuch")

"""The decoder's graph (models/flow/decoder.py) against a numpy oracle on tiny random models: the edge formula
part by part, and the parts summing back to the stream the forward computed."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from flax import nnx

from models.capture import Capture
from models.flow.decoder import flow, graph_of
from models.flow.records import induction_graph
from models.lm.config import LMConfig, gpt2_config
from models.lm.forward import captured
from models.lm.layers import feed_forward, normalize
from models.lm.model import DecoderLM

T = 7
QWEN = {
    "model_type": "qwen2",
    "vocab_size": 50,
    "hidden_size": 24,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 6,
    "num_key_value_heads": 2,
    "rope_theta": 1e4,
    "use_sliding_window": True,
    "sliding_window": 4,
    "max_window_layers": 1,
}  # grouped queries, a sliding layer, no output bias
GPT2 = dict(vocab_size=40, n_embd=16, n_layer=2, n_head=2, n_positions=16)  # output bias, learned positions


def build(cfg):
    graphdef, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(3)))
    state = jax.tree.map(lambda v: v * 3.0 if v.ndim == 2 else v + 0.1, state)  # sharper maps, non-zero biases
    ids = np.random.default_rng(1).integers(0, cfg.vocab_size, (1, T)).astype(np.int32)
    return graphdef, state, ids


@pytest.fixture(scope="module", params=["qwen2", "gpt2"])
def tiny(request):
    cfg = LMConfig.from_hf(QWEN) if request.param == "qwen2" else gpt2_config(**GPT2)
    graphdef, state, ids = build(cfg)
    mask = np.ones_like(ids, bool)
    out = jax.tree.map(np.asarray, flow(state, ids, mask, graphdef=graphdef, parts=True))
    model = nnx.merge(graphdef, state)
    plain = jax.tree.map(
        np.asarray,
        captured(
            state, ids, mask, graphdef=graphdef, capture=Capture(logits=False, maps=True, values=True, residual=True)
        ),
    )
    return cfg, model, out, plain


def oracle_layer(cfg, model, plain, layer: int):
    # -> (heads [H, T, T], residual [T], mid [T, D]) from the forward's own captures and W_O, float64, part by part
    o = model.layers[layer].o
    w_o = np.asarray(o.kernel[...], np.float64).reshape(cfg.num_heads, cfg.head_dim, cfg.hidden_size)
    v = np.repeat(plain["values"][layer][0].astype(np.float64), cfg.queries_per_kv, axis=0)  # [H, T, d]
    alpha, x = plain["maps"][layer][0].astype(np.float64), plain["residual"][layer][0].astype(np.float64)
    bias = 0.0 if o.bias is None else np.asarray(o.bias[...], np.float64)
    parts = alpha[..., None] * np.einsum("htd,hde->hte", v, w_o)[:, None]  # [H, S, T, D]
    mid = x + parts.sum((0, 2)) + bias
    heads, kept = np.zeros(alpha.shape), np.zeros(T)
    for i in range(T):
        norm = np.abs(mid[i]).sum()
        raw = np.maximum(0, norm - np.abs(mid[i] - parts[:, i]).sum(-1))
        own = max(0.0, norm - np.abs(mid[i] - x[i]).sum())
        heads[:, i], kept[i] = raw / (raw.sum() + own), own / (raw.sum() + own)
    return heads, kept, mid


def test_edges_match_the_oracle(tiny):
    cfg, model, out, plain = tiny
    graph = graph_of(out, T)
    for layer in range(cfg.num_layers):
        heads, kept, mid = oracle_layer(cfg, model, plain, layer)
        np.testing.assert_allclose(graph.heads[layer], heads, atol=2e-5)
        np.testing.assert_allclose(graph.residual_attention[layer], kept, atol=2e-5)
        after = plain["residual"][layer + 1][0].astype(np.float64)
        for i in range(T):  # the FFN step: parts residual M and FFN = X[l+1] − M
            ffn = after[i] - mid[i]
            raw = np.maximum(0, np.abs(after[i]).sum() - np.abs(after[i] - np.stack([ffn, mid[i]])).sum(-1))
            np.testing.assert_allclose([graph.ffn[layer, i], graph.residual_ffn[layer, i]], raw / raw.sum(), atol=2e-5)
        np.testing.assert_array_equal(graph.visible[layer], plain["maps"][layer][0].sum(0) > 0)
    totals = graph.heads.sum((1, 3)) + graph.residual_attention
    np.testing.assert_allclose(totals, 1.0, atol=1e-5)


def test_the_parts_sum_to_the_stream(tiny):
    # residual + Σ_h Σ_j α v W_O + bias is M, and M + FFN(M) is the next stream the forward computed
    cfg, model, out, plain = tiny
    for layer in range(cfg.num_layers):
        parts = np.einsum("bhst,bhte->bse", out["maps"][layer], out["mixed"][layer])
        mid = out["residual"][layer] + parts + out["bias"][layer]
        block = model.layers[layer]
        after = mid + np.asarray(feed_forward(block, cfg, normalize(block.mlp_norm, mid, cfg.norm_eps)))
        np.testing.assert_allclose(after, plain["residual"][layer + 1], atol=1e-5, rtol=0)


def test_the_induction_model_runs_the_same_graph():
    # attention only: no FFN step, and the parts sum to the next stream itself
    tokens = np.array([0, 5, 9, 3, 7, 5, 9, 3], np.int32)
    graph, predicted = induction_graph(tokens)
    assert graph.ffn is None and graph.heads.shape[2:] == (8, 8) and predicted.shape == (8,)
    np.testing.assert_allclose(graph.heads.sum((1, 3)) + graph.residual_attention, 1.0, atol=1e-5)
    assert not graph.heads[..., np.triu_indices(8, 1)[0], np.triu_indices(8, 1)[1]].any()  # causal

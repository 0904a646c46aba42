"""The encoder's graph (models/flow/encoder.py) on a tiny random BERT: the parts, carried through each post-LN
linearly, sum back to the streams the forward computed, and the weights follow the formula."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from flax import nnx

from models.capture import Capture
from models.flow.decoder import graph_of
from models.flow.encoder import check_encoder, flow
from models.record import InputError
from models.transformer.checkpoint import dotted, model_from_tensors
from models.transformer.config import BertConfig
from models.transformer.model import BertModel, encoder

CFG = BertConfig(
    vocab_size=40,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=16,
    layer_norm_eps=1e-5,
)
T = 6  # real tokens, then 2 of padding


@pytest.fixture(scope="module")
def tiny():
    _, state = nnx.split(BertModel(CFG, rngs=nnx.Rngs(2)))
    params = {dotted(path): v[...] * (3.0 if v[...].ndim == 2 else 1.0) for path, v in nnx.to_flat_state(state)}
    ids = np.array([[2, 7, 9, 11, 5, 3, 0, 0]], np.int32)
    types, mask = np.zeros_like(ids), ids > 0
    mask[0, 0] = True
    out = jax.tree.map(np.asarray, flow(params, ids, types, mask, cfg=CFG, parts=True))
    model = model_from_tensors(CFG, params)
    plain = jax.tree.map(
        np.asarray,
        jax.jit(
            lambda i, t, m: encoder(
                model, i, t, m, capture=Capture(logits=False, maps=True, values=True, residual=True)
            )
        )(ids, types, mask),
    )
    return model, out, plain


def linearised(pre, gamma, eps):
    var = pre.var(-1, keepdims=True)
    return lambda p: gamma * (p - p.mean(-1, keepdims=True)) / np.sqrt(var + eps)


def test_parts_through_the_norms_sum_to_the_streams(tiny):
    model, out, plain = tiny
    for layer in range(CFG.num_hidden_layers):
        block = model.encoder.layer[layer]
        attn = block.attention.output
        w_o = np.asarray(attn.dense.kernel[...], np.float64).reshape(2, 8, 16)
        alpha, x = plain["maps"][layer][0].astype(np.float64), plain["residual"][layer][0].astype(np.float64)
        parts = alpha[..., None] * np.einsum("htd,hde->hte", plain["values"][layer][0], w_o)[:, None]  # [H,S,T,D]
        bias = np.asarray(attn.dense.bias[...], np.float64)
        pre = x + parts.sum((0, 2)) + bias
        lin = linearised(pre, np.asarray(attn.LayerNorm.scale[...]), CFG.layer_norm_eps)
        summed = (
            lin(x)
            + sum(lin(parts[h, :, j]) for h in range(2) for j in range(8))
            + lin(bias)
            + np.asarray(attn.LayerNorm.bias[...])
        )
        np.testing.assert_allclose(summed, out["mid"][layer][0], atol=1e-5)
        # the FFN step: M and FFN(M), through the second norm, give the next stream the forward computed
        mid = out["mid"][layer][0].astype(np.float64)
        hidden = mid @ np.asarray(block.intermediate.dense.kernel[...]) + np.asarray(block.intermediate.dense.bias[...])
        ffn = np.asarray(jax.nn.gelu(hidden, approximate=False)) @ np.asarray(
            block.output.dense.kernel[...]
        ) + np.asarray(block.output.dense.bias[...])
        norm = block.output.LayerNorm
        lin2 = linearised(mid + ffn, np.asarray(norm.scale[...]), CFG.layer_norm_eps)
        after = plain["residual"][layer + 1][0]
        np.testing.assert_allclose(lin2(mid) + lin2(ffn) + np.asarray(norm.bias[...]), after, atol=1e-5)
        # and the weights follow the formula on the linearised parts
        graph = graph_of(out, T)
        whole = out["mid"][layer][0]
        for i in range(T):
            candidates = [lin(parts[h, i, j])[i] for h in range(2) for j in range(T)] + [lin(x)[i]]
            raw = np.array([max(0, np.abs(whole[i]).sum() - np.abs(whole[i] - p).sum()) for p in candidates])
            np.testing.assert_allclose(
                np.append(graph.heads[layer, :, i].ravel(), graph.residual_attention[layer, i]),
                raw / raw.sum(),
                atol=2e-5,
            )
        second = [lin2(ffn)[:T], lin2(mid)[:T]]
        raw = np.maximum(0, np.abs(after[:T]).sum(-1) - np.abs(after[:T] - np.stack(second)).sum(-1))
        np.testing.assert_allclose(np.stack([graph.ffn[layer], graph.residual_ffn[layer]]), raw / raw.sum(0), atol=2e-5)


def test_padding_keys_get_no_weight(tiny):
    _, out, _ = tiny
    assert not out["heads"][..., 6:].any() and not out["visible"][..., 6:].any() and out["visible"][..., :6].all()


def test_pre_norm_encoders_are_refused_in_one_line():
    with pytest.raises(InputError, match="post-LN"):
        check_encoder(BertConfig(pre_norm=True, model_type="modernbert"))

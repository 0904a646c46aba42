"""The neuron view of a BERT-family encoder (MiniLM): one head's query and keys, q ⊙ k, scores and softmax.

For a layer, a head and a query token i: q = the head's query vector at i, k = its keys at every token,
q ⊙ k [T, d], scores = Σ_d (q ⊙ k) / √d and their softmax over the text's tokens (an encoder sees
every token, before and after). The softmax row equals the runner's attention map row
(tests/models/transformer/test_neuron.py).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from models.neuron import NeuronParts, neuron_index, query_key_parts
from models.transformer.config import BertConfig
from models.transformer.records import AttentionRunner


@functools.partial(jax.jit, static_argnames=("cfg",))
def queries_and_keys(params, input_ids, token_type_ids, key_mask, *, cfg: BertConfig):
    """Returns (q: L arrays [H, T, d], k: L arrays [H, T, d]) of sequence 0, as each layer's attention uses them.

    params: the runner's {dotted path: array}; input_ids, token_type_ids int32 [1, T]; key_mask bool [1, T].
    """
    from models.transformer.checkpoint import model_from_tensors
    from models.transformer.model import ACTIVATIONS, _dense, _split_heads, key_bias, self_attention

    model = model_from_tensors(cfg, params)
    emb = model.embeddings
    positions = jnp.arange(input_ids.shape[1])
    x = emb.LayerNorm(emb.word_embeddings.embedding[...][input_ids] + emb.position_embeddings.embedding[...][positions][None]
                      + emb.token_type_embeddings.embedding[...][token_type_ids])
    bias = key_bias(key_mask)
    act = ACTIVATIONS[cfg.hidden_act]
    qs, ks = [], []
    for layer in model.encoder.layer:
        attn = layer.attention
        qs.append(_split_heads(_dense(attn.self.query, x), cfg.num_attention_heads)[0])
        ks.append(_split_heads(_dense(attn.self.key, x), cfg.num_attention_heads)[0])
        x, _ = self_attention(attn, x, bias, cfg.num_attention_heads)
        x = layer.output.LayerNorm(_dense(layer.output.dense, act(_dense(layer.intermediate.dense, x))) + x)
    return tuple(qs), tuple(ks)


def neuron_parts(runner: AttentionRunner, text: str, layer: int, head: int, query: int = 0,
                 text_pair: str | None = None) -> NeuronParts:
    """Returns the NeuronParts of token `query` (default: [CLS]) in `layer`, `head` of a text (or pair)."""
    cfg = runner.config
    encoding = runner.encode(text, text_pair)
    t = len(encoding)
    layer = neuron_index("layer", layer, cfg.num_hidden_layers)
    head = neuron_index("head", head, cfg.num_attention_heads)
    query = neuron_index("query position", query, t)
    qs, ks = queries_and_keys(runner.params, *runner._padded([encoding], 1), cfg=cfg)
    q = np.asarray(qs[layer][head, query], np.float32)
    k = np.asarray(ks[layer][head, :t], np.float32)
    scale = 1.0 / math.sqrt(cfg.hidden_size // cfg.num_attention_heads)
    return query_key_parts(q, k, scale, np.ones(t, bool), head)  # an encoder sees every token

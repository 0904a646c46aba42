"""The neuron view of a decoder LM: one head's query and keys, their product, scores and softmax.

For a layer, a query head h and a query position i: q = the head's query vector at i and k = the keys
of its key/value head h // G at every position (after q/k norm and RoPE where the model has them),
q ⊙ k [T, d], scores = Σ_d (q ⊙ k) · scale (scale = 1/√d, and 1/(layer + 1) for GPT-2 configs that
say so; Gemma: query_pre_attn_scalar^-1/2) and the softmax of the scores (Gemma 2: soft-capped first) over the
keys the query may see. The softmax row equals the
record's attention map row (tests/models/lm/test_neuron.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from models.lm.forward import LENGTH_BUCKETS, Capture, captured, pad_ids
from models.lm.layers import attention_scale, softcap, visible_keys
from models.lm.loader import LoadedLM
from models.lm.records import MAX_TOKENS, shared_runner
from models.model_folders import model_dir_option
from models.neuron import NeuronParts, neuron_index, query_key_parts
from models.record import AttentionRecord
from models.text import Notice

QUERIES_AND_KEYS = Capture(logits=False, queries=True, keys=True)


def queries_and_keys(state, ids, key_mask, *, graphdef):
    """Returns (q: L arrays [H, T, d], k: L arrays [K, T, d]) of sequence 0, as each layer's attention uses them
    (after q/k norm and RoPE): the one forward's capture. ids int32 [1, T]; key_mask bool [1, T]."""
    out = captured(state, ids, key_mask, graphdef=graphdef, capture=QUERIES_AND_KEYS)
    return tuple(q[0] for q in out["queries"]), tuple(k[0] for k in out["keys"])


def neuron_parts(loaded: LoadedLM, ids, layer: int, head: int, query: int = -1) -> NeuronParts:
    """Returns the NeuronParts of query position `query` (-1: the last) in `layer`, query head `head`.

    ids int [T]. InputError (one line) for a layer, head or position outside the model or the text.
    """
    cfg = loaded.config
    ids = np.asarray(ids, np.int32).reshape(-1)
    t = len(ids)
    layer, head = neuron_index("layer", layer, cfg.num_layers), neuron_index("head", head, cfg.num_heads)
    query = neuron_index("query position", query, t)
    limit = min(cfg.max_positions, MAX_TOKENS)
    padded, mask = pad_ids(ids[None], tuple(b for b in LENGTH_BUCKETS if b < limit) + (limit,))
    qs, ks = queries_and_keys(loaded.state, padded, mask, graphdef=loaded.graphdef)
    kv_head = head // cfg.queries_per_kv
    q = np.asarray(qs[layer][head, query], np.float32)
    k = np.asarray(ks[layer][kv_head, :t], np.float32)
    visible = visible_keys(cfg, layer, np.asarray([query]), np.arange(t))[0]  # the forward's rule for this layer
    parts = query_key_parts(q, k, attention_scale(cfg, layer), visible, kv_head)
    if cfg.attn_softcap is None:
        return parts
    # Gemma 2: the softmax reads the soft-capped scores, cap · tanh(scores / cap); parts.scores stay q · k · scale.
    capped = np.where(visible, softcap(parts.scores, cfg.attn_softcap), -np.inf)
    exp = np.exp(capped - capped.max())
    return dataclasses.replace(parts, weights=(exp / exp.sum()).astype(np.float32))


def neuron_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options text, model_dir, layer, head, position of the query (-1: the last token) ->
    one lm-neuron record: weights [T] over the keys (the softmax row), extras q, k, product, scores, visible."""
    runner = shared_runner(model_dir_option(options))
    encoding = runner.encode(options["text"])
    layer, head, position = options["layer"], options["head"], options["position"]
    parts = neuron_parts(runner.lm, encoding.ids, layer, head, position)  # checks them against the model and the text
    query = position % len(encoding.ids)
    return AttentionRecord(
        mechanism="lm-neuron", weights=parts.weights, axes=("key",),
        query_labels=(encoding.labels[query],), key_labels=encoding.labels,
        meta={
            "model": runner.name, "architecture": runner.config.model_type, "layer": layer, "head": head,
            "kv_head": parts.kv_head, "query": query,
            "head_dim": runner.config.head_dim, "scale": parts.scale,
            "rope": runner.config.arch.positions != "learned",
            "scores": "Σ_d q ⊙ k · scale, before the causal mask; weights: softmax over the visible keys",
            "notice": Notice.join(encoding.notices),
        },
        extras={"q": parts.q, "k": parts.k, "product": parts.product, "scores": parts.scores,
                "visible": parts.visible, "input_ids": encoding.ids},
    )

"""The neuron view of a BERT-family encoder (MiniLM): one head's query and keys, q ⊙ k, scores and softmax.

For a layer, a head and a query token i: q = the head's query vector at i, k = its keys at every token,
q ⊙ k [T, d], scores = Σ_d (q ⊙ k) / √d and their softmax over the text's tokens (an encoder sees
every token, before and after; a sliding layer those within its window). q and k (after RoPE) are what
the runner's one forward captures; the softmax row equals the runner's attention map row
(tests/models/transformer/test_neuron.py, test_views_agree.py, test_encoder_families.py).
"""

from __future__ import annotations

import math

import numpy as np

from models.capture import Capture
from models.neuron import NeuronParts, neuron_index, query_key_parts
from models.transformer.config import SLIDING
from models.transformer.records import AttentionRunner

# Every layer's queries and keys in one call: moving the layer on the page compiles nothing new.
QUERIES_AND_KEYS = Capture(logits=False, queries=True, keys=True)


def neuron_parts(runner: AttentionRunner, text: str, layer: int, head: int, query: int = 0,
                 text_pair: str | None = None) -> NeuronParts:
    """Returns the NeuronParts of token `query` (default: [CLS]) in `layer`, `head` of a text (or pair)."""
    cfg = runner.config
    encoding = runner.encode(text, text_pair)
    t = len(encoding)
    layer = neuron_index("layer", layer, cfg.num_hidden_layers)
    head = neuron_index("head", head, cfg.num_attention_heads)
    query = neuron_index("query position", query, t)
    out = runner.forward(runner.padded([encoding], 1), QUERIES_AND_KEYS)
    q = np.asarray(out["queries"][layer][0, head, query], np.float32)  # [d]
    k = np.asarray(out["keys"][layer][0, head, :t], np.float32)  # [T, d]
    scale = 1.0 / math.sqrt(cfg.head_dim)
    visible = np.ones(t, bool)  # an encoder sees every token
    if cfg.layer_type(layer) == SLIDING:  # ModernBERT's local layers: those within the window
        visible = np.abs(np.arange(t) - query) <= cfg.window
    return query_key_parts(q, k, scale, visible, head)

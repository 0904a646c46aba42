"""Attention rollout and attention flow (Abnar & Zuidema, 2020, "Quantifying Attention Flow in Transformers").

Both treat a transformer's layers as a graph whose edges are attention weights, with the
residual connection added as an identity: Ã_l = 0.5·A_l + 0.5·I, rows renormalised (the
identity is what two popular ViT implementations forgot or broke, google-research/
vision_transformer #18 and jacobgil/vit-explain #16). The heads of a layer are fused first
(mean, max or min).

- Rollout multiplies the layers from the first up: R = Ã_L ··· Ã_2 Ã_1. Row i of R says how
  much of token i's top-layer representation traces back to each input token, if attention
  mixed the information linearly and nothing else did. Rows sum to 1.
- Flow treats Ã_l[i, j] as the capacity of the edge from token j in layer l−1 to token i in
  layer l and computes, for every (output i, input j), the maximum flow from input j to
  output i (scipy.sparse.csgraph.maximum_flow; capacities in integer units of 1e-6). Rows
  are normalised to sum to 1; the raw flows are kept. It is quadratic in the tokens times a
  max-flow each: offered for inputs up to MAX_FLOW_TOKENS.

What they do not tell: neither looks at the values, the MLPs or the layer norms, so they are
a hypothesis about where information goes, not a measurement of what the model uses.

numpy (and scipy for flow) only.
"""

from __future__ import annotations

import numpy as np

from models.record import AttentionRecord, InputError

FUSIONS = ("mean", "max", "min")
METHODS = ("rollout", "flow")
MAX_FLOW_TOKENS = 40
FLOW_UNIT = 1e-6  # max-flow works on integers: capacities are counted in these units


def fuse_heads(weights: np.ndarray, fusion: str = "mean") -> np.ndarray:
    """Returns [L, T, T]: the heads of each layer fused by mean, max or min.  weights [L, H, T, T]."""
    weights = np.asarray(weights, np.float64)
    if fusion == "mean":
        return weights.mean(axis=1)
    if fusion == "max":
        return weights.max(axis=1)
    if fusion == "min":
        return weights.min(axis=1)
    raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")


def with_residual(layers: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Returns [L, T, T]: (1 − residual)·A + residual·I per layer, each row renormalised to sum to 1.

    layers [L, T, T] (fused heads). A row of zeros (a max/min fusion can give one) keeps only
    the identity.
    """
    layers = np.asarray(layers, np.float64)
    eye = np.eye(layers.shape[-1])
    mixed = (1.0 - residual) * layers + residual * eye
    return mixed / mixed.sum(axis=-1, keepdims=True)


def attention_rollout(weights: np.ndarray, fusion: str = "mean", residual: float = 0.5) -> np.ndarray:
    """Returns float64 [T, T]: Ã_L ··· Ã_1 with Ã_l = with_residual(fuse_heads(weights)[l]).  weights [L, H, T, T]."""
    layers = with_residual(fuse_heads(weights, fusion), residual)
    rolled = layers[0]
    for layer in layers[1:]:
        rolled = layer @ rolled
    return rolled


def attention_flow(weights: np.ndarray, fusion: str = "mean", residual: float = 0.5) -> np.ndarray:
    """Returns float64 [T, T]: the maximum flow from each input token (column) to each top-layer
    token (row) through the layer graph of Ã.  weights [L, H, T, T]; T <= MAX_FLOW_TOKENS."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    layers = with_residual(fuse_heads(weights, fusion), residual)
    num_layers, tokens = layers.shape[0], layers.shape[-1]
    if tokens > MAX_FLOW_TOKENS:
        raise InputError(f"attention flow is offered for up to {MAX_FLOW_TOKENS} tokens; this input has {tokens}")
    nodes = (num_layers + 1) * tokens  # node l·T + j: token j after layer l (l = 0: the input)
    rows, cols, caps = [], [], []
    for layer in range(num_layers):
        capacity = np.rint(layers[layer] / FLOW_UNIT).astype(np.int64)  # [i, j]: from j below to i above
        i, j = np.nonzero(capacity)
        rows.append(layer * tokens + j)
        cols.append((layer + 1) * tokens + i)
        caps.append(capacity[i, j])
    graph = csr_matrix((np.concatenate(caps), (np.concatenate(rows), np.concatenate(cols))), shape=(nodes, nodes))
    flow = np.zeros((tokens, tokens))
    top = num_layers * tokens
    for j in range(tokens):
        for i in range(tokens):
            flow[i, j] = maximum_flow(graph, j, top + i).flow_value * FLOW_UNIT
    return flow


def rollout_matrix(weights: np.ndarray, method: str = "rollout", fusion: str = "mean") -> tuple[np.ndarray, np.ndarray]:
    """Returns (shown float32 [T, T], raw float32 [T, T]): rollout (rows sum to 1 already) or flow
    (rows normalised to sum to 1; raw = the flow values)."""
    if method == "rollout":
        raw = attention_rollout(weights, fusion)
        return raw.astype(np.float32), raw.astype(np.float32)
    if method != "flow":
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    raw = attention_flow(weights, fusion)
    return (raw / np.maximum(raw.sum(axis=1, keepdims=True), 1e-12)).astype(np.float32), raw.astype(np.float32)


def rollout_of_record(record: AttentionRecord, *, method: str = "rollout", fusion: str = "mean",
                      mechanism: str | None = None) -> AttentionRecord:
    """Returns the ("query", "key") record of a ("layer", "head", "query", "key") self-attention record's
    rollout or flow: row = a token at the top layer, column = an input token."""
    if record.leading_axes != ("layer", "head"):
        raise ValueError(f"rollout needs layer and head axes, got {record.axes}")
    shown, raw = rollout_matrix(record.weights, method, fusion)
    return AttentionRecord(
        mechanism=mechanism or record.mechanism, weights=shown, axes=("query", "key"),
        query_labels=record.query_labels, key_labels=record.key_labels,
        meta={**{k: v for k, v in record.meta.items() if k in ("model", "notice", "segments", "truncated")},
              "method": method, "fusion": fusion, "residual": 0.5, "layers": int(record.weights.shape[0])},
        extras={"raw": raw} if method == "flow" else {},
    )

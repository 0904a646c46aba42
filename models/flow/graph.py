"""The contribution graph's maths, shared by every architecture, and the route traced back from a prediction.

A node is a token's residual stream at a point of the model: X[l] entering block l (X[L] after the last) and
M[l] between block l's attention and its feed-forward network. A sum the model computes, whole = Σ parts, gives
each part the weight max(0, ‖whole‖₁ − ‖whole − part‖₁), normalised over the parts of that sum (Ferrando & Voita
2024, "Information flow routes", eq. 2; the LLM Transparency Tool's ``get_contributions``):

- attention step, M[l]_i = X[l]_i + Σ_h Σ_j α^h_ij v^h_j W_O^h + b_O: the parts are the residual X[l]_i and every
  (head h, key j); the attention edge X[l]_j → M[l]_i weighs Σ_h of its heads' parts;
- feed-forward step, X[l+1]_i = M[l]_i + FFN(M[l]_i): the parts are the residual and the FFN (node-local).

The output biases are in the whole but are not parts (as in the tool). Where a LayerNorm follows the sum (a
post-LN encoder) every part is first carried through it linearly, as ALTI does (Ferrando et al. 2022): p ↦ γ ⊙
(p − mean p) / σ, σ the whole's standard deviation; the linearised parts and the norm's β sum to the norm's output.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

DEFAULT_THRESHOLD = 0.04  # the tool's default


def part_weights(parts, whole):
    """Returns float [..., P]: max(0, ‖whole‖₁ − ‖whole − part‖₁) over the P parts [..., P, D] of whole [..., D],
    normalised to sum 1 over P (0 where no part is positive)."""
    raw = jax.nn.relu(jnp.sum(jnp.abs(whole), -1)[..., None] - jnp.sum(jnp.abs(whole[..., None, :] - parts), -1))
    return raw / jnp.maximum(jnp.sum(raw, -1, keepdims=True), jnp.finfo(jnp.float32).tiny)


def attention_step(maps, mixed, residual, whole):
    """Returns (heads [B, H, S, T], residual [B, S]): the normalised weights of the parts α^h_ij · mixed^h_j of the
    attention sums whole [B, S, D] and of their residual part [B, S, D].

    maps α [B, H, S, T] (already divided by a following norm's σ_i where there is one); mixed [B, H, T, D]:
    each key's value vector through the head's slice of W_O (linearised through that norm). The [B, H, S, T, D]
    part vectors are only read inside one fused reduction.
    """
    whole_norm = jnp.sum(jnp.abs(whole), -1)  # [B, S]
    parts = maps[..., None] * mixed[:, :, None]  # [B, H, S, T, D]
    heads = jax.nn.relu(whole_norm[:, None, :, None] - jnp.sum(jnp.abs(whole[:, None, :, None] - parts), -1))
    heads = jnp.where(maps > 0, heads, 0.0)  # a hidden key's part is 0: exactly no weight, not rounding's 1e-7
    kept = jax.nn.relu(whole_norm - jnp.sum(jnp.abs(whole - residual), -1))
    total = jnp.maximum(jnp.sum(heads, (1, 3)) + kept, jnp.finfo(jnp.float32).tiny)
    return heads / total[:, None, :, None], kept / total


def ffn_step(residual, ffn, whole):
    """Returns (ffn [B, S], residual [B, S]): the normalised weights of the two parts of whole = residual + ffn."""
    weights = part_weights(jnp.stack([ffn, residual], -2), whole)
    return weights[..., 0], weights[..., 1]


def layer_norm_parts(pre, scale, eps: float):
    """Returns (1/σ [..., S], centre(p) ↦ γ ⊙ (p − mean p)) of a LayerNorm applied to the sum pre [..., S, D]: the
    linear map ALTI carries each part through (σ from the whole, per token)."""
    mean = jnp.mean(pre, -1, keepdims=True)
    inv = jax.lax.rsqrt(jnp.mean((pre - mean) ** 2, -1) + eps)
    return inv, lambda p: scale * (p - jnp.mean(p, -1, keepdims=True))


# ----------------------------------------------------------------------------- the graph and its route


@dataclass(frozen=True)
class FlowGraph:
    """One sequence's contribution graph (numpy): heads [L, H, T, T] the per-head attention edge weights (query,
    key); residual_attention [L, T] the residual's weight in each attention sum; ffn and residual_ffn [L, T] the
    feed-forward step's two parts (None for an attention-only model: M[l] is X[l+1]); visible bool [L, T, T]:
    the attention edges that exist (key visible to query). A decoder of an encoder–decoder also has a
    cross-attention step after M[l] (node C[l], before the FFN): cross_heads [L, H, T, S] from the S memory
    nodes, residual_cross [L, T], cross_visible bool [L, T, S]."""

    heads: np.ndarray
    residual_attention: np.ndarray
    ffn: np.ndarray | None
    residual_ffn: np.ndarray | None
    visible: np.ndarray
    cross_heads: np.ndarray | None = None
    residual_cross: np.ndarray | None = None
    cross_visible: np.ndarray | None = None

    @property
    def edges(self) -> np.ndarray:
        """Returns [L, T, T]: each attention edge's weight, the sum over heads."""
        return self.heads.sum(1)

    @property
    def head_totals(self) -> np.ndarray:
        """Returns [L, H]: each head's total edge weight over every query and key."""
        return self.heads.sum((2, 3))


@dataclass(frozen=True)
class Route:
    """The subgraph traced back from one prediction: nodes X bool [L + 1, T] and M bool [L, T]; edges bool
    [L, T, T] (attention, query × key), residual_attention and residual_ffn and ffn bool [L, T]; heads bool
    [L, H] (a head with its own part above the threshold on a kept edge). With cross-attention: cross_mid (C)
    [L, T], cross_edges [L, T, S], residual_cross [L, T], cross_heads [L, H] and memory [S], the memory nodes
    reached (else arrays with S = 0)."""

    nodes: np.ndarray
    mid: np.ndarray
    edges: np.ndarray
    residual_attention: np.ndarray
    residual_ffn: np.ndarray
    ffn: np.ndarray
    heads: np.ndarray
    cross_mid: np.ndarray
    cross_edges: np.ndarray
    residual_cross: np.ndarray
    cross_heads: np.ndarray
    memory: np.ndarray


def trace(graph: FlowGraph, start: int | np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> Route:
    """Returns the route from X[L] at `start` (a position, or bool [T] of several) backwards along the edges whose
    weight exceeds threshold (threshold <= 0 keeps every edge that exists; a weight is at most 1, so 1 keeps none)."""
    num_layers, num_heads, tokens, _ = graph.heads.shape
    sources = 0 if graph.cross_heads is None else graph.cross_heads.shape[-1]

    def passes(weight):
        return np.ones(np.shape(weight), bool) if threshold <= 0 else weight > threshold

    nodes, mid = np.zeros((num_layers + 1, tokens), bool), np.zeros((num_layers, tokens), bool)
    edges = np.zeros((num_layers, tokens, tokens), bool)
    res_att, res_ffn, ffn, cross_mid, res_cross = (np.zeros((num_layers, tokens), bool) for _ in range(5))
    heads, cross_heads = np.zeros((num_layers, num_heads), bool), np.zeros((num_layers, num_heads), bool)
    cross_edges, memory = np.zeros((num_layers, tokens, sources), bool), np.zeros(sources, bool)
    nodes[num_layers, start] = True
    edge_weights = graph.edges
    for layer in reversed(range(num_layers)):
        if graph.ffn is None:
            before_ffn = nodes[layer + 1]
        else:
            res_ffn[layer] = nodes[layer + 1] & passes(graph.residual_ffn[layer])
            ffn[layer] = nodes[layer + 1] & passes(graph.ffn[layer])
            before_ffn = res_ffn[layer] | ffn[layer]
        if graph.cross_heads is None:
            mid[layer] = before_ffn
        else:
            cross_mid[layer] = before_ffn
            weights = graph.cross_heads[layer]
            cross_edges[layer] = before_ffn[:, None] & graph.cross_visible[layer] & passes(weights.sum(0))
            cross_heads[layer] = (cross_edges[layer][None] & passes(weights)).any((1, 2))
            memory |= cross_edges[layer].any(0)
            res_cross[layer] = before_ffn & passes(graph.residual_cross[layer])
            mid[layer] = res_cross[layer]
        edges[layer] = mid[layer][:, None] & graph.visible[layer] & passes(edge_weights[layer])
        res_att[layer] = mid[layer] & passes(graph.residual_attention[layer])
        nodes[layer] = res_att[layer] | edges[layer].any(0)
        heads[layer] = (edges[layer][None] & passes(graph.heads[layer])).any((1, 2))
    return Route(
        nodes, mid, edges, res_att, res_ffn, ffn, heads, cross_mid, cross_edges, res_cross, cross_heads, memory
    )


def route_extras(graph: FlowGraph, route: Route) -> dict[str, np.ndarray]:
    """Returns the record's extras of a graph and its route (float32 weights, bool route)."""
    extras = {
        "head_edges": graph.heads.astype(np.float32),
        "head_totals": graph.head_totals.astype(np.float32),
        "residual_attention": graph.residual_attention.astype(np.float32),
        "visible": graph.visible,
        "route_nodes": route.nodes,
        "route_mid": route.mid,
        "route_edges": route.edges,
        "route_residual_attention": route.residual_attention,
        "route_heads": route.heads,
        "route_weights": graph.edges[route.edges].astype(np.float32),  # the route's attention edges, in [l, q, k] order
    }
    if graph.ffn is not None:
        extras.update(
            {
                "ffn": graph.ffn.astype(np.float32),
                "residual_ffn": graph.residual_ffn.astype(np.float32),
                "route_ffn": route.ffn,
                "route_residual_ffn": route.residual_ffn,
            }
        )
    if graph.cross_heads is not None:
        extras.update(
            {
                "cross_head_edges": graph.cross_heads.astype(np.float32),
                "residual_cross": graph.residual_cross.astype(np.float32),
                "cross_visible": graph.cross_visible,
                "route_cross_mid": route.cross_mid,
                "route_cross_edges": route.cross_edges,
                "route_residual_cross": route.residual_cross,
                "route_cross_heads": route.cross_heads,
                "route_memory": route.memory,
            }
        )
    return extras

"""The graph's maths against numpy oracles, and the route's properties (models/flow/graph.py)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.flow.graph import FlowGraph, attention_step, ffn_step, layer_norm_parts, part_weights, trace


def oracle_weights(parts: np.ndarray, whole: np.ndarray) -> np.ndarray:
    # Ferrando & Voita's eq. 2, one part at a time, float64
    raw = np.array([max(0.0, np.abs(whole).sum() - np.abs(whole - p).sum()) for p in parts])
    return raw / raw.sum() if raw.sum() > 0 else raw


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.0, 2.0))
def test_part_weights_match_the_formula(seed, noise):
    rng = np.random.default_rng(seed)  # one shape: one compile
    parts = rng.normal(size=(2, 5, 4)) * rng.random((2, 5, 1))
    whole = parts.sum(1) + rng.normal(size=(2, 4)) * noise
    got = np.asarray(part_weights(jnp.asarray(parts, jnp.float32), jnp.asarray(whole, jnp.float32)))
    for row in range(2):
        np.testing.assert_allclose(got[row], oracle_weights(parts[row], whole[row]), atol=1e-5)


def test_attention_step_matches_the_formula_part_by_part():
    rng = np.random.default_rng(0)
    b, h, s, d = 1, 2, 4, 5
    maps = rng.random((b, h, s, s)) * np.tri(s)
    maps /= maps.sum(-1, keepdims=True)
    mixed, residual = rng.normal(size=(b, h, s, d)), rng.normal(size=(b, s, d))
    whole = residual + np.einsum("bhst,bhtd->bsd", maps, mixed) + 0.3
    heads, kept = (
        np.asarray(a) for a in attention_step(*(jnp.asarray(a, jnp.float32) for a in (maps, mixed, residual, whole)))
    )
    for i in range(s):
        parts = [maps[0, hh, i, j] * mixed[0, hh, j] for hh in range(h) for j in range(s)] + [residual[0, i]]
        expected = oracle_weights(np.array(parts), whole[0, i])
        np.testing.assert_allclose(heads[0, :, i].ravel(), expected[:-1], atol=1e-6)
        np.testing.assert_allclose(kept[0, i], expected[-1], atol=1e-6)
    ffn, res = (np.asarray(a) for a in ffn_step(jnp.asarray(residual), jnp.asarray(mixed[:, 0]), jnp.asarray(whole)))
    for i in range(s):
        np.testing.assert_allclose(
            [ffn[0, i], res[0, i]], oracle_weights(np.stack([mixed[0, 0, i], residual[0, i]]), whole[0, i]), atol=1e-6
        )


def test_layer_norm_parts_sum_to_the_norm():
    rng = np.random.default_rng(1)
    parts, gamma, beta, eps = rng.normal(size=(3, 4, 6)), rng.normal(size=6), rng.normal(size=6), 1e-5
    pre = parts.sum(0)
    inv, centre = layer_norm_parts(jnp.asarray(pre), jnp.asarray(gamma), eps)
    summed = sum(np.asarray(centre(jnp.asarray(p))) * np.asarray(inv)[:, None] for p in parts) + beta
    mean, var = pre.mean(-1, keepdims=True), pre.var(-1, keepdims=True)
    np.testing.assert_allclose(summed, (pre - mean) / np.sqrt(var + eps) * gamma + beta, atol=1e-5)


def random_graph(rng: np.random.Generator, layers: int, heads: int, tokens: int, ffn: bool) -> FlowGraph:
    visible = np.broadcast_to(np.tri(tokens, dtype=bool), (layers, tokens, tokens))
    raw = rng.random((layers, heads, tokens, tokens)) ** 3 * visible[:, None]
    kept = rng.random((layers, tokens))
    total = raw.sum((1, 3)) + kept
    split = rng.random((layers, tokens))
    return FlowGraph(
        raw / total[:, None, :, None], kept / total, split if ffn else None, 1 - split if ffn else None, visible.copy()
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 7), st.booleans(), st.integers(0, 2**31 - 1))
def test_threshold_zero_keeps_everything_one_keeps_only_the_prediction(layers, heads, tokens, ffn, seed):
    graph = random_graph(np.random.default_rng(seed), layers, heads, tokens, ffn)
    position = tokens - 1
    everything = trace(graph, position, 0.0)
    last = np.zeros(tokens, bool)
    last[position] = True
    assert everything.nodes[:-1].all() and everything.mid[:-1].all() and everything.heads.all()
    np.testing.assert_array_equal(everything.nodes[-1], last)
    np.testing.assert_array_equal(everything.mid[-1], last)
    np.testing.assert_array_equal(everything.edges, graph.visible & everything.mid[..., None])
    nothing = trace(graph, position, 1.0)
    np.testing.assert_array_equal(nothing.nodes, np.eye(layers + 1, 1, -layers, bool) * last)
    assert not nothing.edges.any() and not nothing.heads.any() and not nothing.ffn.any()
    # M[L-1] is X[L] itself in an attention-only model; else it is not reached
    np.testing.assert_array_equal(nothing.mid, np.eye(layers, 1, -(layers - 1), bool) * last * (not ffn))


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))
def test_a_higher_threshold_keeps_a_subgraph(low, high, seed):
    low, high = min(low, high), max(low, high)
    graph = random_graph(np.random.default_rng(seed), 2, 2, 6, True)
    wide, narrow = trace(graph, 4, low), trace(graph, 4, high)
    for name in ("nodes", "mid", "edges", "heads", "ffn"):
        assert not (getattr(narrow, name) & ~getattr(wide, name)).any(), name
    assert not wide.nodes[:, 5].any()  # a later token never reaches the prediction at 4 through causal edges


def test_a_kept_edge_is_above_the_threshold_and_leads_to_the_prediction():
    graph = random_graph(np.random.default_rng(3), 3, 2, 6, True)
    route = trace(graph, 5, 0.05)
    assert (graph.edges[route.edges] > 0.05).all()
    for layer in range(3):  # every kept edge ends at a node on the route
        queries = np.nonzero(route.edges[layer].any(1))[0]
        assert route.mid[layer, queries].all()

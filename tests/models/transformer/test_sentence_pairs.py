"""Sentence-pair blocks (models/transformer/sentence_pairs.py)."""

import numpy as np

from models.record import AttentionRecord
from models.transformer import sentence_pairs as pairs

TOKENS = ("[CLS]", "play", "##ing", "cards", ",", "fun", "##ny", "##er", "!", "[SEP]")


def softmax_rows(rng, shape):
    x = rng.normal(size=shape) * 2
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def transformer_record(tokens=TOKENS, layers=2, heads=3, seed=0, segments=None):
    rng = np.random.default_rng(seed)
    w = softmax_rows(rng, (layers, heads, len(tokens), len(tokens)))
    meta = {"segments": list(segments) if segments is not None else [0] * len(tokens)}
    return AttentionRecord("transformer", w, ("layer", "head", "query", "key"), tokens, tokens, meta=meta)


def test_pair_blocks_and_shares():
    tokens = ("[CLS]", "a", "b", "[SEP]", "c", "[SEP]")
    segments = [0, 0, 0, 0, 1, 1]
    record = transformer_record(tokens, segments=segments)
    m = record.weights[1, 2]
    blocks = pairs.pair_blocks(m, segments)
    assert list(blocks) == list(pairs.PAIR_BLOCKS)
    np.testing.assert_array_equal(blocks["A→B"], m[:4, 4:])
    np.testing.assert_array_equal(blocks["B→A"], m[4:, :4])
    assert blocks["A→A"].shape == (4, 4) and blocks["B→B"].shape == (2, 2)
    shares = pairs.pair_block_shares(record.weights, segments)
    np.testing.assert_allclose(shares["A→A"] + shares["A→B"], 1.0, atol=1e-5)
    np.testing.assert_allclose(shares["B→A"] + shares["B→B"], 1.0, atol=1e-5)
    np.testing.assert_allclose(shares["A→B"][1, 2], m[:4, 4:].sum(axis=1).mean(), rtol=1e-5)
    assert pairs.segment_labels(tokens, segments) == {"A": ["[CLS]", "a", "b", "[SEP]"], "B": ["c", "[SEP]"]}

"""Sentence-pair blocks (models/transformer/sentence_pairs.py)."""

import numpy as np

from models.transformer import sentence_pairs as pairs
from tests.models.heads.random_records import transformer_record


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

"""Random attention records for the head-analysis tests: softmax rows over BERT-style word pieces."""

import numpy as np

from models.record import AttentionRecord

TOKENS = ("[CLS]", "play", "##ing", "cards", ",", "fun", "##ny", "##er", "!", "[SEP]")


def softmax_rows(rng, shape):
    """Returns float32 rows that each sum to 1, of the given shape."""
    x = rng.normal(size=shape) * 2
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def transformer_record(tokens=TOKENS, layers=2, heads=3, seed=0, segments=None):
    """Returns a [layer, head, query, key] record over `tokens` with random rows, its segments in meta."""
    rng = np.random.default_rng(seed)
    w = softmax_rows(rng, (layers, heads, len(tokens), len(tokens)))
    meta = {"segments": list(segments) if segments is not None else [0] * len(tokens)}
    return AttentionRecord("transformer", w, ("layer", "head", "query", "key"), tokens, tokens, meta=meta)

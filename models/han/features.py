"""Word-piece vectors the HAN reads: MiniLM's input embeddings, its contextual token vectors, or both.

- "embeddings": the input word-embedding table (models/han/data.py), one fixed vector per piece
  whatever the sentence says;
- "contextual": MiniLM's last-layer hidden states of the sentence read alone as
  [CLS] pieces [SEP] (frozen; models/transformer/records.py shared_runner(None).hidden_of_ids),
  so "blue" in "The cover is blue." and "rude" in "The waiter was rude." carry what they mean there;
- "both": the two concatenated (768 numbers per piece).

The vectors line up with the HAN's pieces one to one ([CLS] and [SEP] are dropped). Both
sources are the installed all-MiniLM-L6-v2; nothing of them is stored in a HAN checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.han.data import Batch, Document, load_word_embeddings

FEATURES = ("embeddings", "contextual", "both")
CLS_ID, SEP_ID = 101, 102  # MiniLM's [CLS] and [SEP]
WIDTH = 384  # MiniLM's embedding and hidden width


def feature_dim(features: str) -> int:
    """Returns the width of one piece vector for a feature kind."""
    if features not in FEATURES:
        raise ValueError(f"unknown HAN features {features!r}; expected one of {FEATURES}")
    return 2 * WIDTH if features == "both" else WIDTH


def contextual_vectors(pieces: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Returns float32 [T_i, 384] per piece sequence: MiniLM's last hidden states of
    [CLS] pieces [SEP], without the two special tokens. Equal sequences are run once."""
    from models.transformer.records import shared_runner  # loads MiniLM (seconds) on first use

    unique = list(dict.fromkeys(tuple(p) for p in pieces))
    if not unique:
        return []
    hidden = shared_runner(None).hidden_of_ids([np.asarray((CLS_ID, *p, SEP_ID), np.int32) for p in unique])
    by_pieces = {p: h[1:-1] for p, h in zip(unique, hidden)}
    return [by_pieces[tuple(p)] for p in pieces]


def document_vectors(docs: Sequence[Document], features: str, dtype=np.float32) -> list[tuple[np.ndarray, ...]]:
    """Returns, per document, one [T_i, feature_dim] array per sentence (T_i = its pieces).

    dtype: float16 halves what a training set holds in memory; batches are float32 again.
    """
    feature_dim(features)  # checks the name
    sentences = [p for doc in docs for p in doc.pieces]
    parts = []
    if features in ("embeddings", "both"):
        table = load_word_embeddings()
        parts.append([table[np.asarray(p, np.int64)] for p in sentences])
    if features in ("contextual", "both"):
        parts.append(contextual_vectors(sentences))
    flat = [np.concatenate(row, axis=-1).astype(dtype) if len(row) > 1 else row[0].astype(dtype) for row in zip(*parts)]
    out, start = [], 0
    for doc in docs:
        out.append(tuple(flat[start : start + len(doc.pieces)]))
        start += len(doc.pieces)
    return out


def feature_batch(vectors: Sequence[Sequence[np.ndarray]], batch: Batch) -> np.ndarray:
    """Returns float32 [B, S, T, E]: each document's piece vectors in the padded layout of
    `batch` (zeros at padding). vectors: per document, per sentence [T_i, E]."""
    rows, s, t = batch.ids.shape
    dim = next(v.shape[-1] for doc in vectors for v in doc)
    x = np.zeros((rows, s, t, dim), np.float32)
    for b, doc in enumerate(vectors):
        for i, v in enumerate(doc[:s]):
            x[b, i, : min(len(v), t)] = v[:t]
    return x

"""Sentence-pair blocks: how much sentence A attends to B and back, from the token types of [CLS] A [SEP] B [SEP].

Pure numpy (no jax).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.heads.statistics import mean_over_queries

PAIR_BLOCKS = ("A→A", "A→B", "B→A", "B→B")


def segment_masks(segments: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Returns bool [T] masks of sentence A (token type 0) and sentence B (token type 1)."""
    segments = np.asarray(segments)
    return segments == 0, segments == 1


def pair_blocks(matrix: np.ndarray, segments: Sequence[int]) -> dict[str, np.ndarray]:
    """Returns {"A→A", "A→B", "B→A", "B→B": sub-matrix}.  matrix [T, T]; segments [T] (0 = A, 1 = B).

    "A→B" holds the rows of sentence A's tokens and the columns of sentence B's tokens:
    how much A attends to B. [CLS] and the first [SEP] count as A, the last [SEP] as B
    (their token types).
    """
    a, b = segment_masks(segments)
    masks = {"A": a, "B": b}
    return {name: matrix[masks[name[0]]][:, masks[name[2]]] for name in PAIR_BLOCKS}


def pair_block_shares(weights: np.ndarray, segments: Sequence[int]) -> dict[str, np.ndarray]:
    """Returns {block: float32 [...]}: mean over the block's queries of their mass on its keys.

    weights [..., T, T]. A→A + A→B = 1 and B→A + B→B = 1 for rows that sum to 1.
    """
    weights = np.asarray(weights, dtype=np.float64)
    a, b = segment_masks(segments)
    masks = {"A": a, "B": b}
    out = {}
    for name in PAIR_BLOCKS:
        rows = weights[..., masks[name[0]], :]
        out[name] = mean_over_queries(rows[..., masks[name[2]]].sum(axis=-1))
    return out


def segment_labels(labels: Sequence[str], segments: Sequence[int]) -> dict[str, list[str]]:
    """Returns {"A": labels of sentence A's tokens, "B": labels of sentence B's tokens}."""
    a, b = segment_masks(segments)
    labels = list(labels)
    return {"A": [x for x, m in zip(labels, a) if m], "B": [x for x, m in zip(labels, b) if m]}

"""The neuron view's parts, shared by the encoder (models/transformer/neuron.py) and the decoder LMs
(models/lm/neuron.py): one head's query, its keys, q ⊙ k, the scores and their softmax.

Each family finds q and k with its own forward; the arithmetic from there on is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.record import InputError


@dataclass(frozen=True)
class NeuronParts:
    """q [d], k [T, d], product = q ⊙ k [T, d], scores [T] = Σ product · scale (before any mask), visible bool [T]
    (the keys the query may see), weights [T] (the softmax over the visible keys, 0 elsewhere), scale (the
    factor of Σ q ⊙ k) and kv_head (the key/value head the query head reads; the head itself without grouped keys)."""

    q: np.ndarray
    k: np.ndarray
    product: np.ndarray
    scores: np.ndarray
    visible: np.ndarray
    weights: np.ndarray
    scale: float
    kv_head: int


def neuron_index(name: str, value: Any, count: int) -> int:
    """Returns `value` as an index in [0, count) (-1: the last); InputError (one line) for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not -count <= value < count:
        raise InputError(f"{name} must be a whole number from 0 to {count - 1} (or -1 for the last); got {value!r}")
    return int(value) % count


def query_key_parts(q: np.ndarray, k: np.ndarray, scale: float, visible: np.ndarray, kv_head: int) -> NeuronParts:
    """Returns the NeuronParts of one query: q float32 [d], k float32 [T, d], visible bool [T]."""
    product = (q[None] * k).astype(np.float32)
    scores = (product.sum(-1, dtype=np.float32) * np.float32(scale)).astype(np.float32)
    shown = np.where(visible, scores, -np.inf)
    exp = np.exp(shown - shown.max())
    return NeuronParts(q, k, product, scores, visible, (exp / exp.sum()).astype(np.float32), float(scale), kv_head)

"""Quality of a feed-forward attention model on fresh addition sequences (ground truth: the marks).

- mse: mean squared error of the predicted sum;
- top2: share of sequences whose two largest α are exactly the two marked steps;
- mass: mean α on the two marked steps.
"""

from __future__ import annotations

import numpy as np

from models import padding
from models.feedforward.model import FeedForwardAttention, FeedForwardRunner
from models.feedforward.task import LENGTH_BUCKETS, sample_batch


def evaluate_runner(runner: FeedForwardRunner, lengths, *, seed: int, batch: int = 50) -> dict[str, float]:
    """Returns {"mse", "top2", "mass"} of a model on fresh sequences of the given lengths.

    Sequences are batched and padded to the bucket of each batch's longest one.
    """
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, np.int32)
    errors, top2, mass = [], [], []
    for start in range(0, len(lengths), batch):
        chunk = lengths[start : start + batch]
        data = sample_batch(rng, chunk, padding.bucket(int(chunk.max()), LENGTH_BUCKETS))
        prediction, alpha = runner(data.inputs, data.lengths)
        errors.append((prediction - data.targets) ** 2)
        rows = np.arange(len(chunk))[:, None]
        mass.append(alpha[rows, data.marked].sum(1))
        top = np.sort(np.argpartition(-alpha, 1, axis=1)[:, :2], axis=1)
        top2.append(np.all(top == data.marked, axis=1))
    return {
        "mse": float(np.concatenate(errors).mean()),
        "top2": float(np.concatenate(top2).mean()),
        "mass": float(np.concatenate(mass).mean()),
    }


def evaluate(model: FeedForwardAttention, lengths, seed: int = 12345, batch: int = 50) -> dict[str, float]:
    """Returns evaluate_runner() of an in-memory model (the training loop's validation)."""
    return evaluate_runner(FeedForwardRunner(model), lengths, seed=seed, batch=batch)

"""The committed feed-forward attention models at work, and the registry's record builder.

    get_mechanism("feedforward").build({"length": 1000, "seed": 0})

The paper-form mechanism uses the model trained nearest to the asked length (T₀ = 100,
1,000 or 10,000, on a log scale); the unbounded one has a single model (T = 50–1,000).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from models.feedforward.checkpoint import CHECKPOINT, checkpoint_path
from models.feedforward.model import PAPER_LENGTHS, FeedForwardRunner
from models.feedforward.task import make_sequence
from models.record import AttentionRecord


@lru_cache(maxsize=8)
def load_runner(variant: str, length: int | None = None) -> FeedForwardRunner:
    """Returns the runner of a committed checkpoint (cached: loading compiles nothing)."""
    path = checkpoint_path(variant, length)
    return FeedForwardRunner(CHECKPOINT.load_module(path), name=path.stem)


def nearest_paper_length(length: int) -> int:
    """Returns the trained T₀ nearest to `length` on a log scale (100, 1,000 or 10,000)."""
    return min(PAPER_LENGTHS, key=lambda t0: abs(math.log(length) - math.log(t0)))


def runner_for(variant: str, length: int) -> FeedForwardRunner:
    """Returns the runner a variant uses at `length` (paper form: the T₀ nearest to it)."""
    return load_runner("paper", nearest_paper_length(length)) if variant == "paper" else load_runner(variant)


def tanh_bound(length: int) -> float:
    """Returns the most α a marked step can get with e_t ∈ [−1, 1]: both marked steps at +1,
    every other step at −1, so α = e / (2e + (T − 2)/e) (0.5 for T = 2)."""
    if length <= 2:
        return 0.5
    return math.e / (2 * math.e + (length - 2) / math.e)


def addition_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one seeded addition sequence (options: length, seed, marked).

    weights: α over time, axes ("time",); extras: marked (2,), prediction, target, values.
    """
    length, seed = options["length"], options["seed"]
    inputs, marked, target = make_sequence(length, seed, options.get("marked"))
    runner = runner_for(mechanism.variant, length)
    prediction, alpha, seconds = runner.run_one(inputs)
    mass = float(alpha[list(marked)].sum())
    return AttentionRecord(
        mechanism=mechanism.id,
        weights=alpha.astype(np.float32),
        axes=("time",),
        query_labels=("c",),
        key_labels=tuple(f"t{t}" for t in range(length)),
        meta={
            "model": runner.name,
            "length": length,
            "seed": seed,
            "marked": list(marked),
            "prediction": prediction,
            "target": target,
            "mass_on_marked": mass,
            "seconds": seconds,
        },
        extras={
            "marked": np.asarray(marked, np.int32),
            "prediction": np.float32(prediction),
            "target": np.float32(target),
            "values": inputs[:, 0],
        },
    )


def stacked_record(records: list[AttentionRecord], names: list[str]) -> AttentionRecord:
    """Returns the records of one sequence under several models as one: weights [R, T], axes
    ("model", "time"), one row per model (query label = its name). Its exports hold every row
    the page's one figure draws; extras and meta keep each model's prediction and model file."""
    if not records or len({r.weights.shape for r in records}) != 1:
        raise ValueError("stacked_record needs records of one sequence length")
    first = records[0]
    return AttentionRecord(
        mechanism=first.mechanism,
        weights=np.stack([r.weights for r in records]),
        axes=("model", "time"),
        query_labels=tuple(names),
        key_labels=first.key_labels,
        meta={
            "mechanisms": [r.mechanism for r in records],
            "models": [r.meta["model"] for r in records],
            "predictions": [r.meta["prediction"] for r in records],
            "mass_on_marked": [r.meta["mass_on_marked"] for r in records],
            **{k: first.meta[k] for k in ("length", "seed", "marked", "target")},
        },
        extras={
            "marked": first.extras["marked"],
            "prediction": np.asarray([r.extras["prediction"] for r in records], np.float32),
            "target": first.extras["target"],
            "values": first.extras["values"],
        },
    )

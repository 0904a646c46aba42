"""Attention sinks: how much attention each head parks on the first token, and the model's sink rate.

A head's first-token share is the mean, over query rows 1..T-1, of its attention on key 0 (row 0
can only attend to key 0, so it is left out). The model's sink rate is the share of heads whose
first-token share exceeds ε = 0.3, the measure of Gu et al., "When Attention Sink Emerges in
Language Models: An Empirical View" (ICLR 2025). For the model trained here the same shares were
logged during training (checkpoints/lm/training_log.json, "log" → "first_token" [S, L, H] at the
steps "log" → "step"), so the rate can be followed across its snapshots. The paragraph the page
shows about sinks is viz/lm_lens.py's SINK_TEXT (marked for translation there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.lm.records import DEFAULT_MODEL_DIR
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

SINK_EPSILON = 0.3  # Gu et al. (ICLR 2025): a head whose mean first-token attention exceeds this is a sink
TRAINING_LOG = DEFAULT_MODEL_DIR / "training_log.json"


def first_token_share(maps: np.ndarray) -> np.ndarray:
    """Returns float64 [...]: each map's mean over query rows 1..T-1 of the attention on key 0.

    maps [..., T, T] (T >= 2), rows summing to 1 over the keys each query may see.
    """
    maps = np.asarray(maps, np.float64)
    if maps.shape[-1] < 2:
        raise InputError(Notice(N_("the first-token share needs at least two tokens; type a longer text")))
    return maps[..., 1:, 0].mean(-1)


def sink_rate(shares: np.ndarray, epsilon: float = SINK_EPSILON) -> float:
    """Returns the share of heads whose first-token share exceeds epsilon.  shares [L, H] (or any shape)."""
    shares = np.asarray(shares, np.float64)
    return float(np.mean(shares > epsilon)) if shares.size else 0.0


@dataclass(frozen=True)
class SinkHistory:
    """The sink statistics of the logged training snapshots: steps [S], shares [S, L, H], rates [S]."""

    steps: np.ndarray
    shares: np.ndarray
    rates: np.ndarray
    epsilon: float


def training_sinks(log_path: str | Path = TRAINING_LOG, epsilon: float = SINK_EPSILON) -> SinkHistory | None:
    """Returns the sink rate at every logged step of a training log, or None when the log has no
    first-token shares (a user's folder, or a log written before they were recorded).

    The log's "log" holds "step" [S] and "first_token" [S][L][H]; a step whose shares are missing
    (null) is left out. InputError (one line) for a file that is not such a log.
    """
    path = Path(log_path)
    if not path.is_file():
        return None
    try:
        log = json.loads(path.read_text(encoding="utf-8")).get("log") or {}
    except (OSError, ValueError, AttributeError):
        raise InputError(f"{path.name} is not a readable training log (JSON with a \"log\" object)") from None
    steps, shares = log.get("step"), log.get("first_token")
    if not isinstance(steps, list) or not isinstance(shares, list) or len(steps) != len(shares):
        return None
    kept = [(int(step), np.asarray(value, np.float64)) for step, value in zip(steps, shares) if value is not None]
    if not kept or any(value.ndim != 2 or value.shape != kept[0][1].shape for _, value in kept):
        return None
    stacked = np.stack([value for _, value in kept])
    return SinkHistory(steps=np.asarray([step for step, _ in kept], np.int64), shares=stacked,
                       rates=np.asarray([sink_rate(value, epsilon) for value in stacked]), epsilon=epsilon)


def sink_record(lm_record: AttentionRecord, epsilon: float = SINK_EPSILON) -> AttentionRecord:
    """Returns the sink record of an lm record (models/lm/records.py, weights [layer, head, query, key]):
    weights [layer, head], each head's first-token share; meta the sink rate, ε and the first token."""
    if tuple(lm_record.axes) != ("layer", "head", "query", "key"):
        raise ValueError(f"a sink record needs [layer, head, query, key] maps; got {lm_record.axes}")
    shares = first_token_share(lm_record.weights)
    layers = lm_record.meta.get("layers") or list(range(shares.shape[0]))
    return AttentionRecord(
        mechanism=lm_record.mechanism,
        weights=shares.astype(np.float32),
        axes=("layer", "head"),
        query_labels=[f"layer {i}" for i in layers],
        key_labels=[f"head {j}" for j in range(shares.shape[1])],
        meta={**dict(lm_record.meta), "value": "mean attention on the first token over query rows 1..T-1",
              "first_token": lm_record.query_labels[0], "epsilon": epsilon, "sink_rate": sink_rate(shares, epsilon)},
        extras={name: value for name, value in lm_record.extras.items()},
    )

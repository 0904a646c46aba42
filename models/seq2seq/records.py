"""Inference on the committed date models, and the AttentionRecord builders of the registry.

    seq2seq_record({"mechanism": "bahdanau", "text": "Wednesday 9 May 2018", "window": 3})

returns α as ("query", "key") = (output characters × input characters); the local variants
also carry window_center [10] and window_half_width. Bad input raises InputError.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np

from models.seq2seq import task as dates
from models.record import AttentionRecord, InputError
from models.seq2seq.model import LOCAL_VARIANTS, VARIANTS, apply, batch_rows, bucket_length, pad_batch
from models.seq2seq.checkpoint import CHECKPOINT_DIR, load_checkpoint, load_snapshots, read_info

WINDOW_RANGE = (1, 10)
DEFAULT_TEXT = "Wednesday 9 May 2018"


@dataclass(frozen=True)
class Decoded:
    """Greedy decoding of one input: output text, α [10, T], centres [10] (local), input."""

    output: str
    weights: np.ndarray
    centers: np.ndarray | None
    source: dates.EncodedSource
    window: int


@functools.cache
def load_variant(variant: str):
    """Returns (cfg, graphdef, params, info) of a committed checkpoint (cached per process)."""
    if variant not in VARIANTS:
        raise InputError(f"unknown seq2seq variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    folder = CHECKPOINT_DIR / variant
    cfg, graphdef, params, _ = load_checkpoint(folder)
    return cfg, graphdef, params, read_info(folder)


@functools.cache
def load_variant_snapshots(variant: str) -> dict[int, Any]:
    """Returns {training step: params}, the final step included (cached per process)."""
    cfg, graphdef, params, info = load_variant(variant)
    snaps = load_snapshots(CHECKPOINT_DIR / variant, params)
    snaps[int(info["final_step"])] = params
    return dict(sorted(snaps.items()))


def snapshot_steps(variant: str) -> list[int]:
    """Returns the training steps that have a snapshot (0 = the initial weights: random, or a warm start)."""
    info = load_variant(variant)[3]
    return sorted({*map(int, info["snapshot_steps"]), int(info["final_step"])})


def warm_start_of(variant: str) -> str | None:
    """Returns the checkpoint folder name a variant was warm-started from, or None (random init)."""
    return load_variant(variant)[3].get("warm_start")


def validate_window(window: Any, default: int) -> int:
    """Returns D as an int in WINDOW_RANGE; InputError otherwise."""
    if window is None or window == "":
        return default
    try:
        value = float(window)
    except (TypeError, ValueError):
        raise InputError(f"window D must be a whole number, got {window!r}") from None
    low, high = WINDOW_RANGE
    if not (math.isfinite(value) and value == int(value) and low <= value <= high):
        raise InputError(f"window D must be a whole number from {low} to {high}, got {window}")
    return int(value)


def decode_batch(variant: str, texts: list[str], *, window: Any = None, step: int | None = None) -> list[Decoded]:
    """Returns the greedy decoding of every text (one jitted call per length bucket).

    step: a training-step snapshot to use instead of the final weights.
    """
    cfg, graphdef, params, _ = load_variant(variant)
    d = validate_window(window, cfg.window)
    if step is not None:
        snaps = load_variant_snapshots(variant)
        if int(step) not in snaps:
            raise InputError(f"no snapshot at step {step}; available: {', '.join(map(str, snaps))}")
        params = snaps[int(step)]
    sources = [dates.encode_source(t) for t in texts]
    out: list[Decoded | None] = [None] * len(sources)
    by_bucket: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        by_bucket.setdefault(bucket_length(len(s.ids)), []).append(i)
    for bucket, indices in by_bucket.items():
        src, lengths = pad_batch([sources[i].ids for i in indices], bucket, batch_rows(len(indices)))
        dummy = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
        logits, alpha, centers = apply(graphdef, params, src, lengths, dummy, jnp.float32(d), teacher_forcing=False)
        tokens = np.asarray(jnp.argmax(logits, -1))
        alpha, centers = np.asarray(alpha, np.float32), np.asarray(centers, np.float32)
        for row, i in enumerate(indices):
            n = len(sources[i].ids)
            local = variant in LOCAL_VARIANTS
            out[i] = Decoded(dates.decode_target(tokens[row]), alpha[row, :, :n], centers[row] if local else None,
                             sources[i], d)
    return out  # type: ignore[return-value]


def to_record(variant: str, decoded: Decoded, *, step: int | None = None) -> AttentionRecord:
    """Returns the AttentionRecord of one decoding: α [10 output chars, T input chars]."""
    notices = dates.source_notices(decoded.source)
    note = dates.date_note(decoded.output)
    if note:
        notices.append(note)
    meta: dict[str, Any] = {
        "input": decoded.source.text,
        "output": decoded.output,
        "notices": notices,
        "truncated": decoded.source.truncated,
        "unknown_characters": list(decoded.source.unknown),
        "valid_date": note is None,
        "snapshot_step": step,
    }
    extras: dict[str, Any] = {}
    if decoded.centers is not None:
        meta["window_half_width"] = decoded.window
        extras = {"window_center": decoded.centers.astype(np.float32), "window_half_width": np.int32(decoded.window)}
    return AttentionRecord(
        mechanism=variant,
        weights=decoded.weights,
        axes=("query", "key"),
        query_labels=tuple(decoded.output.ljust(dates.OUTPUT_LENGTH, "?")[: dates.OUTPUT_LENGTH]),
        key_labels=decoded.source.labels,
        meta=meta,
        extras=extras,
    )


def _variant_of(options: Mapping[str, Any]) -> str:
    variant = options.get("mechanism") or "bahdanau"
    if variant not in VARIANTS:
        raise InputError(f"{variant!r} is not a seq2seq variant; choose one of {', '.join(VARIANTS)}")
    return variant


def _text_of(options: Mapping[str, Any]) -> str:
    text = options.get("text")
    if text is None:
        raise InputError("give the text to normalise, e.g. --text 'Wednesday 9 May 2018'")
    return str(text)


def seq2seq_record(options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one text (options: mechanism, text, window, step)."""
    return seq2seq_records([options])[0]


def seq2seq_records(options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Returns one record per option dict; inputs sharing variant, D and step run as one batch."""
    groups: dict[tuple, list[int]] = {}
    for i, options in enumerate(options_list):
        key = (_variant_of(options), options.get("window"), options.get("step"))
        groups.setdefault(key, []).append(i)
    records: list[AttentionRecord | None] = [None] * len(options_list)
    for (variant, window, step), indices in groups.items():
        texts = [_text_of(options_list[i]) for i in indices]
        for i, decoded in zip(indices, decode_batch(variant, texts, window=window, step=step)):
            records[i] = to_record(variant, decoded, step=step)
    return records  # type: ignore[return-value]



def random_example(seed: int) -> dates.DateExample:
    """Returns one held-out-style generated example (for the page's "random example" button)."""
    return dates.generate(1, seed)[0]


QUALITY_FILE = CHECKPOINT_DIR / "quality.json"


def read_quality() -> dict | None:
    """Returns the measured quality table written by bench/seq2seq_quality.py, or None."""
    import json

    if not QUALITY_FILE.is_file():
        return None
    return json.loads(QUALITY_FILE.read_text())

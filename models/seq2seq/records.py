"""Inference on the committed date models, and the AttentionRecord builders of the registry.

    get_mechanism("bahdanau").build({"text": "Wednesday, May 9, 2018", "window": 3})

returns α as ("query", "key") = (output characters × input characters); the local variants
also carry window_center [10] and window_half_width. The no-attention variants have no α: their
record holds the one context vector c their decoder reads, axes ("unit",), one weight per unit of
c (meta["attention"] is False). Bad input raises InputError.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from models import padding
from models.aot import StoredFunction
from models.record import AttentionRecord, InputError
from models.seq2seq import task as dates
from models.seq2seq.checkpoint import CHECKPOINT
from models.seq2seq.config import (
    ALL_VARIANTS,
    LENGTH_BUCKETS,
    LOCAL_VARIANTS,
    NO_ATTENTION_VARIANTS,
    Seq2SeqConfig,
    batch_rows,
    pad_batch,
)

# What a stored decoder executable is built from (models/aot.py): a change to any of these
# files compiles it again.
DECODER_SOURCES = ("models/attention.py", "models/seq2seq/model.py", "models/seq2seq/config.py",
                   "models/checkpoint.py")


@dataclass(frozen=True)
class Decoded:
    """Greedy decoding of one input: output text, α [10, T] (no attention: q's fixed weights), centres
    [10] (local), input, and the context vector c [2E] of the no-attention variants."""

    output: str
    weights: np.ndarray
    centers: np.ndarray | None
    source: dates.EncodedSource
    window: int
    context: np.ndarray | None = None


@functools.cache
def load_variant(variant: str):
    """Returns (cfg, graphdef, params, info) of a committed checkpoint (cached per process; builds
    the nnx model: training and the quality measurement use this, inference uses load_weights)."""
    _check_variant(variant)
    return CHECKPOINT.load(CHECKPOINT.path(variant))


def _check_variant(variant: str) -> None:
    if variant not in ALL_VARIANTS:
        raise InputError(f"unknown seq2seq variant {variant!r}; choose one of {', '.join(ALL_VARIANTS)}")


@functools.cache
def variant_weights(variant: str) -> tuple[Seq2SeqConfig, dict[str, np.ndarray], dict[str, Any]]:
    """Returns (cfg, {name: array}, info) of a committed checkpoint (cached per process; no Flax)."""
    _check_variant(variant)
    return CHECKPOINT.load_weights(CHECKPOINT.path(variant))


@functools.cache
def variant_snapshots(variant: str) -> dict[int, dict[str, np.ndarray]]:
    """Returns {training step: {name: array}}, the final step included (cached per process)."""
    _, tensors, info = variant_weights(variant)
    snaps = CHECKPOINT.load_snapshot_weights(CHECKPOINT.path(variant))
    snaps[int(info["final_step"])] = tensors
    return dict(sorted(snaps.items()))


def snapshot_steps(variant: str) -> list[int]:
    """Returns the training steps that have a snapshot (0 = the initial weights: random, or a warm start)."""
    info = variant_weights(variant)[2]
    return sorted({*map(int, info["snapshot_steps"]), int(info["final_step"])})


def warm_start_of(variant: str) -> str | None:
    """Returns the checkpoint folder name a variant was warm-started from, or None (random init)."""
    return variant_weights(variant)[2].get("warm_start")


def _decoder_of(cfg: Seq2SeqConfig):
    """Returns the pure greedy decoder (tensors, ids, lengths, dummy targets, D) → (logits, α, centres),
    and for the no-attention variants c [B, 2E] after them."""
    from models import checkpoint
    from models.seq2seq.model import apply, apply_context

    graphdef, template = CHECKPOINT.abstract_model(cfg)

    def decode(tensors, src_ids, src_len, tgt_in, window):
        params = checkpoint.filled_state(template, tensors, where=f"seq2seq {cfg.variant}")
        out = apply(graphdef, params, src_ids, src_len, tgt_in, window, teacher_forcing=False)
        if cfg.variant in NO_ATTENTION_VARIANTS:
            return (*out, apply_context(graphdef, params, src_ids, src_len)[0])
        return out

    return decode


@functools.cache
def stored_decoder(cfg: Seq2SeqConfig) -> StoredFunction:
    """Returns the decoder of one configuration, compiled once per shape and kept on disk."""
    return StoredFunction("seq2seq-decode", functools.partial(_decoder_of, cfg), sources=DECODER_SOURCES, static=cfg)


def decode_batch(variant: str, texts: list[str], *, window: int | None = None, step: int | None = None) -> list[Decoded]:
    """Returns the greedy decoding of every text (one compiled call per length bucket).

    window: D of the local variants (default: the training value); step: a training-step
    snapshot to use instead of the final weights.
    """
    cfg, tensors, _ = variant_weights(variant)
    d = cfg.window if window is None else int(window)
    if step is not None:
        snaps = variant_snapshots(variant)
        if int(step) not in snaps:
            raise InputError(f"no snapshot at step {step}; available: {', '.join(map(str, snaps))}")
        tensors = snaps[int(step)]
    sources = [dates.encode_source(t) for t in texts]
    out: list[Decoded | None] = [None] * len(sources)
    by_bucket: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        by_bucket.setdefault(padding.bucket(len(s.ids), LENGTH_BUCKETS), []).append(i)
    for bucket, indices in by_bucket.items():
        src, lengths = pad_batch([sources[i].ids for i in indices], bucket, batch_rows(len(indices)))
        dummy = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
        logits, alpha, centers, *context = stored_decoder(cfg)(tensors, src, lengths, dummy, np.float32(d))
        tokens = np.asarray(logits).argmax(-1)
        alpha, centers = np.asarray(alpha, np.float32), np.asarray(centers, np.float32)
        for row, i in enumerate(indices):
            n = len(sources[i].ids)
            local = variant in LOCAL_VARIANTS
            out[i] = Decoded(dates.decode_target(tokens[row]), alpha[row, :, :n], centers[row] if local else None,
                             sources[i], d, np.asarray(context[0][row], np.float32) if context else None)
    return out  # type: ignore[return-value]


def to_record(mechanism_id: str, decoded: Decoded, *, step: int | None = None) -> AttentionRecord:
    """Returns the AttentionRecord of one decoding: α [10 output chars, T input chars]."""
    meta: dict[str, Any] = {
        "input": decoded.source.text,
        "output": decoded.output,
        "notices": dates.decoding_notices(decoded.source, decoded.output),
        "truncated": decoded.source.truncated,
        "unknown_characters": list(decoded.source.unknown),
        "valid_date": dates.date_note(decoded.output) is None,
        "snapshot_step": step,
    }
    extras: dict[str, Any] = {}
    if decoded.context is not None:
        return _context_record(mechanism_id, decoded, meta)
    if decoded.centers is not None:
        meta["window_half_width"] = decoded.window
        extras = {"window_center": decoded.centers.astype(np.float32), "window_half_width": np.int32(decoded.window)}
    return AttentionRecord(
        mechanism=mechanism_id,
        weights=decoded.weights,
        axes=("query", "key"),
        query_labels=tuple(decoded.output.ljust(dates.OUTPUT_LENGTH, "?")[: dates.OUTPUT_LENGTH]),
        key_labels=decoded.source.labels,
        meta=meta,
        extras=extras,
    )


def context_labels(width: int) -> tuple[str, ...]:
    """Returns the unit names of a context vector of `width` = 2E: the forward GRU's units, then the backward's."""
    half = width // 2
    return tuple(f"fwd {i}" for i in range(half)) + tuple(f"bwd {i}" for i in range(width - half))


def _context_record(mechanism_id: str, decoded: Decoded, meta: dict[str, Any]) -> AttentionRecord:
    # No α exists: the record holds c itself, axes ("unit",), and says so in meta.
    last = mechanism_id == "no-attention"
    meta = {**meta, "attention": False,
            "context": ("c = h_T, the encoder's annotation of the last input character" if last
                        else "c = the mean of the encoder's annotations h_1 … h_T"),
            "note": "this model has no attention weights α: its decoder reads only the context vector c, "
                    "which the weights hold (one value per unit: forward GRU units, then backward)"}
    return AttentionRecord(
        mechanism=mechanism_id, weights=decoded.context, axes=("unit",), query_labels=("c",),
        key_labels=context_labels(len(decoded.context)), meta=meta,
    )


def seq2seq_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one text (options: text, window, step; checked by the registry)."""
    return seq2seq_records(mechanism, [options])[0]


def seq2seq_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Returns one record per option dict; inputs sharing D and step run as one batch."""
    groups: dict[tuple, list[int]] = {}
    for i, options in enumerate(options_list):
        groups.setdefault((options.get("window"), options.get("step")), []).append(i)
    records: list[AttentionRecord | None] = [None] * len(options_list)
    for (window, step), indices in groups.items():
        texts = [options_list[i]["text"] for i in indices]
        for i, decoded in zip(indices, decode_batch(mechanism.variant, texts, window=window, step=step)):
            records[i] = to_record(mechanism.id, decoded, step=step)
    return records  # type: ignore[return-value]


def random_example(seed: int) -> dates.DateExample:
    """Returns one held-out-style generated example (for the page's "random example" button)."""
    return dates.generate(1, seed)[0]

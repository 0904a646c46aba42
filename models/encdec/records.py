"""Inference on the committed encoder–decoder, and the AttentionRecord builders of the registry.

    get_mechanism("transformer-cross").build({"text": "9 May 2018"})

returns one of the three attention records of one greedy decoding, each ("layer", "head",
"query", "key") float32:
- transformer-encoder: source characters × source characters (encoder self-attention);
- transformer-decoder: output characters × what the decoder read at each position — <s>,
  then the characters written before (masked self-attention: exactly 0 above the diagonal);
- transformer-cross: output characters × source characters (encoder–decoder attention).
Row t of the decoder and cross records is what the model attended to while writing output
character t (the causal mask keeps it blind to what came later). Bad input raises InputError.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.encdec.checkpoint import CHECKPOINT as FILES
from models.encdec.forward import read_own_output
from models.encdec.model import LENGTH_BUCKETS, RECORD_KINDS, batch_rows, pad_batch
from models.record import AttentionRecord, InputError
from models.seq2seq import task as dates

AXES = ("layer", "head", "query", "key")
START_LABEL = dates.BOS


@dataclass(frozen=True)
class Decoded:
    """Greedy decoding of one input: output ids and text, the three attention arrays, the input.

    encoder [L, H, n, n], decoder [L, H, 10, 10], cross [L, H, 10, n] (n = input characters).
    """

    tokens: np.ndarray
    output: str
    encoder: np.ndarray
    decoder: np.ndarray
    cross: np.ndarray
    source: dates.EncodedSource

    @property
    def output_labels(self) -> tuple[str, ...]:
        """Returns one label per output position: the character written (or the special token)."""
        return tuple(dates.TARGET_VOCAB[int(i)] for i in self.tokens)

    @property
    def decoder_key_labels(self) -> tuple[str, ...]:
        """Returns what the decoder read at each position: <s>, then the characters written before."""
        return (START_LABEL, *self.output_labels[:-1])


load_model = FILES.committed  # (cfg, graphdef, params, info), loaded once per process
load_model_snapshots = FILES.committed_snapshots
snapshot_steps = FILES.committed_steps


def best_cross_head() -> tuple[int, int]:
    """Returns (layer, head) of the cross-attention head best aligned on the validation dates at the end of training."""
    layer, head = load_model()[3]["validation_best_cross_head"]
    return int(layer), int(head)


weights_at = FILES.committed_weights  # (graphdef, params) of the final weights or a training step


@functools.lru_cache(maxsize=64)
def decode_one(text: str, step: int | None = None) -> Decoded:
    """Returns the greedy decoding of one text (cached: a page shows its three records of one decoding)."""
    return decode_batch([text], step=step)[0]


def decode_batch(texts: list[str], *, step: int | None = None) -> list[Decoded]:
    """Returns the greedy decoding of every text (one jitted call; inputs padded to the 40-character bucket)."""
    graphdef, params = weights_at(step)
    sources = [dates.encode_source(t) for t in texts]
    src, lengths = pad_batch([s.ids for s in sources], LENGTH_BUCKETS[-1], batch_rows(len(sources)))
    tokens, seen = read_own_output(graphdef, params, src, lengths)
    tokens = np.asarray(tokens)
    encoder, decoder, cross = (np.stack(seen[kind]["maps"], axis=1) for kind in RECORD_KINDS)  # [B, L, H, T, keys]
    out = []
    for row, source in enumerate(sources):
        n = len(source.ids)
        out.append(Decoded(
            tokens=tokens[row], output=dates.decode_target(tokens[row]),
            encoder=encoder[row, :, :, :n, :n].astype(np.float32), decoder=decoder[row].astype(np.float32),
            cross=cross[row, :, :, :, :n].astype(np.float32), source=source,
        ))
    return out


def notices_of(decoded: Decoded) -> list[str]:
    """Returns the one-line notices about how the input was read and what came out (as the RNN pages say them)."""
    return dates.decoding_notices(decoded.source, decoded.output)


def to_record(mechanism_id: str, kind: str, decoded: Decoded, *, step: int | None = None) -> AttentionRecord:
    """Returns the ("layer", "head", "query", "key") record of one kind ("encoder", "decoder" or "cross")."""
    source, output = decoded.source.labels, decoded.output_labels
    weights, queries, keys = {
        "encoder": (decoded.encoder, source, source),
        "decoder": (decoded.decoder, output, decoded.decoder_key_labels),
        "cross": (decoded.cross, output, source),
    }[kind]
    note = dates.date_note(decoded.output)
    meta = {
        "input": decoded.source.text, "output": decoded.output, "notices": notices_of(decoded),
        "truncated": decoded.source.truncated, "unknown_characters": list(decoded.source.unknown),
        "valid_date": note is None, "snapshot_step": step, "attention": kind,
    }
    if kind == "decoder":
        meta["keys"] = "what the decoder read at each position: <s>, then the output characters written before"
    return AttentionRecord(mechanism=mechanism_id, weights=weights.copy(), axes=AXES, query_labels=queries,
                           key_labels=keys, meta=meta)


def encdec_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one text (options: text, step; checked by the registry)."""
    return encdec_records(mechanism, [options])[0]


def encdec_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Returns one record per option dict; inputs sharing a step run as one batch."""
    if mechanism.variant not in RECORD_KINDS:
        raise InputError(f"unknown encoder–decoder record {mechanism.variant!r}; known: {', '.join(RECORD_KINDS)}")
    groups: dict[int | None, list[int]] = {}
    for i, options in enumerate(options_list):
        groups.setdefault(options.get("step"), []).append(i)
    records: list[AttentionRecord | None] = [None] * len(options_list)
    for step, indices in groups.items():
        texts = [options_list[i]["text"] for i in indices]
        decoded = [decode_one(texts[0], step)] if len(texts) == 1 else decode_batch(texts, step=step)
        for i, one in zip(indices, decoded):
            records[i] = to_record(mechanism.id, mechanism.variant, one, step=step)
    return records  # type: ignore[return-value]


# ------------------------------------------------------------------ records of the page's figures


def head_record(record: AttentionRecord, layer: int, head: int) -> AttentionRecord:
    """Returns the ("query", "key") record of one layer and head of a three-kinds record."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=record.weights[layer, head], axes=("query", "key"),
        query_labels=record.query_labels, key_labels=record.key_labels,
        meta={**dict(record.meta), "layer": int(layer), "head": int(head)},
    )


def decoding_step_record(record: AttentionRecord, position: int) -> AttentionRecord:
    """Returns ("head", "key") [L·H, keys]: every head's attention while output character `position` was written.

    record: a decoder record (keys = <s> and the characters already written: only 0…position
    are shown, the masked rest is exactly 0) or a cross record (keys = the source characters).
    """
    layers, heads, queries, _ = record.weights.shape
    if not 0 <= position < queries:
        raise InputError(f"the decoding step must be from 0 to {queries - 1}, got {position}")
    width = position + 1 if record.meta.get("attention") == "decoder" else record.weights.shape[-1]
    rows = record.weights[:, :, position, :width].reshape(layers * heads, width)
    return AttentionRecord(
        mechanism=record.mechanism, weights=rows, axes=("head", "key"),
        query_labels=[f"layer {layer} · head {head}" for layer in range(layers) for head in range(heads)],
        key_labels=record.key_labels[:width],
        meta={**dict(record.meta), "decoding_step": int(position), "writing": record.query_labels[position]},
    )


def encoder_rollout_record(mechanism, text: str, *, method: str = "rollout", fusion: str = "mean",
                           step: int | None = None) -> AttentionRecord:
    """Returns the ("query", "key") rollout or flow (Abnar & Zuidema 2020) of the encoder's self-attention.

    mechanism: the transformer-encoder registry entry; row = a source character after the last
    encoder layer, column = an input character.
    """
    from models.heads.rollout import FUSIONS, METHODS, rollout_of_record

    if method not in METHODS or fusion not in FUSIONS:
        raise InputError(f"method must be one of {', '.join(METHODS)} and fusion one of {', '.join(FUSIONS)}")
    record = mechanism.build({"text": text, "step": step})
    rolled = rollout_of_record(record, method=method, fusion=fusion)
    return AttentionRecord(mechanism=rolled.mechanism, weights=rolled.weights, axes=rolled.axes,
                           query_labels=rolled.query_labels, key_labels=rolled.key_labels,
                           meta={**dict(record.meta), **dict(rolled.meta)}, extras=rolled.extras)


def random_example(seed: int) -> dates.DateExample:
    """Returns one generated example (for the page's "random example" button)."""
    return dates.generate(1, seed)[0]

"""Settings of the date models, and the batch shapes they run on: numpy only, so that code that
only runs a stored model (models/aot.py) never imports Flax."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models import padding
from models.seq2seq import task as dates
from models.seq2seq.task import MAX_INPUT_CHARS, SOURCE_VOCAB, TARGET_VOCAB

VARIANTS = ("bahdanau", "luong-dot", "luong-general", "luong-concat", "luong-location", "local-m", "local-p")
# The encoder–decoder without attention (Sutskever, Vinyals & Le 2014): the decoder reads one context
# vector c = q(h_1, …, h_T) — the last annotation h_T, or the mean of all — with Bahdanau's decoder.
NO_ATTENTION_VARIANTS = ("no-attention", "no-attention-mean")
ALL_VARIANTS = VARIANTS + NO_ATTENTION_VARIANTS
LOCAL_VARIANTS = ("local-m", "local-p")
GLOBAL_LUONG = ("luong-dot", "luong-general", "luong-concat", "luong-location")
BOS_ID = TARGET_VOCAB.index("<s>")
# Source lengths are padded up to one of these, and batch sizes up to one of BATCH_BUCKETS,
# so only a handful of shapes ever compile. One length bucket: on 2 CPU cores a compile
# (~2–10 s) costs far more than running 40 instead of 20 masked encoder steps (~1 ms).
LENGTH_BUCKETS = (MAX_INPUT_CHARS,)
BATCH_BUCKETS = (1, 16, 1024)


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Sizes of the date model; frozen, so it doubles as a cache key."""

    variant: str = "bahdanau"
    source_vocab: int = len(SOURCE_VOCAB)
    target_vocab: int = len(TARGET_VOCAB)
    embed_dim: int = 24
    target_embed_dim: int = 16
    encoder_hidden: int = 32  # per direction; encoder states are 2× this wide
    decoder_hidden: int = 64
    attention_dim: int = 32  # hidden width of the additive / concat scores
    window: int = 3  # D of the local variants (training value; inference may change it)
    max_source: int = MAX_INPUT_CHARS

    def __post_init__(self):
        if self.variant not in ALL_VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; known: {', '.join(ALL_VARIANTS)}")
        if self.variant == "luong-dot" and self.decoder_hidden != 2 * self.encoder_hidden:
            raise ValueError("luong-dot needs decoder_hidden == 2 * encoder_hidden")


PRESETS = {
    "date": Seq2SeqConfig(),
    "tiny": Seq2SeqConfig(embed_dim=8, target_embed_dim=4, encoder_hidden=8, decoder_hidden=16, attention_dim=8),
    # The bottleneck experiment (models/seq2seq/bottleneck.py): dates inside up to 120 characters of text,
    # the date model's sizes, so that it can start from the committed date models.
    "bottleneck": Seq2SeqConfig(max_source=120),
}



def pad_batch(
    sources: list[np.ndarray], bucket: int | None = None, rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Returns (ids int32 [rows, bucket], lengths int32 [rows]); pads with 0 (<pad>).

    rows >= len(sources): extra rows are padding (length 1, id 0) to keep the batch shape fixed.
    """
    lengths = np.asarray([len(s) for s in sources], np.int32)
    width = bucket or padding.bucket(int(lengths.max()), LENGTH_BUCKETS)
    rows = rows or len(sources)
    ids = np.zeros((rows, width), np.int32)
    for i, s in enumerate(sources):
        ids[i, : len(s)] = s
    return ids, np.concatenate([lengths, np.ones(rows - len(sources), np.int32)])


def batch_rows(n: int) -> int:
    """Returns the batch-size bucket for n inputs (a multiple of the largest bucket beyond it)."""
    if n > BATCH_BUCKETS[-1]:
        return -(-n // BATCH_BUCKETS[-1]) * BATCH_BUCKETS[-1]
    return padding.bucket(n, BATCH_BUCKETS)


def teacher_inputs(targets: np.ndarray) -> np.ndarray:
    """Returns int32 [B, 10]: <s> followed by the target ids shifted right."""
    targets = np.asarray(targets, np.int32)
    return np.concatenate([np.full((targets.shape[0], 1), BOS_ID, np.int32), targets[:, :-1]], axis=1)


DIGITS = np.array([i for i in range(dates.OUTPUT_LENGTH) if i not in (4, 7)])  # output positions that are digits


def span_arrays(examples: list[dates.DateExample]) -> tuple[np.ndarray, np.ndarray]:
    """Returns (start, end) int [N, 10]; -1 where an output character has no span."""
    spans = np.asarray([e.spans for e in examples], np.int64)  # [N, 10, 2]
    return spans[..., 0], spans[..., 1]

"""Read-outs of a self-attention record: per-head statistics, combined heads, one-map and model-view records.

Pure numpy (no jax): these run on the float32 weights of an AttentionRecord with axes
(..., "query", "key"), e.g. ("layer", "head", "query", "key"), where the query and key
labels are the same tokens. The MiniLM pages, the language-model pages and the corpus
statistics share them; word-piece merging and sentence-pair blocks, which only a BERT-style
tokenizer makes, are MiniLM's own (models/transformer/word_pieces.py, sentence_pairs.py).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from models.heads import detectors
from models.record import AttentionRecord
from models.text import N_

CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
CLS_TOKENS = (CLS_TOKEN, "<s>")  # BERT's, then RoBERTa's and XLM-R's (ModernBERT writes [CLS] and [SEP])
SEP_TOKENS = (SEP_TOKEN, "</s>")
SPECIAL_TOKENS = frozenset({*CLS_TOKENS, *SEP_TOKENS, "[PAD]", "[MASK]", "<pad>", "<mask>"})
PIECE_PREFIX = "##"


class Statistic(NamedTuple):
    """One per-head statistic: id, label shown in the picker, one-line explanation (both marked N_:
    the CLI and records read them in English, the pages show `_(statistic.label)`)."""

    id: str
    label: str
    description: str


STATISTICS: tuple[Statistic, ...] = (
    Statistic("entropy", N_("Entropy (nats)"), N_("mean over queries of −Σ α log α: low = focused, high = spread out")),
    Statistic("cls", N_("Share to [CLS]"), N_("mean over queries of the attention paid to [CLS]")),
    Statistic("sep", N_("Share to [SEP]"), N_("mean over queries of the attention paid to [SEP] tokens")),
    Statistic("self", N_("Share to self"), N_("mean over queries of α(i → i)")),
    Statistic("previous", N_("Share to previous token"), N_("mean over queries i ≥ 1 of α(i → i − 1)")),
    Statistic("next", N_("Share to next token"), N_("mean over queries i < T − 1 of α(i → i + 1)")),
    Statistic("punctuation", N_("Share to punctuation"), N_("mean over queries of the attention paid to punctuation tokens")),
    Statistic("previous_score", N_("Previous-token score"), N_("TransformerLens's score: Σ A·P / Σ A with P at k = q − 1")),
    Statistic("duplicate_score", N_("Duplicate-token score"),
              N_("TransformerLens's score: Σ A·P / Σ A with P on earlier copies of the query's token")),
)
# Scores that can leave [CLS] and [SEP] out of both sums (many heads park attention there).
PATTERN_STATISTICS = {"previous_score": "previous", "duplicate_score": "duplicate"}
STATISTIC_IDS = tuple(s.id for s in STATISTICS)


# ----------------------------------------------------------------------------- statistics


def is_punctuation(token: str) -> bool:
    """Returns True for a token made only of punctuation characters (Unicode category P*)."""
    text = token[len(PIECE_PREFIX) :] if token.startswith(PIECE_PREFIX) and len(token) > 2 else token
    return bool(text) and token not in SPECIAL_TOKENS and all(unicodedata.category(ch).startswith("P") for ch in text)


def mean_over_queries(values: np.ndarray) -> np.ndarray:
    """Returns float32 [...]: the mean over the last axis.  values [..., Tq']; an empty query set
    (e.g. "previous" for one token) gives 0."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1], dtype=np.float32)
    return values.mean(axis=-1).astype(np.float32)


def _share_to(weights: np.ndarray, keys: np.ndarray) -> np.ndarray:
    # weights [..., T, T], keys bool [T] -> mean over queries of the mass on those keys.
    return mean_over_queries(weights[..., keys].sum(axis=-1))


def head_statistic(weights: np.ndarray, labels: Sequence[str], statistic: str, *, exclude_special: bool = False) -> np.ndarray:
    """Returns float32 [...]: one statistic per map.  weights [..., T, T]; labels [T].

    statistic: one of STATISTIC_IDS (see STATISTICS for the definitions). exclude_special:
    the pattern scores leave [CLS], [SEP] and [PAD] keys out (models/heads/detectors.py).
    """
    weights = np.asarray(weights, dtype=np.float64)
    labels = list(labels)
    if weights.shape[-1] != len(labels) or weights.shape[-2] != len(labels):
        raise ValueError(f"weights {weights.shape} do not match {len(labels)} labels")
    if statistic in PATTERN_STATISTICS:
        excluded = np.array([x in SPECIAL_TOKENS for x in labels], bool) if exclude_special else None
        return detectors.head_score(weights, detectors.pattern_for(PATTERN_STATISTICS[statistic], labels), excluded)
    if statistic == "entropy":
        safe = np.where(weights > 0, weights, 1.0)
        return mean_over_queries(-(weights * np.log(safe)).sum(axis=-1))
    if statistic == "cls":
        return _share_to(weights, np.array([x in CLS_TOKENS for x in labels], dtype=bool))
    if statistic == "sep":
        return _share_to(weights, np.array([x in SEP_TOKENS for x in labels], dtype=bool))
    if statistic == "punctuation":
        return _share_to(weights, np.array([is_punctuation(x) for x in labels], dtype=bool))
    if statistic == "self":
        return mean_over_queries(np.diagonal(weights, axis1=-2, axis2=-1))
    if statistic == "previous":
        return mean_over_queries(np.diagonal(weights, offset=-1, axis1=-2, axis2=-1))
    if statistic == "next":
        return mean_over_queries(np.diagonal(weights, offset=1, axis1=-2, axis2=-1))
    raise KeyError(f"unknown statistic {statistic!r}; known: {', '.join(STATISTIC_IDS)}")


def head_statistics(record: AttentionRecord) -> dict[str, np.ndarray]:
    """Returns {statistic id: float32 [layers, heads]} for a ("layer", "head", "query", "key") record."""
    return {s: head_statistic(record.weights, record.query_labels, s) for s in STATISTIC_IDS}


def special_sinks(record: AttentionRecord, threshold: float = 0.5) -> tuple[int, int]:
    """Returns (heads, all heads): how many maps of a ("layer", "head", "query", "key") record put
    more than `threshold` of their attention, on average over queries, on [CLS] or [SEP]."""
    keys = np.array([x in CLS_TOKENS + SEP_TOKENS for x in record.key_labels], bool)
    mostly = detectors.heads_mostly_on(record.weights, keys, threshold)
    return int(mostly.sum()), int(mostly.size)


def combine_heads(weights: np.ndarray, heads: Sequence[tuple[int, int]], how: str = "mean") -> np.ndarray:
    """Returns [T, T]: the mean or max of the selected (layer, head) maps.  weights [L, H, T, T]."""
    if not heads:
        raise ValueError("select at least one head")
    stack = np.stack([weights[int(layer), int(head)] for layer, head in heads])  # [n, T, T]
    if how == "mean":
        return stack.mean(axis=0).astype(np.float32)
    if how == "max":
        return stack.max(axis=0).astype(np.float32)
    raise ValueError(f"how must be 'mean' or 'max', got {how!r}")


# ----------------------------------------------------------------------------- export records


def matrix_record(record: AttentionRecord, matrix: np.ndarray, **meta) -> AttentionRecord:
    """Returns a ("query", "key") record of one shown map [T, T] of a self-attention record.

    meta (JSON-safe) says which map it is, e.g. layer=2, head=5 or combine="mean".
    """
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=matrix,
        axes=("query", "key"),
        query_labels=record.query_labels,
        key_labels=record.key_labels,
        meta={**dict(record.meta), **meta},
    )


def statistic_record(record: AttentionRecord, values: np.ndarray, statistic: str) -> AttentionRecord:
    """Returns a ("layer", "head") record of one statistic's values [L, H]."""
    values = np.asarray(values, dtype=np.float32)
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=values,
        axes=("layer", "head"),
        query_labels=[f"layer {i}" for i in range(values.shape[0])],
        key_labels=[f"head {j}" for j in range(values.shape[1])],
        meta={"model": record.meta.get("model"), "statistic": statistic},
    )


# ----------------------------------------------------------------------------- model view

# A model view map is block-averaged down to at most this many rows and columns, so 72 maps
# of 512 tokens send ~300k cells to the browser instead of ~19M.
MODEL_VIEW_MAX_CELLS = 64


def block_edges(length: int, max_cells: int) -> np.ndarray:
    """Returns int [n + 1]: bin edges 0 = e0 < ... < en = length with n <= max_cells equal-width bins."""
    step = max(1, int(np.ceil(length / max_cells)))
    return np.append(np.arange(0, length, step), length)


def block_average(maps: np.ndarray, max_cells: int = MODEL_VIEW_MAX_CELLS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (maps [..., nq, nk], query edges, key edges): each block of cells averaged.

    maps [..., Tq, Tk]. A map with at most max_cells rows and columns is returned as is.
    """
    maps = np.asarray(maps, dtype=np.float32)
    tq, tk = maps.shape[-2:]
    eq, ek = block_edges(tq, max_cells), block_edges(tk, max_cells)
    if len(eq) - 1 == tq and len(ek) - 1 == tk:
        return maps, eq, ek
    sums = np.add.reduceat(np.add.reduceat(maps, eq[:-1], axis=-2), ek[:-1], axis=-1)
    counts = np.outer(np.diff(eq), np.diff(ek)).astype(np.float32)
    return sums / counts, eq, ek


def block_labels(labels: Sequence[str], edges: np.ndarray) -> list[str]:
    """Returns one label per bin: the token itself, or "first … last (i–j)" for a block."""
    out = []
    for start, stop in zip(edges[:-1], edges[1:]):
        if stop - start == 1:
            out.append(str(labels[start]))
        else:
            out.append(f"{labels[start]} … {labels[stop - 1]} ({start}–{stop - 1})")
    return out


def model_view_record(record: AttentionRecord, max_cells: int = MODEL_VIEW_MAX_CELLS) -> AttentionRecord:
    """Returns the record the model view draws: every layer × head map, block-averaged to at
    most max_cells × max_cells (labels "first … last (i–j)" per block) when the input is longer.

    Its CSV/JSON hold exactly the cells the grid shows; meta says whether blocks were averaged.
    """
    maps, eq, ek = block_average(record.weights, max_cells)
    averaged = maps.shape[-2:] != record.weights.shape[-2:]
    return AttentionRecord(
        mechanism=record.mechanism, weights=maps, axes=record.axes,
        query_labels=block_labels(record.query_labels, eq), key_labels=block_labels(record.key_labels, ek),
        meta={**dict(record.meta), "tokens": int(record.weights.shape[-1]), "block_averaged": bool(averaged),
              "max_cells": max_cells},
        extras={"query_edges": eq, "key_edges": ek} if averaged else {},
    )

"""The committed HAN at work: documents in, HANResults and AttentionRecords out.

    get_mechanism("han").build({"text": "The pasta was cold. We took the bus home."})

returns word α per sentence as ("sentence", "word") with the sentence α, the scores against
the context vectors and each head's probabilities as extras. The record builders of the
page's other figures (class probabilities, context-vector scores) live here too, so every
export holds exactly the numbers its figure shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.han.checkpoint import CHECKPOINT, load_checkpoint, load_checkpoint_bytes
from models.han.data import Document, encode_document, load_word_embeddings, make_batch, word_weights
from models.han.model import HANConfig, compiled_forward
from models.record import AttentionRecord


@dataclass(frozen=True)
class HANResult:
    """A HAN's reading of one document.

    word_alpha: per sentence, float32 [words] (sums of piece α); sentence_alpha [S];
    word_scores: per sentence, the max piece score uᵀu_w per word; sentence_scores [S];
    probabilities: per head, float32 [C].
    """

    doc: Document
    word_alpha: tuple[np.ndarray, ...]
    sentence_alpha: np.ndarray
    word_scores: tuple[np.ndarray, ...]
    sentence_scores: np.ndarray
    probabilities: tuple[np.ndarray, ...]
    heads: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def predictions(self) -> tuple[str, ...]:
        return tuple(classes[int(np.argmax(p))] for (_, classes), p in zip(self.heads, self.probabilities))

    def word_matrix(self) -> np.ndarray:
        """Returns float32 [S, W_max]: word α, rows zero-padded past each sentence's end."""
        width = max(len(w) for w in self.doc.words)
        out = np.zeros((len(self.doc.words), width), np.float32)
        for i, a in enumerate(self.word_alpha):
            out[i, : len(a)] = a
        return out


class HANPredictor:
    """A loaded HAN (split once, jitted forward) plus the frozen MiniLM table."""

    def __init__(self, cfg: HANConfig, graphdef, state, table: np.ndarray | None = None, meta=None):
        self.cfg, self.graphdef, self.state = cfg, graphdef, state
        self.table = word_table() if table is None else jnp.asarray(table)
        self.meta = dict(meta or {})
        self._forward = compiled_forward(graphdef)

    @classmethod
    def from_checkpoint(cls, path: Path = CHECKPOINT) -> HANPredictor:
        cfg, graphdef, state, meta = load_checkpoint(path)
        return cls(cfg, graphdef, state, meta=meta)

    @classmethod
    def from_bytes(cls, data: bytes) -> HANPredictor:
        cfg, graphdef, state, meta = load_checkpoint_bytes(data)
        return cls(cfg, graphdef, state, meta=meta)

    def run_batch(self, docs: Sequence[Document], batch_size: int = 8) -> list[HANResult]:
        """Returns one HANResult per document."""
        results = []
        for start in range(0, len(docs), batch_size):
            chunk = docs[start : start + batch_size]
            batch = make_batch(chunk, batch_size)  # always batch_size rows: one compile per length bucket
            logits, wa, sa, ws, ss = self._forward(self.state, self.table, batch.ids, batch.piece_mask, batch.sentence_mask)
            probs = [np.asarray(jax.nn.softmax(lg, axis=-1)) for lg in logits]
            wa, sa, ws, ss = (np.asarray(a) for a in (wa, sa, ws, ss))
            for b, doc in enumerate(chunk):
                n_s = len(doc.pieces)
                w_alpha, w_scores = [], []
                for i in range(n_s):
                    n_w = len(doc.words[i])
                    w_alpha.append(word_weights(wa[b, i], doc.piece_words[i], n_w))
                    w_scores.append(_max_per_word(ws[b, i], doc.piece_words[i], n_w))
                results.append(
                    HANResult(doc, tuple(w_alpha), sa[b, :n_s].copy(), tuple(w_scores), ss[b, :n_s].copy(),
                              tuple(p[b] for p in probs), self.cfg.heads)
                )
        return results

    def analyse(self, text: str) -> HANResult:
        """Returns the HANResult of one text; InputError if it is empty."""
        return self.run_batch([encode_document(text)])[0]

    def context_word_scores(self, limit: int | None = None) -> tuple[list[str], np.ndarray]:
        """Returns (words, float32 [V] scores): MiniLM's whole-word vocabulary, each word read
        alone as a one-word sentence and scored against u_w (uᵀu_w before the softmax).

        It shows what the word-level context vector u_w looks for, free of any context.
        """
        words, ids = vocabulary_words()
        if limit is not None:
            words, ids = words[:limit], ids[:limit]
        scores = compiled_word_scores(self.graphdef)(self.state, jnp.take(self.table, jnp.asarray(ids), axis=0))
        return words, np.asarray(scores, np.float32)


@functools.lru_cache(maxsize=1)
def word_table() -> jax.Array:
    """Returns MiniLM's input embedding table on the device, one copy per process (47 MB)."""
    return jnp.asarray(load_word_embeddings())


@functools.lru_cache(maxsize=1)
def vocabulary_words() -> tuple[list[str], np.ndarray]:
    """Returns MiniLM's whole-word tokens of 3+ letters and their ids (int32 [V])."""
    from models.han.data import load_tokenizer

    vocab = load_tokenizer().get_vocab()
    pairs = sorted((i, w) for w, i in vocab.items() if w.isalpha() and w.isascii() and len(w) >= 3)
    return [w for _, w in pairs], np.asarray([i for i, _ in pairs], np.int32)


@functools.lru_cache(maxsize=8)
def compiled_word_scores(graphdef) -> Callable:
    """Returns jit((state, x [V, E]) -> [V]): each vector read as a one-step sentence, scored against u_w."""

    @jax.jit
    def word_scores(state, x):
        model = nnx.merge(graphdef, state)
        h = model.word_encoder(x[:, None, :], jnp.ones((x.shape[0], 1), bool))
        return model.word_attention.scores(h)[:, 0]

    return word_scores


def _max_per_word(scores: np.ndarray, piece_words: Sequence[int], num_words: int) -> np.ndarray:
    out = np.full(num_words, -np.inf, np.float32)
    np.maximum.at(out, np.asarray(piece_words, np.int64), np.asarray(scores[: len(piece_words)], np.float32))
    return out


@functools.lru_cache(maxsize=1)
def default_predictor() -> HANPredictor:
    """Returns the predictor of the committed checkpoint (cached)."""
    return HANPredictor.from_checkpoint(CHECKPOINT)


def result_record(result: HANResult, mechanism: str = "han") -> AttentionRecord:
    """Returns the AttentionRecord of a HANResult.

    weights [S, W_max]: word α per sentence (rows zero-padded past each sentence's end);
    axes ("sentence", "word"); query_labels: the sentences; key_labels: word slots
    "w1".."wN" (the words differ per sentence; extras["words"] [S, W_max] holds each slot's
    word, "" for padding). Extras: sentence_weights [S], words, prediction [K] (one per head),
    probabilities_<head> [C], classes_<head> [C].
    """
    matrix = result.word_matrix()
    words = np.full(matrix.shape, "", dtype=object)
    for i, ws in enumerate(result.doc.words):
        words[i, : len(ws)] = ws
    extras: dict[str, Any] = {
        "sentence_weights": result.sentence_alpha.astype(np.float32),
        "sentence_scores": result.sentence_scores.astype(np.float32),
        "words": words.astype(np.str_),
        "prediction": np.asarray(result.predictions, dtype=np.str_),
    }
    for (name, classes), p in zip(result.heads, result.probabilities):
        extras[f"probabilities_{name}"] = np.asarray(p, np.float32)
        extras[f"classes_{name}"] = np.asarray(classes, dtype=np.str_)
    return AttentionRecord(
        mechanism=mechanism,
        weights=matrix,
        axes=("sentence", "word"),
        query_labels=result.doc.sentences,
        key_labels=tuple(f"w{j + 1}" for j in range(matrix.shape[1])),
        meta={
            "heads": [name for name, _ in result.heads],
            "prediction": dict(zip([n for n, _ in result.heads], result.predictions)),
            "notices": list(result.doc.notices) + _reading_notices(result.doc),
            "key_labels": "word slots w1..wN; extras 'words' holds each sentence's word per slot",
        },
        extras=extras,
    )


SHORT_NOTICE = (
    "a hierarchical attention network reads documents of several sentences; with one sentence its sentence "
    "attention is 1 by construction, and a text this short is far from the reviews it was trained on"
)


def _reading_notices(doc: Document) -> list[str]:
    # Inputs far outside what the model knows: say so beside the figure.
    words = sum(len(w) for w in doc.words)
    return [SHORT_NOTICE] if len(doc.sentences) < 2 or words < 4 else []


def han_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: the committed HAN's attention over options["text"]."""
    return result_record(default_predictor().analyse(options["text"]), mechanism.id)


def han_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Batch builder: one record per options dict (documents run in batches)."""
    docs = [encode_document(options["text"]) for options in options_list]
    return [result_record(r, mechanism.id) for r in default_predictor().run_batch(docs)]


def probability_record(record: AttentionRecord, head: str) -> AttentionRecord:
    """Returns the ("class",) record of one head's class probabilities [C] (its bar chart)."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=np.asarray(record.extras[f"probabilities_{head}"], np.float32),
        axes=("class",), query_labels=(head,), key_labels=tuple(str(c) for c in record.extras[f"classes_{head}"]),
        meta={"head": head, "prediction": record.meta["prediction"][head], "shown": "class probabilities"},
    )


def sentence_score_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("sentence",) record of each sentence's score u_iᵀu_s before the softmax."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=np.asarray(record.extras["sentence_scores"], np.float32),
        axes=("sentence",), query_labels=("u_s",), key_labels=record.query_labels,
        meta={"shown": "sentence scores against the context vector u_s (before the softmax)"},
    )


def context_word_record(mechanism_id: str, predictor: HANPredictor, k: int, vocabulary: int) -> AttentionRecord:
    """Returns the ("word",) record of the k highest- then the k lowest-scoring words against u_w.

    vocabulary: how many of MiniLM's whole words (in id order) are scored. The order is the
    chart's: top words descending, then the bottom words from the least low to the lowest.
    """
    words, scores = predictor.context_word_scores(limit=vocabulary)
    order = np.argsort(scores, kind="stable")
    top, bottom = order[::-1][:k], order[:k][::-1]
    picked = np.concatenate([top, bottom])
    return AttentionRecord(
        mechanism=mechanism_id, weights=scores[picked].astype(np.float32), axes=("word",), query_labels=("u_w",),
        key_labels=tuple(words[i] for i in picked),
        meta={"shown": f"top and bottom {k} of the first {vocabulary:,} whole words against u_w (before the softmax)"},
    )

"""Word-piece merging: a tokenizer's pieces joined back into words, labels and weights.

Two spellings: WordPiece marks a piece that continues a word ("##ing": BERT, DistilBERT, ELECTRA); byte-level
BPE and SentencePiece mark a piece that starts one ("Ġsat" in RoBERTa and ModernBERT, "▁sat" in XLM-R), and
every other piece continues the word before it. Tokens with a start mark and no "##" piece are read the second way.

Pure numpy (no jax): runs on the float32 weights of a self-attention AttentionRecord with axes
(..., "query", "key"), whose query and key labels are the same tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.heads.statistics import PIECE_PREFIX, SPECIAL_TOKENS
from models.record import AttentionRecord

WORD_STARTS = ("Ġ", "▁")  # byte-level BPE's and SentencePiece's mark of a word's first piece
SPECIALS = SPECIAL_TOKENS | {"<s>", "</s>", "<pad>", "<mask>"}  # BERT's, then RoBERTa's and XLM-R's


def _marks_word_starts(tokens: Sequence[str]) -> bool:
    return not any(t.startswith(PIECE_PREFIX) for t in tokens) and any(t.startswith(WORD_STARTS) for t in tokens)


def word_index(tokens: Sequence[str]) -> np.ndarray:
    """Returns int [T]: the word each token belongs to ("##" pieces join the previous token; with start marks,
    every piece without "Ġ" or "▁" does).

    Special tokens ([CLS], [SEP], <s>, </s>, ...) are always words of their own, and a piece right
    after one starts a new word (there is nothing to join).
    """
    index = np.zeros(len(tokens), dtype=np.int64)
    starts = _marks_word_starts(tokens)
    word = -1
    for t, token in enumerate(tokens):
        continues = not token.startswith(WORD_STARTS) if starts else token.startswith(PIECE_PREFIX)
        joins = continues and t > 0 and tokens[t - 1] not in SPECIALS
        if not joins or token in SPECIALS:
            word += 1
        index[t] = word
    return index


def merged_labels(tokens: Sequence[str], index: np.ndarray) -> list[str]:
    """Returns one label per word: its pieces joined, "##" prefixes (or a first piece's "Ġ", "▁") dropped."""
    words: list[str] = [""] * (int(index.max()) + 1 if len(index) else 0)
    starts = _marks_word_starts(tokens)
    for token, w in zip(tokens, index):
        piece = token[len(PIECE_PREFIX) :] if not starts and words[w] and token.startswith(PIECE_PREFIX) else token
        words[w] += piece
    if starts:  # "Ġ" + "c" + "at" -> "cat"; a word that is only the mark keeps it
        words = [w[1:] if w.startswith(WORD_STARTS) and len(w) > 1 else w for w in words]
    return words


def merge_matrix(weights: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Returns [..., W, W]: rows averaged and columns summed within each word.

    weights [..., T, T]; index int [T] (word of each token, 0..W−1, as from word_index).
    A row that sums to 1 still sums to 1: averaging rows keeps the sum, summing columns
    keeps each row's total.
    """
    weights = np.asarray(weights, dtype=np.float64)
    num_words = int(index.max()) + 1
    onehot = np.zeros((num_words, len(index)), dtype=np.float64)  # [W, T]
    onehot[index, np.arange(len(index))] = 1.0
    row_mean = onehot / onehot.sum(axis=1, keepdims=True)  # [W, T]
    merged = np.matmul(np.matmul(row_mean, weights), onehot.T)  # [..., W, W]
    return merged.astype(np.float32)


def merge_word_pieces(record: AttentionRecord) -> AttentionRecord:
    """Returns the record with word pieces merged into words (labels and weights).

    record: axes (..., "query", "key") with query_labels == key_labels (self-attention).
    meta["segments"] (one token type per token), if present, is mapped to words;
    extras gain "token_to_word" [T], the word index of each original token.
    """
    tokens = list(record.query_labels)
    if list(record.key_labels) != tokens:
        raise ValueError("merge_word_pieces needs self-attention: query labels must equal key labels")
    index = word_index(tokens)
    labels = merged_labels(tokens, index)
    meta = dict(record.meta)
    if "segments" in meta:
        segments = np.asarray(meta["segments"])
        first = np.array([np.flatnonzero(index == w)[0] for w in range(len(labels))], dtype=np.int64)
        meta["segments"] = segments[first].tolist()
    meta["merged_word_pieces"] = True
    extras = {**dict(record.extras), "token_to_word": index}
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=merge_matrix(record.weights, index),
        axes=record.axes,
        query_labels=labels,
        key_labels=labels,
        meta=meta,
        extras=extras,
    )

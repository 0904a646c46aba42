"""Sentence-pair alignment from a pretrained encoder's contextual token vectors.

Each sentence is encoded on its own; every token of sentence 1 (queries) is scored
against every token of sentence 2 (keys) with a score that has no parameters (dot,
scaled dot, cosine), and the scores are normalised into α with a softmax, globally or
inside Luong's local window centred at the proportional position p_t = t·S/T.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from models.attention import (
    cosine_scores,
    dot_scores,
    local_attention_weights,
    masked_softmax,
    scaled_dot_scores,
)
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

SCORES = ("dot", "scaled-dot", "cosine")
SCORE_NAMES = {"dot": "Dot product", "scaled-dot": "Scaled dot product", "cosine": "Cosine"}
# Cosine lies in [-1, 1]: at τ = 1 its softmax is nearly flat, so each score has its own
# default temperature (chosen on the default paraphrase pair; the page exposes τ).
DEFAULT_TEMPERATURES = {"dot": 1.0, "scaled-dot": 1.0, "cosine": 0.05}
DEFAULT_SENTENCES = ("The cat sat on the mat", "A cat was sitting on the rug")
SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>"})  # BERT's, then RoBERTa's and XLM-R's
MAX_WINDOW = 20
MECHANISM = "sentence-alignment"  # the registry's id of this view; its builder passes the entry's own id

_SCORE_FUNCTIONS = {"dot": dot_scores, "scaled-dot": scaled_dot_scores, "cosine": cosine_scores}


class AlignedPair(NamedTuple):
    """One token of sentence 1 with its best-aligned token of sentence 2."""

    query_index: int
    query_token: str
    key_index: int
    key_token: str
    weight: float  # α of the pair
    score: float  # the raw score
    mutual: bool  # the sentence-1 token is also the best match of the sentence-2 token


def alignment_scores(query_vectors: np.ndarray, key_vectors: np.ndarray, score: str) -> np.ndarray:
    """Returns float32 [T, S]: score of every query vector against every key vector.

    query_vectors [T, d] (sentence 1), key_vectors [S, d] (sentence 2).
    """
    if score not in _SCORE_FUNCTIONS:
        raise InputError(f"unknown score {score!r}; choose one of: {', '.join(SCORES)}")
    s = jnp.asarray(query_vectors, jnp.float32)
    h = jnp.asarray(key_vectors, jnp.float32)
    return np.asarray(_SCORE_FUNCTIONS[score](s, h), dtype=np.float32)


def proportional_centers(num_queries: int, num_keys: int) -> np.ndarray:
    """Returns float32 [T]: window centres p_t = t·S/T for t = 0..T−1."""
    return (np.arange(num_queries, dtype=np.float32) * num_keys / max(num_queries, 1)).astype(np.float32)


def align_vectors(
    query_vectors: np.ndarray,
    key_vectors: np.ndarray,
    query_tokens: list[str],
    key_tokens: list[str],
    *,
    score: str = "cosine",
    window: int | None = None,
    temperature: float | None = None,
    meta: dict | None = None,
    mechanism: str = MECHANISM,
) -> AttentionRecord:
    """Returns the ("query", "key") record of α: sentence-1 tokens × sentence-2 tokens.

    query_vectors [T, d], key_vectors [S, d]. window None = global softmax; an int D =
    Luong's local weights in [p_t − D, p_t + D] times a Gaussian (σ = D/2), p_t = t·S/T.
    extras: "scores" [T, S] (raw), and for local windows "window_center" [T] and
    "window_half_width".
    """
    if len(query_tokens) != len(query_vectors) or len(key_tokens) != len(key_vectors):
        raise ValueError("one token per vector is needed")
    tau = DEFAULT_TEMPERATURES.get(score, 1.0) if temperature is None else float(temperature)
    scores = alignment_scores(query_vectors, key_vectors, score)
    extras: dict = {"scores": scores}
    if window is None:
        weights = masked_softmax(jnp.asarray(scores), None, tau)
    else:
        window = int(window)
        if not 0 <= window <= MAX_WINDOW:
            raise InputError(f"window half-width D must be between 0 and {MAX_WINDOW}, got {window}")
        centers = proportional_centers(len(query_tokens), len(key_tokens))
        weights = local_attention_weights(jnp.asarray(scores), centers, window, None, tau)
        extras["window_center"] = centers
        extras["window_half_width"] = np.int32(window)
    return AttentionRecord(
        mechanism=mechanism,
        weights=np.asarray(weights, dtype=np.float32),
        axes=("query", "key"),
        query_labels=query_tokens,
        key_labels=key_tokens,
        meta={"score": score, "window": window, "temperature": tau, **(meta or {})},
        extras=extras,
    )


def best_pairs(record: AttentionRecord) -> list[AlignedPair]:
    """Returns each sentence-1 token with its highest-α sentence-2 token, best first.

    Rows with no weight (outside every window) are left out. Mutual best pairs (each is the
    other's argmax) come first, then by α.
    """
    weights = record.weights
    scores = np.asarray(record.extras.get("scores", weights))
    if weights.size == 0:
        return []
    row_best = weights.argmax(axis=1)
    col_best = weights.argmax(axis=0)
    pairs = []
    for i, j in enumerate(row_best):
        if weights[i, j] <= 0:
            continue
        pairs.append(
            AlignedPair(
                query_index=i,
                query_token=record.query_labels[i],
                key_index=int(j),
                key_token=record.key_labels[j],
                weight=float(weights[i, j]),
                score=float(scores[i, j]),
                mutual=bool(col_best[j] == i),
            )
        )
    return sorted(pairs, key=lambda p: (not p.mutual, -p.weight))


def best_pair_rows(record: AttentionRecord) -> list[dict]:
    """Returns best_pairs as table rows: sentence 1, sentence 2, α, score, mutual."""
    return [
        {"sentence 1": p.query_token, "sentence 2": p.key_token, "α": round(p.weight, 3),
         "score": round(p.score, 3), "mutual": p.mutual}
        for p in best_pairs(record)
    ]


# ----------------------------------------------------------------------------- with the encoder


def content_tokens(tokens: list[str], hidden: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Returns the tokens and vectors [n, d] without [CLS]/[SEP] or <s>/</s> (they align with everything)."""
    keep = [i for i, t in enumerate(tokens) if t not in SPECIAL_TOKENS]
    return [tokens[i] for i in keep], np.asarray(hidden, np.float32)[keep]


def encode_sentence(runner, text: str) -> tuple[list[str], np.ndarray]:
    """Returns (content tokens, contextual vectors [n, d]) of one sentence, encoded on its own.

    The last ENCODED_CACHE sentences per runner are kept (read-only arrays), so moving τ, the score
    or the window on the page does not run the encoder again."""
    tokens, hidden = _encoded(runner, text)
    if not tokens:
        raise InputError("the sentence has no tokens the model knows; type some words")
    return list(tokens), hidden


ENCODED_CACHE = 32  # sentences (each at most 512 × 384 float32 = 0.75 MB)


@functools.lru_cache(maxsize=ENCODED_CACHE)
def _encoded(runner, text: str) -> tuple[tuple[str, ...], np.ndarray]:
    tokens, hidden = runner.hidden_states(text)
    tokens, hidden = content_tokens(list(tokens), hidden)
    hidden.setflags(write=False)
    return tuple(tokens), hidden


def align_sentences(
    runner,
    text: str,
    text_pair: str,
    *,
    score: str = "cosine",
    window: int | None = None,
    temperature: float | None = None,
    mechanism: str = MECHANISM,
) -> AttentionRecord:
    """Returns the alignment record of two sentences with a runner's contextual vectors.

    runner: has hidden_states(text) -> (tokens, hidden [T, D]) (models.transformer.records).
    """
    if not text or not text.strip() or not text_pair or not text_pair.strip():
        raise InputError("type a sentence in both boxes")
    query_tokens, query_vectors = encode_sentence(runner, text)
    key_tokens, key_vectors = encode_sentence(runner, text_pair)
    return align_vectors(
        query_vectors, key_vectors, query_tokens, key_tokens,
        score=score, window=window, temperature=temperature, mechanism=mechanism,
        meta={"text": text, "text_pair": text_pair, "vectors": "last hidden layer, each sentence encoded on its own",
              "notices": _reading_notices(runner, text, text_pair)},
    )


def _reading_notices(runner, text: str, text_pair: str) -> list[Notice]:
    # What the tokenizer did to each sentence that the model's reading depends on: a cut at the
    # model's limit, parts it cannot spell ([UNK]). Sentences are encoded on their own.
    tokenizer = getattr(runner, "tokenizer", None)
    if tokenizer is None:
        return []
    out = []
    for number, sentence in ((1, text), (2, text_pair)):
        notice = _notice(tokenizer, sentence)
        if notice:
            notice = notice if isinstance(notice, Notice) else Notice.join([notice])
            out.append(Notice(N_("Sentence {number}: {notice}"), number=number,
                              notice=notice.restyled(notice[0].lower() + notice[1:])))
    return out


@functools.lru_cache(maxsize=ENCODED_CACHE)
def _notice(tokenizer, text: str) -> Notice | None:
    # Kept per sentence like its vectors (_encoded): a τ, score or window step tokenizes nothing.
    return tokenizer.encode(text).notice


def alignment_record(mechanism, options: dict) -> AttentionRecord:
    """Registry builder: options text, text_pair, score, window, temperature, model_dir."""
    text = options.get("text") or DEFAULT_SENTENCES[0]
    text_pair = options.get("text_pair") or DEFAULT_SENTENCES[1]
    from models.transformer.records import shared_runner

    runner = shared_runner(options.get("model_dir") or None)
    return align_sentences(
        runner, text, text_pair, score=options["score"], window=options["window"], temperature=options["temperature"],
        mechanism=mechanism.id,
    )

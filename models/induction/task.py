"""Repeated-segment sequences: the task an induction head solves, with its ground truth.

Every training sequence is [BOS] followed by 63 tokens drawn uniformly from the 50-token
vocabulary, in which one segment is written twice (the second copy after the first, never
overlapping). Three kinds are mixed (MIXTURE), so that copying works wherever a repeat starts
and however short it is, typed text included:

- "segment" (the original task): 8–24 tokens, both copies at random places;
- "prefix": [BOS] + r + r with r of 3–31 tokens, the copies right at the start, then uniform tokens
  up to the 64 positions (causal attention: what follows changes nothing before it, and every
  position still trains);
- "short": 3–8 tokens, both copies at random places.

Inside the second copy, every token after its first is predictable: it is the token that followed
the same token in the first copy. Elsewhere the next token is a fresh uniform draw (the best loss
there is ln 50 ≈ 3.91).

The vocabulary is one a user can type: the 26 lowercase letters and 24 three-letter words,
separated by spaces; [BOS] (id 0) starts every sequence and is never typed.

numpy only: the pages, the CLI and the tests use it without importing jax.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from models.heads.detectors import repeated_sequence
from models.record import InputError
from models.text import N_, Notice

BOS = "[BOS]"
BOS_ID = 0
LETTERS = tuple(string.ascii_lowercase)
WORDS = (
    "cat", "dog", "sun", "sky", "red", "big", "run", "sea", "hat", "cup", "box", "key",
    "egg", "pen", "map", "owl", "fox", "bee", "ant", "car", "bus", "tea", "ice", "jam",
)
TOKENS = LETTERS + WORDS  # what a user can type: ids 1..50
VOCAB = (BOS, *TOKENS)  # id = index
TOKEN_IDS = {token: i for i, token in enumerate(VOCAB)}
SEQUENCE_LENGTH = 64  # [BOS] + 63 tokens: the model's positions
SEGMENT_LENGTHS = (8, 24)  # inclusive range of the repeated segment's length (the original task)


@dataclass(frozen=True)
class RepeatFormat:
    """One kind of training sequence: a segment of `segments` tokens (inclusive range) written twice,
    at random places, or with at_start right after [BOS] and again right after itself."""

    name: str
    share: float  # of the training sequences
    segments: tuple[int, int]
    at_start: bool = False


MIXTURE = (
    RepeatFormat("segment", 0.4, SEGMENT_LENGTHS),
    RepeatFormat("prefix", 0.3, (3, 31), at_start=True),  # [BOS] + r + r, then uniform tokens
    RepeatFormat("short", 0.3, (3, 8)),
)


@dataclass(frozen=True)
class RepeatedBatch:
    """A batch of repeated-segment sequences and where their copies lie.

    tokens: int32 [B, T], [BOS] first; first, second: int [B], where each copy starts;
    segment: int [B], the copies' length; kind: int [B], the index in the mixture (None: one kind).
    """

    tokens: np.ndarray
    first: np.ndarray
    second: np.ndarray
    segment: np.ndarray
    kind: np.ndarray | None = None

    @property
    def source(self) -> np.ndarray:
        """Returns int [B, T]: for a position of the second copy, the position of the same
        segment token in the first copy; -1 elsewhere."""
        positions = np.arange(self.tokens.shape[1])[None, :]
        offset = positions - self.second[:, None]
        inside = (offset >= 0) & (offset < self.segment[:, None])
        return np.where(inside, self.first[:, None] + offset, -1)

    @property
    def copied(self) -> np.ndarray:
        """Returns bool [B, T]: positions of the second copy after its first token, whose token
        the earlier copy determines (the targets an induction head can predict)."""
        return (self.source >= 0) & (np.arange(self.tokens.shape[1])[None, :] > self.second[:, None])


def sample_batch(rng: np.random.Generator, batch: int, length: int = SEQUENCE_LENGTH,
                 segments: tuple[int, int] = SEGMENT_LENGTHS, *, at_start: bool = False) -> RepeatedBatch:
    """Returns `batch` sequences of `length` tokens ([BOS] + uniform tokens, one segment written twice):
    at random places, or with at_start as [BOS] + r + r followed by uniform tokens."""
    low, high = segments
    if 2 * high > length - 1:
        raise ValueError(f"two copies of {high} tokens do not fit in {length - 1} positions")
    tokens = rng.integers(1, len(VOCAB), size=(batch, length)).astype(np.int32)
    tokens[:, 0] = BOS_ID
    segment = rng.integers(low, high + 1, size=batch)
    first = np.empty(batch, np.int64)
    second = np.empty(batch, np.int64)
    for b, size in enumerate(segment):
        if at_start:
            first[b], second[b] = 1, 1 + size
        else:
            first[b] = rng.integers(1, length - 2 * size + 1)
            second[b] = rng.integers(first[b] + size, length - size + 1)
        tokens[b, second[b] : second[b] + size] = tokens[b, first[b] : first[b] + size]
    return RepeatedBatch(tokens, first, second, segment.astype(np.int64))


def sample_mixture(rng: np.random.Generator, batch: int,
                   mixture: tuple[RepeatFormat, ...] = MIXTURE) -> RepeatedBatch:
    """Returns `batch` training sequences of SEQUENCE_LENGTH tokens, each of a kind drawn with the
    mixture's shares; rows grouped by kind (the order of a batch does not matter to the loss)."""
    shares = np.asarray([f.share for f in mixture], np.float64)
    counts = np.bincount(rng.choice(len(mixture), size=batch, p=shares / shares.sum()), minlength=len(mixture))
    parts = [(i, sample_batch(rng, int(n), segments=f.segments, at_start=f.at_start))
             for i, (f, n) in enumerate(zip(mixture, counts)) if n]
    return RepeatedBatch(
        np.concatenate([p.tokens for _, p in parts]), np.concatenate([p.first for _, p in parts]),
        np.concatenate([p.second for _, p in parts]), np.concatenate([p.segment for _, p in parts]),
        np.concatenate([np.full(len(p.tokens), i, np.int64) for i, p in parts]),
    )


def generated_sequence(seed: int, length: int) -> np.ndarray:
    """Returns int32 [1 + 2·half]: [BOS] + r + r with half = (length − 1) // 2 and r uniform (seeded)."""
    if not 3 <= length <= SEQUENCE_LENGTH:
        raise InputError(f"length must be a whole number from 3 to {SEQUENCE_LENGTH}, got {length}")
    half = (int(length) - 1) // 2
    return repeated_sequence(np.random.default_rng(int(seed)), half, len(VOCAB), BOS_ID).astype(np.int32)


def repeated_batch(seed: int, count: int, half: int) -> np.ndarray:
    """Returns int32 [count, 1 + 2·half]: `count` sequences [BOS] + r + r from one seeded stream."""
    rng = np.random.default_rng(int(seed))
    return np.stack([repeated_sequence(rng, half, len(VOCAB), BOS_ID) for _ in range(count)]).astype(np.int32)


@dataclass(frozen=True)
class EncodedText:
    """A typed sequence: ids int32 [T] ([BOS] first), its labels, and whether it was cut."""

    ids: np.ndarray
    labels: tuple[str, ...]
    truncated: bool


def encode_text(text: str) -> EncodedText:
    """Returns the typed tokens (space-separated, case ignored) after [BOS], cut at the model's
    63 positions; InputError naming every token outside the vocabulary."""
    words = text.lower().split()
    if words and words[0] == BOS.lower():
        words = words[1:]  # a pasted label row may start with [BOS]: it is there anyway
    if not words:
        raise InputError(Notice(N_("type a few tokens separated by spaces, e.g. {example}"), example="'k dog m sun k dog'"))
    unknown = list(dict.fromkeys(w for w in words if w not in TOKEN_IDS))
    if unknown:
        shown = ", ".join(repr(w[:20]) for w in unknown[:8]) + (" …" if len(unknown) > 8 else "")
        raise InputError(Notice(N_("not in the vocabulary: {tokens}; use the letters a–z and the words {words}"),
                                tokens=shown, words=", ".join(WORDS)))
    truncated = len(words) > SEQUENCE_LENGTH - 1
    words = words[: SEQUENCE_LENGTH - 1]
    ids = np.asarray([BOS_ID, *(TOKEN_IDS[w] for w in words)], np.int32)
    return EncodedText(ids, (BOS, *words), truncated)


def labels_of(ids: np.ndarray) -> tuple[str, ...]:
    """Returns the token strings of ids [T]."""
    return tuple(VOCAB[int(i)] for i in ids)

"""The tasks the variants are trained on side by side, each with its answer known by construction (numpy).

- MQAR, multi-query associative recall (Arora et al. 2023, Zoology): N key–value pairs, then M keys drawn
  from them (with replacement), each followed by its value: [BOS k₁ v₁ … k_N v_N q₁ a₁ … q_M a_M]. Scored: each answer a_i,
  predicted at its query q_i.
- induction: [BOS] + r + r with r of distinct random tokens; scored: the second copy's tokens after its first,
  each predicted from the token before it. Training draws |r| in MIN_HALF..HALF, so copying by a fixed offset
  does not work; the extrapolation test uses |r| = 2·HALF and 4·HALF (2× and 4× the training length).

A batch is (tokens int32 [B, T], targets int32 [B, T], scored bool [B, T]): position t predicts targets[t]
(tokens[t + 1]), counted where scored. Seeds: training streams draw from SeedSequence((TRAIN, task, seed)),
evaluation from (HELD_OUT, task, seed): the two never share a stream.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

TASKS = ("mqar", "induction")
TRAIN, HELD_OUT = 0, 1

# MQAR: [BOS] = 0, keys 1..KEYS, values KEYS+1..KEYS+VALUES.
KEYS, VALUES, PAIRS, QUERIES = 16, 16, 4, 8
MQAR_VOCAB = 1 + KEYS + VALUES
MQAR_LENGTH = 1 + 2 * PAIRS + 2 * QUERIES

# Induction: BOS 0, tokens 1..INDUCTION_VOCAB-1; |r| ≤ 4·HALF distinct tokens.
HALF, MIN_HALF = 8, 4
INDUCTION_VOCAB = 64
INDUCTION_LENGTH = 1 + 2 * HALF
EXTRAPOLATION = (1, 2, 4)  # factors of the training length at which induction is measured


class Batch(NamedTuple):
    """tokens, targets (the next token), scored: [B, T] each."""

    tokens: np.ndarray
    targets: np.ndarray
    scored: np.ndarray


def rng(stream: int, task: str, seed: int) -> np.random.Generator:
    """Returns the generator of a (stream, task, seed): stream TRAIN or HELD_OUT, disjoint by construction."""
    return np.random.default_rng(np.random.SeedSequence((stream, TASKS.index(task), seed)))


def vocab(task: str) -> int:
    """Returns the task's vocabulary size."""
    return MQAR_VOCAB if task == "mqar" else INDUCTION_VOCAB


def train_length(task: str) -> int:
    """Returns the task's training sequence length."""
    return MQAR_LENGTH if task == "mqar" else INDUCTION_LENGTH


def _shifted(tokens: np.ndarray) -> np.ndarray:
    targets = np.zeros_like(tokens)
    targets[:, :-1] = tokens[:, 1:]
    return targets


def mqar_batch(gen: np.random.Generator, count: int, pairs: int = PAIRS) -> Batch:
    """Returns `count` MQAR sequences of `pairs` distinct keys with random values, then QUERIES queries drawn
    from the keys with replacement (queried once each, a model learnt to answer by elimination: the value not yet
    given, right on the last query only)."""
    keys = np.argsort(gen.random((count, KEYS)), axis=1)[:, :pairs] + 1
    values = gen.integers(KEYS + 1, KEYS + VALUES + 1, size=(count, pairs))
    order = gen.integers(0, pairs, size=(count, QUERIES))  # with replacement: no answer follows by elimination
    queries, answers = np.take_along_axis(keys, order, 1), np.take_along_axis(values, order, 1)
    tokens = np.concatenate(
        [
            np.zeros((count, 1), int),
            np.stack([keys, values], -1).reshape(count, -1),
            np.stack([queries, answers], -1).reshape(count, -1),
        ],
        axis=1,
    ).astype(np.int32)
    scored = np.zeros(tokens.shape, bool)
    scored[:, 1 + 2 * pairs :: 2] = True  # each query predicts its answer
    return Batch(tokens, _shifted(tokens), scored)


def induction_batch(gen: np.random.Generator, count: int, half: int | None = None, length: int | None = None) -> Batch:
    """Returns `count` sequences [BOS] + r + r, padded with BOS to `length` (default 1 + 2·max |r|).

    half None: |r| uniform in MIN_HALF..HALF per sequence (training); else every |r| = half.
    """
    halves = gen.integers(MIN_HALF, HALF + 1, size=count) if half is None else np.full(count, half)
    width = length or 1 + 2 * int(halves.max())
    tokens = np.zeros((count, width), np.int32)
    scored = np.zeros((count, width), bool)
    for i, n in enumerate(halves):
        r = gen.permutation(INDUCTION_VOCAB - 1)[:n] + 1
        tokens[i, 1 : 1 + 2 * n] = np.concatenate([r, r])
        scored[i, n + 1 : 2 * n] = True  # second copy's token j predicts r[j + 1]
    return Batch(tokens, _shifted(tokens), scored)


def batch(task: str, gen: np.random.Generator, count: int) -> Batch:
    """Returns a training batch of the task (fixed width: its training length)."""
    if task == "mqar":
        return mqar_batch(gen, count)
    return induction_batch(gen, count, length=INDUCTION_LENGTH)


def answers_by_lookup(tokens: np.ndarray) -> np.ndarray:
    """Returns the oracle's prediction [B, T] for any sequence of either task: the token after the latest earlier
    occurrence of the current token (0 where there is none). Both tasks are solved by this lookup."""
    out = np.zeros_like(tokens)
    for b, row in enumerate(tokens):
        seen: dict[int, int] = {}
        for t, token in enumerate(row):
            if int(token) in seen:
                out[b, t] = row[seen[int(token)] + 1]
            if t + 1 < len(row):
                seen[int(token)] = t
    return out

"""The addition problem (Hochreiter & Schmidhuber 1997, as used by Raffel & Ellis 2015).

Each step t is a pair (value_t, marker_t): values are drawn uniformly from [−1, 1] (the
paper's range, from Raffel's own ``lstm_problems`` generator), markers are 0 except at two
steps, where they are 1. The target is the sum of the two marked values, in [−2, 2].
Like the paper, the first marked step is one of the first ten steps and the second one lies
before the middle of the sequence. Unlike Hochreiter's original we add no −1 "boundary"
markers at the first and last step, and we keep the raw sum as the target (the paper
rescales it to 0.5 + sum/4, which would make every MSE 16 times smaller).

Everything here is numpy and seeded, so a (length, seed) pair names one sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.record import InputError

VALUE_RANGE = (-1.0, 1.0)
MIN_LENGTH = 2
MAX_LENGTH = 10_000
FIRST_MARK_WITHIN = 10  # the first marked step is one of the first ten (paper)
LENGTH_SPREAD = 0.1  # the paper's models see lengths T₀ ± 10 %

# Inference pads a sequence to the smallest bucket that holds it, so at most this many
# shapes are ever compiled.
LENGTH_BUCKETS = (128, 256, 512, 1024, 2048, 4096, 8192, 11_008)


@dataclass(frozen=True)
class AdditionBatch:
    """A padded batch of addition sequences.

    inputs  float32 [B, T, 2]: (value, marker) per step, zeros after each sequence's end.
    mask    bool    [B, T]:    True on real steps.
    lengths int32   [B].
    marked  int32   [B, 2]:    the two marked steps, in increasing order.
    targets float32 [B]:       the sum of the two marked values.
    """

    inputs: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray
    marked: np.ndarray
    targets: np.ndarray


def check_length(length) -> int:
    """Returns `length` as an int; raises InputError unless MIN_LENGTH <= length <= MAX_LENGTH."""
    try:
        number = float(length)
        value = int(number)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"the length must be a whole number, got {length!r}") from None
    if value != number or not MIN_LENGTH <= value <= MAX_LENGTH:
        raise InputError(f"the length must be between {MIN_LENGTH} and {MAX_LENGTH:,}, got {length}")
    return value


def paper_marked_positions(rng: np.random.Generator, length: int) -> tuple[int, int]:
    """Returns two distinct steps, sorted: one of the first ten, one before the middle.

    Sequences too short for that rule (below about 6 steps) get two distinct random steps.
    """
    first_range = min(FIRST_MARK_WITHIN, length)
    second_limit = max(length // 2, 2)
    first = int(rng.integers(0, first_range))
    candidates = [t for t in range(second_limit) if t != first] if second_limit <= 64 else None
    if candidates is not None:
        second = int(rng.choice(candidates))
    else:
        second = first
        while second == first:
            second = int(rng.integers(0, second_limit))
    return (first, second) if first < second else (second, first)


def check_marked(marked, length: int) -> tuple[int, int]:
    """Returns two user-chosen marked steps, sorted; raises InputError if they are not valid."""
    try:
        a, b = (int(x) for x in marked)
    except (TypeError, ValueError):
        raise InputError("give exactly two marked steps, e.g. 3,42") from None
    if a == b:
        raise InputError(f"the two marked steps must differ, got {a} twice")
    for step in (a, b):
        if not 0 <= step < length:
            raise InputError(f"marked step {step} is outside the sequence 0..{length - 1}")
    return (a, b) if a < b else (b, a)


def make_sequence(length: int, seed: int, marked=None) -> tuple[np.ndarray, tuple[int, int], float]:
    """Returns (inputs float32 [T, 2], marked steps, target) for one seeded sequence.

    The values depend on (length, seed) only; `marked` (two steps) overrides the paper's
    random placement without changing the values.
    """
    length = check_length(length)
    rng = np.random.default_rng([int(seed), length])
    values = rng.uniform(*VALUE_RANGE, size=length).astype(np.float32)
    steps = paper_marked_positions(rng, length) if marked is None else check_marked(marked, length)
    inputs = np.zeros((length, 2), np.float32)
    inputs[:, 0] = values
    inputs[list(steps), 1] = 1.0
    return inputs, steps, float(values[steps[0]] + values[steps[1]])


def sample_batch(rng: np.random.Generator, lengths, pad_to: int | None = None) -> AdditionBatch:
    """Returns a padded batch with one random sequence per entry of `lengths` (ints >= 2)."""
    lengths = np.asarray(lengths, np.int32)
    batch = len(lengths)
    pad_to = int(lengths.max()) if pad_to is None else int(pad_to)
    if lengths.max() > pad_to or lengths.min() < MIN_LENGTH:
        raise ValueError(f"lengths must lie in [{MIN_LENGTH}, {pad_to}]")
    steps = np.arange(pad_to)
    mask = steps[None, :] < lengths[:, None]
    values = rng.uniform(*VALUE_RANGE, size=(batch, pad_to)).astype(np.float32) * mask
    marked = np.array([paper_marked_positions(rng, int(n)) for n in lengths], np.int32)
    inputs = np.zeros((batch, pad_to, 2), np.float32)
    inputs[..., 0] = values
    rows = np.arange(batch)
    inputs[rows, marked[:, 0], 1] = 1.0
    inputs[rows, marked[:, 1], 1] = 1.0
    targets = values[rows, marked[:, 0]] + values[rows, marked[:, 1]]
    return AdditionBatch(inputs, mask, lengths, marked, targets.astype(np.float32))


def lengths_around(rng: np.random.Generator, t0: int, count: int, spread: float = LENGTH_SPREAD) -> np.ndarray:
    """Returns int32 [count]: lengths drawn uniformly from [T₀(1 − spread), T₀(1 + spread)]."""
    low, high = round(t0 * (1 - spread)), round(t0 * (1 + spread))
    return rng.integers(max(low, MIN_LENGTH), high + 1, size=count).astype(np.int32)


def max_length_around(t0: int, spread: float = LENGTH_SPREAD) -> int:
    """Returns the longest length lengths_around(t0) can draw."""
    return round(t0 * (1 + spread))

"""Head detectors: which attention heads follow which pattern.

The patterns and the score are TransformerLens's (`head_detector.py`): a head type is a 0/1
pattern P over (query, key) pairs, and a head's score is the share of its attention that
falls on the pattern, Σ A·P / Σ A, summed over every query:
- previous-token: the key right before the query (k = q − 1);
- duplicate-token: earlier keys holding the same token as the query;
- induction: keys right after an earlier copy of the query's token (k − 1 < q, x_{k−1} = x_q).

Olsson et al.'s prefix-matching score is measured on a repeated sequence [BOS] + r + r: the
mean attention from each position of the second copy to the position right after the
earlier occurrence of its token. A head that ignores content scores about 1/T.

Keys can be left out of a score (e.g. [CLS] and [SEP], where many heads park their
attention): their columns are dropped from both sums. numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PATTERNS = ("previous", "duplicate", "induction")


def previous_token_pattern(length: int) -> np.ndarray:
    """Returns bool [T, T]: True at (q, q − 1)."""
    return np.eye(length, k=-1, dtype=bool)


def duplicate_token_pattern(tokens: Sequence) -> np.ndarray:
    """Returns bool [T, T]: True at (q, k) for k < q with tokens[k] == tokens[q]."""
    t = np.asarray(tokens)
    same = t[:, None] == t[None, :]
    return same & np.tri(len(t), k=-1, dtype=bool)


def induction_pattern(tokens: Sequence) -> np.ndarray:
    """Returns bool [T, T]: True at (q, k) for 1 <= k <= q with tokens[k − 1] == tokens[q] (and k − 1 < q)."""
    t = np.asarray(tokens)
    pattern = np.zeros((len(t), len(t)), dtype=bool)
    pattern[:, 1:] = duplicate_token_pattern(t)[:, :-1]  # k − 1 is an earlier copy of q's token
    return pattern


def pattern_for(name: str, tokens: Sequence) -> np.ndarray:
    """Returns the named pattern (one of PATTERNS) for a token sequence."""
    if name == "previous":
        return previous_token_pattern(len(tokens))
    if name == "duplicate":
        return duplicate_token_pattern(tokens)
    if name == "induction":
        return induction_pattern(tokens)
    raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}, got {name!r}")


def head_score(weights: np.ndarray, pattern: np.ndarray, exclude_keys: np.ndarray | None = None) -> np.ndarray:
    """Returns float32 [...]: Σ A·P / Σ A per map.  weights [..., T, T]; pattern bool [T, T];
    exclude_keys bool [T]: key columns left out of both sums. A map with no attention left scores 0."""
    weights = np.asarray(weights, np.float64)
    if exclude_keys is not None:
        weights = weights * ~np.asarray(exclude_keys, bool)
    total = weights.sum(axis=(-2, -1))
    hit = (weights * pattern).sum(axis=(-2, -1))
    return np.where(total > 0, hit / np.where(total > 0, total, 1.0), 0.0).astype(np.float32)


def head_scores(weights: np.ndarray, tokens: Sequence, exclude_keys: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Returns {pattern name: float32 [...]} for every pattern.  weights [..., T, T]; tokens [T]."""
    return {name: head_score(weights, pattern_for(name, tokens), exclude_keys) for name in PATTERNS}


def repeated_sequence(rng: np.random.Generator, half: int, vocab: int, bos: int = 0) -> np.ndarray:
    """Returns int [1 + 2·half]: [BOS] + r + r with r drawn uniformly from tokens 1..vocab−1."""
    r = rng.integers(1, vocab, size=half)
    return np.concatenate([[bos], r, r]).astype(np.int64)


def prefix_matching_score(weights: np.ndarray, half: int) -> np.ndarray:
    """Returns float32 [...]: mean α[t, t − half + 1] over the second copy t = half + 1 .. 2·half of
    [BOS] + r + r (the position right after the earlier occurrence of x_t).  weights [..., T, T], T = 1 + 2·half."""
    weights = np.asarray(weights, np.float64)
    if weights.shape[-1] != 1 + 2 * half:
        raise ValueError(f"a repeated sequence of half {half} has {1 + 2 * half} tokens, got {weights.shape[-1]}")
    queries = np.arange(half + 1, 2 * half + 1)
    return weights[..., queries, queries - half + 1].mean(axis=-1).astype(np.float32)


def heads_mostly_on(weights: np.ndarray, keys: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """Returns bool [...]: maps whose mean attention on the given keys exceeds threshold.
    weights [..., T, T]; keys bool [T] (e.g. [CLS] and [SEP])."""
    share = np.asarray(weights, np.float64)[..., np.asarray(keys, bool)].sum(-1).mean(-1)
    return share > threshold

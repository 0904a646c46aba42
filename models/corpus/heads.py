"""Per-head statistics of a padded batch of attention maps, computed where the maps are (jax).

The definitions are those of models/heads/statistics.py (head_statistic, on one record's
[L, H, T, T] weights and its token labels) and models/heads/detectors.py (the pattern
scores), written for a padded batch [B, H, T, T] with a query mask, so that the maps never
leave the device: only B × L × H × S numbers do. tests/models/corpus/test_pass.py checks
every statistic against those numpy functions, input by input.

Per map (real queries q < n and keys k < n of an input of n tokens; padding keys have weight 0):
- entropy: mean over queries of −Σ_k α log α (nats);
- cls / sep / punctuation: mean over queries of the mass on those keys;
- self: mean α(q → q); previous: mean over q ≥ 1 of α(q → q − 1); next: mean over q < n − 1 of α(q → q + 1)
  (0 for a one-token input);
- previous_score / duplicate_score / induction_score: TransformerLens's Σ A·P / Σ A over the map
  (P: k = q − 1; earlier copies of the query's token; the position right after an earlier copy);
- distance: mean over queries of Σ_k α |q − k| (tokens), the mean attention distance.
"""

from __future__ import annotations

import jax.numpy as jnp

from models.heads.statistics import STATISTICS as SINGLE_INPUT_STATISTICS
from models.text import N_

# The corpus statistics: the single-input page's, the induction score and the mean distance.
STATISTIC_IDS: tuple[str, ...] = tuple(s.id for s in SINGLE_INPUT_STATISTICS) + ("induction_score", "distance")
LABELS: dict[str, str] = {s.id: s.label for s in SINGLE_INPUT_STATISTICS} | {
    "induction_score": N_("Induction score"),
    "distance": N_("Mean attention distance (tokens)"),
    "first": N_("Share on the first token"),
}
DESCRIPTIONS: dict[str, str] = {s.id: s.description for s in SINGLE_INPUT_STATISTICS} | {
    "induction_score": N_("TransformerLens's score: Σ A·P / Σ A with P right after earlier copies of the query's token"),
    "distance": N_("mean over queries of Σ α(i → j)·|i − j|, in tokens"),
    "first": N_("mean over queries of the attention on position 0 (BOS where the tokenizer adds one)"),
}
# Key kinds, one bool column each in the batch's key_kinds [B, T, K].
KEY_KINDS = ("cls", "sep", "punctuation")

# A decoder LM's: the share on the first token takes [CLS]'s and [SEP]'s place, and "next" is
# left out (a causal map has no weight above the diagonal).
LM_STATISTIC_IDS: tuple[str, ...] = ("entropy", "first", "self", "previous", "punctuation", "previous_score",
                                     "duplicate_score", "induction_score", "distance")
LM_KEY_KINDS = ("first", "punctuation")


def batch_statistics(probs, ids, lengths, key_kinds, kinds=KEY_KINDS, statistics=STATISTIC_IDS):
    """Returns float32 [B, H, S] (S = len(statistics), in that order) for one layer's maps.

    probs float32 [B, H, T, T] (rows of real queries sum to 1 over real keys; padding keys 0);
    ids int32 [B, T] token ids (equal ids = equal tokens); lengths int32 [B] real tokens per row
    (a padding row has length 1); key_kinds bool [B, T, K] in `kinds` order; each kind's share is
    the statistic of the same name.
    """
    b, h, t, _ = probs.shape
    pos = jnp.arange(t)
    n = lengths.astype(jnp.float32)[:, None]  # [B, 1]
    real = pos[None, :] < lengths[:, None]  # [B, T] real queries (and keys)
    rows = probs * real[:, None, :, None]  # padded query rows dropped: [B, H, T, T]

    def query_mean(per_query, count):  # per_query [B, H, T] (already 0 off real rows)
        return jnp.where(count > 0, per_query.sum(-1) / jnp.maximum(count, 1.0), 0.0)

    safe = jnp.where(rows > 0, rows, 1.0)
    entropy = query_mean(-(rows * jnp.log(safe)).sum(-1), n)
    shares = jnp.einsum("bhqk,bkc->bhc", rows, key_kinds.astype(probs.dtype)) / n[:, :, None]  # [B, H, K]
    diag = jnp.diagonal(rows, axis1=-2, axis2=-1)  # [B, H, T]
    below = jnp.diagonal(rows, offset=-1, axis1=-2, axis2=-1)  # α(q → q − 1), q = 1..T−1
    above = jnp.diagonal(rows, offset=1, axis1=-2, axis2=-1)  # α(q → q + 1), q = 0..T−2 (0 past n)
    self_share = query_mean(diag, n)
    previous = query_mean(below, n - 1)
    following = query_mean(above * (pos[None, None, 1:] < lengths[:, None, None]), n - 1)
    total = rows.sum((-2, -1))  # [B, H]

    def score(hit):
        return jnp.where(total > 0, hit / jnp.where(total > 0, total, 1.0), 0.0)

    earlier = pos[None, :, None] > pos[None, None, :]  # [1, Tq, Tk] k < q
    duplicate = (ids[:, :, None] == ids[:, None, :]) & earlier & real[:, None, :]  # [B, Tq, Tk]
    induction = jnp.pad(duplicate[:, :, :-1], ((0, 0), (0, 0), (1, 0)))  # key k right after a copy at k − 1
    previous_score = score(below.sum(-1))
    duplicate_score = score(jnp.einsum("bhqk,bqk->bh", rows, duplicate.astype(probs.dtype)))
    induction_score = score(jnp.einsum("bhqk,bqk->bh", rows, induction.astype(probs.dtype)))
    gap = jnp.abs(pos[:, None] - pos[None, :]).astype(probs.dtype)  # [T, T]
    distance = query_mean((rows * gap).sum(-1), n)
    by_id = {
        "entropy": entropy, "self": self_share, "previous": previous, "next": following,
        "previous_score": previous_score, "duplicate_score": duplicate_score,
        "induction_score": induction_score, "distance": distance,
    } | {kind: shares[..., i] for i, kind in enumerate(kinds)}
    return jnp.stack([by_id[s] for s in statistics], axis=-1)

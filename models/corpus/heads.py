"""Per-head statistics of a padded batch of attention maps, computed where the maps are (jax).

The definitions are those of models/heads/statistics.py (head_statistic, on one record's
[L, H, T, T] weights and its token labels) and models/heads/detectors.py (the pattern
scores), written for a padded batch [B, H, T, T] with a query mask, so that the maps never
leave the device: only B × L × H × S numbers do. Each layer's maps are read in a few passes: one
matrix product against pair weights built once per batch, the diagonals as strided slices and two
row sums. tests/models/corpus/test_pass.py checks every statistic against those numpy functions.

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


# The pair weights' first columns, in this order; one column per key kind follows.
PAIRS = ("distance", "duplicate", "induction")


def pair_weights(ids, lengths, key_kinds):
    """Returns float32 [B, T·T, 3 + K]: the weight of α(q → k) in each of PAIRS (|q − k|; an earlier copy of the
    query's token at k; k right after one) and each key kind, 0 where q or k is padding. ids int32 [B, T]
    (equal ids = equal tokens); lengths int32 [B] real tokens per row (1 for a padding row); key_kinds bool
    [B, T, K]. Built once per batch for every layer: a layer's weighted sums are one product with its maps."""
    b, t = ids.shape
    q = jnp.arange(t)[None, :, None]  # [1, Tq, 1]
    k = jnp.arange(t)[None, None, :]  # [1, 1, Tk]
    real = (q < lengths[:, None, None]) & (k < lengths[:, None, None])  # [B, Tq, Tk]
    earlier_copy = real & (ids[:, :, None] == ids[:, None, :]) & (k < q)
    after_copy = jnp.pad(earlier_copy[:, :, :-1], ((0, 0), (0, 0), (1, 0)))
    columns = [jnp.where(real, jnp.abs(q - k), 0), earlier_copy, after_copy]
    columns += [real & key_kinds[:, None, :, c] for c in range(key_kinds.shape[-1])]
    return jnp.stack([c.astype(jnp.float32) for c in columns], axis=-1).reshape(b, t * t, len(columns))


def batch_statistics(probs, weights, lengths, kinds=KEY_KINDS, statistics=STATISTIC_IDS):
    """Returns float32 [B, H, S] (S = len(statistics), in that order) for one layer's maps.

    probs float32 [B, H, T, T] (rows of real queries sum to 1 over real keys; padding keys 0); weights
    from pair_weights [B, T·T, 3 + K] with `kinds` its key kinds (each kind's share is the statistic of
    the same name); lengths int32 [B]. Padding queries are left out after each row's reduction (a mask
    over the whole map would cost a pass of its own).
    """
    b, h, t, _ = probs.shape
    n = lengths.astype(jnp.float32)[:, None]  # [B, 1]
    real = (jnp.arange(t)[None, :] < lengths[:, None])[:, None, :]  # [B, 1, T] real queries
    flat = probs.reshape(b, h, t * t)
    sums = dict(zip(PAIRS + tuple(kinds), jnp.moveaxis(jnp.matmul(flat, weights), -1, 0)))  # Σ_q Σ_k α·w [B, H]

    def over_queries(per_query):  # [B, H, T'] (T' ≤ T, query q at q or q + 1) -> the sum over real queries
        return jnp.sum(jnp.where(real[..., : per_query.shape[-1]], per_query, 0.0), axis=-1)

    def per_query(value, count):  # a sum over real queries -> its mean (0 without such queries)
        return jnp.where(count > 0, value / jnp.maximum(count, 1.0), 0.0)

    # The diagonals as strided slices of the flat map: α(q → q), α(q → q − 1) for q ≥ 1, α(q → q + 1).
    self_share, previous, following = (flat[:, :, start :: t + 1] for start in (0, t, 1))
    previous = over_queries(jnp.pad(previous, ((0, 0), (0, 0), (1, 0))))
    total = over_queries(jnp.sum(probs, axis=-1))

    def score(hit):  # TransformerLens's Σ A·P / Σ A
        return jnp.where(total > 0, hit / jnp.where(total > 0, total, 1.0), 0.0)

    by_id = {
        "entropy": -over_queries(jnp.sum(probs * jnp.log(jnp.where(probs > 0, probs, 1.0)), axis=-1)) / n,
        "self": over_queries(self_share) / n, "previous": per_query(previous, n - 1),
        "next": per_query(over_queries(following), n - 1), "previous_score": score(previous),
        "duplicate_score": score(sums["duplicate"]), "induction_score": score(sums["induction"]),
        "distance": sums["distance"] / n,
    } | {kind: sums[kind] / n for kind in kinds}
    return jnp.stack([by_id[s] for s in statistics], axis=-1)


def layer_statistics(maps, ids, lengths, key_kinds, kinds=KEY_KINDS, statistics=STATISTIC_IDS):
    """Returns float32 [B, L, H, S]: batch_statistics of each layer's maps (a sequence of L arrays
    [B, H, T, T]), with the pair weights built once. ids, lengths and key_kinds as in pair_weights."""
    weights = pair_weights(ids, lengths, key_kinds)
    return jnp.stack([batch_statistics(p, weights, lengths, kinds, statistics) for p in maps], axis=1)

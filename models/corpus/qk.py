"""Joint query–key embedding of one attention head over a corpus sample (AttentionViz, Yeh et al. 2023).

query_keys() runs the runner's one forward capturing the chosen layer's queries and keys
(q = x W_q + b_q, k = x W_k + b_k, split into heads; XLA leaves out the layers above it), so the
forward that returns attention maps is not slowed. Then, as AttentionViz does before projecting,
two changes that leave every attention map unchanged make distance track attention:
1. translate the keys so their mean equals the queries' mean: k ← k − mean(k) + mean(q). For a
   query q this adds q·(mean(q) − mean(k)) to every score of its row, a constant the softmax removes;
2. scale queries by c and keys by 1/c, c = sqrt(mean‖k‖ / mean‖q‖) (after step 1), so that the
   mean norms of queries and keys are equal; every product q·k is unchanged.
Then PCA to 2-D (numpy SVD of the centred joint set). distance_score_correlation() checks the
result: over query–key pairs of each held-out input, Spearman's ρ between plot distance and
−q·k/√d (positive: nearer pairs score higher).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.capture import Capture
from models.record import InputError

MAX_SAMPLE_TOKENS = 4000  # points per kind (queries, keys) in one embedding
CONTEXT_CHARS = 60


@dataclass
class QueryKeys:
    """Queries and keys of one head for a sample: q, k float32 [N, d] (token n of the sample is
    query n and key n), input int [N] (which text), position int [N], tokens [N], contexts [N]."""

    layer: int
    head: int
    queries: np.ndarray
    keys: np.ndarray
    input: np.ndarray
    position: np.ndarray
    tokens: list[str]
    contexts: list[str]


def _context(tokens: Sequence[str], i: int) -> str:
    left = " ".join(tokens[max(0, i - 4): i])
    right = " ".join(tokens[i + 1: i + 5])
    text = f"{left} [{tokens[i]}] {right}".strip()
    return text if len(text) <= CONTEXT_CHARS else text[: CONTEXT_CHARS - 1] + "…"


def query_keys(runner, texts: Sequence[str], layer: int, head: int, max_tokens: int = MAX_SAMPLE_TOKENS) -> QueryKeys:
    """Returns the queries and keys of (layer, head) for every token of the texts, at most max_tokens
    tokens (whole texts, in order; empty texts skipped). runner: a models.transformer AttentionRunner."""
    cfg = runner.config
    if not (0 <= layer < cfg.num_hidden_layers and 0 <= head < cfg.num_attention_heads):
        raise InputError(f"layer must be 0–{cfg.num_hidden_layers - 1} and head 0–{cfg.num_attention_heads - 1}, "
                         f"got layer {layer}, head {head}")
    encodings, total = [], 0
    for text in texts:
        if not str(text).strip():
            continue
        enc = runner.encode(str(text))
        if total + len(enc) > max_tokens and encodings:
            break
        encodings.append(enc)
        total += len(enc)
    if not encodings:
        raise InputError("the sample has no non-empty texts")
    capture = Capture(logits=False, queries=(int(layer),), keys=(int(layer),))
    qs, ks, inputs, positions, tokens, contexts = [], [], [], [], [], []
    for number, enc in enumerate(encodings):  # one text per call: a handful of length buckets compile
        out = runner.forward(runner.padded([enc], 1), capture)
        n = len(enc)
        qs.append(np.asarray(out["queries"][0][0, head, :n], np.float32))
        ks.append(np.asarray(out["keys"][0][0, head, :n], np.float32))
        inputs.append(np.full(n, number))
        positions.append(np.arange(n))
        tokens.extend(enc.tokens)
        contexts.extend(_context(enc.tokens, i) for i in range(n))
    return QueryKeys(int(layer), int(head), np.concatenate(qs), np.concatenate(ks), np.concatenate(inputs),
                     np.concatenate(positions), tokens, contexts)


@dataclass(frozen=True)
class Normalisation:
    """k ← (k − key_mean + query_mean) / scale, q ← q · scale (see the module docstring)."""

    query_mean: np.ndarray
    key_mean: np.ndarray
    scale: float

    def apply(self, queries: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        moved = keys - self.key_mean + self.query_mean
        return queries * self.scale, moved / self.scale


def fit_normalisation(queries: np.ndarray, keys: np.ndarray) -> Normalisation:
    """Returns AttentionViz's translation and scaling fitted on queries, keys [N, d]."""
    queries, keys = np.asarray(queries, np.float64), np.asarray(keys, np.float64)
    q_mean, k_mean = queries.mean(0), keys.mean(0)
    moved = keys - k_mean + q_mean
    scale = float(np.sqrt(np.linalg.norm(moved, axis=1).mean() / max(np.linalg.norm(queries, axis=1).mean(), 1e-12)))
    return Normalisation(q_mean, k_mean, scale)


@dataclass(frozen=True)
class Projection:
    """PCA to 2-D: coords = (x − centre) @ components.T; explained: variance share of each axis."""

    centre: np.ndarray
    components: np.ndarray  # [2, d]
    explained: np.ndarray  # [2]

    def apply(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, np.float64) - self.centre) @ self.components.T


def fit_pca(points: np.ndarray, dims: int = 2) -> Projection:
    """Returns the PCA of points [N, d] (numpy SVD of the centred points) to `dims` axes."""
    points = np.asarray(points, np.float64)
    centre = points.mean(0)
    _, singular, vt = np.linalg.svd(points - centre, full_matrices=False)
    variance = singular**2
    return Projection(centre, vt[:dims], variance[:dims] / max(variance.sum(), 1e-300))


@dataclass
class JointEmbedding:
    """2-D coordinates of a head's queries and keys [N, 2] each, with how they were made."""

    sample: QueryKeys
    normalisation: Normalisation
    projection: Projection
    query_xy: np.ndarray
    key_xy: np.ndarray


def joint_embedding(sample: QueryKeys) -> JointEmbedding:
    """Returns the normalised (translated, scaled) queries and keys of a sample projected by a joint PCA."""
    norm = fit_normalisation(sample.queries, sample.keys)
    q, k = norm.apply(sample.queries, sample.keys)
    projection = fit_pca(np.concatenate([q, k]))
    return JointEmbedding(sample, norm, projection, projection.apply(q), projection.apply(k))


def distance_score_correlation(embedding: JointEmbedding, held_out: QueryKeys) -> tuple[float, int]:
    """Returns (Spearman's ρ between plot distance and −q·k/√d, pairs): over every (query, key) pair
    of the same held-out input, placed with the embedding's fitted normalisation and PCA."""
    from scipy.stats import spearmanr

    q, k = embedding.normalisation.apply(held_out.queries, held_out.keys)
    qxy, kxy = embedding.projection.apply(q), embedding.projection.apply(k)
    scale = 1.0 / np.sqrt(held_out.queries.shape[1])
    distances, scores = [], []
    for number in np.unique(held_out.input):
        rows = held_out.input == number
        distances.append(np.linalg.norm(qxy[rows][:, None] - kxy[rows][None], axis=-1).ravel())
        raw_q, raw_k = held_out.queries[rows].astype(np.float64), held_out.keys[rows].astype(np.float64)
        scores.append((raw_q @ raw_k.T * scale).ravel())
    distance, score = np.concatenate(distances), np.concatenate(scores)
    rho = spearmanr(distance, -score).statistic
    return float(rho), int(distance.size)


def embedding_record(embedding: JointEmbedding, mechanism: str):
    """Returns an AttentionRecord of the plotted coordinates: rows "q <token> @<position>" then
    "k <token> @<position>", columns PC 1 and PC 2 (for the page's Export menu)."""
    from models.record import AttentionRecord

    sample = embedding.sample
    labels = [f"{kind} {t} @{p}" for kind in ("q", "k") for t, p in zip(sample.tokens, sample.position.tolist())]
    return AttentionRecord(
        mechanism=mechanism, weights=np.concatenate([embedding.query_xy, embedding.key_xy]).astype(np.float32),
        axes=("query", "key"), query_labels=labels, key_labels=["PC 1", "PC 2"],
        meta={"layer": sample.layer, "head": sample.head, "scale": embedding.normalisation.scale,
              "explained": embedding.projection.explained.tolist(),
              "normalisation": "k ← (k − mean k + mean q)/c, q ← c·q, c = sqrt(mean‖k‖/mean‖q‖); PCA to 2-D"},
        extras={"input": np.concatenate([sample.input, sample.input])})

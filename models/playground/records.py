"""The Q/K/V playground: one query scored against key/value pairs, in three stages.

Stage 1 scores the query against every key, stage 2 normalises the scores into weights α
(soft, hard-argmax or hard-sampled), stage 3 takes the weighted sum of the values.
Keys and the query live in 2-D so they can be drawn; the parameterised scores use the
hand-set matrices in HAND_SET_PARAMS, shown on the page: they are illustrative, not learned.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from models import attention as core
from models import options as opt
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

KEY_DIM = 2
MAX_KEYS = 32
MAX_VALUE_DIM = 8
MAX_ABS_ENTRY = 1e4
# The hand-set matrices each parameterised score uses (the page shows them).
PARAMETERS_OF_SCORE = {
    "general": ("w_general",),
    "concat": ("w_concat", "v_concat"),
    "additive": ("w_additive", "u_additive", "v_additive"),
    "location": ("w_location",),
}

# A small toy vocabulary: key axis 1 ~ "animal", axis 2 ~ "vehicle"; values are 2-D too
# (size, speed) so the weighted sum can be drawn among them.
DEFAULT_LABELS = ("cat", "dog", "car", "truck", "bicycle")
DEFAULT_KEYS = np.array([[2.0, 0.1], [1.8, 0.4], [0.1, 2.0], [0.3, 1.6], [1.0, 1.0]], np.float32)
DEFAULT_VALUES = np.array([[0.3, 0.5], [0.5, 0.6], [2.0, 2.5], [3.0, 1.5], [1.0, 0.8]], np.float32)
DEFAULT_QUERY = np.array([1.5, 0.5], np.float32)


@dataclass(frozen=True)
class PlaygroundParams:
    """Hand-set parameters of the parameterised scores (float32, shapes as named)."""

    w_general: np.ndarray  # [2, 2]
    w_concat: np.ndarray  # [3, 4]
    v_concat: np.ndarray  # [3]
    w_additive: np.ndarray  # [3, 2]
    u_additive: np.ndarray  # [3, 2]
    v_additive: np.ndarray  # [3]
    w_location: np.ndarray  # [MAX_KEYS, 2]


def _location_rows() -> np.ndarray:
    # Row j points in direction 2πj/8: a query pointing that way favours position j,
    # whatever the keys hold.
    angles = 2 * np.pi * np.arange(MAX_KEYS) / 8
    return (2.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)).astype(np.float32)


HAND_SET_PARAMS = PlaygroundParams(
    # General: feature 1 of the query matches feature 1 of the key, and also a little of 2.
    w_general=np.array([[1.0, 0.5], [0.0, 1.0]], np.float32),
    w_concat=np.array(
        [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, -1.0, -1.0]], np.float32
    ),
    v_concat=np.array([1.0, 1.0, -0.5], np.float32),
    w_additive=np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], np.float32),
    u_additive=np.array([[1.0, 0.0], [0.0, 1.0], [-0.5, -0.5]], np.float32),
    v_additive=np.array([1.0, 1.0, 1.0], np.float32),
    w_location=_location_rows(),
)


@dataclass(frozen=True)
class QKVResult:
    """The three stages for one query: scores [n], weights α [n], context [d_v].

    applied [n] are the weights the context uses: α (soft), one-hot (argmax) or the sample
    frequencies (sample). samples [N] holds drawn key indices in "sample" mode.
    """

    scores: np.ndarray
    weights: np.ndarray
    applied: np.ndarray
    context: np.ndarray
    samples: np.ndarray | None = None


def qkv_scores(score: str, query: np.ndarray, keys: np.ndarray, params: PlaygroundParams) -> np.ndarray:
    """Returns float32 [n]: one score per key.  query [2], keys [n, 2]."""
    s = np.asarray(query, np.float32)[None, :]  # [1, 2]
    h = np.asarray(keys, np.float32)  # [n, 2]
    if score == "dot":
        out = core.dot_scores(s, h)
    elif score == "scaled-dot":
        out = core.scaled_dot_scores(s, h)
    elif score == "general":
        out = core.general_scores(s, h, params.w_general)
    elif score == "concat":
        out = core.concat_scores(s, h, params.w_concat, params.v_concat)
    elif score == "additive":
        out = core.additive_scores(s, h, params.w_additive, params.u_additive, params.v_additive)
    elif score == "location":
        out = core.location_scores(s, params.w_location)[:, : h.shape[0]]
    elif score == "cosine":
        out = core.cosine_scores(s, h)
    else:
        raise InputError(f"unknown score {score!r}; choose one of {', '.join(core.SCORE_FUNCTIONS)}")
    return np.asarray(out, np.float32)[0]


def qkv_attention(
    query: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    *,
    score: str = "dot",
    temperature: float = 1.0,
    mode: str = "soft",
    seed: int = 0,
    num_samples: int = 100,
    params: PlaygroundParams = HAND_SET_PARAMS,
) -> QKVResult:
    """Returns the three stages for one query.  query [2], keys [n, 2], values [n, d_v]."""
    query, keys, values = validate_qkv(query, keys, values)
    temperature = opt.TEMPERATURE.read(temperature)
    mode, num_samples = opt.MODE.read(mode), opt.SAMPLES.read(num_samples)
    scores = qkv_scores(score, query, keys, params)
    weights = np.asarray(core.masked_softmax(scores, None, temperature), np.float32)
    applied, samples = core.apply_mode(weights, mode, seed=opt.SEED.read(seed), num_samples=num_samples)
    context = np.asarray(core.context_vector(applied[None, :], values), np.float32)[0]
    return QKVResult(scores, weights, applied, context, samples)


def validate_qkv(query, keys, values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns float32 (query [2], keys [n, 2], values [n, d_v]); InputError if unusable."""
    try:
        q = np.asarray(query, np.float64)
        k = np.asarray(keys, np.float64)
        v = np.asarray(values, np.float64)
    except (TypeError, ValueError):
        raise InputError(Notice(N_("query, keys and values must be numbers"))) from None
    if q.shape != (KEY_DIM,):
        raise InputError(Notice(N_("the query needs exactly {dim} numbers, got {count}"), dim=KEY_DIM, count=q.size))
    if k.ndim != 2 or k.shape[0] == 0:
        raise InputError(Notice(N_("add at least one key")))
    if k.shape[1] != KEY_DIM:
        raise InputError(Notice(N_("every key needs exactly {dim} numbers"), dim=KEY_DIM))
    if k.shape[0] > MAX_KEYS:
        raise InputError(Notice(N_("at most {most} keys, got {count}"), most=MAX_KEYS, count=k.shape[0]))
    if v.ndim != 2 or v.shape[0] != k.shape[0]:
        raise InputError(Notice(N_("give one value per key: {keys} keys but {values} values"), keys=k.shape[0],
                                values=v.shape[0] if v.ndim else 0))
    if not 1 <= v.shape[1] <= MAX_VALUE_DIM:
        raise InputError(Notice(N_("values need 1 to {most} numbers each"), most=MAX_VALUE_DIM))
    for name, arr in ((N_("query"), q), (N_("keys"), k), (N_("values"), v)):
        if not np.all(np.isfinite(arr)):
            raise InputError(Notice(N_("query contains an empty or non-numeric entry; fill in every cell")
                                    if name == "query" else
                                    N_("{name} contain an empty or non-numeric entry; fill in every cell"),
                                    name=Notice(name)))
        if np.any(np.abs(arr) > MAX_ABS_ENTRY):
            raise InputError(Notice(N_("{name} entries must lie within ±{most:g}"), name=Notice(name),
                                    most=MAX_ABS_ENTRY))
    return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)


def parse_vectors(text: str, *, what: str) -> np.ndarray:
    """Returns float [n, d] from "x1,y1; x2,y2; ..."; raises InputError naming `what`."""
    rows = [r for r in str(text).replace("\n", ";").split(";") if r.strip()]
    if not rows:
        raise InputError(f"{what} is empty; write numbers like '1,0; 0,1'")
    try:
        parsed = [[float(x) for x in r.replace(" ", ",").split(",") if x.strip()] for r in rows]
    except ValueError:
        raise InputError(f"{what} must be numbers separated by commas and semicolons, like '1,0; 0,1'") from None
    if len({len(r) for r in parsed}) != 1:
        raise InputError(f"every row of {what} needs the same number of entries")
    return np.asarray(parsed, np.float64)


def default_table() -> list[dict[str, Any]]:
    """Returns the default key/value table: one row per key, columns label, k1, k2, v1, v2."""
    return [
        {"label": label, "k1": float(k[0]), "k2": float(k[1]), "v1": float(v[0]), "v2": float(v[1])}
        for label, k, v in zip(DEFAULT_LABELS, DEFAULT_KEYS, DEFAULT_VALUES)
    ]


def table_to_kv(rows: list[Mapping[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Returns (labels, keys [n, 2], values [n, 2]) from table rows; InputError if unusable."""
    # Empty rows (a row just added) are skipped; a message names a row by its place in the table.
    places = [i + 1 for i, r in enumerate(rows)
              if any(r.get(c) not in (None, "") and r.get(c) == r.get(c) for c in ("k1", "k2", "v1", "v2"))]
    rows = [rows[i - 1] for i in places]
    if not rows:
        raise InputError(Notice(N_("the table is empty; add at least one key/value row")))
    if len(rows) > MAX_KEYS:
        raise InputError(Notice(N_("at most {most} rows, got {count}"), most=MAX_KEYS, count=len(rows)))

    def number(i, column):
        try:
            x = float(rows[i].get(column))
        except (TypeError, ValueError, OverflowError):
            x = float("nan")
        if not math.isfinite(x):
            raise InputError(Notice(N_("row {row}: column {column} needs a number"), row=places[i], column=column))
        return x

    labels = []
    for i, row in enumerate(rows):
        label = row.get("label")
        label = "" if label is None or label != label else str(label)
        labels.append(label.strip()[:40] or f"k{i + 1}")
    keys = np.array([[number(i, "k1"), number(i, "k2")] for i in range(len(rows))], np.float64)
    values = np.array([[number(i, "v1"), number(i, "v2")] for i in range(len(rows))], np.float64)
    return labels, keys, values


def _vectors(value: Any, default: np.ndarray, what: str) -> np.ndarray:
    if value is None:
        return default
    if isinstance(value, str):
        return parse_vectors(value, what=what)
    return np.asarray(value, np.float64)


def read_qkv(options: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Returns the raw (query, keys, values, labels) of a playground request, each defaulting to the example.

    options: query, keys, values ("1,0; 0,1" text or arrays) and labels; validate_qkv checks the numbers.
    """
    query = _vectors(options.get("query"), DEFAULT_QUERY, "the query").reshape(-1)
    keys = _vectors(options.get("keys"), DEFAULT_KEYS, "the keys")
    values = _vectors(options.get("values"), DEFAULT_VALUES, "the values")
    labels = options.get("labels")
    if labels is None:
        labels = DEFAULT_LABELS if len(keys) == len(DEFAULT_LABELS) else [f"k{i + 1}" for i in range(len(keys))]
    if len(labels) != len(keys):
        raise InputError(f"{len(labels)} labels for {len(keys)} keys")
    return query, keys, values, tuple(labels)


def qkv_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one playground query: α [1 query, n keys] for the entry's score.

    options (checked by the registry): query, keys, values, labels, temperature, mode, seed, samples.
    """
    score = mechanism.variant
    query, keys, values, labels = read_qkv(options)
    mode, temperature = options["mode"], options["temperature"]
    seed, num_samples = options["seed"], options["samples"]
    result = qkv_attention(
        query, keys, values, score=score, temperature=temperature, mode=mode, seed=seed, num_samples=num_samples
    )
    extras: dict[str, Any] = {
        "scores": result.scores,
        "soft_weights": result.weights,
        "context": result.context,
        "query": np.asarray(query, np.float32),
        "keys": np.asarray(keys, np.float32),
        "values": np.asarray(values, np.float32),
    }
    if result.samples is not None:
        extras["samples"] = result.samples
    return AttentionRecord(
        mechanism=mechanism.id,
        weights=result.applied[None, :],
        axes=("query", "key"),
        query_labels=("query",),
        key_labels=tuple(labels),
        meta={
            "score": score,
            "temperature": float(temperature),
            "mode": mode,
            "seed": seed,
            "samples": num_samples if mode == "sample" else None,
            "parameters": "hand-set (illustrative, not learned)" if score in PARAMETERS_OF_SCORE else "none",
        },
        extras=extras,
    )


def score_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("query", "key") record of stage 1, the raw scores score(q, k_j) [1, n]."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=np.asarray(record.extras["scores"], np.float32)[None, :],
        axes=("query", "key"), query_labels=record.query_labels, key_labels=record.key_labels,
        meta={**dict(record.meta), "shown": "scores before normalisation"},
    )


def context_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("point", "coordinate") record of stage 3: each value v_j [2] and c = Σ α_j v_j.

    Rows are the values (labelled by their keys) and a last row "c"; columns dim 1, dim 2
    and α (the weight each value gets; c's is the sum, 1). Values wider than 2 are cut to 2
    (the figure draws two).
    """
    values = np.asarray(record.extras["values"], np.float32)[:, :2]
    context = np.asarray(record.extras["context"], np.float32)[:2]
    alpha = np.asarray(record.weights[0], np.float32)
    table = np.concatenate([np.column_stack([values, alpha]), [[*context, alpha.sum()]]]).astype(np.float32)
    return AttentionRecord(
        mechanism=record.mechanism, weights=table, axes=("point", "coordinate"),
        query_labels=(*record.key_labels, "c = Σ αⱼ vⱼ"), key_labels=("dim 1", "dim 2", "α"),
        meta={**dict(record.meta), "shown": "values and their weighted sum"},
    )

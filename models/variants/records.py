"""The registry builders of the variants (models/registry_variants.py): the Playground's query, keys and
values (models/playground/records.py) in, one AttentionRecord of the variant's weights out.

The keys are tokens at positions 0 … n − 1 and the query sits at the last position, so a causal query sees
every key and a position scheme (RoPE, ALiBi, a window) acts on the distances n − 1 − j. Where a variant needs
more than one 2-D query (several heads, a latent, more rotary pairs), it is built from the same q, k and v by
fixed, hand-set projections (in this file, shown in meta): the weights still answer the user's input.
Temperature τ divides the scores (the query is divided by τ, as every score here is linear in it), except in
linear attention, whose kernel has no temperature.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models import attention as core
from models.playground.records import read_qkv, validate_qkv
from models.record import AttentionRecord, InputError
from models.text import N_, Notice
from models.variants import differential as diff
from models.variants import gated, heads, linear, normalisers, online, positions

ROPE_DIM = 16  # the rotary width: the 2-D query and keys are repeated over its 8 pairs, one frequency each
GATE_WEIGHTS = np.array([[1.0], [-1.0]], np.float32)  # [2, 1]: a query along dimension 1 opens the gate
LAMBDA_VECTORS = tuple(np.array([x], np.float32) for x in (0.3, 0.5, 0.2, 0.4))  # λ_q1, λ_k1, λ_q2, λ_k2 (d = 1)
MLA_SEED = 0  # the MLA example's projections: D = 4, H = 2, d = d_v = d_r = d_c = 2, d_cq = 4

# What a row of each variant's weights is: a distribution (sums to 1), at most 1, any non-negative numbers,
# or signed (differential attention's difference of two maps).
DISTRIBUTION, AT_MOST_ONE, UNNORMALISED, SIGNED = "distribution", "at most 1", "unnormalised", "signed"


@dataclass(frozen=True)
class Computed:
    """One variant's numbers: weights [*lead, 1, n] over axes, the scores before normalisation (same shape or
    None), the values each row mixes [*lead, n, d_v] (broadcast), and what the rows are."""

    weights: np.ndarray
    axes: tuple[str, ...]
    scores: np.ndarray | None
    values: np.ndarray
    rows: str = DISTRIBUTION
    context: np.ndarray | None = None  # an output that is not weights @ values (differential, gated)
    meta: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)


def _scaled(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.asarray(core.scaled_dot_scores(q[None, :], k), np.float32)  # [1, n]


def _softmax(scores, mask=None) -> np.ndarray:
    return np.asarray(core.masked_softmax(scores, mask), np.float32)


def head_mix(num: int) -> np.ndarray:
    """Returns [num, 2]: head h weighs the two features by √2 (cos θ_h, sin θ_h), θ_h = (π/2) h / (num − 1)
    (θ = π/4 for one head: the identity), so the heads read the features in different proportions."""
    angles = np.full(1, np.pi / 4) if num == 1 else (np.pi / 2) * np.arange(num) / (num - 1)
    return (math.sqrt(2.0) * np.stack([np.cos(angles), np.sin(angles)], axis=1)).astype(np.float32)


def _grouped(q, k, v, opts, kv_heads: int) -> Computed:
    num_heads = opts["num_heads"]
    if num_heads % kv_heads:
        raise InputError(
            Notice(
                N_("{kv} key/value heads do not divide {heads} query heads; choose a divisor"),
                kv=kv_heads,
                heads=num_heads,
            )
        )
    queries = (head_mix(num_heads) * q)[:, None, :]  # [H, 1, 2]
    keys = head_mix(kv_heads)[:, None, :] * k[None]  # [K, n, 2]
    values = np.broadcast_to(v, (kv_heads, *v.shape))
    _, weights = heads.grouped_query_attention(queries, keys, values)
    group = num_heads // kv_heads
    scores = np.asarray(core.scaled_dot_scores(queries, np.repeat(keys, group, axis=0)), np.float32)
    return Computed(
        np.asarray(weights),
        ("head", "query", "key"),
        scores,
        v,
        meta={"num_heads": num_heads, "kv_heads": kv_heads, "queries_per_kv_head": group},
        extras={"kv_bytes_per_token": heads.kv_cache_bytes(kv_heads, 2, v.shape[-1])},
    )


def mla_weights(seed: int = MLA_SEED) -> heads.LatentWeights:
    """Returns the MLA example's fixed projections (normal, seeded), scaled by 1/√(fan-in)."""
    rng = np.random.default_rng(seed)

    def draw(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)

    return heads.LatentWeights(
        w_dq=draw(4, 4),
        w_uq=draw(4, 2, 2),
        w_qr=draw(4, 2, 2),
        w_dkv=draw(4, 2),
        w_uk=draw(2, 2, 2),
        w_uv=draw(2, 2, 2),
        w_kr=draw(4, 2),
    )


def mla_tokens(q, k, v) -> tuple[np.ndarray, np.ndarray]:
    """Returns (query token [1, 4], key tokens [n, 4]): x_j = (k_j, v_j's first two numbers, 0-padded), x_q = (q, q)."""
    v2 = np.zeros((len(v), 2), np.float32)
    v2[:, : min(2, v.shape[1])] = v[:, :2]
    return np.concatenate([q, q])[None].astype(np.float32), np.concatenate([k, v2], axis=1).astype(np.float32)


def _mla(q, k, v, opts) -> Computed:
    w = mla_weights()
    x_q, x_kv = mla_tokens(q, k, v)
    n = len(k)
    inv_freq = positions.rope_inverse_frequencies(2)
    cache = heads.mla_cache(x_kv, w, positions.rope_tables(np.arange(n), inv_freq))
    query_rope = positions.rope_tables([n - 1], inv_freq)
    _, weights = heads.mla_attention(x_q, cache, w, query_rope)
    absorbed_out, absorbed = heads.mla_attention(x_q, cache, w, query_rope, absorbed=True)
    latent = np.asarray(cache[0])
    values = np.einsum("sc,chd->hsd", latent, np.asarray(w.w_uv))  # [H, n, d_v]
    return Computed(
        np.asarray(weights),
        ("head", "query", "key"),
        None,
        values,
        meta={
            "num_heads": 2,
            "latent_width": 2,
            "rope_width": 2,
            "model_width": 4,
            "tokens": "x_j = (k_j, v_j), x_q = (q, q); projections seeded, not learned",
            "absorbed_max_difference": float(np.max(np.abs(np.asarray(absorbed) - np.asarray(weights)))),
        },
        extras={
            "latent_cache": latent,
            "rope_keys": np.asarray(cache[1]),
            "absorbed_weights": np.asarray(absorbed),
            "absorbed_context": np.asarray(absorbed_out)[:, 0],
            "kv_bytes_per_token": heads.mla_cache_bytes(w),
            "mha_kv_bytes_per_token": heads.kv_cache_bytes(2, 2),
        },
    )


def _sliding(q, k, v, opts) -> Computed:
    n, window = len(k), opts["sliding_window"]
    mask = positions.sliding_window_mask([n - 1], np.arange(n), window)
    scores = _scaled(q, k)
    return Computed(_softmax(scores, mask), ("query", "key"), scores, v, meta={"sliding_window": window})


def _local_global(q, k, v, opts) -> Computed:
    n = len(k)
    windows = positions.layer_windows(opts["num_layers"], opts["sliding_window"], opts["local_per_global"])
    masks = np.stack([positions.sliding_window_mask([n - 1], np.arange(n), w) for w in windows])  # [L, 1, n]
    scores = np.broadcast_to(_scaled(q, k), masks.shape)
    return Computed(
        _softmax(scores, masks),
        ("layer", "query", "key"),
        np.array(scores),
        v,
        meta={"layer_windows": [w if w is not None else "global" for w in windows]},
    )


def _alibi(q, k, v, opts) -> Computed:
    n = len(k)
    slopes = positions.alibi_slopes(opts["num_heads"])
    scores = _scaled(q, k)[None] + positions.alibi_bias(slopes, [n - 1], np.arange(n))  # [H, 1, n]
    return Computed(_softmax(scores), ("head", "query", "key"), scores, v, extras={"slopes": slopes})


def rope_vectors(x: np.ndarray) -> np.ndarray:
    """Returns x [..., 2] repeated into the rotary width [..., ROPE_DIM]: every pair (x_i, x_{i+8}) is (x₁, x₂)."""
    half = ROPE_DIM // 2
    return np.concatenate([np.repeat(x[..., :1], half, -1), np.repeat(x[..., 1:2], half, -1)], axis=-1)


def _rope(fraction: float | None):
    def compute(q, k, v, opts) -> Computed:
        share = opts["rope_fraction"] if fraction is None else fraction
        n, inv_freq = len(k), positions.rope_inverse_frequencies(ROPE_DIM, opts["rope_base"], share)
        q_rot = np.asarray(positions.rotate(rope_vectors(q)[None], [n - 1], inv_freq))
        k_rot = np.asarray(positions.rotate(rope_vectors(k), np.arange(n), inv_freq))
        scores = np.asarray(core.scaled_dot_scores(q_rot, k_rot), np.float32)
        return Computed(
            _softmax(scores),
            ("query", "key"),
            scores,
            v,
            meta={"rope_fraction": share, "rope_base": opts["rope_base"], "rope_width": ROPE_DIM},
            extras={"inverse_frequencies": inv_freq},
        )

    return compute


def _sigmoid(q, k, v, opts) -> Computed:
    scores = _scaled(q, k)
    weights = np.asarray(normalisers.sigmoid_attention_weights(scores), np.float32)
    return Computed(weights, ("query", "key"), scores, v, rows=UNNORMALISED, meta={"bias": -math.log(len(k))})


def _sink(fixed: float | None):
    def compute(q, k, v, opts) -> Computed:
        sink = opts["sink_logit"] if fixed is None else fixed
        scores = _scaled(q, k)
        weights = np.asarray(normalisers.sink_softmax(scores, sink), np.float32)
        return Computed(
            weights,
            ("query", "key"),
            scores,
            v,
            rows=AT_MOST_ONE,
            meta={"sink_logit": sink},
            extras={"sink_weight": np.float32(1.0 - weights.sum())},
        )

    return compute


def _gated(q, k, v, opts) -> Computed:
    scores = _scaled(q, k)
    alpha = _softmax(scores)
    logit = gated.gate_logits(q[None], GATE_WEIGHTS, 1)  # [1, 1, 1]
    context = np.asarray(gated.gated_output(alpha @ v, logit))[0]  # [1, d_v]
    gate = float(1.0 / (1.0 + np.exp(-np.asarray(logit).item())))
    return Computed(
        gate * alpha,
        ("query", "key"),
        scores,
        v,
        rows=AT_MOST_ONE,
        context=context,
        meta={"gate": gate, "gate_weights": GATE_WEIGHTS[:, 0].tolist()},
        extras={"ungated_weights": alpha},
    )


def _differential(q, k, v, opts) -> Computed:
    layer = opts["diff_layer"]
    init = diff.lambda_init(layer)
    lam = float(diff.differential_lambda(*LAMBDA_VECTORS, init))
    out, weights = diff.differential_attention(q[None], k, v, lam, layer)
    first = _softmax(core.scaled_dot_scores(q[None, :1], k[:, :1]))
    second = _softmax(core.scaled_dot_scores(q[None, 1:], k[:, 1:]))
    return Computed(
        np.asarray(weights, np.float32),
        ("query", "key"),
        None,
        v,
        rows=SIGNED,
        context=np.asarray(out),
        meta={"lambda": lam, "lambda_init": init, "layer": layer},
        extras={"first_map": first, "second_map": second},
    )


def _linear(q, k, v, opts) -> Computed:
    _, weights = linear.linear_attention(q[None], k, v, causal=False)
    n = len(k)
    recurrent, _ = linear.linear_attention_recurrent(np.repeat(q[None], n, axis=0), k, v)
    return Computed(
        np.asarray(weights),
        ("query", "key"),
        None,
        v,
        meta={"temperature_used": False},
        extras={
            "recurrent_context": np.asarray(recurrent)[-1],
            "state_size": linear.linear_state_size(q.shape[-1], v.shape[-1]),
        },
    )


def _online(q, k, v, opts) -> Computed:
    block = opts["block_size"]
    out, lse = online.online_softmax_attention(q[None], k, v, block_size=block)
    scores = _scaled(q, k)
    weights = np.asarray(online.weights_from_lse(scores, lse), np.float32)
    naive = _softmax(scores)
    return Computed(
        weights,
        ("query", "key"),
        scores,
        v,
        context=np.asarray(out),
        meta={
            "block_size": block,
            "blocks": -(-len(k) // block),
            "naive_max_difference": float(np.max(np.abs(weights - naive))),
        },
        extras={"log_sum_exp": np.asarray(lse)},
    )


VARIANTS: Mapping[str, Callable[..., Computed]] = {
    "mha": lambda q, k, v, o: _grouped(q, k, v, o, o["num_heads"]),
    "mqa": lambda q, k, v, o: _grouped(q, k, v, o, 1),
    "gqa": lambda q, k, v, o: _grouped(q, k, v, o, o["kv_heads"]),
    "mla": _mla,
    "sliding-window": _sliding,
    "local-global": _local_global,
    "alibi": _alibi,
    "rope": _rope(1.0),
    "no-pe": _rope(0.0),
    "p-rope": _rope(None),
    "sigmoid": _sigmoid,
    "sink": _sink(None),
    "softmax1": _sink(0.0),
    "gated": _gated,
    "differential": _differential,
    "linear": _linear,
    "online-softmax": _online,
}
DEFAULTS: Mapping[str, Any] = {  # the variant options' defaults, for a request that leaves them out
    "num_heads": 4,
    "kv_heads": 2,
    "sliding_window": 3,
    "num_layers": 6,
    "local_per_global": 5,
    "rope_fraction": 0.75,
    "rope_base": positions.ROPE_BASE,
    "sink_logit": 1.0,
    "diff_layer": 1,
    "block_size": 2,
}


def variant_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one variant (mechanism.variant) on the Playground's input: weights [*lead, 1, n] over
    ("query", "key") with "head" or "layer" in front where the variant has several.

    options (checked by the registry): the Playground's query, keys, values, labels, temperature, mode, seed and
    samples, and the variant's own. mode argmax or sample applies where a row is a distribution.
    """
    raw_q, raw_k, raw_v, labels = read_qkv(options)
    q, k, v = validate_qkv(raw_q, raw_k, raw_v)
    opts = {**DEFAULTS, **{name: value for name, value in options.items() if value is not None}}
    temperature = float(opts.get("temperature", 1.0))
    scaled_q = q if mechanism.variant == "linear" else (q / max(temperature, core.MIN_TEMPERATURE)).astype(np.float32)
    computed = VARIANTS[mechanism.variant](scaled_q, k, v, opts)
    mode = opts.get("mode", "soft") if computed.rows == DISTRIBUTION else "soft"
    applied, samples = core.apply_mode(
        computed.weights, mode, seed=int(opts.get("seed", 0)), num_samples=int(opts.get("samples", 100))
    )
    context = computed.context if computed.context is not None and mode == "soft" else applied @ computed.values
    extras: dict[str, Any] = {
        "soft_weights": computed.weights,
        "context": np.asarray(context, np.float32)[..., 0, :],  # [*lead, d_v]
        "query": q,
        "keys": k,
        "values": v,
        **computed.extras,
    }
    if computed.scores is not None:
        extras["scores"] = np.asarray(computed.scores, np.float32).reshape(computed.weights.shape)
    if samples is not None:
        extras["samples"] = samples
    return AttentionRecord(
        mechanism=mechanism.id,
        weights=applied,
        axes=computed.axes,
        query_labels=("query",),
        key_labels=labels,
        meta={
            "variant": mechanism.variant,
            "temperature": temperature,
            "mode": mode,
            "rows": computed.rows,
            "positions": "keys at 0 … n − 1, the query at n − 1",
            **computed.meta,
        },
        extras=extras,
    )


def stacked_rows(record: AttentionRecord) -> AttentionRecord:
    """Returns a variant's record as one ("query", "key") map: its [*lead, 1, n] weights as rows [lead, n]
    labelled "head 0", "layer 1", … (a one-row record is returned as it is), so one heatmap shows every head."""
    if record.weights.ndim == 2:
        return record
    axis = record.axes[0]
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=record.weights[:, 0, :],
        axes=("query", "key"),
        query_labels=tuple(f"{axis} {i}" for i in range(record.weights.shape[0])),
        key_labels=record.key_labels,
        meta={**dict(record.meta), "rows_are": axis},
        extras=dict(record.extras),
    )

"""The one forward of Hugging Face translation models (Marian, T5, BART, mBART): one code path whose
differences are read from ``Arch`` (models/translation/config.py), as models/lm/forward.py reads one
per-architecture description for the decoder families.

``encode`` runs the encoder; ``decode`` runs a whole target (teacher forcing) or one greedy step with the
self-attention KV cache as an argument: the same code. What to keep and what to change are the date model's
``KindCapture`` and ``KindInterventions`` (models/encdec/forward.py: models/capture.py's Capture and
Interventions per attention kind), and the step after the softmax is models/capture.py's ``heads_output``, so
every view of the date model can read these models too. A "scores" capture is the logits before the softmax:
q·k (scaled by 1/√d except in T5) plus T5's relative position bias.

Shapes: B batch, S source tokens (padded), T target positions of this call, U keys of the decoder's
self-attention (T without a cache, the cache's length with one), D width, H heads, d head width, V vocabulary.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from models import attention as core
from models.capture import CAPTURED, Capture, Interventions, heads_output, keep_values, sow_attention
from models.encdec.forward import MAPS, KindCapture, KindInterventions
from models.translation.config import Arch, Generation

__all__ = ["MAPS", "KindCapture", "KindInterventions", "decode", "encode", "greedy", "teacher_forced"]

_ACTIVATIONS = {
    "relu": jax.nn.relu,
    "gelu": partial(jax.nn.gelu, approximate=False),
    "gelu_new": jax.nn.gelu,
    "gelu_pytorch_tanh": jax.nn.gelu,
    "silu": jax.nn.silu,
    "swish": jax.nn.silu,
    "tanh": jnp.tanh,
}


def sinusoidal_table(length: int, width: int, *, interleaved: bool = False) -> np.ndarray:
    """Returns sinusoidal positions float32 [length, width] of angles p / 10000^(2i/D): Marian's layout puts the
    sines in the first half of the features and the cosines in the second; interleaved (Vaswani et al. §3.5,
    the date model) puts sin at feature 2i and cos at 2i + 1."""
    half = (width + 1) // 2
    rates = np.power(10000.0, 2 * np.arange(half) / width)
    angles = np.arange(length)[:, None] / rates[None, :]
    if interleaved:
        table = np.zeros((length, width))
        table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles[:, : width // 2])
        return table.astype(np.float32)
    return np.concatenate([np.sin(angles), np.cos(angles[:, : width // 2])], axis=1).astype(np.float32)


def relative_buckets(relative, *, bidirectional: bool, buckets: int, max_distance: int):
    """Returns T5's bucket of each relative position (key − query), int [..]: exact buckets for small
    distances, logarithmic ones up to max_distance; bidirectional: half the buckets for keys after the query."""
    out = jnp.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        out = out + (relative > 0).astype(relative.dtype) * buckets
        distance = jnp.abs(relative)
    else:
        distance = -jnp.minimum(relative, 0)
    exact = buckets // 2
    safe = jnp.maximum(distance, 1).astype(jnp.float32)
    large = exact + (jnp.log(safe / exact) / math.log(max_distance / exact) * (buckets - exact)).astype(relative.dtype)
    return out + jnp.where(distance < exact, distance, jnp.minimum(large, buckets - 1))


def _position_bias(arch: Arch, table, queries, keys, *, bidirectional: bool):
    # T5: the first layer's bias [1, H, T, U] of query positions `queries` [T] and key positions `keys` [U].
    bucket = relative_buckets(
        keys[None, :] - queries[:, None],
        bidirectional=bidirectional,
        buckets=arch.buckets,
        max_distance=arch.max_distance,
    )
    return jnp.transpose(table[bucket], (2, 0, 1))[None]


def _norm(arch: Arch, p: dict, x):
    if arch.norm == "rms":
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + arch.eps) * p["w"]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + arch.eps) * p["w"] + p["b"]


def _linear(p: dict, x):
    out = x @ p["w"]
    return out + p["b"] if "b" in p else out


def _split(x, heads: int):
    b, t, width = x.shape  # [B, T, H·d] -> [B, H, T, d]
    return jnp.transpose(x.reshape(b, t, heads, width // heads), (0, 2, 1, 3))


def attention(
    arch: Arch,
    p: dict,
    heads: int,
    x,
    source,
    visible,
    bias,
    *,
    index: int,
    change: Interventions,
    capture: Capture,
    sown: dict,
    cache=None,
    start=0,
):
    """Returns (output [B, T, D], the cache (k, v) or None) of one multi-head attention.

    x [B, T, D] the queries' stream; source [B, U, D] the keys' (x for self-attention, the memory for
    cross-attention); visible bool broadcastable to [B, H, T, U]; bias [1, H, T, U] or None (T5's positions);
    cache (k, v) [B, H, U, d]: this call's keys and values are written at start.. and the queries read it all.
    """
    q, k, v = (_split(_linear(p[name], y), heads) for name, y in (("q", x), ("k", source), ("v", source)))
    if cache is not None:
        k = jax.lax.dynamic_update_slice(cache[0], k, (0, 0, start, 0))
        v = jax.lax.dynamic_update_slice(cache[1], v, (0, 0, start, 0))
        cache = (k, v)
    v = keep_values(v, change, index)
    scores = core.dot_scores(q, k) * (q.shape[-1] ** -0.5 if arch.scaled else 1.0)
    if bias is not None:
        scores = scores + bias
    probs, context = heads_output(core.masked_softmax(scores, visible), v, change, index)
    sow_attention(capture, sown, index, probs, q, k, v, scores, context)
    b, _, t, _ = context.shape
    return _linear(p["o"], jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, -1)), cache


def _feed_forward(arch: Arch, p: dict, x):
    hidden = _ACTIVATIONS[arch.activation](_linear(p["in"], x))
    if arch.gated:
        hidden = hidden * _linear(p["gate"], x)
    return _linear(p["out"], hidden)


def _sublayer(arch: Arch, norm: dict, x, f):
    # pre-norm: x + f(norm(x)); post-norm: norm(x + f(x)).
    return x + f(_norm(arch, norm, x)) if arch.pre_norm else _norm(arch, norm, x + f(x))


def _embed(arch: Arch, params: dict, stack: str, ids, positions):
    x = params[f"{stack}_embed"][ids] * arch.embed_scale
    if arch.positions in ("sinusoidal", "interleaved"):
        table = sinusoidal_table(arch.max_positions, arch.width, interleaved=arch.positions == "interleaved")
        x = x + jnp.asarray(table)[positions]
    elif arch.positions == "learned":
        x = x + params[f"{stack}_pos"][positions + arch.position_offset]
    return _norm(arch, params[f"{stack}_embed_norm"], x) if arch.embed_norm else x


def _captures(capture: Capture, sown: dict, rows: list) -> dict[str, Any]:
    out = {name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)}
    if capture.residual:
        out["residual"] = jnp.stack(rows)
    return out


def encode(
    arch: Arch,
    params: dict,
    src_ids,
    src_len,
    *,
    capture: KindCapture = KindCapture(),
    change: KindInterventions = KindInterventions(),
) -> dict[str, Any]:
    """Returns {"memory": [B, S, D], "encoder": capture.encoder's captures ("residual": [L + 1, B, S, D], the
    stream entering each layer and after the last, before any final norm)}.  src_ids int [B, S]; src_len int [B]."""
    s = src_ids.shape[1]
    positions = jnp.arange(s)
    x = _embed(arch, params, "enc", src_ids, positions)
    visible = (positions[None, :] < src_len[:, None])[:, None, None, :]
    bias = (
        _position_bias(arch, params["enc_rel"], positions, positions, bidirectional=True)
        if arch.positions == "relative"
        else None
    )
    own = change.encoder or Interventions()
    sown, rows = {name: [] for name in CAPTURED}, [x]
    for index, layer in enumerate(params["encoder"]):

        def self_attention(y, layer=layer, index=index):
            return attention(
                arch,
                layer["self"],
                arch.encoder_heads,
                y,
                y,
                visible,
                bias,
                index=index,
                change=own,
                capture=capture.encoder,
                sown=sown,
            )[0]

        x = _sublayer(arch, layer["norm_self"], x, self_attention)
        x = _sublayer(arch, layer["norm_ffn"], x, partial(_feed_forward, arch, layer["ffn"]))
        rows.append(x)
    memory = _norm(arch, params["enc_final"], x) if arch.final_norm else x
    return {"memory": memory, "encoder": _captures(capture.encoder, sown, rows)}


def empty_cache(arch: Arch, batch: int, length: int):
    """Returns a decoder self-attention KV cache of zeros: per layer (k, v), each [B, H, length, d]."""
    zeros = jnp.zeros((batch, arch.decoder_heads, length, arch.decoder_head_dim), jnp.float32)
    return tuple((zeros, zeros) for _ in range(arch.decoder_layers))


def decode(
    arch: Arch,
    params: dict,
    tgt_ids,
    memory,
    src_len,
    *,
    start=0,
    cache=None,
    capture: KindCapture = KindCapture(),
    change: KindInterventions = KindInterventions(),
) -> dict[str, Any]:
    """Returns {"logits": [B, T, V] if capture.decoder.logits, "decoder": the self-attention captures ("residual":
    [L + 1, B, T, D]), "cross": the cross-attention captures, "cache" when one was given}.

    tgt_ids int [B, T] at positions start..start+T-1: the start token, then the target tokens so far.
    memory [B, S, D] from encode; src_len int [B]; cache: per layer (k, v) [B, H, U, d] (empty_cache).
    """
    t = tgt_ids.shape[1]
    positions = start + jnp.arange(t)
    y = _embed(arch, params, "dec", tgt_ids, positions)
    key_positions = positions if cache is None else jnp.arange(cache[0][0].shape[2])
    causal = (key_positions[None, :] <= positions[:, None])[None, None]  # [1, 1, T, U]
    memory_mask = (jnp.arange(memory.shape[1])[None, :] < src_len[:, None])[:, None, None, :]
    bias = (
        _position_bias(arch, params["dec_rel"], positions, key_positions, bidirectional=False)
        if arch.positions == "relative"
        else None
    )
    own, cross = change.decoder or Interventions(), change.cross or Interventions()
    sown, sown_cross, rows, caches = {n: [] for n in CAPTURED}, {n: [] for n in CAPTURED}, [y], []
    heads = arch.decoder_heads
    for index, layer in enumerate(params["decoder"]):
        layer_cache = [None]

        def self_attention(x, layer=layer, index=index, layer_cache=layer_cache):
            out, layer_cache[0] = attention(
                arch,
                layer["self"],
                heads,
                x,
                x,
                causal,
                bias,
                index=index,
                change=own,
                capture=capture.decoder,
                sown=sown,
                start=start,
                cache=None if cache is None else cache[index],
            )
            return out

        def cross_attention(x, layer=layer, index=index):
            return attention(
                arch,
                layer["cross"],
                heads,
                x,
                memory,
                memory_mask,
                None,
                index=index,
                change=cross,
                capture=capture.cross,
                sown=sown_cross,
            )[0]

        y = _sublayer(arch, layer["norm_self"], y, self_attention)
        y = _sublayer(arch, layer["norm_cross"], y, cross_attention)
        y = _sublayer(arch, layer["norm_ffn"], y, partial(_feed_forward, arch, layer["ffn"]))
        rows.append(y)
        caches.append(layer_cache[0])
    result: dict[str, Any] = {
        "decoder": _captures(capture.decoder, sown, rows),
        "cross": _captures(capture.cross, sown_cross, []),
    }
    if capture.decoder.logits:
        out = _norm(arch, params["dec_final"], y) if arch.final_norm else y
        result["logits"] = (out * arch.output_scale) @ params["lm_head"].T + params["logits_bias"]
    if cache is not None:
        result["cache"] = tuple(caches)
    return result


# ----------------------------------------------------------------------------- the jitted entries


@partial(jax.jit, static_argnames=("arch", "capture"))
def teacher_forced(
    arch: Arch,
    params: dict,
    src_ids,
    src_len,
    tgt_in,
    *,
    capture: KindCapture = MAPS,
    change: KindInterventions = KindInterventions(),
) -> dict[str, Any]:
    """Returns decode's dict and "encoder" (encode's captures) of one teacher-forced pass.

    src_ids int [B, S] (padded), src_len int [B], tgt_in int [B, T]: the start token, then the target shifted right.
    """
    encoded = encode(arch, params, src_ids, src_len, capture=capture, change=change)
    return {
        **decode(arch, params, tgt_in, encoded["memory"], src_len, capture=capture, change=change),
        "encoder": encoded["encoder"],
    }


@partial(jax.jit, static_argnames=("arch", "rules", "steps"))
def greedy(arch: Arch, params: dict, src_ids, src_len, *, rules: Generation, steps: int):
    """Returns the greedy output int32 [B, steps] as transformers' generate writes it with num_beams=1: one
    cached decoder step per token, each reading the start token or the token chosen before it; banned tokens
    are never chosen, no end token comes before min_length, forced_bos is written first and forced_eos last.
    What follows an end token is not cut here.
    """
    memory = encode(arch, params, src_ids, src_len, capture=KindCapture())["memory"]
    batch = src_ids.shape[0]
    banned = np.zeros(arch.vocab_size, bool)
    banned[list(rules.banned)] = True

    def step(carry, position):
        token, cache = carry
        out = decode(arch, params, token[:, None], memory, src_len, start=position, cache=cache)
        logits = jnp.where(jnp.asarray(banned), -jnp.inf, out["logits"][:, 0])
        if rules.min_length > 1:  # transformers counts the start token in the length
            early = np.zeros(arch.vocab_size, bool)
            early[list(rules.eos_ids)] = True
            logits = jnp.where(jnp.asarray(early) & (position + 1 < rules.min_length), -jnp.inf, logits)
        chosen = jnp.argmax(logits, -1).astype(jnp.int32)
        if rules.forced_bos >= 0:
            chosen = jnp.where(position == 0, rules.forced_bos, chosen)
        if rules.forced_eos >= 0:
            chosen = jnp.where(position == steps - 1, rules.forced_eos, chosen)
        return (chosen, out["cache"]), chosen

    first = (jnp.full((batch,), arch.decoder_start_id, jnp.int32), empty_cache(arch, batch, steps))
    return jax.lax.scan(step, first, jnp.arange(steps))[1].T

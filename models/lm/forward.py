"""The one forward of a decoder LM: every view (the maps, generation, the logit lens, knock-out, the neuron
view, sinks) is a call of ``decoder`` with what to capture and what to change.

After flax's gemma ``Transformer.__call__(tokens, positions, cache, attention_mask)`` and nnx ``sow``: a plain
forward, a prefill and one decode step are the same code (the KV cache is an argument), and an intermediate
is handed back only when a ``Capture`` asks for it, so the plain path computes nothing more. The rules of the
model (norms, q/k norm, RoPE or learned positions, the scale, soft-capping, sliding window and RoPE base of each
layer, the unembedding) live in models/lm/layers.py and are applied here once; where the norms sit (before a
sublayer, after it, or both) and whether attention and MLP read the same input (GPT-NeoX's parallel residual)
is the config's (cfg.arch.norms, cfg.parallel_residual). ``Interventions`` change the forward as
Penzai's knock-out layer does, after the softmax: a head mask (modes "zero" and "first"), attention weights
put in place of a layer's own, value vectors scaled per key.

Shapes: B batch, S query tokens of this call, T key tokens (S without a cache, the cache's length with
one), D hidden, H query heads, K key/value heads, G = H / K, d head_dim, V vocabulary, L layers.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.capture import CAPTURED, PLAIN, Capture, Interventions, heads_output, keep_values, sow_attention
from models.lm.layers import (
    apply_rope,
    attention_scale,
    dense,
    feed_forward,
    layer_window,
    local_rope,
    normalize,
    rope_tables,
    softcap,
    visible_keys,
)
from models.padding import bucket

# Length buckets: every input is padded up to one of these (masked), so a page compiles a few times.
LENGTH_BUCKETS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
VOCABULARY_BLOCK = 512  # tokens unembed_scores unembeds at once: their logits stay in cache


def empty_cache(cfg, batch: int, length: int):
    """Returns a KV cache of zeros: per layer (k, v), each [B, K, length, d]."""
    zeros = jnp.zeros((batch, cfg.num_kv_heads, length, cfg.head_dim), jnp.float32)
    return tuple((zeros, zeros) for _ in range(cfg.num_layers))


def embed(model, ids, positions):
    """Returns x [B, S, D]: token embeddings (Gemma: times √D) (+ learned positions). ids int32 [B, S]; positions
    int [S]."""
    cfg = model.config
    x = model.embed[...][ids]
    if cfg.arch.embed_scale:
        x = x * jnp.float32(math.sqrt(cfg.hidden_size))
    if cfg.arch.positions == "learned":
        # A length bucket may pass the table's end; only padding sits there (texts are cut to fit).
        x = x + model.positions[...][jnp.minimum(positions, cfg.max_positions - 1)][None]
    return x


def unembed(model, x):
    """Returns logits [..., V] of residual vectors x [..., D]: the final norm, then the LM head (then Gemma 2's
    soft-capping)."""
    cfg = model.config
    x = normalize(model.final_norm, x, cfg.norm_eps)
    head = model.embed[...].T if cfg.tie_word_embeddings else model.lm_head.kernel[...]
    return softcap(jnp.matmul(x, head), cfg.final_softcap)


def unembed_scores(model, x, picks, block: int = VOCABULARY_BLOCK):
    """Returns (logsumexp over the vocabulary [R], the logits of the token ids picks [R, P]) of residual vectors
    x [R, D]: unembed's numbers where only they are read, without the logits [R, V] written out.

    The vocabulary is unembedded `block` tokens at a time with a running logsumexp, so memory holds R × block
    floats and each block's logits are read while they are still in cache.
    """
    cfg = model.config
    x = normalize(model.final_norm, x, cfg.norm_eps)
    tied = cfg.tie_word_embeddings
    weights = model.embed[...] if tied else model.lm_head.kernel[...]  # [V, D] tied, [D, V] not

    def logits(start, size):  # -> [R, size]: the vocabulary's tokens start..start+size-1
        part = jax.lax.dynamic_slice_in_dim(weights, start, size, axis=0 if tied else 1)
        return softcap(jnp.matmul(x, part.T if tied else part), cfg.final_softcap)

    def add(carry, z, start):
        top, total, picked = carry
        new_top = jnp.maximum(top, jnp.max(z, axis=-1))
        total = total * jnp.exp(top - new_top) + jnp.sum(jnp.exp(z - new_top[:, None]), axis=-1)
        inside = (picks >= start) & (picks < start + z.shape[1])
        found = jnp.take_along_axis(z, jnp.clip(picks - start, 0, z.shape[1] - 1), axis=-1)
        return new_top, total, jnp.where(inside, found, picked)

    vocab = cfg.vocab_size
    block = min(block, vocab)
    whole = vocab // block
    carry = (jnp.full(x.shape[:1], -jnp.inf), jnp.zeros(x.shape[:1]), jnp.zeros(picks.shape))
    carry, _ = jax.lax.scan(lambda c, start: (add(c, logits(start, block), start), None), carry,
                            jnp.arange(whole, dtype=jnp.int32) * block)
    if vocab > whole * block:  # the last, shorter block
        carry = add(carry, logits(whole * block, vocab - whole * block), whole * block)
    top, total, picked = carry
    return top + jnp.log(total), picked


def next_token_loss(logits, ids):
    """Returns -log p(ids[:, s + 1]) at each position [B, S] (0 at the last) of logits [B, S, V]."""
    log_probs = jax.nn.log_softmax(logits[:, :-1], axis=-1)
    picked = jnp.take_along_axis(log_probs, ids[:, 1:, None], axis=-1)[..., 0]
    return jnp.pad(-picked, ((0, 0), (0, 1)))


def _split_heads(x, heads: int, head_dim: int):
    # [B, S, heads·d] -> [B, heads, S, d]
    return jnp.transpose(x.reshape(x.shape[0], x.shape[1], heads, head_dim), (0, 2, 1, 3))


def attention(layer, cfg, index: int, x, rope, visible, *, cache=None, start=0, change: Interventions = Interventions(),
              capture: Capture = PLAIN, sown: dict | None = None):
    """Returns (output [B, S, D], the layer's cache (k, v) or None) of one layer's attention.

    x [B, S, D] (already normalised); rope (cos, sin) [S, r] or None (r = cfg.rope_dim); visible bool
    [B|1, 1, 1, S, T]; cache (k, v) [B, K, T, d]: this call's keys and values are written at start..start+S-1 and the queries
    read the whole cache. change: the Interventions, read at layer `index` (models/capture.py heads_output).
    Grouped-query attention without copying keys: q is viewed as
    [B, K, G, S, d] against k [B, K, 1, d, T] (head h reads key/value head h // G, as Hugging Face's
    repeat_kv). sown: captures asked for this layer are appended to its lists.
    """
    b, s, _ = x.shape
    h, kv, hd, g = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim, cfg.queries_per_kv
    q, k = dense(layer.q, x), dense(layer.k, x)
    if cfg.qk_norm == "all":  # OLMo 2: over the whole projection, before it is cut into heads
        q, k = normalize(layer.q_norm, q, cfg.norm_eps), normalize(layer.k_norm, k, cfg.norm_eps)
    q, k = q.reshape(b, s, h, hd), k.reshape(b, s, kv, hd)
    if cfg.qk_norm == "head":
        q, k = normalize(layer.q_norm, q, cfg.norm_eps), normalize(layer.k_norm, k, cfg.norm_eps)
    q, k = jnp.transpose(q, (0, 2, 1, 3)), jnp.transpose(k, (0, 2, 1, 3))  # [B, heads, S, d]
    v = _split_heads(dense(layer.v, x), kv, hd)
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    if cache is not None:
        k = jax.lax.dynamic_update_slice(cache[0], k, (0, 0, start, 0))
        v = jax.lax.dynamic_update_slice(cache[1], v, (0, 0, start, 0))
        cache = (k, v)
    v = keep_values(v, change, index)
    t = k.shape[2]
    scores = jnp.matmul(q.reshape(b, kv, g, s, hd), jnp.swapaxes(k, -1, -2)[:, :, None]) \
        * jnp.float32(attention_scale(cfg, index))  # [B, K, G, S, T]
    capped = softcap(scores, cfg.attn_softcap)  # Gemma 2: cap · tanh(scores / cap); "scores" captures them before
    masked = jnp.where(visible, capped, jnp.finfo(jnp.float32).min)
    exp = jnp.exp(masked - jnp.max(masked, axis=-1, keepdims=True))  # hidden keys: exp underflows to exactly 0
    probs, context = heads_output(exp * (1.0 / jnp.sum(exp, axis=-1, keepdims=True)), v[:, :, None], change, index)
    context = context.reshape(b, h, s, hd)  # [B, K, G, S, d] -> [B, H, S, d]
    if sown is not None:
        sow_attention(capture, sown, index, probs.reshape(b, h, s, t), q, k, v, scores.reshape(b, h, s, t), context)
    return project_heads(layer, context), cache


def project_heads(layer, context):
    """Returns the attention output [B, S, D] of every head's output context [B, H, S, d] (the output projection)."""
    b, h, s, hd = context.shape
    return dense(layer.o, jnp.transpose(context, (0, 2, 1, 3)).reshape(b, s, h * hd))


def decoder(model, ids, *, key_mask=None, start=0, cache=None, capture: Capture = PLAIN,
            interventions: Interventions | None = None, stream=None, first_layer: int = 0) -> dict[str, Any]:
    """Returns the forward's outputs as a dict: "final" (the stream after the last block [B, S, D]) and what
    capture asks for ("logits" or "loss", CAPTURED names as tuples over layers, "residual"), and "cache"
    when a cache was given.

    ids int32 [B, S] at positions start..start+S-1 (start: int or traced). key_mask bool [B, S], True for
    real tokens (padding at the end), or None. cache: per layer (k, v) [B, K, T, d] (empty_cache), written
    at this call's positions. stream [B, S, D]: the residual stream entering layer first_layer (the
    embedding and the layers before are skipped; a cache is not supported then).
    """
    cfg = model.config
    s = ids.shape[1]
    positions = start + jnp.arange(s, dtype=jnp.int32)
    x = embed(model, ids, positions) if stream is None else stream
    ropes = {False: rope_tables(cfg, positions)}  # the global tables, and Gemma 3's local ones where they differ
    if cfg.local_rope_theta is not None:
        ropes[True] = rope_tables(cfg, positions, local=True)
    key_positions = positions if cache is None else jnp.arange(cache[0][0].shape[2], dtype=jnp.int32)
    iv = interventions if interventions is not None else Interventions()
    masks: dict[int | None, Any] = {}
    sown = {name: [] for name in CAPTURED}
    rows, caches = [x], []
    for index in range(first_layer, cfg.num_layers):
        layer = model.layers[index]
        window = layer_window(cfg, index)
        if window not in masks:  # one mask per distinct rule, shared by the layers that follow it
            allowed = visible_keys(cfg, index, positions, key_positions)[None]
            masks[window] = (allowed if key_mask is None else allowed & key_mask[:, None, :])[:, None, None]
        out, layer_cache = attention(
            layer, cfg, index, _pre_norm(layer, "attn_norm", x, cfg), ropes[local_rope(cfg, index)], masks[window],
            cache=None if cache is None else cache[index], start=start, change=iv, capture=capture, sown=sown)
        out = _post_norm(layer, "post_attn_norm", out, cfg)
        if cfg.parallel_residual:  # GPT-NeoX: both sublayers read the block's input
            x = (_mlp(layer, cfg, x) + out) + x
        else:
            x = x + out
            if cfg.intermediate_size:  # 0: an attention-only model (the induction model)
                x = x + _mlp(layer, cfg, x)
        rows.append(x)
        caches.append(layer_cache)
    result: dict[str, Any] = {"final": x}
    if capture.logits:
        logits = unembed(model, x)
        result["loss" if capture.logits == "loss" else "logits"] = (
            next_token_loss(logits, ids) if capture.logits == "loss" else logits)
    result.update({name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)})
    if capture.residual:
        result["residual"] = jnp.stack(rows)
    if cache is not None:
        result["cache"] = tuple(caches)
    return result


def _pre_norm(layer, name: str, x, cfg):
    # The norm before a sublayer; OLMo 2 has none.
    return x if cfg.arch.norms == "post" else normalize(getattr(layer, name), x, cfg.norm_eps)


def _post_norm(layer, name: str, y, cfg):
    # The norm of a sublayer's output before it joins the stream (Gemma, OLMo 2).
    return y if cfg.arch.norms == "pre" else normalize(getattr(layer, name), y, cfg.norm_eps)


def _mlp(layer, cfg, x):
    """Returns what the feed-forward sublayer adds to the stream x [B, S, D]."""
    return _post_norm(layer, "post_mlp_norm", feed_forward(layer, cfg, _pre_norm(layer, "mlp_norm", x, cfg)), cfg)


def decoder_forward(model, ids, key_mask, *, logits: bool | str = True, attention: bool | tuple[int, ...] = True,
                    stack: bool = True):
    """Returns (logits [B, T, V] (or "loss": [B, T]) or None, attention [L', B, H, T, T] or None) of decoder.

    stack=False: the maps as a tuple of L' arrays [B, H, T, T] (no copy into one array inside the computation).
    """
    out = decoder(model, ids, key_mask=key_mask, capture=Capture(logits=logits, maps=attention))
    maps = out.get("maps") or None
    if maps is not None and stack:
        maps = jnp.stack(maps)
    return out.get("loss", out.get("logits")), maps


# ----------------------------------------------------------------------------- the jitted entries


@functools.partial(jax.jit, static_argnames=("graphdef", "logits", "attention"))
def forward(state, ids, key_mask, *, graphdef, logits: bool | str = True, attention: bool | tuple[int, ...] = True):
    """Returns decoder_forward's (logits, attention as a tuple of L' maps [B, H, T, T]) of nnx.merge(graphdef, state).

    A pure function of arrays, jitted once per (graphdef, shape): split the module once with nnx.split and
    pass the state; the merge happens while tracing only. The maps stay one buffer per layer, as XLA computed
    them: callers cut the padding off while copying them into one array (run).
    """
    return decoder_forward(nnx.merge(graphdef, state), ids, key_mask, logits=logits, attention=attention, stack=False)


@functools.partial(jax.jit, static_argnames=("graphdef", "capture"))
def captured(state, ids, key_mask, *, graphdef, capture: Capture):
    """Returns decoder's dict (without "final") of ids int32 [B, T] and key_mask bool [B, T]: jitted once per
    (graphdef, capture, shape)."""
    out = decoder(nnx.merge(graphdef, state), ids, key_mask=key_mask, capture=capture)
    del out["final"]
    return out


def pad_ids(ids: np.ndarray, buckets=LENGTH_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Returns (ids int32 [B, T'], key_mask bool [B, T']) padded with zeros up to a length bucket.

    ids int [B, T]. numpy only: a jnp op on a new shape would compile.
    """
    ids = np.asarray(ids, dtype=np.int32)
    b, t = ids.shape
    padded = bucket(t, buckets)
    out = np.zeros((b, padded), np.int32)
    out[:, :t] = ids
    mask = np.zeros((b, padded), bool)
    mask[:, :t] = True
    return out, mask


def run(graphdef, state, ids: np.ndarray, *, logits: bool | str = True, attention: bool | tuple[int, ...] = True,
        buckets=LENGTH_BUCKETS):
    """Returns numpy (logits [B, T, V] or None, attention [L', B, H, T, T] or None) of token ids [B, T].

    The ids are padded to a length bucket and the outputs cut back to T; attention as in decoder_forward.
    """
    t = np.shape(ids)[1]
    padded, mask = pad_ids(ids, buckets)
    out_logits, maps = forward(state, padded, mask, graphdef=graphdef, logits=logits, attention=attention)
    out_logits = None if out_logits is None else np.asarray(out_logits)[:, :t]
    if maps is None:
        return out_logits, None
    stacked = np.empty((len(maps), padded.shape[0], maps[0].shape[1], t, t), np.float32)
    for index, layer in enumerate(maps):
        stacked[index] = np.asarray(layer)[:, :, :t, :t]
    return out_logits, stacked

"""The one forward of the Transformer encoder–decoder: every view (the three attention records, the decoding
steps, rollout, the quality measure, training's loss) is a call of ``encode`` and ``decode`` with what to
capture and what to change.

After models/lm/forward.py and flax's gemma ``__call__``: ``decode`` runs a whole target (teacher forcing) or
one step of greedy decoding with the self-attention KV cache as an argument; it is the same code. What to keep
and what to change are models/capture.py's ``Capture`` and ``Interventions``, one of each per attention kind
(``KindCapture``, ``KindInterventions``). Interventions act after the softmax, as Penzai's knock-out layer: a
head mask (modes "zero" and "first": all on the first key, for cross-attention the first source character),
attention weights put in place of a layer's own, value vectors scaled per key.

Shapes: B batch, S source characters (padded), T target positions of this call, U keys of the decoder's
self-attention (T without a cache, the cache's length with one), D width, H heads, d = D / H, V target
vocabulary, L layers of one stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx, struct

from models import attention as core
from models.capture import CAPTURED, PLAIN, Capture, Interventions, heads_output, keep_values, sow_attention
from models.encdec.model import BOS_ID, EncDec, FeedForward, MultiHead, sinusoidal_positions

NONE = Capture(logits=False)


@dataclass(frozen=True)
class KindCapture:
    """What the forward hands back, per attention kind (static: one compile per choice).

    encoder: the encoder's self-attention captures and its residual stream; decoder: the decoder's masked
    self-attention captures, the logits and the decoder's residual stream; cross: the cross-attention captures
    (its per-layer fields only). Per-layer captures have Capture's shapes, with the keys (and values) of a
    cross-attention being the S source characters.
    """

    encoder: Capture = NONE
    decoder: Capture = PLAIN
    cross: Capture = NONE


@struct.dataclass
class KindInterventions:
    """What the forward changes, per attention kind: Interventions or None. Cross-attention's value_keep is
    [B, S] (one factor per source character)."""

    encoder: Any = None
    decoder: Any = None
    cross: Any = None


MAPS = KindCapture(encoder=Capture(logits=False, maps=True), decoder=Capture(logits=False, maps=True),
                   cross=Capture(logits=False, maps=True))  # the three records' maps


def _split_heads(x, heads: int):
    # [B, T, H·d] -> [B, H, T, d]
    b, t, width = x.shape
    return jnp.transpose(x.reshape(b, t, heads, width // heads), (0, 2, 1, 3))


def attention(block: MultiHead, heads: int, x, source, visible, *, index: int, cache=None, start=0,
              change: Interventions, capture: Capture, sown: dict):
    """Returns (output [B, T, D], the cache (k, v) or None) of one multi-head attention.

    x [B, T, D]: the queries' stream (normalised); source [B, U, D]: the keys' and values' stream (x itself for
    self-attention, the memory [B, S, D] for cross-attention); visible bool broadcastable to [B, H, T, U];
    cache (k, v) [B, H, U, d]: this call's keys and values are written at start..start+T-1 and the queries read
    the whole cache. change: this kind's Interventions, read at layer `index`; the captures asked for this layer
    are appended to sown's lists.
    """
    q = _split_heads(x @ block.w_q[...] + block.b_q[...], heads)
    k = _split_heads(source @ block.w_k[...] + block.b_k[...], heads)
    v = _split_heads(source @ block.w_v[...] + block.b_v[...], heads)
    if cache is not None:
        k = jax.lax.dynamic_update_slice(cache[0], k, (0, 0, start, 0))
        v = jax.lax.dynamic_update_slice(cache[1], v, (0, 0, start, 0))
        cache = (k, v)
    v = keep_values(v, change, index)
    scores = core.scaled_dot_scores(q, k)  # [B, H, T, U]
    probs, context = heads_output(core.masked_softmax(scores, visible), v, change, index)  # hidden keys: α = 0
    sow_attention(capture, sown, index, probs, q, k, v, scores, context)
    b, _, t, _ = context.shape
    merged = jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, -1)
    return merged @ block.w_o[...] + block.b_o[...], cache


def feed_forward(block: FeedForward, x):
    """Returns ReLU(x W_1 + b_1) W_2 + b_2.  x [B, T, D]."""
    return jax.nn.relu(x @ block.w_1[...] + block.b_1[...]) @ block.w_2[...] + block.b_2[...]


def embed(table, ids, encoding):
    """Returns table[ids]·√D + encoding.  table [V, D], ids int [B, T], encoding [T, D] (the positions')."""
    return table[ids] * float(np.sqrt(table.shape[1])) + encoding[None]


def source_key_mask(src_len, num_keys: int):
    """Returns bool [B, 1, 1, S]: True for real source characters.  src_len int [B]."""
    return (jnp.arange(num_keys)[None, :] < src_len[:, None])[:, None, None, :]


def _captures(capture: Capture, sown: dict, rows: list) -> dict[str, Any]:
    out = {name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)}
    if capture.residual:
        out["residual"] = jnp.stack(rows)
    return out


def encode(model: EncDec, src_ids, src_len, *, capture: KindCapture = KindCapture(),
           change: KindInterventions = KindInterventions(), stream=None) -> dict[str, Any]:
    """Returns {"memory": [B, S, D], "encoder": capture.encoder's captures ("residual": [L + 1, B, S, D], the
    stream entering each layer and after the last, before the final norm)}.  src_ids int [B, S]; src_len int [B].
    stream [B, S, D]: read in place of the source embedding's output (what attributions differentiate)."""
    heads, s = model.cfg.num_heads, src_ids.shape[1]
    x = embed(model.source_embed[...], src_ids, jnp.asarray(sinusoidal_positions(s, model.cfg.model_dim))) \
        if stream is None else stream
    visible = source_key_mask(src_len, s)
    own = change.encoder or Interventions()
    sown, rows = {name: [] for name in CAPTURED}, [x]
    for index, layer in enumerate(model.encoder):
        normed = layer.norm_1(x)
        x = x + attention(layer.self_attention, heads, normed, normed, visible, index=index, change=own,
                          capture=capture.encoder, sown=sown)[0]
        x = x + feed_forward(layer.feed_forward, layer.norm_2(x))
        rows.append(x)
    return {"memory": model.encoder_norm(x), "encoder": _captures(capture.encoder, sown, rows)}


def empty_cache(cfg, batch: int, length: int):
    """Returns a decoder self-attention KV cache of zeros: per layer (k, v), each [B, H, length, d]."""
    zeros = jnp.zeros((batch, cfg.num_heads, length, cfg.model_dim // cfg.num_heads), jnp.float32)
    return tuple((zeros, zeros) for _ in range(cfg.decoder_layers))


def decode(model: EncDec, tgt_ids, memory, src_len, *, start=0, cache=None, capture: KindCapture = KindCapture(),
           change: KindInterventions = KindInterventions()) -> dict[str, Any]:
    """Returns {"logits": [B, T, V] if capture.decoder.logits, "decoder": the self-attention captures ("residual":
    [L + 1, B, T, D]), "cross": the cross-attention captures, "cache" when one was given}.

    tgt_ids int [B, T] at positions start..start+T-1 (start: int or traced): <s>, then the characters written
    so far (position t predicts character t). memory [B, S, D] from encode; src_len int [B]. cache: per layer
    (k, v) [B, H, U, d] (empty_cache), written at this call's positions.
    """
    cfg = model.cfg
    t = tgt_ids.shape[1]
    length = t if cache is None else cache[0][0].shape[2]
    positions = start + jnp.arange(t)
    y = embed(model.target_embed[...], tgt_ids, jnp.asarray(sinusoidal_positions(length, cfg.model_dim))[positions])
    key_positions = positions if cache is None else jnp.arange(length)
    causal = (key_positions[None, :] <= positions[:, None])[None, None]  # [1, 1, T, U]
    memory_mask = source_key_mask(src_len, memory.shape[1])
    own, cross = change.decoder or Interventions(), change.cross or Interventions()
    sown, sown_cross, rows, caches = {name: [] for name in CAPTURED}, {name: [] for name in CAPTURED}, [y], []
    for index, layer in enumerate(model.decoder):
        normed = layer.norm_1(y)
        out, layer_cache = attention(layer.self_attention, cfg.num_heads, normed, normed, causal, index=index,
                                     cache=None if cache is None else cache[index], start=start, change=own,
                                     capture=capture.decoder, sown=sown)
        y = y + out
        y = y + attention(layer.cross_attention, cfg.num_heads, layer.norm_2(y), memory, memory_mask, index=index,
                          change=cross, capture=capture.cross, sown=sown_cross)[0]
        y = y + feed_forward(layer.feed_forward, layer.norm_3(y))
        rows.append(y)
        caches.append(layer_cache)
    result: dict[str, Any] = {"decoder": _captures(capture.decoder, sown, rows),
                              "cross": _captures(capture.cross, sown_cross, [])}
    if capture.decoder.logits:
        result["logits"] = model.decoder_norm(y) @ model.output[...] + model.output_b[...]
    if cache is not None:
        result["cache"] = tuple(caches)
    return result


def forward(model: EncDec, src_ids, src_len, tgt_in, *, capture: KindCapture = KindCapture(),
            change: KindInterventions = KindInterventions(), stream=None) -> dict[str, Any]:
    """Returns decode's dict and "encoder" (encode's captures) of one teacher-forced pass.

    src_ids int [B, S] (padded), src_len int [B], tgt_in int [B, T] (<s> then the target shifted right);
    stream [B, S, D] or None: as in encode.
    """
    encoded = encode(model, src_ids, src_len, capture=capture, change=change, stream=stream)
    return {**decode(model, tgt_in, encoded["memory"], src_len, capture=capture, change=change),
            "encoder": encoded["encoder"]}


# ----------------------------------------------------------------------------- the jitted entries


@partial(jax.jit, static_argnames=("graphdef", "capture"))
def teacher_forced(graphdef, params, src_ids, src_len, tgt_in, *, capture: KindCapture = KindCapture(),
                   change: KindInterventions = KindInterventions()) -> dict[str, Any]:
    """Returns forward's dict of nnx.merge(graphdef, params): one compile per (graphdef, capture, shapes)."""
    return forward(nnx.merge(graphdef, params), src_ids, src_len, tgt_in, capture=capture, change=change)


def greedy_decode(model: EncDec, src_ids, src_len):
    """Returns the greedy output int32 [B, T] (T = the config's output length): one cached decoder step per
    character, each reading <s> or the character chosen before it."""
    cfg = model.cfg
    memory = encode(model, src_ids, src_len)["memory"]
    batch, length = src_ids.shape[0], cfg.output_length

    def step(carry, position):
        token, cache = carry
        out = decode(model, token[:, None], memory, src_len, start=position, cache=cache)
        chosen = jnp.argmax(out["logits"][:, 0], -1).astype(jnp.int32)
        return (chosen, out["cache"]), chosen

    first = (jnp.full((batch,), BOS_ID, jnp.int32), empty_cache(cfg, batch, length))
    return jax.lax.scan(step, first, jnp.arange(length))[1].T


@partial(jax.jit, static_argnames=("graphdef", "capture"))
def read_own_output(graphdef, params, src_ids, src_len, *, capture: KindCapture = MAPS):
    """Returns (the greedy output int32 [B, T], teacher_forced's dict of the pass over it).

    The causal mask keeps position t blind to what came later, so that pass holds every step's logits and
    attention as they were when character t was written (tests/models/encdec/test_views_agree.py).
    """
    model = nnx.merge(graphdef, params)
    tokens = greedy_decode(model, src_ids, src_len)
    fed = jnp.concatenate([jnp.full((tokens.shape[0], 1), BOS_ID, jnp.int32), tokens[:, :-1]], axis=1)
    return tokens, forward(model, src_ids, src_len, fed, capture=capture)

"""Head knock-out: what a decoder LM loses when one attention head (or a few) stops doing its work.

Two ways to knock a head out, named in every record's meta:

- "zero":  the head's output (its context vectors, before the output projection) is set to 0;
- "first": the head's attention is replaced by all weight on the first token, so every row of
           it copies the first token's value vector.

Measured against the plain forward of the same text: the change in the probability of the
model's own top-1 next token at the last position, and in the prompt's mean next-token loss.

``knocked_runs`` runs a batch of head masks keep [N, L, H] (1 keeps a head, 0 knocks it out) with
``jax.vmap`` over the masks: one jitted call. ``sweep_runs`` knocks out every head alone, also in one
jitted call: a head of layer l leaves layers 0..l-1 as they were, so for each layer the H masks
(vmap) start from the plain residual stream at that layer and run only layers l..L-1.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.lm.lens import embed_tokens, stream_of, unembed
from models.lm.model import _heads, allowed_keys, apply_rope, dense, feed_forward, normalize, pad_ids
from models.lm.records import _model_dir_option, shared_runner
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

MECHANISM = "lm-knockout"
MODES = ("zero", "first")
MODE_TEXT = {"zero": "the head's output is set to zero before the output projection",
             "first": "the head's attention is put entirely on the first token"}
MAX_KNOCKOUT_TOKENS = 512  # a longer text is cut here
MAX_CHOSEN_HEADS = 64
LOSS_CHUNK = 64  # positions unembedded at once (memory: masks × 64 × V floats)
SWEEP_ENV = "ATTENTION_LAB_MAX_SWEEP"
# A sweep costs L × H head-forwards over T tokens: GPT-2 small (144 heads) over 256 tokens fits by default.
DEFAULT_MAX_SWEEP = 144 * 256


class SweepTooLarge(InputError):
    """A knock-out sweep above the operator's bound: the page asks before running it (one line)."""


def max_sweep() -> int:
    """Returns the operator's bound on a sweep's head-forwards × tokens (env ATTENTION_LAB_MAX_SWEEP)."""
    try:
        return max(1, int(os.environ.get(SWEEP_ENV, DEFAULT_MAX_SWEEP)))
    except ValueError:
        return DEFAULT_MAX_SWEEP


# ----------------------------------------------------------------------------- the forward with masks


def knocked_attention(layer, cfg, x, allowed, rope, layer_index: int, keep, mode: str):
    """Returns the attention output [B, T, D] with heads knocked out (models/lm/model.py attention_layer's maths).

    x [B, T, D] (already normalised); keep [B, H] float, 1 keeps a head, 0 knocks it out (mode).
    """
    b, t, _ = x.shape
    h, kv, hd = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
    q, k, v = _heads(dense(layer.q, x), h, hd), _heads(dense(layer.k, x), kv, hd), _heads(dense(layer.v, x), kv, hd)
    if cfg.qk_norm:
        q, k = normalize(layer.q_norm, q, cfg.norm_eps), normalize(layer.k_norm, k, cfg.norm_eps)
    q, k, v = (jnp.transpose(a, (0, 2, 1, 3)) for a in (q, k, v))  # [B, heads, T, d]
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    scale = 1.0
    if cfg.scale_attn_weights:
        scale /= math.sqrt(hd)
    if cfg.scale_attn_by_inverse_layer_idx:
        scale /= layer_index + 1
    g = cfg.queries_per_kv
    scores = jnp.matmul(q.reshape(b, kv, g, t, hd), jnp.swapaxes(k, -1, -2)[:, :, None]) * jnp.float32(scale)
    scores = jnp.where(allowed, scores, jnp.finfo(jnp.float32).min)
    exp = jnp.exp(scores - jnp.max(scores, axis=-1, keepdims=True))
    probs = exp * (1.0 / jnp.sum(exp, axis=-1, keepdims=True))
    context = jnp.matmul(probs, v[:, :, None]).reshape(b, h, t, hd)  # [B, H, T, d]
    keep = keep[:, :, None, None]
    if mode == "zero":
        context = context * keep
    else:  # all weight on the first token: every row reads the first token's value (head h reads kv head h // G)
        first = jnp.repeat(v[:, :, :1], g, axis=1)  # [B, H, 1, d]
        context = context * keep + first * (1.0 - keep)
    merged = jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, h * hd)
    return dense(layer.o, merged)


def _layers(model, x, allowed, rope, keep, mode: str, start: int = 0):
    # x [B, T, D] entering layer `start`; keep [B, L - start, H] -> x after the last layer
    cfg = model.config
    for offset, layer in enumerate(model.layers[start:]):
        index = start + offset
        normed = normalize(layer.attn_norm, x, cfg.norm_eps)
        x = x + knocked_attention(layer, cfg, normed, allowed, rope, index, keep[:, offset], mode)
        x = x + feed_forward(layer, cfg, normalize(layer.mlp_norm, x, cfg.norm_eps))
    return x


def _read_out(model, x, ids, key_mask):
    """Returns (last-position logits [V], mean next-token loss) of one sequence's final stream x [T, D].

    ids int32 [T]; key_mask bool [T]. The loss is unembedded LOSS_CHUNK positions at a time.
    """
    t = x.shape[0]
    last = jnp.sum(key_mask) - 1
    chunk = min(LOSS_CHUNK, t)
    targets = jnp.concatenate([ids[1:], ids[:1]])
    counted = jnp.concatenate([key_mask[1:], jnp.zeros((1,), bool)])  # position p predicts token p + 1
    rest = -t % chunk  # a model's last length bucket may not be a multiple of the chunk
    x_in, targets, counted = (jnp.pad(a, ((0, rest),) + ((0, 0),) * (a.ndim - 1)) for a in (x, targets, counted))
    n = (t + rest) // chunk

    def chunk_loss(args):
        xs, ts, cs = args
        log_probs = jax.nn.log_softmax(unembed(model, xs), axis=-1)
        picked = jnp.take_along_axis(log_probs, ts[:, None], axis=-1)[:, 0]
        return jnp.sum(jnp.where(cs, -picked, 0.0))

    split = (x_in.reshape(n, chunk, -1), targets.reshape(n, chunk), counted.reshape(n, chunk))
    loss = jnp.sum(jax.lax.map(chunk_loss, split)) / jnp.maximum(jnp.sum(counted), 1)
    return unembed(model, jax.lax.dynamic_index_in_dim(x, last, keepdims=False)), loss


@functools.partial(jax.jit, static_argnames=("graphdef", "mode"))
def knocked_runs(state, ids, key_mask, keep, *, graphdef, mode: str):
    """Returns (probs [N], losses [N], answer int32, plain prob, plain loss) of one sequence under N head masks.

    ids int32 [T]; key_mask bool [T]; keep float [N, L, H] (1 keeps, 0 knocks out). probs: each
    run's probability of the plain forward's top-1 at the last real position; losses: mean
    next-token loss over the real tokens. jax.vmap over the masks: one batched forward.
    """
    model = nnx.merge(graphdef, state)
    cfg = model.config
    x0, rope = embed_tokens(model, ids[None])
    allowed = allowed_keys(cfg, key_mask[None])

    def one(mask):  # [L, H] -> (last logits [V], loss)
        x = _layers(model, x0, allowed, rope, mask[None], mode)
        return _read_out(model, x[0], ids, key_mask)

    plain_logits, plain_loss = one(jnp.ones(keep.shape[1:], jnp.float32))
    logits, losses = jax.vmap(one)(keep)
    answer = jnp.argmax(plain_logits)
    plain_prob = jax.nn.softmax(plain_logits)[answer]
    return jax.nn.softmax(logits, axis=-1)[:, answer], losses, answer.astype(jnp.int32), plain_prob, plain_loss


@functools.partial(jax.jit, static_argnames=("graphdef", "mode"))
def sweep_runs(state, ids, key_mask, *, graphdef, mode: str):
    """Returns (probs [L, H], losses [L, H], answer int32, plain prob, plain loss): every head knocked out alone.

    ids int32 [T]; key_mask bool [T]. For layer l, jax.vmap over its H one-head masks runs layers
    l..L-1 from the plain residual stream entering layer l (layers before l are untouched by them).
    """
    model = nnx.merge(graphdef, state)
    cfg = model.config
    h = cfg.num_heads
    stream = stream_of(model, ids[None], key_mask[None])  # [L + 1, 1, T, D]
    _, rope = embed_tokens(model, ids[None])
    allowed = allowed_keys(cfg, key_mask[None])
    plain_logits, plain_loss = _read_out(model, stream[-1, 0], ids, key_mask)
    answer = jnp.argmax(plain_logits)
    probs, losses = [], []
    for layer in range(cfg.num_layers):
        masks = jnp.ones((h, cfg.num_layers - layer, h), jnp.float32).at[jnp.arange(h), 0, jnp.arange(h)].set(0.0)

        def one(mask, layer=layer):  # [L - layer, H] -> (prob, loss)
            x = _layers(model, stream[layer], allowed, rope, mask[None], mode, start=layer)
            logits, loss = _read_out(model, x[0], ids, key_mask)
            return jax.nn.softmax(logits)[answer], loss

        p, lo = jax.vmap(one)(masks)
        probs.append(p)
        losses.append(lo)
    return (jnp.stack(probs), jnp.stack(losses), answer.astype(jnp.int32), jax.nn.softmax(plain_logits)[answer],
            plain_loss)


# ----------------------------------------------------------------------------- options and the record


def read_mode(value: Any) -> str:
    """Returns "zero" (default) or "first"; InputError otherwise."""
    mode = "zero" if value in (None, "") else str(value).strip().lower()
    if mode not in MODES:
        raise InputError(f"mode must be zero (zero the head's output) or first (attend to the first token); got {str(value)[:20]!r}")
    return mode


def read_flag(value: Any, name: str = "sweep") -> bool:
    """Returns a yes/no option as a bool: True/False, 1/0, yes/no, on/off, true/false; InputError otherwise."""
    if value in (None, ""):
        return False
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "yes", "on", "true"):
        return True
    if text in ("0", "no", "off", "false"):
        return False
    raise InputError(f"{name} must be yes or no; got {text[:20]!r}")


def parse_heads(spec: Any, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """Returns the (layer, head) pairs a spec names, in order without repeats: "" (none) or "0.1,1.3"."""
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return ()
    text = str(spec).replace(" ", "")
    chosen: list[tuple[int, int]] = []
    for part in text.split(","):
        layer, dot, head = part.partition(".")
        try:
            pair = (int(layer), int(head))
        except ValueError:
            pair = None
        if not dot or pair is None or not (0 <= pair[0] < num_layers and 0 <= pair[1] < num_heads):
            raise InputError(f"heads must be layer.head pairs, layers 0 to {num_layers - 1} and heads 0 to "
                             f"{num_heads - 1}, e.g. 0.1,{num_layers - 1}.{num_heads - 1}; got {part[:20]!r}")
        if pair not in chosen:
            chosen.append(pair)
    if len(chosen) > MAX_CHOSEN_HEADS:
        raise InputError(f"choose at most {MAX_CHOSEN_HEADS} heads; got {len(chosen)}")
    return tuple(chosen)


def check_sweep(num_layers: int, num_heads: int, tokens: int) -> None:
    """Raises SweepTooLarge (one line) when L × H head-forwards over `tokens` exceed the operator's bound."""
    work, bound = num_layers * num_heads * tokens, max_sweep()
    if work > bound:
        raise SweepTooLarge(f"a sweep of {num_layers * num_heads} heads over {tokens:,} tokens ({work:,} head-forwards "
                            f"× tokens) is above this server's {bound:,} ({SWEEP_ENV}): ask before running it, "
                            f"or use a shorter text")


def _chosen_masks(chosen, num_layers: int, num_heads: int) -> np.ndarray:
    # -> keep [N, L, H]: each chosen head alone, then (with more than one) all chosen heads together
    sets = [[pair] for pair in chosen] + ([list(chosen)] if len(chosen) > 1 else [])
    keep = np.ones((len(sets), num_layers, num_heads), np.float32)
    for row, pairs in enumerate(sets):
        for layer, head in pairs:
            keep[row, layer, head] = 0.0
    return keep


def knockout_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: options text, model_dir, heads ("0.1,1.3"), mode (zero | first), sweep (yes/no).

    With sweep (or no heads chosen): weights [layer, head], the change in the probability of the
    model's top-1 next token when that head alone is knocked out; extras loss_change [layer, head].
    Otherwise weights [knock-out] over the chosen heads alone and (two or more) all of them at once;
    extras loss_change beside it. The chosen heads' results are in meta either way.
    """
    if not isinstance(options.get("text"), str) or not options["text"].strip():
        raise InputError("type some text: the model reads it token by token")
    mode = read_mode(options.get("mode"))
    sweep = read_flag(options.get("sweep"))
    runner = shared_runner(_model_dir_option(options))
    cfg = runner.config
    chosen = parse_heads(options.get("heads"), cfg.num_layers, cfg.num_heads)
    sweep = sweep or not chosen
    encoding = runner.encode(options["text"])
    notices = list(encoding.notices)
    ids, labels = encoding.ids, encoding.labels
    if len(ids) > MAX_KNOCKOUT_TOKENS:
        notices.append(Notice(N_("the knock-out reads the first {kept} of {total:,} tokens"), kept=MAX_KNOCKOUT_TOKENS,
                              total=len(ids)))
        ids, labels = ids[:MAX_KNOCKOUT_TOKENS], labels[:MAX_KNOCKOUT_TOKENS]
    if sweep:
        check_sweep(cfg.num_layers, cfg.num_heads, len(ids))
    padded, mask = pad_ids(ids[None], runner.buckets)
    graphdef, state = runner.lm.graphdef, runner.lm.state
    meta: dict[str, Any] = {
        "model": runner.name, "architecture": cfg.model_type, "num_layers": cfg.num_layers,
        "num_heads": cfg.num_heads, "mode": mode, "mode_text": MODE_TEXT[mode],
        "value": "change in the probability of the model's own top-1 next token at the last position",
        "tokens": len(ids), "truncated": encoding.truncated or len(ids) < len(encoding.ids),
        "notice": Notice.join(notices), "heads": [f"{a}.{b}" for a, b in chosen],
    }
    extras: dict[str, Any] = {"input_ids": ids}
    if chosen:
        keep = _chosen_masks(chosen, cfg.num_layers, cfg.num_heads)
        probs, losses, answer, plain_prob, plain_loss = (np.asarray(a) for a in knocked_runs(
            state, padded[0], mask[0], keep, graphdef=graphdef, mode=mode))
        names = [f"L{a}H{b}" for a, b in chosen] + (["all chosen"] if len(chosen) > 1 else [])
        chosen_prob, chosen_loss = (probs - plain_prob).astype(np.float32), (losses - plain_loss).astype(np.float32)
        meta.update({"knockouts": names, "prob_change": [float(x) for x in chosen_prob],
                     "loss_change": [float(x) for x in chosen_loss]})
    if sweep:
        probs, losses, answer, plain_prob, plain_loss = (np.asarray(a) for a in sweep_runs(
            state, padded[0], mask[0], graphdef=graphdef, mode=mode))
        weights, axes = (probs - plain_prob).astype(np.float32), ("layer", "head")
        rows, cols = [f"layer {i}" for i in range(cfg.num_layers)], [f"head {j}" for j in range(cfg.num_heads)]
        extras.update({"loss_change": (losses - plain_loss).astype(np.float32), "knocked_prob": probs.astype(np.float32),
                       "knocked_loss": losses.astype(np.float32)})
    else:
        weights, axes, rows, cols = chosen_prob, ("knockout",), [""], names
        extras["loss_change"] = chosen_loss
    answer_id, plain_prob, plain_loss = int(answer), float(plain_prob), float(plain_loss)
    meta.update({"sweep": sweep, "answer_id": answer_id, "answer": runner.lm.tokenizer.decode([answer_id]),
                 "plain_prob": plain_prob, "plain_loss": plain_loss, "last_token": labels[-1]})
    return AttentionRecord(mechanism=getattr(mechanism, "id", MECHANISM), weights=weights, axes=axes,
                           query_labels=rows, key_labels=cols, meta=meta, extras=extras)


def knockout_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: float32 bytes held while a record is built: per batch of masks (H for a sweep
    layer, the chosen runs otherwise) the stream and the feed-forward T_b × (D + F), the attention
    heads × T_b², and LOSS_CHUNK × V logits; the plain residual stream (L + 1) × T_b × D."""
    runner = shared_runner(_model_dir_option(options))
    cfg = runner.config
    chosen = parse_heads(options.get("heads"), cfg.num_layers, cfg.num_heads)
    tokens = min(len(runner.encode(options.get("text")).ids), MAX_KNOCKOUT_TOKENS)
    padded = bucket(tokens, runner.buckets)
    batch = max(len(chosen) + 1, cfg.num_heads if read_flag(options.get("sweep")) or not chosen else 1)
    per_run = padded * (2 * cfg.hidden_size + cfg.intermediate_size) + cfg.num_heads * padded**2 \
        + min(LOSS_CHUNK, padded) * cfg.vocab_size
    return 4 * (batch * per_run + (cfg.num_layers + 1) * padded * cfg.hidden_size + cfg.num_layers * cfg.num_heads * 4)

"""Head knock-out: what a decoder LM loses when one attention head (or a few) stops doing its work.

Two ways to knock a head out, named in every record's meta:

- "zero":  the head's output (its context vectors, before the output projection) is set to 0;
- "first": the head's attention is replaced by all weight on the first token, so every row of
           it copies the first token's value vector.

Measured against the plain forward of the same text: the change in the probability of the
model's own top-1 next token at the last position, and in the prompt's mean next-token loss.

Both are the one forward (models/lm/forward.py ``decoder``) with an intervention. ``knocked_runs`` runs
a batch of head masks keep [N, L, H] (1 keeps a head, 0 knocks it out) with ``jax.vmap`` over the
masks: one jitted call. ``sweep_runs`` knocks out every head alone, also in one jitted call: a head
of layer l leaves layers 0..l-1 as they were, so one plain forward gives each layer's input stream
and every head's output; for each layer a batch of H runs starts there with one head's output
replaced by its knocked-out value (patched in, so the layer's attention is not computed again) and
runs layers l..L-1. The layer batches are independent of each other, so XLA may run two at once. Each
run is read out (``read_out``) for the two numbers it needs, the vocabulary unembedded in blocks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.lm.forward import VOCABULARY_BLOCK, Capture, Interventions, decoder, pad_ids, unembed, unembed_scores
from models.lm.records import shared_runner
from models.model_folders import model_dir_option
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

MECHANISM = "lm-knockout"
MODES = ("zero", "first")
MODE_TEXT = {"zero": "the head's output is set to zero before the output projection",
             "first": "the head's attention is put entirely on the first token"}
MAX_KNOCKOUT_TOKENS = 512  # a longer text is cut here
MAX_CHOSEN_HEADS = 64
SWEEP_ENV = "ATTENTION_LAB_MAX_SWEEP"
# A sweep costs L × H head-forwards over T tokens: GPT-2 small (144 heads) over 256 tokens fits by default.
DEFAULT_MAX_SWEEP = 144 * 256
FINAL_ONLY = Capture(logits=False)  # the knocked runs read the final stream out themselves (read_out)
SWEEP_PLAIN = Capture(logits=False, residual=True, heads=True, values=True)


class SweepTooLarge(InputError):
    """A knock-out sweep above the operator's bound: the page asks before running it (one line)."""


def max_sweep() -> int:
    """Returns the operator's bound on a sweep's head-forwards × tokens (env ATTENTION_LAB_MAX_SWEEP)."""
    try:
        return max(1, int(os.environ.get(SWEEP_ENV, DEFAULT_MAX_SWEEP)))
    except ValueError:
        return DEFAULT_MAX_SWEEP


# ----------------------------------------------------------------------------- the forward with masks


def knocked_final(model, ids, key_mask, keep, mode: str):
    """Returns the final residual stream [1, T, D] of one sequence with heads knocked out: the one forward
    (models/lm/forward.py decoder) with a head mask. ids int32 [1, T]; key_mask bool [1, T]; keep float
    [L, H] (1 keeps, 0 knocks out)."""
    return decoder(model, ids, key_mask=key_mask, capture=FINAL_ONLY,
                   interventions=Interventions(head_keep=keep, head_mode=mode))["final"]


def read_out(model, x, ids, key_mask, answer):
    """Returns (probability of `answer` at the last real position [N], mean next-token loss [N]) of N runs'
    final streams x [N, T, D] over one sequence: ids int32 [T], key_mask bool [T], answer int32.

    Only what they need is unembedded (forward.py unembed_scores): each position's logsumexp over the
    vocabulary and its logits of the next token and of the answer; the loss is logsumexp(z) - z[next token].
    """
    n, t, d = x.shape
    targets = jnp.concatenate([ids[1:], ids[:1]])
    counted = jnp.concatenate([key_mask[1:], jnp.zeros((1,), bool)])  # position p predicts token p + 1
    picks = jnp.stack([jnp.broadcast_to(targets, (n, t)), jnp.full((n, t), answer, jnp.int32)], axis=-1)
    lse, picked = unembed_scores(model, x.reshape(n * t, d), picks.reshape(n * t, 2))
    lse, picked = lse.reshape(n, t), picked.reshape(n, t, 2)
    loss = jnp.sum(jnp.where(counted, lse - picked[..., 0], 0.0), axis=-1) / jnp.maximum(jnp.sum(counted), 1)
    last = jnp.sum(key_mask) - 1
    return jnp.exp(picked[:, last, 1] - lse[:, last]), loss


def _plain(model, ids, key_mask, capture):
    # -> (the plain forward's outputs, its top-1 at the last real position, its probability, its mean loss)
    plain = decoder(model, ids[None], key_mask=key_mask[None], capture=capture)
    answer = jnp.argmax(unembed(model, plain["final"][0, jnp.sum(key_mask) - 1])).astype(jnp.int32)
    prob, loss = read_out(model, plain["final"], ids, key_mask, answer)
    return plain, answer, prob[0], loss[0]


@functools.partial(jax.jit, static_argnames=("graphdef", "mode"))
def knocked_runs(state, ids, key_mask, keep, *, graphdef, mode: str):
    """Returns (probs [N], losses [N], answer int32, plain prob, plain loss) of one sequence under N head masks.

    ids int32 [T]; key_mask bool [T]; keep float [N, L, H] (1 keeps, 0 knocks out). probs: each
    run's probability of the plain forward's top-1 at the last real position; losses: mean
    next-token loss over the real tokens. jax.vmap over the masks: one batched forward.
    """
    model = nnx.merge(graphdef, state)
    _, answer, plain_prob, plain_loss = _plain(model, ids, key_mask, FINAL_ONLY)
    finals = jax.vmap(lambda mask: knocked_final(model, ids[None], key_mask[None], mask, mode)[0])(keep)
    probs, losses = read_out(model, finals, ids, key_mask, answer)
    return probs, losses, answer, plain_prob, plain_loss


@functools.partial(jax.jit, static_argnames=("graphdef", "mode"))
def sweep_runs(state, ids, key_mask, *, graphdef, mode: str):
    """Returns (probs [L, H], losses [L, H], answer int32, plain prob, plain loss): every head knocked out alone.

    ids int32 [T]; key_mask bool [T]. The layers below a knocked head are the plain forward's, so one plain
    pass gives each layer's input stream, every head's output and the values; for layer l a batch of H runs
    starts there, each with one head's output replaced by its knocked-out value (patched in: the layer's
    attention is not computed again), and runs layers l..L-1.
    """
    model = nnx.merge(graphdef, state)
    cfg = model.config
    h, t = cfg.num_heads, ids.shape[0]
    plain, answer, plain_prob, plain_loss = _plain(model, ids, key_mask, SWEEP_PLAIN)
    knocked = 1.0 - jnp.eye(h, dtype=jnp.float32)[:, :, None, None]  # run r knocks out head r: [H, H, 1, 1]
    ids_h, mask_h = jnp.broadcast_to(ids, (h, t)), jnp.broadcast_to(key_mask, (h, t))
    probs, losses = [], []
    for layer in range(cfg.num_layers):
        heads = plain["heads"][layer]  # [1, H, T, d]
        fill = 0.0 if mode == "zero" else jnp.repeat(plain["values"][layer][:, :, :1], cfg.queries_per_kv, axis=1)
        patched = heads * knocked + fill * (1.0 - knocked)  # [H runs, H, T, d], as the head mask computes it
        final = decoder(model, ids_h, key_mask=mask_h, stream=jnp.broadcast_to(plain["residual"][layer], (h, t, cfg.hidden_size)),
                        first_layer=layer, capture=FINAL_ONLY, interventions=Interventions(heads={layer: patched}))
        p, lo = read_out(model, final["final"], ids, key_mask, answer)
        probs.append(p)
        losses.append(lo)
    return jnp.stack(probs), jnp.stack(losses), answer, plain_prob, plain_loss


# ----------------------------------------------------------------------------- options and the record


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
    """Registry builder: typed options text, model_dir, heads ("0.1,1.3"), mode (zero | first), sweep (yes | no).

    With sweep (or no heads chosen): weights [layer, head], the change in the probability of the
    model's top-1 next token when that head alone is knocked out; extras loss_change [layer, head].
    Otherwise weights [knock-out] over the chosen heads alone and (two or more) all of them at once;
    extras loss_change beside it. The chosen heads' results are in meta either way.
    """
    mode = options["mode"]
    runner = shared_runner(model_dir_option(options))
    cfg = runner.config
    chosen = parse_heads(options.get("heads"), cfg.num_layers, cfg.num_heads)
    sweep = options["sweep"] == "yes" or not chosen
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
    heads × T_b², and T_b × VOCABULARY_BLOCK logits; the plain residual stream (L + 1) × T_b × D."""
    runner = shared_runner(model_dir_option(options))
    cfg = runner.config
    chosen = parse_heads(options.get("heads"), cfg.num_layers, cfg.num_heads)
    tokens = min(len(runner.encode(options.get("text")).ids), MAX_KNOCKOUT_TOKENS)
    padded = bucket(tokens, runner.buckets)
    batch = max(len(chosen) + 1, cfg.num_heads if options["sweep"] == "yes" or not chosen else 1)
    per_run = padded * (2 * cfg.hidden_size + cfg.intermediate_size) + cfg.num_heads * padded**2 \
        + padded * min(VOCABULARY_BLOCK, cfg.vocab_size)
    return 4 * (batch * per_run + (cfg.num_layers + 1) * padded * cfg.hidden_size + cfg.num_layers * cfg.num_heads * 4)

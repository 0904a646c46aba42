"""The logit lens: what each layer of a decoder LM would predict if the model stopped there.

``residual_stream`` is the one forward (models/lm/forward.py ``decoder``) capturing the residual
stream after the embedding and after every layer, [L + 1, B, T, D]. The lens reads each
row through the model's own **final norm, then its unembedding** (the LM head, or the tied
embeddings): norm(x_l) @ W_U. Without the final norm the early rows' logits have another scale
and often another top token; with it, the last row is exactly the model's logits (the tests
check both). ``lens_record`` turns a text into an AttentionRecord:

    weights [layer, position] float32: the probability, under each row's lens, of the token the
        model finally ranks first at that position (row 0 is the embedding, row l + 1 layer l)
    extras top_ids, top_probs [layer, position, k] and top_tokens (their text), answer_ids [position]
    meta   the chosen position's top-k per row as text, the lens's choice ("final norm, then unembedding")
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.lm.forward import Capture, decoder, pad_ids, unembed
from models.lm.records import shared_runner
from models.model_folders import model_dir_option
from models.neuron import neuron_index
from models.padding import bucket
from models.record import AttentionRecord
from models.text import N_, Notice

MECHANISM = "lm-logit-lens"
AXES = ("layer", "position")
LENS_CHOICE = "final norm, then unembedding"  # what every layer's residual stream goes through
MAX_TOP_K = 20  # one compile: the top 20 are always computed, the record keeps top_k of them
MAX_LENS_TOKENS = 512  # a longer text is cut here (every layer's top-k at every position)


# ----------------------------------------------------------------------------- the forward


STREAM = Capture(logits=False, residual=True)


def stream_of(model, ids, key_mask):
    """Returns the residual stream [L + 1, B, T, D]: row 0 the embeddings, row l + 1 after layer l."""
    return decoder(model, ids, key_mask=key_mask, capture=STREAM)["residual"]


@functools.partial(jax.jit, static_argnames=("graphdef",))
def residual_stream(state, ids, key_mask, *, graphdef):
    """Returns stream_of (the residual stream [L + 1, B, T, D]) of nnx.merge(graphdef, state)."""
    return stream_of(nnx.merge(graphdef, state), ids, key_mask)


@functools.partial(jax.jit, static_argnames=("graphdef",))
def lens_logits(state, stream, *, graphdef):
    """Returns every row's lens logits [R, B, T, V] of a residual stream [R, B, T, D] (small inputs: tests)."""
    return unembed(nnx.merge(graphdef, state), stream)


@functools.partial(jax.jit, static_argnames=("graphdef",))
def lens_summary(state, ids, key_mask, *, graphdef):
    """Returns (top_ids int32 [L + 1, B, T, 20], top_probs [L + 1, B, T, 20], answer_probs [L + 1, B, T],
    answer_ids int32 [B, T]) of ids int32 [B, T].

    The answer at a position is the model's own top-1 (the last row's); each row's lens logits are
    made one row at a time (lax.map), so memory holds one [B, T, V] at once, not L + 1 of them.
    """
    model = nnx.merge(graphdef, state)
    stream = stream_of(model, ids, key_mask)
    answer = jnp.argmax(unembed(model, stream[-1]), axis=-1).astype(jnp.int32)  # [B, T]

    def read(row):
        probs = jax.nn.softmax(unembed(model, row), axis=-1)  # [B, T, V]
        top_probs, top_ids = jax.lax.top_k(probs, MAX_TOP_K)
        return top_ids.astype(jnp.int32), top_probs, jnp.take_along_axis(probs, answer[..., None], axis=-1)[..., 0]

    top_ids, top_probs, answer_probs = jax.lax.map(read, stream)
    return top_ids, top_probs, answer_probs, answer


# ----------------------------------------------------------------------------- the record


def layer_labels(num_layers: int) -> tuple[str, ...]:
    """Returns the lens rows' labels: "embedding", then "layer 0" .. "layer L-1"."""
    return ("embedding",) + tuple(f"layer {i}" for i in range(num_layers))


def _lens_text(runner, text: Any) -> tuple[Any, list[str]]:
    # -> (the encoding cut to MAX_LENS_TOKENS, its notices)
    encoding = runner.encode(text)
    notices = list(encoding.notices)
    if len(encoding.ids) > MAX_LENS_TOKENS:
        notices.append(Notice(N_("the logit lens reads the first {kept} of {total:,} tokens"), kept=MAX_LENS_TOKENS,
                              total=len(encoding.ids)))
        encoding = type(encoding)(encoding.ids[:MAX_LENS_TOKENS], encoding.labels[:MAX_LENS_TOKENS], True,
                                  tuple(notices), encoding.special_first)
    return encoding, notices


def token_texts(tokenizer, ids: np.ndarray) -> np.ndarray:
    """Returns a str array shaped like ids: each id decoded alone (newlines and tabs escaped)."""
    unique, inverse = np.unique(np.asarray(ids), return_inverse=True)
    texts = [tokenizer.decode([int(i)], skip_special_tokens=False).replace("\n", "\\n").replace("\t", "\\t")
             for i in unique]
    return np.asarray(texts, dtype=object)[inverse].reshape(np.shape(ids)).astype(str)


def lens_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options text, model_dir (default: the GPT trained here), position (-1 = last),
    top_k (1..MAX_TOP_K) -> the lens record (module docstring)."""
    k = options["top_k"]
    runner = shared_runner(model_dir_option(options))
    encoding, notices = _lens_text(runner, options["text"])
    t = len(encoding.ids)
    position = neuron_index("position", options["position"], t)  # the text's own length bounds it
    padded, mask = pad_ids(encoding.ids[None], runner.buckets)
    top_ids, top_probs, answer_probs, answer = (np.asarray(a) for a in lens_summary(
        runner.lm.state, padded, mask, graphdef=runner.lm.graphdef))
    top_ids, top_probs = top_ids[:, 0, :t, :k], top_probs[:, 0, :t, :k]
    answer_probs, answer = answer_probs[:, 0, :t], answer[0, :t]
    tokenizer = runner.lm.tokenizer
    top_tokens = token_texts(tokenizer, top_ids)
    cfg = runner.config
    rows = layer_labels(cfg.num_layers)
    return AttentionRecord(
        mechanism=getattr(mechanism, "id", MECHANISM),
        weights=answer_probs.astype(np.float32),
        axes=AXES,
        query_labels=rows,
        key_labels=encoding.labels,
        meta={
            "model": runner.name,
            "architecture": cfg.model_type,
            "num_layers": cfg.num_layers,
            "lens": LENS_CHOICE,
            "value": "probability of the model's final top-1 token at each position, under each layer's lens",
            "position": position,
            "position_token": encoding.labels[position],
            "answer": str(token_texts(tokenizer, answer[position:position + 1])[0]),
            "top_k": k,
            "position_top_tokens": top_tokens[:, position].tolist(),
            "position_top_probs": [[round(float(p), 6) for p in row] for row in top_probs[:, position]],
            "truncated": encoding.truncated,
            "notice": Notice.join(notices),
        },
        extras={"input_ids": encoding.ids, "answer_ids": answer.astype(np.int32), "top_ids": top_ids,
                "top_probs": top_probs.astype(np.float32), "top_tokens": top_tokens},
    )


def lens_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: bytes held while the record is built, float32: the residual stream
    (L + 1) × T_b × D, one row's logits and probabilities 2 × T_b × V, the top-20 of every row
    2 × (L + 1) × T_b × 20, and the record (L + 1) × T × (1 + 2k) plus the tokens' text."""
    runner = shared_runner(model_dir_option(options))
    cfg = runner.config
    tokens = min(len(runner.encode(options.get("text")).ids), MAX_LENS_TOKENS)
    k = options["top_k"]
    padded = bucket(tokens, runner.buckets)
    rows = cfg.num_layers + 1
    floats = (rows * padded * cfg.hidden_size + 2 * padded * cfg.vocab_size + 2 * rows * padded * MAX_TOP_K
              + rows * tokens * (1 + 2 * k))
    return 4 * floats + rows * tokens * k * 64  # top_tokens: numpy str, up to 16 characters × 4 bytes

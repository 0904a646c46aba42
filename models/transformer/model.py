"""A BERT-family encoder in flax.nnx and its one forward: every view (the maps of the runner, the hidden
states the HAN and sentence alignment read, the neuron view, the corpus statistics, queries and keys of a
head) is a call of ``encoder`` with what to capture and what to change.

One forward for every family models/transformer/config.py describes (BERT, RoBERTa, XLM-R, DistilBERT,
ELECTRA, ModernBERT): what differs is a static branch on the config (positions learned from 0, offset by
the padding index, or rotary; post-norm, or pre-norm with a final norm; a plain or GeGLU MLP; biases or
none; full or sliding-window layers; ELECTRA's embedding projection), not a forward per family.

The module tree keeps Hugging Face's BertModel names (embeddings, encoder.layer.N.attention...); the loader
(models/transformer/checkpoint.py) maps each family's own names onto it. A pre-norm layer has ``attn_norm``
(none in layer 0, as in ModernBERT) and ``mlp_norm`` in place of the post-norm LayerNorms. Modules own
parameters only. What to keep and what to change are models/capture.py's ``Capture`` and ``Interventions``:
an intermediate is handed back only when asked for, so the plain path computes nothing more, and
interventions act after the softmax (Penzai's knock-out).

Shapes: B = batch, T = (padded) tokens, D = hidden width, E = embedding width, H = heads, d = D / H,
F = FFN width, L = layers.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.capture import CAPTURED, PLAIN, Capture, Interventions, heads_output, keep_values, sow_attention
from models.transformer.config import ACTIVATIONS, FULL, SLIDING, BertConfig

# ----------------------------------------------------------------------------- modules


def _layer_norm(cfg: BertConfig, rngs: nnx.Rngs, width: int | None = None) -> nnx.LayerNorm:
    # use_fast_variance=False: E[(x-μ)²] like PyTorch, not E[x²]-μ², for parity.
    return nnx.LayerNorm(width or cfg.hidden_size, epsilon=cfg.layer_norm_eps, use_fast_variance=False,
                         use_bias=cfg.norm_bias, rngs=rngs)


class BertEmbeddings(nnx.Module):
    """Word + position + token-type embeddings (those the family has), then LayerNorm."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        width = cfg.embedding_width
        self.word_embeddings = nnx.Embed(cfg.vocab_size, width, rngs=rngs)
        if cfg.positions != "rope":
            self.position_embeddings = nnx.Embed(cfg.max_position_embeddings, width, rngs=rngs)
        if cfg.type_vocab_size:
            self.token_type_embeddings = nnx.Embed(cfg.type_vocab_size, width, rngs=rngs)
        self.LayerNorm = _layer_norm(cfg, rngs, width)


class BertSelfAttention(nnx.Module):
    """The query, key and value projections of one layer."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        d, bias = cfg.hidden_size, cfg.attention_bias
        self.query = nnx.Linear(d, d, use_bias=bias, rngs=rngs)
        self.key = nnx.Linear(d, d, use_bias=bias, rngs=rngs)
        self.value = nnx.Linear(d, d, use_bias=bias, rngs=rngs)


class BertDenseNorm(nnx.Module):
    """A dense projection back to the hidden width, followed (post-norm) by the residual LayerNorm."""

    def __init__(self, cfg: BertConfig, in_features: int, use_bias: bool, *, rngs: nnx.Rngs):
        self.dense = nnx.Linear(in_features, cfg.hidden_size, use_bias=use_bias, rngs=rngs)
        if not cfg.pre_norm:
            self.LayerNorm = _layer_norm(cfg, rngs)


class BertAttention(nnx.Module):
    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.self = BertSelfAttention(cfg, rngs=rngs)
        self.output = BertDenseNorm(cfg, cfg.hidden_size, cfg.attention_bias, rngs=rngs)


class BertIntermediate(nnx.Module):
    """The MLP's first projection: to F, or to 2F for GeGLU (input, then gate)."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        width = cfg.intermediate_size * (2 if cfg.gated_mlp else 1)
        self.dense = nnx.Linear(cfg.hidden_size, width, use_bias=cfg.mlp_bias, rngs=rngs)


class BertLayer(nnx.Module):
    """One transformer block: self-attention, then the feed-forward network."""

    def __init__(self, cfg: BertConfig, index: int, *, rngs: nnx.Rngs):
        if cfg.pre_norm:
            if index:  # ModernBERT's first layer reads the embeddings' norm as is
                self.attn_norm = _layer_norm(cfg, rngs)
            self.mlp_norm = _layer_norm(cfg, rngs)
        self.attention = BertAttention(cfg, rngs=rngs)
        self.intermediate = BertIntermediate(cfg, rngs=rngs)
        self.output = BertDenseNorm(cfg, cfg.intermediate_size, cfg.mlp_bias, rngs=rngs)


class BertEncoder(nnx.Module):
    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.layer = nnx.List([BertLayer(cfg, i, rngs=rngs) for i in range(cfg.num_hidden_layers)])


class BertModel(nnx.Module):
    """The encoder (no pooler: the app needs attention and hidden states only)."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg, rngs=rngs)
        if cfg.embedding_size:
            self.embeddings_project = nnx.Linear(cfg.embedding_size, cfg.hidden_size, rngs=rngs)
        self.encoder = BertEncoder(cfg, rngs=rngs)
        if cfg.pre_norm:
            self.final_norm = _layer_norm(cfg, rngs)


# ----------------------------------------------------------------------------- maths


def _dense(linear: nnx.Linear, x):
    # x [..., in] @ kernel [in, out] (+ bias [out])
    y = jnp.matmul(x, linear.kernel[...])
    return y if linear.bias is None else y + linear.bias[...]


def _split_heads(x, num_heads: int):
    # [B, T, H·d] -> [B, H, T, d]: the layout where QKᵀ and A·V are plain batched matmuls
    # (with einsum over [B, T, H, d] XLA copies each probability matrix before A·V).
    b, t, hd = x.shape
    return jnp.transpose(x.reshape(b, t, num_heads, hd // num_heads), (0, 2, 1, 3))


def key_bias(key_mask):
    """Returns float32 [B, 1, 1, T]: 0 for real keys, the most negative float for padding.

    key_mask bool [B, T]. Added to the scores, as Hugging Face's BERT does: exp() of it
    underflows to exactly 0, so padding keys get weight exactly 0.
    """
    return jnp.where(key_mask, 0.0, jnp.finfo(jnp.float32).min)[:, None, None, :]


def window_bias(key_mask, window: int):
    """Returns float32 [B, 1, T, T]: key_bias, and the most negative float where |query − key| > window too.

    A sliding layer's keys (ModernBERT's local attention: local_attention // 2 positions either side).
    """
    t = key_mask.shape[1]
    near = np.abs(np.arange(t)[:, None] - np.arange(t)[None, :]) <= window  # numpy: no compile per shape
    return jnp.where(key_mask[:, None, None, :] & near[None, None], 0.0, jnp.finfo(jnp.float32).min)


def bias_softmax(scores, bias):
    """Returns softmax(scores + bias) over the last axis.  scores [B, H, Tq, Tk], bias [B, 1, 1 or Tq, Tk].

    The same maths as models.attention.masked_softmax for rows with at least one real key
    (every BERT row has [CLS]); written out because the forward is speed-critical: this form
    fuses into two reads and one write of the scores and took half of masked_softmax's CPU
    time at 32 × 128 tokens (bench/transformer.py, docs/PERFORMANCE.md).
    """
    logits = scores + bias
    row_max = jnp.max(logits, axis=-1, keepdims=True)
    exp = jnp.exp(logits - row_max)
    return exp * (1.0 / jnp.sum(exp, axis=-1, keepdims=True))


def rotary_tables(length: int, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Returns (cos, sin) float32 [T, d] of RoPE at positions 0..T-1, in Hugging Face's half-split layout
    (frequencies repeated: [f, f]); computed in float32 like transformers, with numpy (constants of the trace)."""
    inv_freq = np.float32(1.0) / np.float32(theta) ** (np.arange(0, head_dim, 2, dtype=np.float32) / np.float32(head_dim))
    freqs = np.arange(length, dtype=np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def rotate(x, cos, sin):
    """Returns x [B, H, T, d] rotated by RoPE: x·cos + rotate_half(x)·sin, rotate_half(x) = [−x₂, x₁]."""
    half = x.shape[-1] // 2
    return x * cos + jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1) * sin


def attention(attn: BertAttention, cfg: BertConfig, x, bias, *, index: int, change: Interventions,
              capture: Capture, sown: dict, rotary=None):
    """Returns one layer's multi-head attention output [B, T, D] after the output projection (no residual).

    x [B, T, D] (pre-norm: already normed); bias float32 [B, 1, 1 or T, T] from key_bias or window_bias
    (keys it hides get weight 0); rotary: (cos, sin) [T, d] to rotate q and k by, or None. change: the
    Interventions, read at layer `index`; the captures asked for this layer are appended to sown's lists.
    """
    num_heads = cfg.num_attention_heads
    q = _split_heads(_dense(attn.self.query, x), num_heads)
    k = _split_heads(_dense(attn.self.key, x), num_heads)
    v = _split_heads(_dense(attn.self.value, x), num_heads)
    if rotary is not None:
        q, k = rotate(q, *rotary), rotate(k, *rotary)
    v = keep_values(v, change, index)
    scale = jnp.asarray(1.0 / (q.shape[-1] ** 0.5), q.dtype)
    scores = jnp.matmul(q * scale, jnp.swapaxes(k, -1, -2))  # [B, H, T, T]; the scale on q: T·d products, not T²
    probs, context = heads_output(bias_softmax(scores, bias), v, change, index)  # [B, H, T, T], [B, H, T, d]
    sow_attention(capture, sown, index, probs, q, k, v, scores, context)
    b, h, t, d = context.shape
    merged = jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, h * d)
    return _dense(attn.output.dense, merged)


def _positions(cfg: BertConfig, input_ids):
    # int32 [B, T] or [1, T]: rows of the position table. RoBERTa: padding_idx + 1 + the index among
    # non-padding tokens, padding_idx on padding (HF's create_position_ids_from_input_ids).
    if cfg.positions == "roberta":
        real = (input_ids != cfg.pad_token_id).astype(jnp.int32)
        return jnp.cumsum(real, axis=1) * real + cfg.pad_token_id
    return np.arange(input_ids.shape[1])[None]


def embed(model: BertModel, input_ids, token_type_ids):
    """Returns x [B, T, D]: word + position + token-type embeddings (those the family has), LayerNorm, then
    ELECTRA's projection to D.  ids int32 [B, T]; token types are read only when the model has more than one."""
    cfg, emb = model.config, model.embeddings
    x = emb.word_embeddings.embedding[...][input_ids]
    if cfg.positions != "rope":
        x = x + emb.position_embeddings.embedding[...][_positions(cfg, input_ids)]
    if cfg.type_vocab_size > 1:
        x = x + emb.token_type_embeddings.embedding[...][token_type_ids]
    elif cfg.type_vocab_size == 1:  # RoBERTa and XLM-R: every token is type 0, whatever the tokenizer says
        x = x + emb.token_type_embeddings.embedding[...][0]
    x = emb.LayerNorm(x)
    return _dense(model.embeddings_project, x) if cfg.embedding_size else x


def _mlp(layer: BertLayer, cfg: BertConfig, x):
    # [B, T, D] -> [B, T, D] before the residual: act(x W₁) W₂, or GeGLU act(x W_in) ⊙ (x W_gate) W₂.
    act = ACTIVATIONS[cfg.hidden_act]
    hidden = _dense(layer.intermediate.dense, x)
    if cfg.gated_mlp:
        hidden = act(hidden[..., : cfg.intermediate_size]) * hidden[..., cfg.intermediate_size :]
    else:
        hidden = act(hidden)
    return _dense(layer.output.dense, hidden)


def encoder(model: BertModel, input_ids, token_type_ids, key_mask, *, capture: Capture = PLAIN,
            interventions: Interventions | None = None, stream=None) -> dict[str, Any]:
    """Returns the forward's outputs as a dict: "final" (the last hidden states [B, T, D], after the final norm
    of a pre-norm model) and what capture asks for: CAPTURED names as tuples over the chosen layers (maps α
    [B, H, T, T], exactly 0 on padding keys and outside a sliding layer's window; queries and keys after RoPE,
    values [B, H, T, d]; scores q·k/√d before the mask [B, H, T, T]; heads [B, H, T, d]), and "residual"
    [L + 1, B, T, D] (the stream entering each layer and after the last, before any final norm: Hugging Face's
    hidden_states). An encoder has no logits: capture.logits is not read.

    input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T], True = a real token. interventions: as in
    models/capture.py, with value_keep {layer: [B, T]}. What no output needs is left out by XLA when jitted
    (the layers above the last capture, the last layer's values and feed-forward when only maps are asked).
    stream [B, T, D]: read in place of the embeddings' output (what gradients and attributions differentiate).
    """
    cfg = model.config
    change = Interventions() if interventions is None else interventions
    x = embed(model, input_ids, token_type_ids) if stream is None else stream
    biases = {FULL: key_bias(key_mask)}  # [B, 1, 1, T]
    if SLIDING in cfg.layer_types:
        biases[SLIDING] = window_bias(key_mask, cfg.window)  # [B, 1, T, T]
    rotary = {}
    if cfg.positions == "rope":
        t, d = input_ids.shape[1], cfg.head_dim
        rotary = {FULL: rotary_tables(t, d, cfg.rope_theta), SLIDING: rotary_tables(t, d, cfg.local_rope_theta)}
    sown, rows = {name: [] for name in CAPTURED}, [x]
    for index, layer in enumerate(model.encoder.layer):
        kind = cfg.layer_type(index)
        normed = layer.attn_norm(x) if cfg.pre_norm and index else x
        out = attention(layer.attention, cfg, normed, biases[kind], index=index, change=change, capture=capture,
                        sown=sown, rotary=rotary.get(kind))
        if cfg.pre_norm:
            x = x + out
            x = x + _mlp(layer, cfg, layer.mlp_norm(x))
        else:
            x = layer.attention.output.LayerNorm(out + x)
            x = layer.output.LayerNorm(_mlp(layer, cfg, x) + x)
        rows.append(x)
    out: dict[str, Any] = {"final": model.final_norm(x) if cfg.pre_norm else x}
    out.update({name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)})
    if capture.residual:
        out["residual"] = jnp.stack(rows)
    return out

"""Character-level seq2seq with pluggable attention (Bahdanau 2015; Luong, Pham & Manning 2015).

Encoder: embedding + bidirectional GRU over the source characters (padding masked, the
backward direction starts at each sequence's real end). Decoder: a GRU that emits the 10
characters of YYYY-MM-DD, one per step, under one of the attention variants:

- ``bahdanau``: additive score from the previous decoder state s_{i-1};
  c_i feeds the GRU and the read-out.
- ``luong-dot``, ``luong-general``, ``luong-concat``, ``luong-location``: global attention
  scored from the current state h_t; attentional state h̃_t = tanh(W_c [c_t; h_t]) gives the
  logits and is fed to the next step (Luong's input feeding).
- ``local-m`` (p_t = t) and ``local-p`` (p_t = S·sigmoid(v_pᵀ tanh(W_p h_t))): general score
  inside the window [p_t − D, p_t + D], times a Gaussian with σ = D/2.
- ``no-attention`` and ``no-attention-mean``: no attention (Sutskever, Vinyals & Le 2014). The
  decoder reads one context vector c = q(h_1, …, h_T) — the last annotation h_T, or the mean of
  the h_j — as its initial state s_0 = tanh(W_s c) and, in place of Bahdanau's c_i, at every step:
  Bahdanau's decoder with c_i = c, so attention is the only difference. Its "α" is q's fixed
  weights (one-hot on the last character, or 1/T), the same at every step and blind to content.

All maths comes from models/attention.py. Modules own parameters only; ``apply`` is the
pure function of (params, inputs) that the training loop and inference jit.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import attention as core
from models.seq2seq.config import (  # noqa: F401 - re-exported: the model's settings live in config.py
    ALL_VARIANTS,
    BATCH_BUCKETS,
    BOS_ID,
    GLOBAL_LUONG,
    LENGTH_BUCKETS,
    LOCAL_VARIANTS,
    NO_ATTENTION_VARIANTS,
    PRESETS,
    VARIANTS,
    Seq2SeqConfig,
    batch_rows,
    pad_batch,
    teacher_inputs,
)
from models.seq2seq.task import OUTPUT_LENGTH


def _glorot(rngs: nnx.Rngs, fan_in: int, fan_out: int) -> nnx.Param:
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return nnx.Param(jax.random.uniform(rngs.params(), (fan_in, fan_out), jnp.float32, -limit, limit))


class GRU(nnx.Module):
    """GRU cell parameters (update/reset/candidate gates stacked on the last axis)."""

    def __init__(self, in_dim: int, hidden: int, *, rngs: nnx.Rngs):
        self.w_x = _glorot(rngs, in_dim, 3 * hidden)  # [in, 3H]
        self.w_h = _glorot(rngs, hidden, 3 * hidden)  # [H, 3H]
        self.b_x = nnx.Param(jnp.zeros((3 * hidden,), jnp.float32))
        self.b_h = nnx.Param(jnp.zeros((3 * hidden,), jnp.float32))


def gru_step(cell: GRU, x_proj, h):
    """Returns the next state.  x_proj [B, 3H] = x W_x + b_x (precomputed), h [B, H]."""
    gh = h @ cell.w_h[...] + cell.b_h[...]
    xr, xz, xn = jnp.split(x_proj, 3, axis=-1)
    hr, hz, hn = jnp.split(gh, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return (1.0 - z) * n + z * h


def _run_gru(cell: GRU, inputs, mask, h0):
    """Returns (states [B, T, H], final [B, H]); padded steps keep the state and output 0.

    inputs [B, T, in], mask [B, T] bool.
    """
    x_proj = inputs @ cell.w_x[...] + cell.b_x[...]  # [B, T, 3H]

    def step(h, xs):
        xp, m = xs
        h_new = gru_step(cell, xp, h)
        h = jnp.where(m[:, None], h_new, h)
        return h, h * m[:, None]

    final, states = jax.lax.scan(step, h0, (jnp.swapaxes(x_proj, 0, 1), jnp.swapaxes(mask, 0, 1)))
    return jnp.swapaxes(states, 0, 1), final


def _reverse_within_length(x, lengths):
    """Returns x with each row's first `length` steps reversed (padding stays in place).  x [B, T, ...]."""
    positions = jnp.arange(x.shape[1])[None, :]
    index = jnp.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)
    return jnp.take_along_axis(x, index.reshape(*index.shape, *([1] * (x.ndim - 2))), axis=1)


class Seq2Seq(nnx.Module):
    """Parameters of the encoder, the decoder and the chosen attention variant."""

    def __init__(self, cfg: Seq2SeqConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        e, hd, a = cfg.encoder_hidden, cfg.decoder_hidden, cfg.attention_dim
        enc_dim = 2 * e
        self.source_embed = nnx.Param(0.3 * jax.random.normal(rngs.params(), (cfg.source_vocab, cfg.embed_dim)))
        self.target_embed = nnx.Param(0.3 * jax.random.normal(rngs.params(), (cfg.target_vocab, cfg.target_embed_dim)))
        self.encoder_fwd = GRU(cfg.embed_dim, e, rngs=rngs)
        self.encoder_bwd = GRU(cfg.embed_dim, e, rngs=rngs)
        self.bridge = _glorot(rngs, enc_dim, hd)  # encoder final states -> decoder s_0
        self.bridge_b = nnx.Param(jnp.zeros((hd,), jnp.float32))
        v = cfg.variant
        # Bahdanau feeds c_i into the GRU; Luong feeds the previous attentional state h̃_{t−1}.
        feed_dim = enc_dim if _reads_context(v) else hd
        self.decoder = GRU(cfg.target_embed_dim + feed_dim, hd, rngs=rngs)
        if _reads_context(v):
            if v == "bahdanau":
                self.att_w = _glorot(rngs, hd, a)  # stored (in, out); core wants [d_a, d]
                self.att_u = _glorot(rngs, enc_dim, a)
                self.att_v = nnx.Param(jax.random.uniform(rngs.params(), (a,), jnp.float32, -0.1, 0.1))
            self.readout = _glorot(rngs, hd + enc_dim + cfg.target_embed_dim, hd)
        else:
            if v in ("luong-general", "local-m", "local-p"):
                self.att_w = _glorot(rngs, hd, enc_dim)
            elif v == "luong-concat":
                self.att_w = _glorot(rngs, hd + enc_dim, a)
                self.att_v = nnx.Param(jax.random.uniform(rngs.params(), (a,), jnp.float32, -0.1, 0.1))
            elif v == "luong-location":
                self.att_w = _glorot(rngs, hd, cfg.max_source)
            if v == "local-p":
                self.pos_w = _glorot(rngs, hd, a)
                self.pos_v = nnx.Param(jax.random.uniform(rngs.params(), (a,), jnp.float32, -0.1, 0.1))
            self.combine = _glorot(rngs, enc_dim + hd, hd)  # W_c [c_t; h_t]
        self.readout_b = nnx.Param(jnp.zeros((hd,), jnp.float32))
        self.output = _glorot(rngs, hd, cfg.target_vocab)
        self.output_b = nnx.Param(jnp.zeros((cfg.target_vocab,), jnp.float32))

    # ------------------------------------------------------------------ encoder

    def encode(self, src_ids, src_len):
        """Returns (annotations [B, T, 2E], decoder s_0 [B, Hd]).  src_ids [B, T], src_len [B]."""
        mask = jnp.arange(src_ids.shape[1])[None, :] < src_len[:, None]
        x = self.source_embed[...][src_ids]
        b, e = src_ids.shape[0], self.cfg.encoder_hidden
        h0 = jnp.zeros((b, e), jnp.float32)
        fwd, fwd_final = _run_gru(self.encoder_fwd, x, mask, h0)
        bwd_rev, bwd_final = _run_gru(self.encoder_bwd, _reverse_within_length(x, src_len), mask, h0)
        bwd = _reverse_within_length(bwd_rev, src_len)
        states = jnp.concatenate([fwd, bwd], axis=-1)
        s0 = jnp.tanh(jnp.concatenate([fwd_final, bwd_final], -1) @ self.bridge[...] + self.bridge_b[...])
        return states, s0

    def context(self, enc, src_len):
        """Returns (c [B, 2E], q's weights [B, T]) of the no-attention variants: c = Σ_j w_j h_j with
        w one-hot on the last character (no-attention) or 1/T (no-attention-mean).  enc [B, T, 2E]."""
        positions = jnp.arange(enc.shape[1])[None, :]
        if self.cfg.variant == "no-attention":
            weights = (positions == src_len[:, None] - 1).astype(jnp.float32)
        else:
            weights = (positions < src_len[:, None]).astype(jnp.float32) / src_len[:, None].astype(jnp.float32)
        return jnp.einsum("bt,btd->bd", weights, enc), weights

    # ------------------------------------------------------------------ attention

    def attend(self, query, enc, mask, src_len, step, window):
        """Returns (α [B, T], centre p_t [B]) for one decoder step.

        query [B, Hd] (s_{i−1} for Bahdanau, h_t for Luong), enc [B, T, 2E], mask [B, T],
        step: the output position t, window: D (traced, so the slider never recompiles).
        """
        v, q = self.cfg.variant, query[:, None, :]  # [B, 1, Hd]
        centers = jnp.full(query.shape[:1], -1.0, jnp.float32)
        if v == "bahdanau":
            scores = core.additive_scores(q, enc, self.att_w[...].T, self.att_u[...].T, self.att_v[...])
        elif v == "luong-dot":
            scores = core.dot_scores(q, enc)
        elif v in ("luong-general", "local-m", "local-p"):
            scores = core.general_scores(q, enc, self.att_w[...])
        elif v == "luong-concat":
            scores = core.concat_scores(q, enc, self.att_w[...].T, self.att_v[...])
        else:  # luong-location: a_t = softmax(W_a h_t), sliced to the padded source length
            scores = core.location_scores(q, self.att_w[...].T)[..., : enc.shape[1]]
        if v in LOCAL_VARIANTS:
            if v == "local-m":
                centers = jnp.full(query.shape[:1], step, jnp.float32)
            else:
                centers = core.local_p_centers(q, self.pos_w[...].T, self.pos_v[...], src_len.astype(jnp.float32))[:, 0]
            alpha = core.local_attention_weights(scores, centers[:, None], window, mask[:, None, :])
        else:
            alpha = core.masked_softmax(scores, mask[:, None, :])
        return alpha[:, 0, :], centers

    # ------------------------------------------------------------------ decoder

    def __call__(self, src_ids, src_len, tgt_in, window, *, teacher_forcing: bool, alpha=None):
        """Returns (logits [B, 10, V], α [B, 10, T], centres [B, 10]).

        src_ids int [B, T] (padded), src_len int [B], tgt_in int [B, 10] (<s> then the target
        shifted right; only read with teacher_forcing), window: D for the local variants.
        Without teacher forcing each step reads the previous step's argmax (greedy).
        alpha: an intervention, float [B, 10, T] read at each step instead of the model's own α (see decode).
        """
        enc, s0 = self.encode(src_ids, src_len)
        return self.decode(enc, s0, src_len, tgt_in, window, teacher_forcing=teacher_forcing, alpha=alpha)

    def decode(self, enc, s0, src_len, tgt_in, window, *, teacher_forcing: bool, alpha=None):
        """Returns (logits [B, 10, V], α [B, 10, T], centres [B, 10]) from the annotations enc [B, T, 2E]
        and the bridged initial state s0 [B, Hd]. The no-attention variants read c = q(enc) alone:
        their s0 is tanh(W_s c), the s0 given is not used.

        alpha: None, or float [B, 10, T]: step t reads alpha[:, t] in place of its own α (the counterfactual
        tests of models/counterfactual: an adversarial, permuted or uniform α); the α returned is the one read.
        Without it every output is what it was before this option existed."""
        mask = jnp.arange(enc.shape[1])[None, :] < src_len[:, None]
        b, v = enc.shape[0], self.cfg.variant
        if alpha is not None and v in NO_ATTENTION_VARIANTS:
            raise ValueError(f"{v} has no attention to override")
        fixed = None
        if v in NO_ATTENTION_VARIANTS:
            fixed, pooling = self.context(enc, src_len)
            s0 = jnp.tanh(fixed @ self.bridge[...] + self.bridge_b[...])
        feed0 = jnp.zeros((b, enc.shape[-1] if _reads_context(v) else self.cfg.decoder_hidden), jnp.float32)
        token0 = jnp.full((b,), BOS_ID, jnp.int32)
        emb = self.target_embed[...]

        def step(carry, xs):
            s_prev, feed, prev_token = carry
            t, teacher_token, override = xs
            token = teacher_token if teacher_forcing else prev_token
            y = emb[token]
            if fixed is not None:  # no attention: the same c at every step
                alpha, centers, context = pooling, jnp.full((b,), -1.0, jnp.float32), fixed
            elif v == "bahdanau":
                alpha, centers = self.attend(s_prev, enc, mask, src_len, t, window)
                alpha = alpha if override is None else override
                context = jnp.einsum("bt,btd->bd", alpha, enc)
            if _reads_context(v):
                x = jnp.concatenate([y, context], -1)
                s = gru_step(self.decoder, x @ self.decoder.w_x[...] + self.decoder.b_x[...], s_prev)
                out = jnp.tanh(jnp.concatenate([s, context, y], -1) @ self.readout[...] + self.readout_b[...])
                feed = context
            else:
                x = jnp.concatenate([y, feed], -1)
                s = gru_step(self.decoder, x @ self.decoder.w_x[...] + self.decoder.b_x[...], s_prev)
                alpha, centers = self.attend(s, enc, mask, src_len, t, window)
                alpha = alpha if override is None else override
                context = jnp.einsum("bt,btd->bd", alpha, enc)
                out = jnp.tanh(jnp.concatenate([context, s], -1) @ self.combine[...] + self.readout_b[...])
                feed = out
            logits = out @ self.output[...] + self.output_b[...]
            next_token = jnp.argmax(logits, -1).astype(jnp.int32)
            return (s, feed, next_token), (logits, alpha, centers)

        steps = jnp.arange(OUTPUT_LENGTH, dtype=jnp.float32)
        overrides = None if alpha is None else jnp.swapaxes(alpha, 0, 1)
        xs = (steps, jnp.swapaxes(tgt_in, 0, 1), overrides)
        _, (logits, alpha, centers) = jax.lax.scan(step, (s0, feed0, token0), xs)
        return jnp.swapaxes(logits, 0, 1), jnp.swapaxes(alpha, 0, 1), jnp.swapaxes(centers, 0, 1)


def _reads_context(variant: str) -> bool:
    # Bahdanau's decoder: c_i (or the one c) enters the GRU and the read-out.
    return variant == "bahdanau" or variant in NO_ATTENTION_VARIANTS


# ----------------------------------------------------------------------- pure functions


def make_model(cfg: Seq2SeqConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(Seq2Seq(cfg, rngs=nnx.Rngs(seed)))


@partial(jax.jit, static_argnames=("graphdef", "teacher_forcing"))
def apply(graphdef, params, src_ids, src_len, tgt_in, window, teacher_forcing: bool = False, alpha=None):
    """Returns (logits [B, 10, V], α [B, 10, T], centres [B, 10]) — see Seq2Seq.__call__ (alpha: its override)."""
    model = nnx.merge(graphdef, params)
    return model(src_ids, src_len, tgt_in, window, teacher_forcing=teacher_forcing, alpha=alpha)


@partial(jax.jit, static_argnames=("graphdef",))
def apply_context(graphdef, params, src_ids, src_len):
    """Returns (c [B, 2E], q's weights [B, T]) of a no-attention variant: what its decoder reads."""
    model = nnx.merge(graphdef, params)
    enc, _ = model.encode(src_ids, src_len)
    return model.context(enc, src_len)


@partial(jax.jit, static_argnames=("graphdef", "teacher_forcing"))
def apply_decoder(graphdef, params, enc, s0, src_len, tgt_in, window, teacher_forcing: bool = False, alpha=None):
    """Returns Seq2Seq.decode's (logits, α, centres) from given annotations enc [B, T, 2E] and s0 [B, Hd]
    (alpha: its override)."""
    model = nnx.merge(graphdef, params)
    return model.decode(enc, s0, src_len, tgt_in, window, teacher_forcing=teacher_forcing, alpha=alpha)

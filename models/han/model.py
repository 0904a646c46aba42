"""Hierarchical attention network (Yang et al., 2016) in flax.nnx.

Word level:      h_it = BiGRU(x_it);  u_it = tanh(W_w h_it + b_w);
                 α_it = softmax_t(u_itᵀ u_w);  s_i = Σ_t α_it h_it
Sentence level:  h_i = BiGRU(s_i);  u_i = tanh(W_s h_i + b_s);
                 α_i = softmax_i(u_iᵀ u_s);  v = Σ_i α_i h_i
Classifier:      one softmax head per label (the built-in model: sentiment and topic).

x_it are frozen MiniLM vectors of the word pieces (models/han/features.py: its contextual
token vectors, its input embeddings, or both), computed outside and passed in, so they are
never part of the checkpoint. Attention runs over word pieces; a word's weight is the sum of
its pieces' weights.

Shapes: B documents, S sentences, T pieces per sentence, E = 384 or 768, H = GRU width per direction.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from flax import nnx

from models import attention as core
from models.family_checkpoint import FamilyCheckpoint

EMBED_DIM = 384


@dataclass(frozen=True)
class HANConfig:
    """Sizes and label heads. heads: ((head name, (class names...)), ...).

    features: which frozen MiniLM vectors the network reads (models/han/features.py FEATURES);
    embed_dim their width. A checkpoint from before features existed read "embeddings".
    """

    heads: tuple[tuple[str, tuple[str, ...]], ...]
    word_hidden: int = 48
    word_attention: int = 64
    sentence_hidden: int = 48
    sentence_attention: int = 64
    embed_dim: int = EMBED_DIM
    features: str = "embeddings"


REVIEW_HEADS = (("sentiment", ("negative", "positive")), ("topic", ("quality", "service", "price", "ambience")))
REVIEWS = HANConfig(heads=REVIEW_HEADS, features="contextual")
TINY = HANConfig(heads=(("label", ("a", "b")),), word_hidden=4, word_attention=4, sentence_hidden=4, sentence_attention=4, embed_dim=8)


class BiGRU(nnx.Module):
    """A bidirectional GRU over a padded axis; outputs [..., T, 2H] (forward ‖ backward)."""

    def __init__(self, in_features: int, hidden: int, *, rngs: nnx.Rngs):
        self.hidden = hidden
        # Input projections for all steps at once (one matmul); recurrence in lax.scan.
        self.fwd_in = nnx.Linear(in_features, 3 * hidden, rngs=rngs)
        self.fwd_rec = nnx.Linear(hidden, 3 * hidden, rngs=rngs)
        self.bwd_in = nnx.Linear(in_features, 3 * hidden, rngs=rngs)
        self.bwd_rec = nnx.Linear(hidden, 3 * hidden, rngs=rngs)

    def __call__(self, x, mask):
        """x [N, T, F], mask [N, T] bool (True = real step; padding only at the end)."""
        fwd = _gru_scan(self.fwd_in(x), mask, self.fwd_rec, reverse=False)
        bwd = _gru_scan(self.bwd_in(x), mask, self.bwd_rec, reverse=True)
        return jnp.concatenate([fwd, bwd], axis=-1)


def _gru_scan(x_proj, mask, rec: nnx.Linear, *, reverse: bool):
    # x_proj [N, T, 3H]; padded steps keep the state (zero before the first real step when
    # reading backwards), so the backward pass starts at each sequence's own last word.
    n, _, h3 = x_proj.shape
    hidden = h3 // 3
    kernel, bias = rec.kernel[...], rec.bias[...]

    def step(h, inputs):
        xp, m = inputs
        hp = h @ kernel + bias
        r = jax.nn.sigmoid(xp[:, :hidden] + hp[:, :hidden])
        z = jax.nn.sigmoid(xp[:, hidden : 2 * hidden] + hp[:, hidden : 2 * hidden])
        cand = jnp.tanh(xp[:, 2 * hidden :] + r * hp[:, 2 * hidden :])
        new = (1.0 - z) * cand + z * h
        new = jnp.where(m[:, None], new, h)
        return new, jnp.where(m[:, None], new, 0.0)

    h0 = jnp.zeros((n, hidden), x_proj.dtype)
    _, out = jax.lax.scan(step, h0, (jnp.swapaxes(x_proj, 0, 1), jnp.swapaxes(mask, 0, 1)), reverse=reverse)
    return jnp.swapaxes(out, 0, 1)


class ContextAttention(nnx.Module):
    """Inner attention against a trainable context vector u: α = softmax(tanh(W h + b)ᵀ u)."""

    def __init__(self, in_features: int, attention_dim: int, *, rngs: nnx.Rngs):
        self.proj = nnx.Linear(in_features, attention_dim, rngs=rngs)
        self.context = nnx.Param(jax.random.normal(rngs.params(), (attention_dim,)) * 0.1)

    def scores(self, h):
        """Returns u·u_ctx per step.  h [..., T, F] -> [..., T]."""
        return jnp.tanh(self.proj(h)) @ self.context[...]

    def __call__(self, h, mask, alpha=None):
        """Returns (summary [..., F], α [..., T]).  h [..., T, F], mask [..., T] bool.

        alpha: None, or float [..., T] read in place of the module's own α (an intervention)."""
        if alpha is None:
            alpha = core.masked_softmax(self.scores(h), mask)
        summary = core.context_vector(alpha[..., None, :], h)[..., 0, :]
        return summary, alpha


class HAN(nnx.Module):
    """Words -> sentence vectors -> document vector -> one logit vector per head."""

    def __init__(self, cfg: HANConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.word_encoder = BiGRU(cfg.embed_dim, cfg.word_hidden, rngs=rngs)
        self.word_attention = ContextAttention(2 * cfg.word_hidden, cfg.word_attention, rngs=rngs)
        self.sentence_encoder = BiGRU(2 * cfg.word_hidden, cfg.sentence_hidden, rngs=rngs)
        self.sentence_attention = ContextAttention(2 * cfg.sentence_hidden, cfg.sentence_attention, rngs=rngs)
        self.heads = nnx.List([nnx.Linear(2 * cfg.sentence_hidden, len(classes), rngs=rngs) for _, classes in cfg.heads])

    def __call__(self, x, piece_mask, sentence_mask, word_alpha=None, sentence_alpha=None):
        """x [B, S, T, E], piece_mask [B, S, T], sentence_mask [B, S].

        Returns (logits: tuple of [B, C_k], word α [B, S, T], sentence α [B, S],
        word scores [B, S, T], sentence scores [B, S]) (scores = uᵀu_ctx before the softmax).
        word_alpha [B, S, T], sentence_alpha [B, S]: interventions, read in place of the network's own α at
        that level (models/counterfactual); the α returned are the ones read. Without them nothing changes.
        """
        b, s, t, e = x.shape
        words = self.word_encoder(x.reshape(b * s, t, e), piece_mask.reshape(b * s, t))  # [B·S, T, 2H]
        word_override = None if word_alpha is None else word_alpha.reshape(b * s, t)
        sent_vec, word_alpha = self.word_attention(words, piece_mask.reshape(b * s, t), word_override)
        word_scores = self.word_attention.scores(words).reshape(b, s, t)
        sents = self.sentence_encoder(sent_vec.reshape(b, s, -1), sentence_mask)  # [B, S, 2H]
        doc, sent_alpha = self.sentence_attention(sents, sentence_mask, sentence_alpha)
        logits = tuple(head(doc) for head in self.heads)
        return logits, word_alpha.reshape(b, s, t), sent_alpha, word_scores, self.sentence_attention.scores(sents)


# checkpoints/han/han.safetensors, and the bytes of the app's "download your model" button: the trainable
# parameters only (the frozen MiniLM vectors it reads come from the installed model package, never copied in).
CHECKPOINT = FamilyCheckpoint("han", HANConfig, HAN, "han.safetensors")


@functools.lru_cache(maxsize=8)
def compiled_forward(graphdef) -> Callable:
    """Returns jit((state, x [B, S, T, E], piece_mask, sentence_mask) -> model outputs)."""

    @jax.jit
    def forward(state, x, piece_mask, sentence_mask):
        return nnx.merge(graphdef, state)(x, piece_mask, sentence_mask)

    return forward

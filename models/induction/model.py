"""A two-layer attention-only causal transformer (no MLPs), after Elhage et al. (2021).

    x_0 = E[tokens] + P[positions]
    x_{l+1} = x_l + Σ_h softmax_causal(Q_h K_hᵀ / √d) V_h W_O,h     with Q, K, V from LN(x_l)
    logits = LN(x_2) U

Each layer's heads read a layer norm of the residual stream and write back into it; there is
no MLP, so everything the model computes is attention and the paths through it. An induction
head needs both layers: a layer-0 head copies the previous token into each position, and a
layer-1 head's key reads it (K-composition), so it attends to "the token after an earlier
copy of me" and copies that token to the output.

Modules own parameters only. The forward is the decoder LMs' one forward (models/lm/forward.py):
this is GPT-2 without biases and without MLPs (``lm_config``, ``decoder_view``), so every view
(maps, q/k, each head's output, the residual stream, head knock-out, attention overrides, value
zeroing) comes from the same code as the language models'. ``run`` is the jitted pure function of
(params, tokens).
Shapes: B = batch, T = tokens, D = width, H = heads, d = D / H, V = vocabulary, L = layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import padding
from models.capture import Capture, Interventions
from models.induction.task import SEQUENCE_LENGTH, VOCAB
from models.lm.config import LMConfig
from models.lm.forward import decoder

# Inputs are padded at the end to one of these lengths: causal attention never looks ahead,
# so padding changes nothing for the real positions, and only three shapes ever compile.
LENGTH_BUCKETS = (16, 32, SEQUENCE_LENGTH)
BATCH_BUCKETS = (1, 8, 64)
MAPS = Capture(maps=True)  # the logits and every layer's attention


@dataclass(frozen=True)
class InductionConfig:
    """Sizes of the attention-only transformer; frozen, so it doubles as a cache key."""

    vocab: int = len(VOCAB)
    max_length: int = SEQUENCE_LENGTH
    layers: int = 2
    heads: int = 4
    width: int = 64

    def __post_init__(self):
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of {self.heads} heads")

    @property
    def head_dim(self) -> int:
        """Returns d = width / heads."""
        return self.width // self.heads


PRESETS = {"induction": InductionConfig(), "tiny": InductionConfig(heads=2, width=16)}


def _normal(rngs: nnx.Rngs, shape: tuple[int, ...], std: float) -> nnx.Param:
    return nnx.Param(std * jax.random.normal(rngs.params(), shape, jnp.float32))


class AttentionLayer(nnx.Module):
    """One layer's parameters: its layer norm and every head's W_Q, W_K, W_V, W_O."""

    def __init__(self, cfg: InductionConfig, *, rngs: nnx.Rngs):
        d, h, k = cfg.width, cfg.heads, cfg.head_dim
        self.norm_scale = nnx.Param(jnp.ones((d,), jnp.float32))
        self.norm_bias = nnx.Param(jnp.zeros((d,), jnp.float32))
        self.w_q = _normal(rngs, (d, h, k), d**-0.5)  # [D, H, d]
        self.w_k = _normal(rngs, (d, h, k), d**-0.5)
        self.w_v = _normal(rngs, (d, h, k), d**-0.5)
        self.w_o = _normal(rngs, (h, k, d), (h * k) ** -0.5 / np.sqrt(2 * cfg.layers))  # [H, d, D]


class AttentionOnly(nnx.Module):
    """Parameters of the whole model: embeddings, the attention layers, the final norm, the unembedding."""

    def __init__(self, cfg: InductionConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.token_embed = _normal(rngs, (cfg.vocab, cfg.width), 0.5)  # [V, D]
        self.position_embed = _normal(rngs, (cfg.max_length, cfg.width), 0.5)  # [Tmax, D]
        self.layers = nnx.List([AttentionLayer(cfg, rngs=rngs) for _ in range(cfg.layers)])
        self.final_scale = nnx.Param(jnp.ones((cfg.width,), jnp.float32))
        self.final_bias = nnx.Param(jnp.zeros((cfg.width,), jnp.float32))
        self.unembed = _normal(rngs, (cfg.width, cfg.vocab), cfg.width**-0.5)  # [D, V]


# ----------------------------------------------------------------------- the forward


def lm_config(cfg: InductionConfig) -> LMConfig:
    """Returns the decoder-LM config of this architecture: GPT-2's learned positions, LayerNorm (eps 1e-5) and
    1/√d scale, no biases, an untied unembedding, and no MLP (intermediate_size 0)."""
    return LMConfig(model_type="gpt2", vocab_size=cfg.vocab, hidden_size=cfg.width, num_layers=cfg.layers,
                    num_heads=cfg.heads, num_kv_heads=cfg.heads, head_dim=cfg.head_dim, intermediate_size=0,
                    max_positions=cfg.max_length, norm_eps=1e-5, activation="relu", qkv_bias=False, o_bias=False,
                    mlp_bias=False, tie_word_embeddings=False)


def decoder_view(model: AttentionOnly) -> SimpleNamespace:
    """Returns the model's parameters as models/lm/forward.py's decoder reads them ([D, H, d] -> [D, H·d], [H, d, D]
    -> [H·d, D])."""
    d = model.cfg.width

    def dense(kernel):
        return SimpleNamespace(kernel=kernel, bias=None)

    def norm(scale, bias):
        return SimpleNamespace(scale=scale[...], bias=bias[...])

    layers = [SimpleNamespace(
        attn_norm=norm(layer.norm_scale, layer.norm_bias), q=dense(layer.w_q[...].reshape(d, -1)),
        k=dense(layer.w_k[...].reshape(d, -1)), v=dense(layer.w_v[...].reshape(d, -1)),
        o=dense(layer.w_o[...].reshape(-1, d)),
    ) for layer in model.layers]
    return SimpleNamespace(config=lm_config(model.cfg), embed=model.token_embed[...], positions=model.position_embed[...],
                           layers=layers, final_norm=norm(model.final_scale, model.final_bias),
                           lm_head=dense(model.unembed[...]))


def training_logits(model: AttentionOnly, tokens):
    """Returns the forward's logits [B, T, V] of tokens int [B, T], the embedding read as a one-hot product: on CPU
    the gather's gradient (a scatter-add) costs more than the rest of the training step."""
    x = jax.nn.one_hot(tokens, model.cfg.vocab, dtype=jnp.float32) @ model.token_embed[...]
    x = x + model.position_embed[...][: tokens.shape[1]][None]
    return decoder(decoder_view(model), tokens, stream=x)["logits"]


@partial(jax.jit, static_argnames=("graphdef", "capture"))
def run(graphdef, params, tokens, *, capture: Capture = MAPS, interventions: Interventions | None = None):
    """Returns models/lm/forward.py decoder's dict (without "final") of tokens int [B, T], T <= max_length:
    "logits" [B, T, V] and what capture asks for (default: the maps, L arrays [B, H, T, T])."""
    out = decoder(decoder_view(nnx.merge(graphdef, params)), tokens, capture=capture, interventions=interventions)
    del out["final"]
    return out


def apply(graphdef, params, tokens) -> tuple[np.ndarray, np.ndarray]:
    """Returns numpy (logits [B, T, V], attention [B, L, H, T, T]) of tokens int [B, T] (run's maps)."""
    out = run(graphdef, params, tokens)
    return np.asarray(out["logits"]), np.stack(out["maps"], axis=1)


def make_model(cfg: InductionConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(AttentionOnly(cfg, rngs=nnx.Rngs(seed)))


def pad_tokens(sequences: list[np.ndarray]) -> np.ndarray:
    """Returns int32 [rows, bucket]: the sequences padded at the end with [BOS] (id 0) to a length
    bucket, and with padding rows to a batch bucket. Causal attention keeps real positions exact."""
    width = padding.bucket(max(len(s) for s in sequences), LENGTH_BUCKETS)
    n = len(sequences)
    rows = padding.bucket(n, BATCH_BUCKETS) if n <= BATCH_BUCKETS[-1] else -(-n // BATCH_BUCKETS[-1]) * BATCH_BUCKETS[-1]
    out = np.zeros((rows, width), np.int32)
    for i, s in enumerate(sequences):
        out[i, : len(s)] = s
    return out

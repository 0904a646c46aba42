"""What the attribution methods read of each transformer, through its one forward (no other loop over layers):
the BERT-style encoders (models/transformer/model.py ``encoder``), the decoder LMs (models/lm/forward.py
``decoder``) and the date encoder–decoder (models/encdec/forward.py, its cross-attention: targets are the
emitted characters, keys the source characters). Built inside a jit, one example (batch 1, padded).

Targets (what gradients, occlusion and Chefer differentiate):
- encoder: row i is ⟨h_i(x), u_i⟩, h_i the last hidden state of token i and u_i = h_i / ‖h_i‖ at the actual
  input, held fixed: at the input it equals ‖h_i‖, and it is linear in h_i, so IG's completeness is exact;
- decoder: row t is log p(token t + 1 | tokens ≤ t);
- encoder–decoder: row t is log p(emitted character t | source, characters before), teacher-forced on the
  model's own greedy output.
The input stream x is the embedding's output (the residual stream entering layer 0). The baseline of
integrated gradients, which is also what occlusion puts in a token's place, keeps each position and removes the
token: the encoder's embeddings of [PAD] at every position (as Captum's BERT tutorial), the decoders' and the
encoder–decoder's average token (average_token: the mean embedding's direction at a token's typical length, plus
the positions). A zero stream is no baseline for a pre-norm model: its
first norm jumps from 0 to scale-free within a hair of the origin, and 64 quadrature points miss the jump.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.attribution.methods import run
from models.capture import Capture, Interventions
from models.record import InputError

PARTS = Capture(logits=False, maps=True, values=True, heads=True, residual=True)
RESIDUAL = Capture(logits=False, residual=True)
CROSS_PARTS = Capture(logits=False, maps=True, values=True, heads=True)  # a cross-attention has no stream of its own


def _bias(linear, width: int):
    # A projection's bias, or zeros where the model has none.
    bias = getattr(linear, "bias", None)
    return jnp.zeros((width,), jnp.float32) if bias is None else bias[...]


def _norm_offset(norm):
    # A LayerNorm's β, or None (RMSNorm, or a LayerNorm without a bias).
    bias = None if norm is None else getattr(norm, "bias", None)
    return None if bias is None else bias[...]


def _zeroing_keeps(num_layers: int, layer, keys: int) -> dict[int, Any]:
    # value_keep of a batch of `keys` rows: row j zeroes key j's values in `layer` (traced) and nowhere else.
    zeroing = 1.0 - jnp.eye(keys, dtype=jnp.float32)
    return {k: jnp.where(k == layer, zeroing, jnp.ones_like(zeroing)) for k in range(num_layers)}


def _first(out: dict[str, Any]) -> dict[str, Any]:
    # The captures of batch row 0: per-layer tuples and the residual [L + 1, T, D].
    return {
        name: (value[:, 0] if name == "residual" else tuple(v[0] for v in value))
        for name, value in out.items()
        if name in ("maps", "values", "heads", "residual")
    }


def average_token(table):
    """Returns the direction of the mean row of an embedding table [V, D] at the mean row's length: a token of
    typical size that is no token in particular (the plain mean of a random table is near 0)."""
    mean = jnp.mean(table, axis=0)
    size = jnp.mean(jnp.linalg.norm(table, axis=-1))
    return mean * (size / jnp.maximum(jnp.linalg.norm(mean), 1e-12))


def _merge_heads(heads):
    # [H, Q, d] -> [Q, H·d]
    return jnp.transpose(heads, (1, 0, 2)).reshape(heads.shape[1], -1)


class _Adapter:
    """What every adapter shares: the plain pass of its one forward (`_forward`, the architecture's own) that
    captures the parts, and its first batch row."""

    def _forward(self, **kwargs):
        raise NotImplementedError

    @cached_property
    def _plain(self):
        return self._forward(capture=PARTS)

    def captures(self):
        return _first(self._plain)

    def _keys(self) -> int:
        return self.ids.shape[1]

    def _residual_kept(self, keys: int, keep) -> dict[str, Any]:
        # The forward over `keys` copies of the input with value_keep=keep; its "residual" [L + 1, keys, T, D].
        raise NotImplementedError

    def zeroed(self, layer):
        """Returns (the stream after `layer` [K, T, D], row k with key k's values zeroed there, the plain one [T, D]):
        value zeroing's one forward of K rows (K: the keys of the attention it measures)."""
        keys = self._keys()
        out = self._residual_kept(keys, _zeroing_keeps(self.num_layers, layer, keys))
        return out["residual"][layer + 1], self._plain["residual"][layer + 1, 0]


class EncoderAdapter(_Adapter):
    """A BERT-style encoder (post-norm as BERT, or pre-norm) over ids, types int32 [1, T], mask bool [1, T]."""

    def __init__(self, model, ids, types, mask):
        self.model, self.ids, self.types, self.mask = model, ids, types, mask
        cfg = model.config
        self.num_layers, self.num_heads = cfg.num_hidden_layers, cfg.num_attention_heads
        self.pre_norm = bool(getattr(cfg, "pre_norm", False))

    def _forward(self, **kwargs):
        from models.transformer.model import encoder

        return encoder(self.model, self.ids, self.types, self.mask, **kwargs)

    def _attention(self, layer: int):
        return self.model.encoder.layer[layer].attention

    def out_projection(self, layer: int):
        dense = self._attention(layer).output.dense
        return dense.kernel[...], _bias(dense, dense.kernel.shape[1])

    def value_bias(self, layer: int):
        value = self._attention(layer).self.value
        bias = _bias(value, value.kernel.shape[1])
        offset = _norm_offset(getattr(self.model.encoder.layer[layer], "attn_norm", None)) if self.pre_norm else None
        bias = bias if offset is None else bias + offset @ value.kernel[...]
        return bias.reshape(self.num_heads, -1)

    def alti_block(self, layer: int, parts: dict):
        x = parts["residual"][layer]
        w_o, b_o = self.out_projection(layer)
        summed = _merge_heads(parts["heads"][layer]) @ w_o + b_o + x
        if self.pre_norm:
            return x, None, summed
        norm = self._attention(layer).output.LayerNorm
        scale, offset = norm.scale[...], _norm_offset(norm)
        return x, (scale, 0.0 if offset is None else offset, norm.epsilon), norm(summed)

    def _residual_kept(self, keys: int, keep):
        from models.transformer.model import encoder

        ids, types, mask = (jnp.tile(a, (keys, 1)) for a in (self.ids, self.types, self.mask))
        return encoder(self.model, ids, types, mask, capture=RESIDUAL, interventions=Interventions(value_keep=keep))

    @cached_property
    def _direction(self):
        final = jax.lax.stop_gradient(self._plain["final"][0])
        return final / jnp.maximum(jnp.linalg.norm(final, axis=-1, keepdims=True), 1e-12)

    def stream(self):
        from models.transformer.model import embed

        pad = jnp.full_like(self.ids, self.model.config.pad_token_id)
        return embed(self.model, self.ids, self.types)[0], embed(self.model, pad, self.types)[0]

    def targets(self, x):
        return jnp.sum(self._forward(stream=x[None])["final"][0] * self._direction, axis=-1)

    def targets_of_maps(self, maps):
        change = Interventions(attention=dict(enumerate(maps)))
        return jnp.sum(self._forward(interventions=change)["final"][0] * self._direction, axis=-1)


class DecoderAdapter(_Adapter):
    """A decoder LM (models/lm) over ids int32 [1, T] and key_mask bool [1, T] (padding at the end)."""

    def __init__(self, model, ids, mask):
        self.model, self.ids, self.mask = model, ids, mask
        cfg = model.config
        self.cfg, self.num_layers, self.num_heads = cfg, cfg.num_layers, cfg.num_heads

    def _forward(self, **kwargs):
        from models.lm.forward import decoder

        return decoder(self.model, self.ids, key_mask=self.mask, **kwargs)

    def out_projection(self, layer: int):
        o = self.model.layers[layer].o
        return o.kernel[...], _bias(o, o.kernel.shape[1])

    def value_bias(self, layer: int):
        block = self.model.layers[layer]
        bias = _bias(block.v, block.v.kernel.shape[1])
        offset = _norm_offset(block.attn_norm)
        bias = bias if offset is None else bias + offset @ block.v.kernel[...]
        return bias.reshape(self.cfg.num_kv_heads, -1)

    def alti_block(self, layer: int, parts: dict):
        from models.lm.forward import project_heads

        refuse_alti(self.cfg)
        x = parts["residual"][layer]
        return x, None, x + project_heads(self.model.layers[layer], parts["heads"][layer][None])[0]

    def _residual_kept(self, keys: int, keep):
        from models.lm.forward import decoder

        ids, mask = (jnp.tile(a, (keys, 1)) for a in (self.ids, self.mask))
        return decoder(self.model, ids, key_mask=mask, capture=RESIDUAL, interventions=Interventions(value_keep=keep))

    def stream(self):
        from models.lm.forward import embed

        x = embed(self.model, self.ids, jnp.arange(self.ids.shape[1], dtype=jnp.int32))[0]
        table = self.model.embed[...]
        scale = np.sqrt(self.cfg.hidden_size) if getattr(self.cfg.arch, "embed_scale", False) else 1.0
        return x, x + (average_token(table) - table[self.ids[0]]) * scale  # positions kept

    def _log_p_next(self, logits):
        log_p = jax.nn.log_softmax(logits[0, :-1], axis=-1)
        return jnp.take_along_axis(log_p, self.ids[0, 1:, None], axis=-1)[:, 0]

    def targets(self, x):
        return self._log_p_next(self._forward(stream=x[None], capture=Capture(logits=True))["logits"])

    def targets_of_maps(self, maps):
        change = Interventions(attention=dict(enumerate(maps)))
        return self._log_p_next(self._forward(capture=Capture(logits=True), interventions=change)["logits"])


def refuse_alti(cfg) -> None:
    """Raises InputError for a decoder whose attention block ALTI's pre-norm decomposition does not cover."""
    norms = getattr(cfg.arch, "norms", "pre")
    if norms != "pre" or getattr(cfg, "parallel_residual", False):
        raise InputError(
            f"ALTI here decomposes pre-norm blocks (x + attention(norm(x))); {cfg.model_type} has "
            f"{'a parallel residual' if norms == 'pre' else 'norms after its sublayers'}"
        )


class EncDecAdapter(_Adapter):
    """The date encoder–decoder's cross-attention: src int32 [1, S], src_len [1], fed (<s> + output[:-1]) and
    tokens (the output) int32 [1, T]."""

    def __init__(self, model, src, src_len, fed, tokens):
        self.model, self.src, self.src_len, self.fed, self.tokens = model, src, src_len, fed, tokens
        self.num_layers, self.num_heads = model.cfg.decoder_layers, model.cfg.num_heads

    def _forward(self, **kwargs):
        from models.encdec.forward import forward

        return forward(self.model, self.src, self.src_len, self.fed, **kwargs)

    @cached_property
    def _plain(self):
        from models.encdec.forward import KindCapture

        out = self._forward(capture=KindCapture(decoder=RESIDUAL, cross=CROSS_PARTS))
        return {**out["cross"], "residual": out["decoder"]["residual"]}

    def out_projection(self, layer: int):
        block = self.model.decoder[layer].cross_attention
        return block.w_o[...], block.b_o[...]

    def value_bias(self, layer: int):
        return self.model.decoder[layer].cross_attention.b_v[...].reshape(self.num_heads, -1)

    def alti_block(self, layer: int, parts: dict):
        raise InputError(NOT_APPLIED["alti"]["encdec"])

    def _keys(self) -> int:
        return self.src.shape[1]

    def _residual_kept(self, keys: int, keep):
        from models.encdec.forward import KindCapture, KindInterventions, forward

        src, src_len, fed = (
            jnp.tile(self.src, (keys, 1)),
            jnp.tile(self.src_len, (keys,)),
            jnp.tile(self.fed, (keys, 1)),
        )
        change = KindInterventions(cross=Interventions(value_keep=keep))
        return forward(self.model, src, src_len, fed, capture=KindCapture(decoder=RESIDUAL), change=change)["decoder"]

    def stream(self):
        from models.encdec.forward import embed
        from models.encdec.model import sinusoidal_positions

        s, width = self.src.shape[1], self.model.cfg.model_dim
        table = self.model.source_embed[...]
        x = embed(table, self.src, jnp.asarray(sinusoidal_positions(s, width)))[0]
        return x, x + (average_token(table) - table[self.src[0]]) * np.sqrt(width)  # positions kept

    def targets(self, x):
        logits = self._forward(stream=x[None])["logits"][0]
        return jnp.take_along_axis(jax.nn.log_softmax(logits, axis=-1), self.tokens[0, :, None], axis=-1)[:, 0]

    def targets_of_maps(self, maps):
        raise InputError(NOT_APPLIED["chefer"]["encdec"])


# Where a method does not apply: one line saying why (models/attribution/records.py APPLIES reads it).
NOT_APPLIED = {
    "alti": {
        "encdec": "ALTI's cross-attention form (ALTI+, Ferrando et al. 2022b) mixes the source and target "
        "streams; it is not implemented for the encoder–decoder: use norm or value-zeroing"
    },
    "chefer": {
        "encdec": "Chefer et al.'s encoder–decoder rules (relevance carried through the cross-attention "
        "of both stacks) are not implemented here; use the gradient methods"
    },
}


# ----------------------------------------------------------------------------- the jitted entries


@partial(jax.jit, static_argnames=("cfg", "method", "steps"))
def encoder_arrays(params, ids, types, mask, *, cfg, method: str, steps: int = 64) -> dict[str, Any]:
    """Returns methods.run's arrays for a BERT-style encoder of these parameters ({dotted path: array})."""
    from models.transformer.checkpoint import model_from_tensors

    return run(EncoderAdapter(model_from_tensors(cfg, params), ids, types, mask), method, steps)


@partial(jax.jit, static_argnames=("graphdef", "method", "steps"))
def decoder_arrays(state, ids, mask, *, graphdef, method: str, steps: int = 64) -> dict[str, Any]:
    """Returns methods.run's arrays for the decoder LM nnx.merge(graphdef, state)."""
    return run(DecoderAdapter(nnx.merge(graphdef, state), ids, mask), method, steps)


@partial(jax.jit, static_argnames=("graphdef", "method", "steps"))
def encdec_arrays(params, src, src_len, fed, tokens, *, graphdef, method: str, steps: int = 64) -> dict[str, Any]:
    """Returns methods.run's arrays for the encoder–decoder nnx.merge(graphdef, params)."""
    return run(EncDecAdapter(nnx.merge(graphdef, params), src, src_len, fed, tokens), method, steps)


def as_numpy(arrays: dict[str, Any]) -> dict[str, np.ndarray]:
    """Returns the arrays as float32 numpy."""
    return {name: np.asarray(value, np.float32) for name, value in arrays.items()}

"""What a forward hands back (Capture) and what it changes (Interventions): the options every view of a
model passes to its architecture's one forward (models/lm/forward.py for decoders; the encoders and the
encoder–decoder read the same two types), after nnx ``sow`` and Penzai's selectors and knock-out layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
from flax import struct

CAPTURED = ("maps", "queries", "keys", "values", "scores", "heads")  # the per-layer captures


@dataclass(frozen=True)
class Capture:
    """What the forward hands back (static: hashable, one compile per choice). A per-layer field is True (every
    layer), a tuple of layer indices, or False; each comes back as a tuple over the chosen layers.

    logits: True [B, S, V]; "loss": instead, each position's next-token loss [B, S] (-log p of ids[:, s + 1],
    0 at the last position); False: none. maps: α [B, H, S, T] (exactly 0 where a key is not visible);
    queries: q after q/k norm and RoPE [B, H, S, d]; keys: k likewise [B, K, T, d]; values: v [B, K, T, d];
    scores: q · k · scale before the mask [B, H, S, T]; heads: each head's output before the output
    projection [B, H, S, d] (after any intervention); residual: the stream entering each block and after
    the last [L' + 1, B, S, D].
    """

    logits: bool | str = True
    maps: bool | tuple[int, ...] = False
    queries: bool | tuple[int, ...] = False
    keys: bool | tuple[int, ...] = False
    values: bool | tuple[int, ...] = False
    scores: bool | tuple[int, ...] = False
    heads: bool | tuple[int, ...] = False
    residual: bool = False

    def wants(self, name: str, layer: int) -> bool:
        value = getattr(self, name)
        return value is True or (not isinstance(value, bool) and layer in value)


@struct.dataclass
class Interventions:
    """What the forward changes (arrays: traced; head_mode: static).

    head_keep: float [L, H] or [B, L, H], 1 keeps a head, 0 knocks it out: "zero" sets its output to 0,
    "first" puts all its attention on the first key (its output becomes that key's value vector); values
    between mix the two. attention: {layer: α [B, H, S, T]} read instead of the layer's own weights.
    value_keep: {layer: float [B, T]} scales each key's value vector (0 zeroes it) in that layer.
    heads: {layer: [B, H, S, d]} every head's output in that layer, patched in before the output projection
    (the layer's own attention is then not computed, unless captured).
    """

    head_keep: Any = None
    attention: Any = None
    value_keep: Any = None
    heads: Any = None
    head_mode: str = struct.field(pytree_node=False, default="zero")


PLAIN = Capture()


def at_layer(per_layer, index: int):
    """Returns an Interventions field's entry for layer `index` ({layer: array}), or None."""
    return None if per_layer is None else per_layer.get(index)


def keep_values(v, change: Interventions, index: int):
    """Returns the value vectors v [B, heads, T, d] with each key's scaled by layer `index`'s value_keep [B, T]."""
    keep = at_layer(change.value_keep, index)
    return v if keep is None else v * keep[:, None, :, None]


def sow_attention(capture: Capture, sown: dict[str, list], index: int, maps, queries, keys, values, scores, heads):
    """Appends layer `index`'s attention arrays (CAPTURED, each as Capture documents it) to sown[name] for every
    name the capture wants at that layer; the one place every forward sows them."""
    arrays = {"maps": maps, "queries": queries, "keys": keys, "values": values, "scores": scores, "heads": heads}
    for name in CAPTURED:
        if capture.wants(name, index):
            sown[name].append(arrays[name])


def heads_output(probs, v, change: Interventions, index: int):
    """Returns (α, each head's output) of α [B, *heads, S, T] and v [B, *heads (or 1s), T, d] under layer `index`'s
    interventions after the softmax, the same for every architecture: an override (α [B, H, S, T]) replaces α; a
    head mask mixes a head's output with 0 ("zero") or with the first key's value ("first"); a patched output
    [B, H, S, d] replaces the heads'. *heads is (H,), or (K, G) for grouped queries (head h = k·G + g)."""
    override, patched = at_layer(change.attention, index), at_layer(change.heads, index)
    if override is not None:
        probs = jnp.reshape(override, (-1, *probs.shape[1:]))
    context = jnp.matmul(probs, v)
    if change.head_keep is not None:
        keep = jnp.reshape(change.head_keep[..., index, :], (-1, *probs.shape[1:-2], 1, 1))
        fill = 0.0 if change.head_mode == "zero" else v[..., :1, :]  # "first": every row reads key 0's value
        context = context * keep + fill * (1.0 - keep)
    if patched is not None:  # what the layer computed above is dead code then, unless captured
        context = jnp.broadcast_to(jnp.reshape(patched, (-1, *context.shape[1:])), context.shape)
    return probs, context

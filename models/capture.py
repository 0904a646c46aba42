"""What a forward hands back (Capture) and what it changes (Interventions): the options every view of a
model passes to its architecture's one forward (models/lm/forward.py for decoders; the encoders and the
encoder–decoder read the same two types), after nnx ``sow`` and Penzai's selectors and knock-out layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

"""The tiny encoder–decoder of the model tests: random weights filled in numpy, and a numpy LayerNorm.

Eager jax.random compiles once per parameter shape, seconds on two cores, and no test is about the initialiser.
"""

import functools

import numpy as np

from models.checkpoint import filled_state, param_shapes
from models.encdec import model as ed
from models.encdec.checkpoint import CHECKPOINT
from models.seq2seq import task as dates

TINY = ed.PRESETS["tiny"]
TEXTS = ["Wednesday, May 9, 2018", "2018-5-9", "9.5.2018"]


def tiny_params(template, seed: int):
    """Returns random weights shaped like `template`: Glorot-uniform matrices, LayerNorm scale 1, biases 0."""
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in param_shapes(template).items():
        if name.endswith("scale"):
            tensors[name] = np.ones(shape, np.float32)
        elif len(shape) == 1:
            tensors[name] = np.zeros(shape, np.float32)
        else:
            limit = np.sqrt(6.0 / sum(shape))
            tensors[name] = rng.uniform(-limit, limit, shape).astype(np.float32)
    return filled_state(template, tensors, where="tiny")


@functools.cache
def tiny_model(seed: int = 1):
    """Returns (graphdef, params) of the tiny preset with tiny_params(seed)."""
    graphdef, template = CHECKPOINT.abstract_model(TINY)
    return graphdef, tiny_params(template, seed)


def sources(texts=TEXTS, bucket: int = 40):
    """Returns (ids int32 [B, bucket], lengths int32 [B]) of the texts."""
    return ed.pad_batch([dates.encode_source(t).ids for t in texts], bucket)


def layer_norm(x, scale, bias, eps=1e-6):
    """Returns flax's LayerNorm of x [..., D] (eps 1e-6)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias

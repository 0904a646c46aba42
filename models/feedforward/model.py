"""Feed-forward attention (Raffel & Ellis 2015) on the addition problem.

    h_t = LReLU(W_xh x_t + b_xh)              every step on its own: no recurrence
    e_t = tanh(W_hc h_t + b_hc)               "paper": bounded to [−1, 1]
    e_t = wᵀ h_t + b                          "unbounded": the same without tanh
    α   = softmax(e) over the real steps      (padding masked to exactly 0)
    c   = Σ_t α_t h_t
    y   = W_sy LReLU(W_cs c + b_cs) + b_sy    the paper's two output layers, width 100

Because tanh bounds e_t to [−1, 1], no weight can exceed e² ≈ 7.4 times another, so on
10,000 steps the two marked steps get at most ~7.4/10,000 each: α is nearly flat with two
bumps. The unbounded score has no such ceiling.

The output layer is linear (the paper ends in a leaky ReLU because its target is rescaled
to [0, 1]; ours is the raw sum in [−2, 2]).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import attention as core
from models import padding
from models.feedforward.task import LENGTH_BUCKETS

SCORES = ("tanh", "linear")
PAPER_LENGTHS = (100, 1_000, 10_000)  # T₀ of the paper-form models


@dataclass(frozen=True)
class FeedForwardConfig:
    """Sizes of the feed-forward attention network (the paper uses 100 everywhere)."""

    score: str = "tanh"  # "tanh" (paper) or "linear" (unbounded)
    input_dim: int = 2
    hidden: int = 100
    output_hidden: int = 100
    leak: float = 0.01  # slope of the leaky ReLU below 0

    def __post_init__(self):
        if self.score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {self.score!r}")


PAPER = FeedForwardConfig(score="tanh")
UNBOUNDED = FeedForwardConfig(score="linear")
TINY = FeedForwardConfig(score="tanh", hidden=8, output_hidden=8)


def leaky_relu(x, leak: float):
    """Returns max(x, leak·x) elementwise."""
    return jnp.where(x >= 0, x, leak * x)


class FeedForwardAttention(nnx.Module):
    """The network; __call__ returns (prediction [B], α [B, T])."""

    def __init__(self, cfg: FeedForwardConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.w_xh = nnx.Linear(cfg.input_dim, cfg.hidden, rngs=rngs)
        self.w_hc = nnx.Linear(cfg.hidden, 1, rngs=rngs)
        self.w_cs = nnx.Linear(cfg.hidden, cfg.output_hidden, rngs=rngs)
        self.w_sy = nnx.Linear(cfg.output_hidden, 1, rngs=rngs)

    def __call__(self, inputs, mask):
        """inputs float32 [B, T, 2], mask bool [B, T] (True = real step)."""
        h = leaky_relu(self.w_xh(inputs), self.cfg.leak)  # [B, T, D]
        scores = self.w_hc(h)[..., 0]  # [B, T]
        if self.cfg.score == "tanh":
            scores = jnp.tanh(scores)
        alpha = core.masked_softmax(scores, mask)  # [B, T]
        context = core.context_vector(alpha[:, None, :], h)[:, 0]  # [B, D]
        hidden = leaky_relu(self.w_cs(context), self.cfg.leak)  # [B, D_out]
        return self.w_sy(hidden)[..., 0], alpha


# ----------------------------------------------------------------------------- inference


class FeedForwardRunner:
    """A loaded model split once, with a jitted pure forward; inputs are padded to buckets."""

    def __init__(self, model: FeedForwardAttention, name: str = ""):
        self.cfg = model.cfg
        self.name = name
        self.graphdef, self.state = nnx.split(model)
        graphdef = self.graphdef

        @jax.jit
        def forward(state, inputs, mask):
            return nnx.merge(graphdef, state)(inputs, mask)

        self._forward = forward
        self._compiled: set[int] = set()

    def __call__(self, inputs: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns (predictions [B], α [B, T_pad]) for inputs [B, T_pad, 2] padded to a bucket."""
        mask = np.arange(inputs.shape[1])[None, :] < np.asarray(lengths)[:, None]
        pred, alpha = self._forward(self.state, jnp.asarray(inputs), jnp.asarray(mask))
        return np.asarray(pred), np.asarray(alpha)

    def run_one(self, inputs: np.ndarray) -> tuple[float, np.ndarray, float]:
        """Returns (prediction, α [T], seconds) for one sequence inputs [T, 2].

        seconds is the time of the forward pass alone: a bucket's first call (which compiles)
        is run once untimed.
        """
        length = inputs.shape[0]
        bucket = padding.bucket(length, LENGTH_BUCKETS)
        padded = np.zeros((1, bucket, 2), np.float32)
        padded[0, :length] = inputs
        lengths = np.array([length])
        if bucket not in self._compiled:
            self(padded, lengths)
            self._compiled.add(bucket)
        start = time.perf_counter()
        pred, alpha = self(padded, lengths)
        seconds = time.perf_counter() - start
        return float(pred[0]), alpha[0, :length], seconds

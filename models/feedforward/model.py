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

import json
import math
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from safetensors.numpy import load_file, save_file

from models import attention as core
from models.feedforward.task import LENGTH_BUCKETS, bucket_length, check_length, make_sequence
from models.checkpoint import check_tensors
from models.record import AttentionRecord, InputError

SCORES = ("tanh", "linear")
CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / "checkpoints" / "feedforward"
PAPER_LENGTHS = (100, 1_000, 10_000)  # T₀ of the paper-form models
MECHANISM_OF_SCORE = {"tanh": "feedforward", "linear": "feedforward-unbounded"}


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


# ----------------------------------------------------------------------------- checkpoints

PARAM_NAMES = ("w_xh", "w_hc", "w_cs", "w_sy")


def state_to_tensors(model: FeedForwardAttention) -> dict[str, np.ndarray]:
    """Returns {"w_xh.kernel": [in, out], "w_xh.bias": [out], ...} as float32 numpy."""
    tensors = {}
    for name in PARAM_NAMES:
        layer = getattr(model, name)
        tensors[f"{name}.kernel"] = np.asarray(layer.kernel[...], np.float32)
        tensors[f"{name}.bias"] = np.asarray(layer.bias[...], np.float32)
    return tensors


def save_checkpoint(model: FeedForwardAttention, path: Path, meta: Mapping[str, Any] | None = None) -> None:
    """Writes the weights as safetensors, with the config (and `meta`) as JSON metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"config": json.dumps(asdict(model.cfg)), "meta": json.dumps(dict(meta or {}))}
    save_file(state_to_tensors(model), str(path), metadata=metadata)


def read_metadata(path: Path) -> dict[str, Any]:
    """Returns the checkpoint's metadata: {"config": {...}, "meta": {...}}."""
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        raw = f.metadata() or {}
    if "config" not in raw:
        raise ValueError(f"{path}: no config in the safetensors metadata")
    return {"config": json.loads(raw["config"]), "meta": json.loads(raw.get("meta", "{}"))}


def load_checkpoint(path: Path) -> FeedForwardAttention:
    """Returns the model stored at `path`; every tensor must be mapped with the right shape.

    Raises ValueError naming missing or unknown keys, or a tensor with the wrong shape.
    """
    path = Path(path)
    cfg = FeedForwardConfig(**read_metadata(path)["config"])
    model = FeedForwardAttention(cfg, rngs=nnx.Rngs(0))
    tensors = load_file(str(path))
    check_tensors({k: v.shape for k, v in state_to_tensors(model).items()}, tensors, where=path.name)
    for name in PARAM_NAMES:
        layer = getattr(model, name)
        layer.kernel[...] = jnp.asarray(tensors[f"{name}.kernel"])
        layer.bias[...] = jnp.asarray(tensors[f"{name}.bias"])
    return model


def checkpoint_path(variant: str, length: int | None = None) -> Path:
    """Returns checkpoints/feedforward/paper-T{T₀}.safetensors or .../unbounded.safetensors."""
    if variant == "paper":
        if length not in PAPER_LENGTHS:
            raise ValueError(f"paper models exist for T₀ in {PAPER_LENGTHS}, not {length}")
        return CHECKPOINT_DIR / f"paper-T{length}.safetensors"
    if variant == "unbounded":
        return CHECKPOINT_DIR / "unbounded.safetensors"
    raise ValueError(f"variant must be 'paper' or 'unbounded', got {variant!r}")


def nearest_paper_length(length: int) -> int:
    """Returns the trained T₀ nearest to `length` on a log scale (100, 1,000 or 10,000)."""
    return min(PAPER_LENGTHS, key=lambda t0: abs(math.log(length) - math.log(t0)))


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
        bucket = bucket_length(length)
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

    def warm_up(self) -> None:
        """Compiles the forward for every length bucket (about 1 s each)."""
        for bucket in LENGTH_BUCKETS:
            if bucket not in self._compiled:
                self(np.zeros((1, bucket, 2), np.float32), np.array([bucket]))
                self._compiled.add(bucket)


@lru_cache(maxsize=8)
def load_runner(variant: str, length: int | None = None) -> FeedForwardRunner:
    """Returns the runner of a committed checkpoint (cached: loading compiles nothing)."""
    path = checkpoint_path(variant, length)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: train it with `python -m models.train feedforward`")
    return FeedForwardRunner(load_checkpoint(path), name=path.stem)


def runner_for(mechanism: str, length: int) -> FeedForwardRunner:
    """Returns the runner a mechanism uses at `length` (paper form: the T₀ nearest to it)."""
    if mechanism == "feedforward":
        return load_runner("paper", nearest_paper_length(length))
    if mechanism == "feedforward-unbounded":
        return load_runner("unbounded")
    raise InputError(f"{mechanism!r} is not a feed-forward attention mechanism")


def evaluate_runner(runner: FeedForwardRunner, lengths, *, seed: int, batch: int = 50) -> dict[str, float]:
    """Returns the quality of a model on fresh sequences of the given lengths.

    mse: mean squared error of the sum; top2: share of sequences whose two largest α are the
    two marked steps; mass: mean α on the two marked steps. Sequences are batched and padded
    to the bucket of each batch's longest one.
    """
    from models.feedforward.task import sample_batch

    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, np.int32)
    errors, top2, mass = [], [], []
    for start in range(0, len(lengths), batch):
        chunk = lengths[start : start + batch]
        data = sample_batch(rng, chunk, bucket_length(int(chunk.max())))
        prediction, alpha = runner(data.inputs, data.lengths)
        errors.append((prediction - data.targets) ** 2)
        rows = np.arange(len(chunk))[:, None]
        mass.append(alpha[rows, data.marked].sum(1))
        top = np.sort(np.argpartition(-alpha, 1, axis=1)[:, :2], axis=1)
        top2.append(np.all(top == data.marked, axis=1))
    return {
        "mse": float(np.concatenate(errors).mean()),
        "top2": float(np.concatenate(top2).mean()),
        "mass": float(np.concatenate(mass).mean()),
    }


def parse_marked(text) -> tuple[int, int] | None:
    """Returns two steps from "3,42" (None for empty); raises InputError otherwise."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if isinstance(text, str):
        parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
        try:
            return tuple(int(p) for p in parts)  # checked against the length later
        except ValueError:
            raise InputError(f"marked steps must be two whole numbers like 3,42, got {text!r}") from None
    return tuple(text)


def addition_record(options: Mapping[str, Any], runner: FeedForwardRunner | None = None) -> AttentionRecord:
    """Returns the record of one seeded addition sequence (options: mechanism, length, seed, marked).

    weights: α over time, axes ("time",); extras: marked (2,), prediction, target, values.
    `runner` overrides the committed model the mechanism would load (pages pass a cached one).
    """
    mechanism = options.get("mechanism") or "feedforward"
    length = check_length(options.get("length") if options.get("length") is not None else 1_000)
    seed = options.get("seed")
    try:
        seed = 0 if seed is None else int(seed)
    except (TypeError, ValueError):
        raise InputError(f"the seed must be a whole number, got {seed!r}") from None
    if seed < 0:
        raise InputError(f"the seed must be 0 or more, got {seed}")
    inputs, marked, target = make_sequence(length, seed, parse_marked(options.get("marked")))
    runner = runner or runner_for(mechanism, length)
    prediction, alpha, seconds = runner.run_one(inputs)
    mass = float(alpha[list(marked)].sum())
    return AttentionRecord(
        mechanism=mechanism,
        weights=alpha.astype(np.float32),
        axes=("time",),
        query_labels=("c",),
        key_labels=tuple(f"t{t}" for t in range(length)),
        meta={
            "model": runner.name,
            "length": length,
            "seed": seed,
            "marked": list(marked),
            "prediction": prediction,
            "target": target,
            "mass_on_marked": mass,
            "seconds": seconds,
        },
        extras={
            "marked": np.asarray(marked, np.int32),
            "prediction": np.float32(prediction),
            "target": np.float32(target),
            "values": inputs[:, 0],
        },
    )

"""Checkpoints of the feed-forward attention models, in the shared format of models/checkpoint.py.

checkpoints/feedforward/paper-T{100,1000,10000}.safetensors (one per training length T₀) and
unbounded.safetensors: the parameters (float32), the config and the training facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flax import nnx

from models import checkpoint
from models.feedforward.model import PAPER_LENGTHS, FeedForwardAttention, FeedForwardConfig

FAMILY = "feedforward"
CHECKPOINT_DIR = checkpoint.CHECKPOINT_ROOT / FAMILY


def checkpoint_path(variant: str, length: int | None = None) -> Path:
    """Returns checkpoints/feedforward/paper-T{T₀}.safetensors or .../unbounded.safetensors."""
    if variant == "paper":
        if length not in PAPER_LENGTHS:
            raise ValueError(f"paper models exist for T₀ in {PAPER_LENGTHS}, not {length}")
        return CHECKPOINT_DIR / f"paper-T{length}.safetensors"
    if variant == "unbounded":
        return CHECKPOINT_DIR / "unbounded.safetensors"
    raise ValueError(f"variant must be 'paper' or 'unbounded', got {variant!r}")


def save_checkpoint(model: FeedForwardAttention, path: Path, info: Mapping[str, Any] | None = None) -> Path:
    """Writes the weights with the config (and the training facts `info`), atomically."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(model.cfg), checkpoint.flat_params(model), info=info)


def read_info(path: Path) -> dict[str, Any]:
    """Returns the checkpoint's config and training facts: {"config": {...}, "meta": {...}}."""
    config, info, _ = checkpoint.read_info(path, FAMILY)
    return {"config": config, "meta": info}


def load_checkpoint(path: Path) -> FeedForwardAttention:
    """Returns the model stored at `path`; strict: every tensor mapped with the right shape."""
    ckpt = checkpoint.load(path, FAMILY)
    cfg = checkpoint.config_from_dict(FeedForwardConfig, ckpt.config)
    return checkpoint.restore_module(lambda: FeedForwardAttention(cfg, rngs=nnx.Rngs(0)), ckpt.tensors,
                                     where=Path(path).name)

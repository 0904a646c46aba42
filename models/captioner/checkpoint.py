"""Checkpoints of the scene captioners, in the shared format of models/checkpoint.py.

checkpoints/captioner/<variant>.safetensors: the parameters (float32), the config and the
training facts (steps, seconds, λs, seed, where it started from) in the metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flax import nnx

from models import checkpoint
from models.captioner.model import Captioner, CaptionerConfig

FAMILY = "captioner"
CHECKPOINT_DIR = checkpoint.CHECKPOINT_ROOT / FAMILY


def checkpoint_path(variant: str) -> Path:
    """Returns the committed checkpoint of a variant ("soft" or "hard")."""
    return CHECKPOINT_DIR / f"{variant}.safetensors"


def save_checkpoint(model: Captioner, path: Path, info: dict[str, Any] | None = None) -> Path:
    """Writes the parameters with the config and `info` in the metadata, atomically."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(model.cfg), checkpoint.flat_params(model), info=info)


def load_checkpoint(path: Path) -> Captioner:
    """Returns the captioner stored at `path`; strict: every tensor mapped, shapes checked."""
    ckpt = checkpoint.load(path, FAMILY)
    cfg = checkpoint.config_from_dict(CaptionerConfig, ckpt.config)
    return checkpoint.restore_module(lambda: Captioner(cfg, rngs=nnx.Rngs(0)), ckpt.tensors, where=Path(path).name)


def read_info(path: Path) -> dict[str, Any]:
    """Returns the training facts stored with a checkpoint."""
    return checkpoint.read_info(path, FAMILY)[1]

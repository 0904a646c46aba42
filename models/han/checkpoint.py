"""Checkpoints of hierarchical attention networks, in the shared format of models/checkpoint.py.

A HAN checkpoint holds its trainable parameters only: the frozen MiniLM vectors it reads
come from the installed model package at run time and are never copied into it. The same
bytes serve the committed model (checkpoints/han/han.safetensors) and the app's "download
your model" button.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flax import nnx

from models import checkpoint
from models.han.model import HAN, HANConfig
from models.record import InputError

FAMILY = "han"
CHECKPOINT = checkpoint.CHECKPOINT_ROOT / FAMILY / "han.safetensors"


def checkpoint_bytes(state, cfg: HANConfig, info: Mapping[str, Any] | None = None) -> bytes:
    """Returns the safetensors bytes of a HAN's parameters (an nnx State), the config in metadata."""
    return checkpoint.to_bytes(FAMILY, checkpoint.config_dict(cfg), checkpoint.flat_params(state), info=info)


def save_checkpoint(path: Path, state, cfg: HANConfig, info: Mapping[str, Any] | None = None) -> Path:
    """Writes the checkpoint atomically (trainable parameters only)."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(cfg), checkpoint.flat_params(state), info=info)


def _restored(ckpt: checkpoint.Checkpoint, where: str) -> tuple[HANConfig, Any, Any, dict[str, Any]]:
    cfg = checkpoint.config_from_dict(HANConfig, ckpt.config)
    graphdef, state = nnx.split(checkpoint.restore_module(lambda: HAN(cfg, rngs=nnx.Rngs(0)), ckpt.tensors, where=where))
    return cfg, graphdef, state, ckpt.info


def load_checkpoint_bytes(data: bytes) -> tuple[HANConfig, Any, Any, dict[str, Any]]:
    """Returns (config, graphdef, state, info) from safetensors bytes; strict (CheckpointError)."""
    return _restored(checkpoint.from_bytes(data, FAMILY), "the HAN checkpoint")


def load_checkpoint(path: Path = CHECKPOINT) -> tuple[HANConfig, Any, Any, dict[str, Any]]:
    """Returns (config, graphdef, state, info) from a checkpoint file; strict."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no HAN checkpoint at {path}; train one with: python -m models.train han")
    return _restored(checkpoint.load(path, FAMILY), path.name)

"""Checkpoints of the date models, in the shared format of models/checkpoint.py.

checkpoints/seq2seq/<variant>.safetensors holds the final parameters (float32), about ten
earlier snapshots for the page's "watch it learn" slider (float16), and in its metadata the
config and the training facts (steps, seconds, loss log, validation exact match, warm start).
Loading is strict: every parameter present, no unknown tensor, every shape checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from models import checkpoint
from models.seq2seq.config import Seq2SeqConfig

FAMILY = "seq2seq"
CHECKPOINT_DIR = checkpoint.CHECKPOINT_ROOT / FAMILY
BOTTLENECK_DIR = CHECKPOINT_DIR / "bottleneck"  # the models of the bottleneck experiment (dates inside text)


def checkpoint_path(variant: str, root: Path | None = None) -> Path:
    """Returns the checkpoint file of one variant (root: default checkpoints/seq2seq)."""
    return (root or CHECKPOINT_DIR) / f"{variant}.safetensors"


def save_checkpoint(
    path: Path, cfg: Seq2SeqConfig, final: dict[str, np.ndarray], snapshots: dict[int, dict[str, np.ndarray]],
    info: dict[str, Any],
) -> Path:
    """Writes the final weights (float32), the snapshots (float16) and the training facts, atomically."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(cfg), final, info=info, snapshots=snapshots)


def load_weights(path: Path) -> tuple[Seq2SeqConfig, dict[str, np.ndarray], dict[str, Any]]:
    """Returns (cfg, {name: float32 array}, info) of the final weights, without building the model
    (no Flax); info["snapshot_steps"] lists the snapshots."""
    ckpt = checkpoint.load(path, FAMILY)
    cfg = checkpoint.config_from_dict(Seq2SeqConfig, ckpt.config)
    _, _, steps = checkpoint.read_info(path, FAMILY)
    tensors = {name: np.asarray(value, np.float32) for name, value in ckpt.tensors.items()}
    return cfg, tensors, {**ckpt.info, "snapshot_steps": steps}


def load_snapshot_weights(path: Path) -> dict[int, dict[str, np.ndarray]]:
    """Returns {step: {name: float32 array}} of every snapshot (float16 on disk), without Flax."""
    ckpt = checkpoint.load(path, FAMILY, snapshots=True)
    return {step: {name: np.asarray(value, np.float32) for name, value in flat.items()}
            for step, flat in ckpt.snapshots.items()}


def load_checkpoint(path: Path):
    """Returns (cfg, graphdef, params, info) of the final weights; info["snapshot_steps"] lists the snapshots."""
    from models.seq2seq.model import abstract_model

    return checkpoint.load_final(path, FAMILY, Seq2SeqConfig, abstract_model)


def load_snapshots(path: Path, template) -> dict[int, Any]:
    """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
    return checkpoint.load_snapshot_states(path, FAMILY, template)

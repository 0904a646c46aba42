"""The checkpoint of the induction model, in the shared format of models/checkpoint.py.

checkpoints/induction/model.safetensors holds the final parameters (float32), about 20 earlier
snapshots (float16; dense around the loss drop) and, in its metadata, the config and the
training facts: steps, seconds, and the training log (loss, loss on each half of [BOS] + r + r,
every head's scores at every logged step), so the page plots the curves without recomputing.
Loading is strict: every parameter present, no unknown tensor, every shape checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from models import checkpoint
from models.induction.model import InductionConfig, abstract_model

FAMILY = "induction"
CHECKPOINT_DIR = checkpoint.CHECKPOINT_ROOT / FAMILY
FILE_NAME = "model.safetensors"
CHECKPOINT_FILE = CHECKPOINT_DIR / FILE_NAME


def save_checkpoint(
    path: Path, cfg: InductionConfig, final: dict[str, np.ndarray], snapshots: dict[int, dict[str, np.ndarray]],
    info: dict[str, Any],
) -> Path:
    """Writes the final weights (float32), the snapshots (float16) and the training facts, atomically."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(cfg), final, info=info, snapshots=snapshots)


def load_checkpoint(path: Path = CHECKPOINT_FILE):
    """Returns (cfg, graphdef, params, info) of the final weights; info["snapshot_steps"] lists the snapshots."""
    return checkpoint.load_final(path, FAMILY, InductionConfig, abstract_model)


def load_snapshots(path: Path, template) -> dict[int, Any]:
    """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
    return checkpoint.load_snapshot_states(path, FAMILY, template)

"""The checkpoint of the Transformer encoder–decoder, in the shared format of models/checkpoint.py.

checkpoints/encdec/transformer.safetensors holds the final parameters (float32), about ten
earlier snapshots for the page's training-step slider (float16), and in its metadata the
config and the training facts (steps, seconds, loss log, validation exact match, why training
stopped). Loading is strict: every parameter present, no unknown tensor, every shape checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from models import checkpoint
from models.encdec.model import EncDecConfig, abstract_model

FAMILY = "encdec"
CHECKPOINT_DIR = checkpoint.CHECKPOINT_ROOT / FAMILY
CHECKPOINT_NAME = "transformer.safetensors"
CHECKPOINT_FILE = CHECKPOINT_DIR / CHECKPOINT_NAME


def save_checkpoint(
    path: Path, cfg: EncDecConfig, final: dict[str, np.ndarray], snapshots: dict[int, dict[str, np.ndarray]],
    info: dict[str, Any],
) -> Path:
    """Writes the final weights (float32), the snapshots (float16) and the training facts, atomically."""
    return checkpoint.save(path, FAMILY, checkpoint.config_dict(cfg), final, info=info, snapshots=snapshots)


def load_checkpoint(path: Path = CHECKPOINT_FILE):
    """Returns (cfg, graphdef, params, info) of the final weights; info["snapshot_steps"] lists the snapshots."""
    return checkpoint.load_final(path, FAMILY, EncDecConfig, abstract_model)


def load_snapshots(path: Path, template) -> dict[int, Any]:
    """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
    return checkpoint.load_snapshot_states(path, FAMILY, template)

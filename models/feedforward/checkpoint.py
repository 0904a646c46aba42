"""Checkpoints of the feed-forward attention models: checkpoints/feedforward/paper-T{100,1000,10000}.safetensors
(one per training length T₀) and unbounded.safetensors, the parameters with the config and the training facts."""

from __future__ import annotations

from pathlib import Path

from models.family_checkpoint import FamilyCheckpoint
from models.feedforward.model import PAPER_LENGTHS, FeedForwardAttention, FeedForwardConfig

CHECKPOINT = FamilyCheckpoint("feedforward", FeedForwardConfig, FeedForwardAttention)
CHECKPOINT_DIR = CHECKPOINT.folder  # a module constant: tests/cli/test_faults.py points it at a damaged copy


def checkpoint_path(variant: str, length: int | None = None) -> Path:
    """Returns checkpoints/feedforward/paper-T{T₀}.safetensors or .../unbounded.safetensors."""
    if variant == "paper" and length not in PAPER_LENGTHS:
        raise ValueError(f"paper models exist for T₀ in {PAPER_LENGTHS}, not {length}")
    if variant not in ("paper", "unbounded"):
        raise ValueError(f"variant must be 'paper' or 'unbounded', got {variant!r}")
    return CHECKPOINT.path(f"paper-T{length}" if variant == "paper" else variant, CHECKPOINT_DIR)

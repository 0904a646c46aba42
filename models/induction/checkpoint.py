"""The induction model's checkpoint, declared once (models/family_checkpoint.py): checkpoints/induction/model.safetensors
holds the final parameters, about 20 earlier snapshots (dense around the loss drop) and the training log (loss on
each half of [BOS] + r + r, every head's scores at every logged step), so the page plots the curves without
recomputing."""

from models.family_checkpoint import FamilyCheckpoint
from models.induction.model import AttentionOnly, InductionConfig

CHECKPOINT = FamilyCheckpoint("induction", InductionConfig, AttentionOnly, "model.safetensors")

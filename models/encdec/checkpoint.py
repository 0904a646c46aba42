"""The Transformer encoder–decoder's checkpoint, declared once (models/family_checkpoint.py):
checkpoints/encdec/transformer.safetensors holds the final parameters, about ten earlier snapshots for the page's
training-step slider, and the training facts (steps, seconds, loss log, validation exact match, why it stopped)."""

from models.encdec.model import EncDec, EncDecConfig
from models.family_checkpoint import FamilyCheckpoint

CHECKPOINT = FamilyCheckpoint("encdec", EncDecConfig, EncDec, "transformer.safetensors")

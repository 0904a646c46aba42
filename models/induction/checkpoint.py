"""The induction model's checkpoint, declared once (models/family_checkpoint.py): checkpoints/induction/model.safetensors
holds the final parameters, about 20 earlier snapshots (dense around the loss drop) and the training log (loss on
each half of [BOS] + r + r, every head's scores at every logged step), so the page plots the curves without
recomputing."""

from models.family_checkpoint import FamilyCheckpoint
from models.induction.model import AttentionOnly, InductionConfig

CHECKPOINT = FamilyCheckpoint("induction", InductionConfig, AttentionOnly, "model.safetensors")
# The names models/induction/{records,train,quality}.py and its tests read (to be replaced by CHECKPOINT's).
FILES, FAMILY, FILE_NAME, CHECKPOINT_FILE = CHECKPOINT, CHECKPOINT.family, CHECKPOINT.file_name, CHECKPOINT.file
save_checkpoint, load_checkpoint, load_snapshots = CHECKPOINT.save, CHECKPOINT.load, CHECKPOINT.load_snapshots

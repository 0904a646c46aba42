"""The checkpoint of the induction model, in the shared format of models/checkpoint.py,
saved and read by models/snapshot_checkpoint.py.

checkpoints/induction/model.safetensors holds the final parameters (float32), about 20 earlier
snapshots (float16; dense around the loss drop) and, in its metadata, the config and the
training facts: steps, seconds, and the training log (loss, loss on each half of [BOS] + r + r,
every head's scores at every logged step), so the page plots the curves without recomputing.
Loading is strict: every parameter present, no unknown tensor, every shape checked.
"""

from __future__ import annotations

from models.induction.model import InductionConfig, abstract_model
from models.snapshot_checkpoint import SnapshotCheckpoint

FAMILY = "induction"
FILES = SnapshotCheckpoint(FAMILY, "model.safetensors", InductionConfig, abstract_model)
CHECKPOINT_DIR, FILE_NAME, CHECKPOINT_FILE = FILES.folder, FILES.file_name, FILES.file
save_checkpoint, load_checkpoint, load_snapshots = FILES.save, FILES.load, FILES.load_snapshots

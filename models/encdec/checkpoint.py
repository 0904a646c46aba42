"""The checkpoint of the Transformer encoder–decoder, in the shared format of models/checkpoint.py,
saved and read by models/snapshot_checkpoint.py.

checkpoints/encdec/transformer.safetensors holds the final parameters (float32), about ten
earlier snapshots for the page's training-step slider (float16), and in its metadata the
config and the training facts (steps, seconds, loss log, validation exact match, why training
stopped). Loading is strict: every parameter present, no unknown tensor, every shape checked.
"""

from __future__ import annotations

from models.encdec.model import EncDecConfig, abstract_model
from models.snapshot_checkpoint import SnapshotCheckpoint

FAMILY = "encdec"
FILES = SnapshotCheckpoint(FAMILY, "transformer.safetensors", EncDecConfig, abstract_model)
CHECKPOINT_DIR, CHECKPOINT_NAME, CHECKPOINT_FILE = FILES.folder, FILES.file_name, FILES.file
save_checkpoint, load_checkpoint, load_snapshots = FILES.save, FILES.load, FILES.load_snapshots

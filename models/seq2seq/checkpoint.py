"""The date models' checkpoints, declared once (models/family_checkpoint.py): checkpoints/seq2seq/<variant>.safetensors
holds the final parameters, about ten snapshots for the page's "watch it learn" slider, and the training facts
(steps, seconds, loss log, validation exact match, warm start). Numpy only until a model is built: a stored
decoder (models/aot.py) runs without Flax."""

from models.family_checkpoint import FamilyCheckpoint
from models.seq2seq.config import Seq2SeqConfig


def _seq2seq(cfg: Seq2SeqConfig, *, rngs):
    from models.seq2seq.model import Seq2Seq

    return Seq2Seq(cfg, rngs=rngs)


CHECKPOINT = FamilyCheckpoint("seq2seq", Seq2SeqConfig, _seq2seq)
BOTTLENECK_DIR = CHECKPOINT.folder / "bottleneck"  # the models of the bottleneck experiment (dates inside text)

"""The variants' checkpoints, declared once (models/family_checkpoint.py): checkpoints/variants/<task>-<variant>
.safetensors, seed 0 of every variant and task (weights rounded to float16), and quality.json beside them, the
measured table of every seed."""

from models.family_checkpoint import FamilyCheckpoint
from models.variants import tasks
from models.variants.model import VariantConfig, VariantModel

CHECKPOINT = FamilyCheckpoint("variants", VariantConfig, VariantModel, "{variant}.safetensors")
TABLE = CHECKPOINT.folder / "quality.json"


def config_for(variant: str, task: str) -> VariantConfig:
    """Returns the one config of a (variant, task): the same sizes for all; the task sets the vocabulary, and the
    position table covers 4× the training length (the extrapolation test)."""
    return VariantConfig(variant=variant, vocab=tasks.vocab(task), max_length=4 * tasks.train_length(task))

"""A family's one model with training snapshots: where its checkpoint lives, and how it is saved and read.

The induction model and the Transformer encoder–decoder each keep one file under checkpoints/<family>/:
the final weights (float32) and earlier snapshots (float16) for the page's training-step slider, in the
format of models/checkpoint.py. A family declares its file once,

    FILES = SnapshotCheckpoint("induction", "model.safetensors", InductionConfig, abstract_model)

and its checkpoint.py, train.py and records.py read everything else from it. The committed model and its snapshots
are loaded once per process.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models import checkpoint
from models.record import InputError


@dataclass(frozen=True)
class SnapshotCheckpoint:
    """family, the file's name under checkpoints/<family>/, the config class and
    abstract_model(cfg) -> (graphdef, state template) of the family's model."""

    family: str
    file_name: str
    config_class: type
    abstract_model: Callable[[Any], tuple[Any, Any]]

    @property
    def folder(self) -> Path:
        """Returns checkpoints/<family>."""
        return checkpoint.CHECKPOINT_ROOT / self.family

    @property
    def file(self) -> Path:
        """Returns the committed checkpoint file."""
        return self.folder / self.file_name

    def save(self, path: Path, cfg: Any, final: Mapping[str, np.ndarray],
             snapshots: Mapping[int, Mapping[str, np.ndarray]], info: Mapping[str, Any]) -> Path:
        """Writes the final weights (float32), the snapshots (float16) and the training facts, atomically."""
        return checkpoint.save(path, self.family, checkpoint.config_dict(cfg), final, info=info, snapshots=snapshots)

    def load(self, path: Path | None = None):
        """Returns (cfg, graphdef, params, info) of the final weights (default: the committed file);
        info["snapshot_steps"] lists the snapshots."""
        return checkpoint.load_final(self.file if path is None else path, self.family, self.config_class,
                                     self.abstract_model)

    def load_snapshots(self, path: Path, template) -> dict[int, Any]:
        """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
        return checkpoint.load_snapshot_states(path, self.family, template)

    def add_output_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Adds a trainer's --out and --overwrite-committed: where its run writes this checkpoint."""
        parser.add_argument("--out", type=Path, default=None,
                            help=f"checkpoint folder (default runs/{self.family}; never the committed checkpoint "
                            "unless --overwrite-committed)")
        parser.add_argument("--overwrite-committed", action="store_true",
                            help=f"write checkpoints/{self.family}/{self.file_name}, replacing the committed model")

    def output_folder(self, args: argparse.Namespace) -> Path:
        """Returns the folder a training run writes this checkpoint into; SystemExit (one line) if that
        would replace the committed file without --overwrite-committed (models/training.py's rule)."""
        from models.training import output_folder

        return output_folder(args.out, self.folder, [self.file_name], overwrite_committed=args.overwrite_committed)

    def committed(self):
        """Returns (cfg, graphdef, params, info) of the committed checkpoint (cached per process)."""
        return _committed(self)

    def committed_snapshots(self) -> dict[int, Any]:
        """Returns {training step: params} of the committed checkpoint, the final step included (cached)."""
        return _committed_snapshots(self)

    def committed_steps(self) -> list[int]:
        """Returns the training steps that have weights (0 = the untrained model; the last = the final weights)."""
        return checkpoint.trained_steps(self.committed()[3])

    def committed_weights(self, step: int | None = None):
        """Returns (graphdef, params): the final weights, or the snapshot of training step `step`;
        InputError (one line) for a step without weights."""
        _, graphdef, params, _ = self.committed()
        if step is None:
            return graphdef, params
        snaps = self.committed_snapshots()
        if int(step) not in snaps:
            raise InputError(f"no snapshot at step {step}; available: {', '.join(map(str, snaps))}")
        return graphdef, snaps[int(step)]


@functools.cache
def _committed(files: SnapshotCheckpoint):
    return files.load(files.file)


@functools.cache
def _committed_snapshots(files: SnapshotCheckpoint) -> dict[int, Any]:
    _, _, params, info = _committed(files)
    return checkpoint.snapshots_with_final(files.file, files.family, params, info)

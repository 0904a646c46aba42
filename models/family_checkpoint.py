"""A trained family's checkpoints, declared once: where they live, and how they are saved and read.

Every family trained here keeps its models under checkpoints/<family>/ in the format of models/checkpoint.py:
the final weights (float32), earlier snapshots (float16) where the page has a training-step slider, and in the
metadata the config and the training facts. A family declares its checkpoints in one line,

    CHECKPOINT = FamilyCheckpoint("induction", InductionConfig, AttentionOnly, "model.safetensors")

(a file per variant where the name holds "{variant}"), and its train.py, records.py and quality.py read
everything else from it. A committed model and its snapshots are loaded once per process.
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
class FamilyCheckpoint:
    """family, the config class, model(cfg, *, rngs) -> the family's nnx module, and the file's name under
    checkpoints/<family>/ ("{variant}" in it: a file per variant). Built abstractly when loading: no
    initialiser runs, and Flax is imported only when a model is built."""

    family: str
    config_class: type
    model: Callable[..., Any]
    file_name: str = "{variant}.safetensors"

    @property
    def folder(self) -> Path:
        """Returns checkpoints/<family>."""
        return checkpoint.CHECKPOINT_ROOT / self.family

    @property
    def file(self) -> Path:
        """Returns the committed checkpoint file (a family with one model)."""
        return self.folder / self.file_name

    def path(self, variant: str, root: Path | None = None) -> Path:
        """Returns the checkpoint file of one variant under `root` (default: the committed folder)."""
        return (root or self.folder) / self.file_name.format(variant=variant)

    def abstract_model(self, cfg: Any) -> tuple[Any, Any]:
        """Returns (graphdef, abstract state) of the model of `cfg`: shapes only, no initialiser runs."""
        from flax import nnx

        return nnx.split(nnx.eval_shape(lambda: self.model(cfg, rngs=nnx.Rngs(0))))

    def to_bytes(self, cfg: Any, params: Any, info: Mapping[str, Any] | None = None) -> bytes:
        """Returns the safetensors bytes of `params` (an nnx module or State) with the config and `info`."""
        return checkpoint.to_bytes(self.family, checkpoint.config_dict(cfg), checkpoint.flat_params(params), info=info)

    def save(self, path: Path, cfg: Any, params: Any, snapshots: Mapping[int, Mapping[str, np.ndarray]] | None = None,
             info: Mapping[str, Any] | None = None) -> Path:
        """Writes the final weights (float32; an nnx module, State or {name: array}), the snapshots
        (float16) and the training facts, atomically."""
        final = params if isinstance(params, dict) else checkpoint.flat_params(params)
        return checkpoint.save(path, self.family, checkpoint.config_dict(cfg), final, info=info, snapshots=snapshots)

    def load(self, path: Path | None = None):
        """Returns (cfg, graphdef, params, info) of the final weights (default: the committed file);
        strict; info["snapshot_steps"] lists the snapshots."""
        path = self.file if path is None else Path(path)
        cfg, graphdef, params, info = self._built(checkpoint.load(path, self.family), path.name)
        return cfg, graphdef, params, {**info, "snapshot_steps": checkpoint.read_info(path, self.family)[2]}

    def load_bytes(self, data: bytes):
        """Returns (cfg, graphdef, params, info) from safetensors bytes; strict (CheckpointError)."""
        return self._built(checkpoint.from_bytes(data, self.family), "the file")

    def _built(self, ckpt: checkpoint.Checkpoint, where: str):
        cfg = checkpoint.config_from_dict(self.config_class, ckpt.config)
        graphdef, template = self.abstract_model(cfg)
        return cfg, graphdef, checkpoint.filled_state(template, ckpt.tensors, where=where), ckpt.info

    def load_module(self, path: Path) -> Any:
        """Returns the nnx module stored at `path`; strict."""
        from flax import nnx

        _, graphdef, params, _ = self.load(path)
        return nnx.merge(graphdef, params)

    def read_info(self, path: Path) -> dict[str, Any]:
        """Returns the training facts stored with a checkpoint, from its header alone."""
        return checkpoint.read_info(path, self.family)[1]

    def load_weights(self, path: Path) -> tuple[Any, dict[str, np.ndarray], dict[str, Any]]:
        """Returns (cfg, {name: float32 array}, info) of the final weights without building the model (no
        Flax); info["snapshot_steps"] lists the snapshots."""
        ckpt = checkpoint.load(path, self.family)
        _, _, steps = checkpoint.read_info(path, self.family)
        return (checkpoint.config_from_dict(self.config_class, ckpt.config), ckpt.tensors,
                {**ckpt.info, "snapshot_steps": steps})

    def load_snapshot_weights(self, path: Path) -> dict[int, dict[str, np.ndarray]]:
        """Returns {step: {name: float32 array}} of every snapshot (float16 on disk), without Flax."""
        return checkpoint.load(path, self.family, snapshots=True).snapshots

    def load_snapshots(self, path: Path, template) -> dict[int, Any]:
        """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
        return checkpoint.snapshot_states(path, self.family, template)

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
def _committed(files: FamilyCheckpoint):
    return files.load(files.file)


@functools.cache
def _committed_snapshots(files: FamilyCheckpoint) -> dict[int, Any]:
    _, _, params, info = _committed(files)
    return checkpoint.snapshots_with_final(files.file, files.family, params, info)

"""Checkpoints of the date models: safetensors weights, float16 snapshots, a JSON of config and log.

Layout of checkpoints/seq2seq/<variant>/:
    weights.safetensors    the final parameters, float32
    snapshots.safetensors  earlier parameters, float16, keys "step_<N>/<param name>"
    training.json          {"config", "snapshot_steps", "log": [[step, loss, seconds], ...], ...}
Loading is strict: every parameter present, no unknown keys, every shape checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from models.seq2seq.model import Seq2SeqConfig, flat_params, load_flat_params, make_model

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT_DIR = ROOT / "checkpoints" / "seq2seq"


def variant_dir(variant: str, root: Path | None = None) -> Path:
    """Returns the folder of one variant's checkpoint."""
    return (root or CHECKPOINT_DIR) / variant


def save_checkpoint(
    folder: Path, cfg: Seq2SeqConfig, final: dict[str, np.ndarray], snapshots: dict[int, dict[str, np.ndarray]],
    info: dict,
) -> None:
    """Writes weights (float32), snapshots (float16) and training.json into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v, np.float32) for k, v in final.items()}, str(folder / "weights.safetensors"))
    packed = {
        f"step_{step}/{name}": np.ascontiguousarray(value, np.float16)
        for step, flat in snapshots.items()
        for name, value in flat.items()
    }
    save_file(packed, str(folder / "snapshots.safetensors"))
    meta = {"config": cfg.__dict__ | {}, "snapshot_steps": sorted(snapshots), **info}
    (folder / "training.json").write_text(json.dumps(meta, indent=1))


def read_info(folder: Path) -> dict:
    """Returns the parsed training.json of a checkpoint folder."""
    path = folder / "training.json"
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {folder}: train it with python -m models.train seq2seq")
    return json.loads(path.read_text())


def load_checkpoint(folder: Path):
    """Returns (cfg, graphdef, params, snapshot_steps) of the final weights; strict."""
    info = read_info(folder)
    cfg = Seq2SeqConfig.from_dict(info["config"])
    graphdef, params = make_model(cfg)
    params = load_flat_params(params, load_file(str(folder / "weights.safetensors")))
    return cfg, graphdef, params, [int(s) for s in info["snapshot_steps"]]


def load_snapshots(folder: Path, template) -> dict[int, object]:
    """Returns {step: params} of every snapshot (float16 on disk, float32 here); strict."""
    packed = load_file(str(folder / "snapshots.safetensors"))
    by_step: dict[int, dict[str, np.ndarray]] = {}
    for key, value in packed.items():
        prefix, _, name = key.partition("/")
        if not prefix.startswith("step_") or not name:
            raise ValueError(f"unexpected key {key!r} in {folder / 'snapshots.safetensors'}")
        by_step.setdefault(int(prefix.removeprefix("step_")), {})[name] = value.astype(np.float32)
    return {step: load_flat_params(template, flat) for step, flat in sorted(by_step.items())}


def params_for_save(params) -> dict[str, np.ndarray]:
    """Returns the flat float32 parameters of a params State."""
    return flat_params(params)

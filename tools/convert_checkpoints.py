"""Converts the checkpoints written before the shared format (models/checkpoint.py) into it, once.

    python tools/convert_checkpoints.py [--root checkpoints]

Old layouts, read here with plain safetensors and json (no model code):
- seq2seq/<variant>/weights.safetensors + snapshots.safetensors ("step_<N>/<name>", float16)
  + training.json (config, snapshot steps, training facts) -> seq2seq/<variant>.safetensors;
- feedforward/*.safetensors, metadata {"config": json, "meta": json};
- captioner/*.safetensors, metadata {"config": json, <fact>: json, ...};
- han/han.safetensors, metadata {"format": "attention-lab-han-v1", "config": json, <fact>: str}.
Tensors are copied unchanged (float32 weights, float16 snapshots), so every model computes
exactly what it computed before. A file already in the shared format is left alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from safetensors import safe_open
from safetensors.numpy import load_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models import checkpoint  # noqa: E402


def _metadata(path: Path) -> dict[str, str]:
    with safe_open(str(path), framework="numpy") as f:
        return dict(f.metadata() or {})


def _converted(path: Path) -> bool:
    return path.is_file() and _metadata(path).get("format") == checkpoint.FORMAT


def convert_seq2seq(folder: Path) -> Path:
    """Converts one seq2seq/<variant>/ folder into seq2seq/<variant>.safetensors and removes the folder."""
    info = json.loads((folder / "training.json").read_text())
    config = info.pop("config")
    steps = info.pop("snapshot_steps")
    snapshots: dict[int, dict] = {}
    for key, value in load_file(str(folder / "snapshots.safetensors")).items():
        prefix, _, name = key.partition("/")
        snapshots.setdefault(int(prefix.removeprefix("step_")), {})[name] = value
    if sorted(snapshots) != sorted(steps):
        raise SystemExit(f"{folder}: snapshot steps {sorted(snapshots)} do not match training.json {steps}")
    out = folder.parent / f"{folder.name}.safetensors"
    checkpoint.save(out, "seq2seq", config, load_file(str(folder / "weights.safetensors")), info=info,
                    snapshots=snapshots)
    shutil.rmtree(folder)
    return out


def convert_flat(path: Path, family: str) -> Path:
    """Converts a one-file checkpoint (feedforward, captioner, han) in place."""
    metadata = _metadata(path)
    config = json.loads(metadata.pop("config"))
    metadata.pop("format", None)
    if family == "feedforward":
        info = json.loads(metadata.pop("meta", "{}"))
    elif family == "captioner":
        info = {k: json.loads(v) for k, v in metadata.items()}
        config.setdefault("lstm_reads", "all")  # files written before the option existed
    else:  # han: plain strings, one of them a JSON list
        info = {k: json.loads(v) if k == "epoch_losses" else v for k, v in metadata.items()}
    checkpoint.save(path, family, config, load_file(str(path)), info=info)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT / "checkpoints")
    args = parser.parse_args(argv)
    root = args.root
    for folder in sorted(p for p in (root / "seq2seq").iterdir() if p.is_dir()):
        print(f"seq2seq: {folder.name} -> {convert_seq2seq(folder).name}")
    for family in ("feedforward", "captioner", "han"):
        for path in sorted((root / family).glob("*.safetensors")):
            if _converted(path):
                print(f"{family}: {path.name} already converted")
                continue
            print(f"{family}: {convert_flat(path, family).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One checkpoint format for every model trained here, and strict loading.

A checkpoint is one safetensors file:
- tensors: the final parameters, float32, named by their dotted nnx path ("encoder.conv1.kernel");
  optionally earlier snapshots, float16, named "snapshot/<step>/<dotted path>";
- metadata (all strings): "format" = FORMAT, "version" = VERSION, "family" (e.g. "seq2seq"),
  "config" (the model config as JSON), "info" (training facts as JSON: steps, seconds, log)
  and "snapshot_steps" (JSON list, possibly empty).

Loading is strict, like Gemma's params loader and nanoGPT's from_pretrained: the file must
carry this format tag, a version we read, and the expected family; every parameter of the
model must be present with its shape and no unknown tensor may be left over. Writes are
atomic (a temporary file, then os.replace), so an interrupted save never leaves half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import LabError

CHECKPOINT_ROOT = Path(__file__).resolve().parents[1] / "checkpoints"
FORMAT = "attention-lab"
VERSION = 1
SNAPSHOT_PREFIX = "snapshot/"


class CheckpointError(LabError, ValueError):
    """A file that is not a checkpoint of the expected model; the message names what is wrong."""


class MissingCheckpoint(CheckpointError, FileNotFoundError):
    """No checkpoint where the model's file should be; the message says how to train it."""


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: family, config dict, info dict, tensors and snapshots.

    tensors: {dotted name: float32 array}; snapshots: {step: {dotted name: float32 array}}.
    """

    family: str
    config: dict[str, Any]
    tensors: dict[str, np.ndarray]
    info: dict[str, Any] = field(default_factory=dict)
    snapshots: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)


def check_tensors(expected: Mapping[str, tuple[int, ...]], found: Mapping[str, Any], *, where: str) -> None:
    """Raises CheckpointError unless `found` has exactly the names of `expected`, with those shapes.

    expected: {name: shape}; found: {name: array-like with .shape}; where: names the file in the message.
    """
    missing = sorted(set(expected) - set(found))
    unknown = sorted(set(found) - set(expected))
    if missing or unknown:
        raise CheckpointError(
            f"{where}: checkpoint does not match the model: missing tensors {missing}; unknown tensors {unknown}"
        )
    for name, shape in expected.items():
        if tuple(found[name].shape) != tuple(shape):
            raise CheckpointError(f"{where}: {name} has shape {tuple(found[name].shape)}, expected {tuple(shape)}")


def _packed(
    family: str, config: Mapping[str, Any], tensors: Mapping[str, np.ndarray], info: Mapping[str, Any] | None,
    snapshots: Mapping[int, Mapping[str, np.ndarray]] | None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    arrays = {name: np.ascontiguousarray(value, np.float32) for name, value in tensors.items()}
    for step, flat in (snapshots or {}).items():
        for name, value in flat.items():
            arrays[f"{SNAPSHOT_PREFIX}{int(step)}/{name}"] = np.ascontiguousarray(value, np.float16)
    metadata = {
        "format": FORMAT,
        "version": str(VERSION),
        "family": family,
        "config": json.dumps(dict(config)),
        "info": json.dumps(dict(info or {})),
        "snapshot_steps": json.dumps(sorted(int(s) for s in (snapshots or {}))),
    }
    return arrays, metadata


def to_bytes(
    family: str, config: Mapping[str, Any], tensors: Mapping[str, np.ndarray], *, info: Mapping[str, Any] | None = None,
    snapshots: Mapping[int, Mapping[str, np.ndarray]] | None = None,
) -> bytes:
    """Returns the safetensors bytes of a checkpoint (for downloads; see save for files)."""
    from safetensors.numpy import save

    arrays, metadata = _packed(family, config, tensors, info, snapshots)
    return save(arrays, metadata=metadata)


def save(
    path: str | Path, family: str, config: Mapping[str, Any], tensors: Mapping[str, np.ndarray], *,
    info: Mapping[str, Any] | None = None, snapshots: Mapping[int, Mapping[str, np.ndarray]] | None = None,
) -> Path:
    """Writes the checkpoint atomically (temporary file, then os.replace) and returns its path."""
    path = Path(path)
    write_atomic(path, to_bytes(family, config, tensors, info=info, snapshots=snapshots))
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _header(metadata: Mapping[str, str] | None, *, family: str, where: str) -> tuple[dict, dict, list[int]]:
    metadata = dict(metadata or {})
    if metadata.get("format") != FORMAT:
        raise CheckpointError(f"{where} is not an Attention Lab checkpoint (no format tag {FORMAT!r})")
    if metadata.get("version") != str(VERSION):
        raise CheckpointError(f"{where} has checkpoint version {metadata.get('version')!r}; this code reads {VERSION}")
    if metadata.get("family") != family:
        raise CheckpointError(f"{where} holds a {metadata.get('family')!r} model, not a {family!r} one")
    try:
        return (json.loads(metadata["config"]), json.loads(metadata.get("info", "{}")),
                [int(s) for s in json.loads(metadata.get("snapshot_steps", "[]"))])
    except (KeyError, ValueError, TypeError) as error:
        raise CheckpointError(f"{where}: unreadable checkpoint metadata ({error})") from None


def _split(arrays: Mapping[str, np.ndarray], where: str) -> tuple[dict, dict]:
    tensors, snapshots = {}, {}
    for name, value in arrays.items():
        if name.startswith(SNAPSHOT_PREFIX):
            step, _, param = name[len(SNAPSHOT_PREFIX):].partition("/")
            if not step.isdigit() or not param:
                raise CheckpointError(f"{where}: unexpected tensor name {name!r}")
            snapshots.setdefault(int(step), {})[param] = np.asarray(value, np.float32)
        else:
            tensors[name] = np.asarray(value, np.float32)
    return tensors, dict(sorted(snapshots.items()))


def load(path: str | Path, family: str, *, snapshots: bool = False) -> Checkpoint:
    """Returns the checkpoint at `path`; CheckpointError if it is not one of `family`.

    snapshots: also read the float16 snapshots (as float32); off, they are never read.
    """
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise MissingCheckpoint(f"no checkpoint at {path}: train it with python -m models.train {family}")
    try:
        with safe_open(str(path), framework="numpy") as f:
            config, info, _ = _header(f.metadata(), family=family, where=path.name)
            names = [n for n in f.keys() if snapshots or not n.startswith(SNAPSHOT_PREFIX)]
            arrays = {n: f.get_tensor(n) for n in names}
    except CheckpointError:
        raise
    except Exception as error:  # noqa: BLE001 - safetensors raises its own error types
        raise CheckpointError(f"{path.name} is not a readable safetensors file ({error})") from None
    tensors, snaps = _split(arrays, path.name)
    return Checkpoint(family, config, tensors, info, snaps)


def from_bytes(data: bytes, family: str) -> Checkpoint:
    """Returns the checkpoint in safetensors bytes (e.g. a downloaded model); CheckpointError if unusable."""
    from safetensors.numpy import load as load_arrays

    try:
        header_len = int.from_bytes(data[:8], "little")
        if not 0 < header_len < min(len(data), 10_000_000):
            raise ValueError("bad header length")
        metadata = json.loads(data[8 : 8 + header_len]).get("__metadata__")
        arrays = load_arrays(data)
    except Exception as error:  # noqa: BLE001 - any parse failure means "not a checkpoint"
        raise CheckpointError(f"not a checkpoint file ({str(error).splitlines()[0] if str(error) else 'unreadable'})") from None
    config, info, _ = _header(metadata, family=family, where="the file")
    tensors, snaps = _split(arrays, "the file")
    return Checkpoint(family, config, tensors, info, snaps)


def read_info(path: str | Path, family: str) -> tuple[dict, dict, list[int]]:
    """Returns (config, info, snapshot steps) from the header alone, without reading tensors."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise MissingCheckpoint(f"no checkpoint at {path}: train it with python -m models.train {family}")
    try:
        with safe_open(str(path), framework="numpy") as f:
            metadata = f.metadata()
    except Exception as error:  # noqa: BLE001 - safetensors raises its own error types
        raise CheckpointError(f"{path.name} is not a readable safetensors file ({error})") from None
    return _header(metadata, family=family, where=path.name)


# ------------------------------------------------------------------ configs and nnx states


def config_dict(cfg: Any) -> dict[str, Any]:
    """Returns a frozen config dataclass as a JSON-safe dict."""
    return dataclasses.asdict(cfg)


def config_from_dict(cls: type, data: Mapping[str, Any]) -> Any:
    """Returns cls(**data) with JSON lists turned back into the tuples the frozen config holds.

    Raises CheckpointError for keys the config does not have.
    """
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise CheckpointError(f"unknown {cls.__name__} keys {unknown}")
    hints = typing.get_type_hints(cls)
    return cls(**{k: _tuples(v) if _is_tuple(hints.get(k)) else v for k, v in data.items()})


def _is_tuple(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_is_tuple(a) for a in typing.get_args(hint))
    return origin is tuple or hint is tuple


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def flat_params(state: Any) -> dict[str, np.ndarray]:
    """Returns {dotted path: float32 array} of an nnx State (or a module's Param state)."""
    from flax import nnx

    if isinstance(state, nnx.Module):
        state = nnx.state(state, nnx.Param)
    out = {}
    for path, leaf in nnx.to_flat_state(state):
        value = leaf.get_value() if hasattr(leaf, "get_value") else leaf
        out[".".join(str(p) for p in path)] = np.asarray(value, np.float32)
    return out


def dotted_name(path: tuple) -> str:
    """Returns the dotted parameter name of a jax key path into an nnx State ("encoder.conv1.kernel")."""
    parts = []
    for key in path:
        if getattr(key, "name", None) == "value":  # a Variable's own value field
            continue
        parts.append(str(getattr(key, "key", getattr(key, "name", getattr(key, "idx", key)))))
    return ".".join(parts)


def param_shapes(state: Any) -> dict[str, tuple[int, ...]]:
    """Returns {dotted path: shape} of an nnx State, abstract (eval_shape) or concrete."""
    from flax import nnx

    out = {}
    for path, leaf in nnx.to_flat_state(state):
        value = leaf.get_value() if hasattr(leaf, "get_value") else leaf
        out[".".join(str(p) for p in path)] = tuple(value.shape)
    return out


def filled_state(state: Any, tensors: Mapping[str, np.ndarray], *, where: str) -> Any:
    """Returns a new nnx State shaped like `state` (abstract or concrete) with every leaf from
    `tensors`; strict (CheckpointError names missing, unknown and misshapen tensors)."""
    import jax.numpy as jnp
    from flax import nnx

    check_tensors(param_shapes(state), tensors, where=where)
    return nnx.from_flat_state([
        (path, leaf.replace(jnp.asarray(tensors[".".join(str(p) for p in path)], jnp.float32)))
        for path, leaf in nnx.to_flat_state(state)
    ])


def trained_steps(info: Mapping[str, Any]) -> list[int]:
    """Returns the training steps a checkpoint has weights for: its snapshots and the final step."""
    return sorted({*map(int, info["snapshot_steps"]), int(info["final_step"])})


def snapshot_states(path: str | Path, family: str, template: Any) -> dict[int, Any]:
    """Returns {step: params} of every snapshot (float16 on disk, float32 here), shaped like `template`; strict."""
    ckpt = load(path, family, snapshots=True)
    return {step: filled_state(template, flat, where=f"{Path(path).name} step {step}")
            for step, flat in ckpt.snapshots.items()}


def snapshots_with_final(path: str | Path, family: str, params: Any, info: Mapping[str, Any]) -> dict[int, Any]:
    """Returns {training step: params} of every snapshot and the final weights, by step."""
    snaps = snapshot_states(path, family, params)
    snaps[int(info["final_step"])] = params
    return dict(sorted(snaps.items()))

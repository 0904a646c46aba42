"""The one canonical attention record that flows from models to figures, exports and the CLI.

numpy only (no jax), so viz/ and the CLI can use it without importing a model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.errors import LabError


class InputError(LabError, ValueError):
    """An error the user caused; its message is one line saying what was wrong and what to do."""

    exit_status = 2


@dataclass(frozen=True)
class AttentionRecord:
    """Attention weights with named axes and labels.

    mechanism:    registry id of the mechanism that produced the weights.
    weights:      float32 array; ``axes`` names each dimension, e.g. ("query", "key"),
                  ("layer", "head", "query", "key") or ("word", "row", "col").
    query_labels: one label per query (the first of the last two "matrix" axes).
    key_labels:   one label per key (the key axis, or the flattened trailing axes).
    meta:         JSON-safe extras (settings, captions, notices).
    extras:       named arrays or scalars exported beside the weights (npz and JSON),
                  e.g. window_center, samples, prediction.
    """

    mechanism: str
    weights: np.ndarray
    axes: tuple[str, ...]
    query_labels: tuple[str, ...]
    key_labels: tuple[str, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        weights = np.asarray(self.weights, dtype=np.float32)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "axes", tuple(self.axes))
        object.__setattr__(self, "query_labels", tuple(str(x) for x in self.query_labels))
        object.__setattr__(self, "key_labels", tuple(str(x) for x in self.key_labels))
        if weights.ndim != len(self.axes):
            raise ValueError(f"weights have {weights.ndim} dims but axes name {len(self.axes)}")
        rows, cols = _matrix_shape(weights.shape, self.axes)
        if len(self.query_labels) != rows:
            raise ValueError(f"{len(self.query_labels)} query labels for {rows} query rows")
        if len(self.key_labels) != cols:
            raise ValueError(f"{len(self.key_labels)} key labels for {cols} key columns")
        json.dumps(dict(self.meta))  # meta must be JSON-safe; fail loudly here, not in export

    @property
    def query_axis(self) -> int | None:
        """Returns the index of the query axis: the one named "query", else the first.

        Axes before it are leading axes (layer, head, ...); axes after it are key axes,
        flattened into one key dimension (so ("word", "row", "col") reads word × cell).
        A 1-D record has no query axis: it is one row of weights over keys.
        """
        if len(self.axes) < 2:
            return None
        return self.axes.index("query") if "query" in self.axes else 0

    @property
    def leading_axes(self) -> tuple[str, ...]:
        """Returns the axes in front of the query axis (e.g. ("layer", "head"))."""
        q = self.query_axis
        return () if q is None else self.axes[:q]

    def matrix(self, **fixed: int) -> np.ndarray:
        """Returns the 2-D [query, key] matrix, with leading axes fixed (default index 0)."""
        unknown = set(fixed) - set(self.leading_axes)
        if unknown:
            raise KeyError(f"cannot fix {sorted(unknown)}; leading axes are {self.leading_axes}")
        index = tuple(int(fixed.get(name, 0)) for name in self.leading_axes)
        sub = self.weights[index]
        if sub.ndim <= 1:
            return sub.reshape(1, -1)
        return sub.reshape(sub.shape[0], -1)

    def to_json_dict(self) -> dict[str, Any]:
        """Returns a JSON-safe dict: weights as nested lists, labels, axes, meta and extras."""
        return {
            "mechanism": self.mechanism,
            "axes": list(self.axes),
            "shape": list(self.weights.shape),
            "weights": json_safe(self.weights),
            "query_labels": list(self.query_labels),
            "key_labels": list(self.key_labels),
            "meta": dict(self.meta),
            **{name: json_safe(value) for name, value in self.extras.items()},
        }

    def to_npz_dict(self) -> dict[str, np.ndarray]:
        """Returns the arrays written to .npz: weights, labels, mechanism, axes, meta, extras."""
        arrays = {
            "weights": self.weights,
            "query_labels": np.asarray(self.query_labels, dtype=np.str_),
            "key_labels": np.asarray(self.key_labels, dtype=np.str_),
            "mechanism": np.asarray(self.mechanism),
            "axes": np.asarray(self.axes, dtype=np.str_),
            "meta_json": np.asarray(json.dumps(dict(self.meta))),
        }
        for name, value in self.extras.items():
            if name in arrays:
                raise ValueError(f"extra {name!r} would overwrite a standard field")
            arrays[name] = np.asarray(value)
        return arrays


def _matrix_shape(shape: tuple[int, ...], axes: tuple[str, ...]) -> tuple[int, int]:
    # Rows and columns of AttentionRecord.matrix(): see AttentionRecord.query_axis.
    if len(shape) < 2:
        return 1, int(np.prod(shape))
    q = axes.index("query") if "query" in axes else 0
    return shape[q], int(np.prod(shape[q + 1 :]))


def json_safe(value: Any) -> Any:
    """Returns value as JSON-ready Python data: arrays as (nested) lists, NaN and ±inf as None."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return [json_safe(x) for x in value.tolist()] if value.ndim else json_safe(value.item())
        return value.tolist()
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [json_safe(x) for x in value]
    if isinstance(value, np.str_):
        return str(value)
    return value

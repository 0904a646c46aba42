"""Strict checkpoint matching, shared by every model trained here.

A checkpoint must hold exactly the tensors the model has, each with the model's shape: a
missing tensor would leave random initialisation in place silently, an unknown one means
the file belongs to another model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_tensors(expected: Mapping[str, tuple[int, ...]], found: Mapping[str, Any], *, where: str) -> None:
    """Raises ValueError unless `found` has exactly the names of `expected`, with those shapes.

    expected: {name: shape}; found: {name: array-like with .shape}; where: names the file in the message.
    """
    missing = sorted(set(expected) - set(found))
    unknown = sorted(set(found) - set(expected))
    if missing or unknown:
        raise ValueError(f"{where}: checkpoint does not match the model: missing tensors {missing}; unknown tensors {unknown}")
    for name, shape in expected.items():
        if tuple(found[name].shape) != tuple(shape):
            raise ValueError(f"{where}: {name} has shape {tuple(found[name].shape)}, expected {tuple(shape)}")

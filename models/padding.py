"""Length and batch buckets: inputs are padded up to a few fixed sizes so that jax compiles
each jitted function for a handful of shapes, not for every new length (a compile costs
~0.5–10 s on two cores; running a few padded steps costs milliseconds). numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence


def bucket(n: int, buckets: Sequence[int]) -> int:
    """Returns the smallest bucket >= n.  buckets ascending; ValueError past the largest."""
    for size in buckets:
        if n <= size:
            return int(size)
    raise ValueError(f"{n} exceeds the largest bucket {buckets[-1]}")

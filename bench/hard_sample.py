"""Benchmark: models.attention.hard_sample, the hard captioner's draws, against another version of it.

    .venv/bin/python bench/hard_sample.py [--other FILE] [--repeat 50]

Times one call that draws 2,000 samples for each of 9 rows over 64 cells (what the images page
draws for every new caption: the 8 words and the end of a caption, an 8 × 8 grid), the result
brought back to numpy. --other names a copy of models/attention.py from another commit, e.g.

    git show 04bde36:models/attention.py > /tmp/attention_04bde36.py
    .venv/bin/python bench/hard_sample.py --other /tmp/attention_04bde36.py

and the two are timed alternately in one run, so drift of the machine falls on both. Prints the
median of each and their ratio. It never asserts a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from models import attention  # noqa: E402

ROWS, CELLS, DRAWS = 9, 64, 2_000


def load(path: Path):
    """Returns the module at `path` (another commit's models/attention.py)."""
    spec = importlib.util.spec_from_file_location("other_attention", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, help="another commit's models/attention.py, timed beside this one")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    weights = np.random.default_rng(0).random((ROWS, CELLS)).astype(np.float32)
    weights /= weights.sum(axis=1, keepdims=True)
    key = jax.random.key(0)
    sides = {"this checkout": attention}
    if args.other:
        sides[f"other ({args.other.name})"] = load(args.other)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for module in sides.values():  # compile first
        np.asarray(module.hard_sample(key, weights, DRAWS))
    for _ in range(args.repeat):
        for name, module in sides.items():
            start = time.perf_counter()
            np.asarray(module.hard_sample(key, weights, DRAWS))
            times[name].append((time.perf_counter() - start) * 1e3)
    ours = statistics.median(times["this checkout"])
    print(f"hard_sample: {DRAWS:,} draws × {ROWS} rows × {CELLS} cells, median of {args.repeat}\n")
    print("| version | ms | × this checkout |\n|---|---:|---:|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.2f} | {statistics.median(values) / ours:.1f} |")


if __name__ == "__main__":
    main()

"""Prints the quality and speed table of the committed feed-forward attention models.

    .venv/bin/python bench/feedforward_quality.py [--sequences 1000]

Quality on fresh addition sequences (seed disjoint from training): MSE of the predicted sum,
top-2 rate (the two largest α are the two marked steps), mean α mass on the marked steps.
Speed: median time of one jitted forward pass on one sequence (batch 1, padded to its
length bucket, compiled beforehand), and per sequence in batches of 50.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.feedforward.model import PAPER_LENGTHS  # noqa: E402
from models.feedforward.quality import evaluate_runner  # noqa: E402
from models.feedforward.records import load_runner  # noqa: E402
from models.feedforward.task import LENGTH_BUCKETS, lengths_around, make_sequence, sample_batch  # noqa: E402
from models.padding import bucket  # noqa: E402

SEED = 99_000


def one_sequence_ms(runner, length: int, repeats: int = 7) -> float:
    """Returns the median milliseconds of one forward pass on one sequence of `length`."""
    inputs, _, _ = make_sequence(length, seed=1)
    runner.run_one(inputs)  # compiles the bucket
    times = [runner.run_one(inputs)[2] for _ in range(repeats)]
    return 1000 * float(np.median(times))


def batch_ms_per_sequence(runner, length: int, batch: int = 50) -> float:
    """Returns milliseconds per sequence of a batched forward pass."""
    data = sample_batch(np.random.default_rng(0), np.full(batch, length), bucket(length, LENGTH_BUCKETS))
    runner(data.inputs, data.lengths)
    start = time.perf_counter()
    for _ in range(3):
        runner(data.inputs, data.lengths)
    return 1000 * (time.perf_counter() - start) / (3 * batch)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=1_000, help="test sequences per row (default 1,000)")
    args = parser.parse_args(argv)
    n = args.sequences
    print(f"{n} fresh sequences per row (seed {SEED}); MSE of the sum (targets in [−2, 2], variance 2/3)\n")
    print("| model | trained on | test T | MSE | top-2 = marked | α mass on marked | 1 sequence (ms) "
          "| batch of 50 (ms/seq) | batch: ms per 1,000 steps |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = [("paper", t0, f"T₀ = {t0:,} ± 10 %", t0, True) for t0 in PAPER_LENGTHS]
    rows += [("unbounded", None, "T = 50–1,000", t, False) for t in (100, 1_000, 10_000)]
    for variant, t0, trained, test_t, around in rows:
        runner = load_runner(variant, t0)
        rng = np.random.default_rng(SEED + test_t)
        lengths = lengths_around(rng, test_t, n) if around else np.full(n, test_t)
        quality = evaluate_runner(runner, lengths, seed=SEED + test_t + (0 if around else 1))
        shown_t = f"{test_t:,} ± 10 %" if around else f"{test_t:,}"
        per_seq = batch_ms_per_sequence(runner, test_t)
        print(
            f"| {runner.name} | {trained} | {shown_t} | {quality['mse']:.2g} | {quality['top2']:.1%} "
            f"| {quality['mass']:.1%} | {one_sequence_ms(runner, test_t):.2f} | {per_seq:.3f} "
            f"| {1000 * per_seq / test_t:.3f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

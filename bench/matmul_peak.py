"""The machine's float32 matmul ceiling, to read bench/transformer.py's ratios against.

    .venv/bin/python bench/matmul_peak.py [--size 2048] [--reps 7]

Times one n × n × n float32 matmul, jitted in XLA and in numpy (its BLAS), side by side in one run,
and prints the medians as GFLOP/s (2n³ per product). A forward cannot run faster than its matmuls:
docs/PERFORMANCE.md sets MiniLM's forward (about 12.1 GFLOP at 1 × 512) against this rate.
It never asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def median_s(fn, reps: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)
    import jax
    import jax.numpy as jnp

    n = args.size
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    product = jax.jit(lambda x, y: x @ y)
    flop = 2.0 * n**3
    rows = [("XLA (jax.jit)", median_s(lambda: product(ja, jb).block_until_ready(), args.reps)),
            ("numpy (BLAS)", median_s(lambda: a @ b, args.reps))]
    print(f"float32 matmul {n} × {n} × {n}, median of {args.reps}\n")
    print("| implementation | ms | GFLOP/s |")
    print("|---|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds * 1000:.1f} | {flop / seconds / 1e9:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

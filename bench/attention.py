"""Scaled dot-product attention: ours (returns its weights) vs jax.nn.dot_product_attention vs numpy.

    python bench/attention.py [--repeats 20] [--sizes 64 256 1024 4096]

Prints, per sequence length T, the median time per call of each implementation, the ratio
to the baseline jax.nn.dot_product_attention (which returns only the output, not the weights),
and the compile time of each jitted function. Shapes: batch 1, 4 heads, head width 64.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from models.attention import scaled_dot_product_attention  # noqa: E402

BATCH, HEADS, WIDTH = 1, 4, 64


def numpy_attention(q, k, v):
    """q, k, v [B, H, T, d] -> (context, weights), in float32 numpy."""
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights, v), weights


@jax.jit
def ours(q, k, v):  # [B, H, T, d]
    return scaled_dot_product_attention(q, k, v)


@jax.jit
def baseline(q, k, v):  # jax.nn wants [B, T, H, d]
    return jax.nn.dot_product_attention(q, k, v)


def timed(fn, args, repeats, sync=True):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        if sync:
            jax.block_until_ready(out)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compile_seconds(fn, args):
    start = time.perf_counter()
    fn.lower(*args).compile()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024, 4096])
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; B={BATCH} H={HEADS} d={WIDTH}; "
          f"median of {args.repeats} calls; GLIBC_TUNABLES={'set' if os.environ.get('GLIBC_TUNABLES') else 'unset'}")
    header = f"{'T':>6} | {'jax.nn (ms)':>11} | {'ours+weights (ms)':>17} | {'ratio':>6} | {'numpy (ms)':>10} | {'ratio':>6} | {'compile ours/jax.nn (s)':>23}"
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)
    for t in args.sizes:
        q, k, v = (rng.standard_normal((BATCH, HEADS, t, WIDTH)).astype(np.float32) for _ in range(3))
        qj, kj, vj = (jnp.asarray(x) for x in (q, k, v))
        qt, kt, vt = (jnp.transpose(x, (0, 2, 1, 3)) for x in (qj, kj, vj))
        c_ours = compile_seconds(ours, (qj, kj, vj))
        c_base = compile_seconds(baseline, (qt, kt, vt))
        jax.block_until_ready(ours(qj, kj, vj))
        jax.block_until_ready(baseline(qt, kt, vt))
        repeats = args.repeats if t <= 1024 else max(3, args.repeats // 4)
        # Interleave the two jitted implementations so drift hits both alike.
        t_ours, t_base = [], []
        for _ in range(repeats):
            t_base.append(timed(baseline, (qt, kt, vt), 1))
            t_ours.append(timed(ours, (qj, kj, vj), 1))
        m_ours, m_base = statistics.median(t_ours), statistics.median(t_base)
        m_np = timed(numpy_attention, (q, k, v), max(3, repeats // 2), sync=False)
        print(f"{t:>6} | {m_base * 1e3:>11.2f} | {m_ours * 1e3:>17.2f} | {m_ours / m_base:>6.2f} | "
              f"{m_np * 1e3:>10.2f} | {m_np / m_base:>6.2f} | {c_ours:>11.2f} / {c_base:<9.2f}")
        ctx, _ = ours(qj, kj, vj)
        np.testing.assert_allclose(np.transpose(np.asarray(ctx), (0, 2, 1, 3)), baseline(qt, kt, vt), atol=1e-4)


if __name__ == "__main__":
    main()

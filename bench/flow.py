"""Benchmark: one contribution graph (models/flow: one jitted forward with its captures, plus the traced route)
against one knock-out sweep (models/lm/knockout.py sweep_runs: every head knocked out alone) on the same input.

    GLIBC_TUNABLES=... .venv/bin/python bench/flow.py [--reps 9] [--models trained,gpt2-small]

Models as bench/lm.py builds them: "trained", the GPT trained here (checkpoints/lm; 2 layers × 4 heads) on
[BOS] + r + r of 101 tokens (models/lm/quality.py repeated_probe); "gpt2-small", a random GPT-2 of GPT-2 small's
shape (144 heads) on 128 random tokens. Each side runs in its own worker process (bench/transformer.py Worker,
with the glibc malloc tunables), warmed up (compiled) first; the calls are paired, who goes first alternating.
Printed: the median time of each, the median of the paired ratios (graph / sweep: the sweep is the baseline,
< 1 is faster) and their spread, the CPU, the date and the load average.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lm import model_folder, print_table  # noqa: E402
from transformer import Worker, serve_calls, worker_envs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOKENS = {"trained": 101, "gpt2-small": 128}


def probe_ids(lm, tokens: int) -> np.ndarray:
    """Returns int32 [1, tokens]: [BOS] + r + r for an odd count (the induction probe), else random ids."""
    from models.lm import quality
    from models.lm.tokenizer import EOT_ID

    if tokens % 2:
        return quality.repeated_probe(lm.config.vocab_size, EOT_ID, half=tokens // 2, count=1).astype(np.int32)
    return np.random.default_rng(tokens).integers(0, lm.config.vocab_size, (1, tokens), dtype=np.int32)


def worker(kind: str, folder: str, tokens: int):
    """Returns {tokens: the call} of one side: "graph" (flow + route) or "sweep"."""
    import jax

    from models.flow.decoder import flow, graph_of
    from models.flow.graph import trace
    from models.lm.forward import pad_ids
    from models.lm.knockout import sweep_runs
    from models.lm.loader import load_folder

    lm = load_folder(folder)
    padded, mask = pad_ids(probe_ids(lm, tokens), (tokens,))
    ids, key_mask = jax.device_put(padded), jax.device_put(mask)

    def graph():
        trace(graph_of(flow(lm.state, ids, key_mask, graphdef=lm.graphdef), tokens), tokens - 1)

    def sweep():
        jax.block_until_ready(sweep_runs(lm.state, ids[0], key_mask[0], graphdef=lm.graphdef, mode="zero"))

    return {tokens: graph if kind == "graph" else sweep}


def bench_model(folder: Path, tokens: int, reps: int, warmup: int) -> dict[str, list[float]]:
    """Returns {"graph": [s, ...], "sweep": [s, ...]} of `reps` paired calls."""
    env, _ = worker_envs()
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--folder",
        str(folder),
        "--tokens",
        str(tokens),
        "--warmup",
        str(warmup),
        "--worker",
    ]
    sides = [Worker(kind, [*command, kind], env, close_timeout=120) for kind in ("graph", "sweep")]
    times: dict[str, list[float]] = {"graph": [], "sweep": []}
    try:
        for rep in range(reps):
            for side in sides if rep % 2 == 0 else sides[::-1]:
                times[side.kind].append(side.time(tokens))
    finally:
        for side in sides:
            side.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="paired calls per model")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per worker first")
    parser.add_argument("--models", default="trained", help="comma list of trained, gpt2-small")
    parser.add_argument("--worker", choices=("graph", "sweep"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--tokens", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(0, str(ROOT))
        serve_calls(worker(args.worker, args.folder, args.tokens), args.warmup)
        return 0
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models.split(","):
            folder, description = model_folder(name, Path(scratch))
            times = bench_model(folder, TOKENS[name], args.reps, args.warmup)
            ratios = [g / s for g, s in zip(times["graph"], times["sweep"])]
            spread = (
                f"{min(ratios):.3f}-{max(ratios):.3f}"
                if len(ratios) < 4
                else "{:.3f}-{:.3f}".format(*statistics.quantiles(ratios, n=4)[::2])
            )
            lines.append(
                f"{description:50} | {TOKENS[name]:>6} | {1000 * statistics.median(times['graph']):9.1f} | "
                f"{1000 * statistics.median(times['sweep']):9.1f} | {statistics.median(ratios):5.3f} | "
                f"{spread} (n={len(ratios)})"
            )
    print_table(
        f"{'model':50} | {'tokens':>6} | {'graph ms':>9} | {'sweep ms':>9} | {'ratio':>5} | ratio IQR",
        lines,
        "one flow graph (forward + route) against one knock-out sweep (baseline), same input",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

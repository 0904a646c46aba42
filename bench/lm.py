"""Benchmark: our jitted decoder LM forward (logits and every attention map) against Hugging Face eager.

    GLIBC_TUNABLES=... .venv/bin/python bench/lm.py [--reps 9] [--models trained,gpt2-small]

Two models, each read by both sides from the same Hugging Face folder:
- "trained": the GPT trained here (checkpoints/lm); where it is not there yet, a random GPT-2 of
  the same kind of size (2 layers, 4 heads, width 128, 128 positions, 4,096 tokens);
- "gpt2-small": a random GPT-2 of GPT-2 small's shape (12 layers, 12 heads, width 768, 1,024
  positions, 50,257 tokens), written once to a temporary folder with save_gpt2_folder.
Each runs at 1 × 128 and, where the model has the positions, 1 × 1024 tokens.

--generate: instead of one forward, generating NEW_TOKENS (64) tokens greedily after a prompt of
PROMPT_TOKENS (16) random ids, with every attention map: ours models/lm/generate.py's generate (the
KV-cached decode loop, one jitted call, the maps copied out to numpy); Hugging Face's
model.generate(max_new_tokens=64, min_new_tokens=64, do_sample=False, output_attentions=True,
return_dict_in_generate=True) with its own KV cache.

As bench/transformer.py does for MiniLM: each side runs in its own worker process, calls are
paired alternately, the JAX worker has the glibc malloc tunables, the PyTorch worker runs
transformers' AutoModelForCausalLM (attn_implementation="eager", output_attentions=True,
2 threads, inference_mode) from .bench-venv. Timed: one call on the same random ids, until the
logits [1, T, V] and all L attention maps [1, H, T, T] are computed. Printed: medians, the
median of the paired ratios (ours / HF, < 1 is faster) and their spread, the CPU and the date.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transformer import (  # noqa: E402
    BENCH_PYTHON,
    THREADS,
    Worker,
    ensure_bench_venv,
    paired_times,
    serve_calls,
    worker_envs,
)

ROOT = Path(__file__).resolve().parents[1]
TRAINED = ROOT / "checkpoints" / "lm"
SHAPES = {  # GPT-2 config names of the random stand-ins
    "trained": dict(vocab_size=4096, n_embd=128, n_layer=2, n_head=4, n_positions=128),
    "gpt2-small": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024),
}
LENGTHS = (128, 1024)
PROMPT_TOKENS = 16  # --generate: the prompt's length ...
NEW_TOKENS = 64  # ... and how many tokens are written after it


def model_folder(name: str, scratch: Path) -> tuple[Path, str]:
    """Returns (folder, description) of a benchmark model, writing a random one if needed."""
    if name == "trained" and (TRAINED / "config.json").is_file():
        return TRAINED, "the GPT trained here (checkpoints/lm)"
    folder = scratch / name
    if not (folder / "config.json").is_file():
        sys.path.insert(0, str(ROOT))
        from flax import nnx
        from tokenizers import Tokenizer, models

        from models.lm.config import gpt2_config
        from models.lm.loader import save_gpt2_folder
        from models.lm.model import DecoderLM

        cfg = gpt2_config(**SHAPES[name])
        _, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(0)))
        vocab = {f"t{i}": i for i in range(cfg.vocab_size)}
        save_gpt2_folder(folder, cfg, state, Tokenizer(models.WordLevel(vocab, unk_token="t0")))
    shape = SHAPES[name]
    return folder, f"random GPT-2, {shape['n_layer']} layers x {shape['n_head']} heads, width {shape['n_embd']}"


def token_ids(tokens: int, vocab: int) -> np.ndarray:
    return np.random.default_rng(tokens).integers(0, vocab, size=(1, tokens), dtype=np.int32)


# ----------------------------------------------------------------------------- workers


def jax_worker(folder: str, lengths: list[int], task: str = "forward"):
    import jax

    from models.lm.generate import generate
    from models.lm.loader import load_folder
    from models.lm.model import forward

    lm = load_folder(folder)
    calls = {}
    if task == "generate":
        for tokens in lengths:
            prompt = token_ids(tokens, lm.config.vocab_size)[0]

            def call(prompt=prompt, tokens=tokens):
                result = generate(lm, prompt, max_new=NEW_TOKENS)
                assert result.maps.shape[-1] == tokens + NEW_TOKENS

            calls[tokens] = call
        return calls
    for tokens in lengths:
        ids = jax.device_put(token_ids(tokens, lm.config.vocab_size))
        mask = jax.device_put(np.ones((1, tokens), bool))

        def call(ids=ids, mask=mask):
            jax.block_until_ready(forward(lm.state, ids, mask, graphdef=lm.graphdef))

        calls[tokens] = call
    return calls


def torch_worker(folder: str, lengths: list[int], task: str = "forward"):
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(THREADS)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    calls = {}
    if task == "generate":
        for tokens in lengths:
            ids = torch.from_numpy(token_ids(tokens, model.config.vocab_size).astype(np.int64))

            def call(ids=ids, tokens=tokens):
                with torch.inference_mode():
                    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS,
                                         min_new_tokens=NEW_TOKENS, do_sample=False, output_attentions=True,
                                         return_dict_in_generate=True, pad_token_id=0)
                assert out.sequences.shape[1] == tokens + NEW_TOKENS and len(out.attentions) == NEW_TOKENS

            calls[tokens] = call
        return calls
    for tokens in lengths:
        ids = torch.from_numpy(token_ids(tokens, model.config.vocab_size).astype(np.int64))

        def call(ids=ids):
            with torch.inference_mode():
                out = model(input_ids=ids, output_attentions=True)
            assert len(out.attentions) == model.config.num_hidden_layers and out.logits.shape[1] == ids.shape[1]

        calls[tokens] = call
    return calls


def serve(kind: str, folder: str, lengths: list[int], warmup: int, task: str = "forward") -> None:
    """Worker loop: read a token count per line, answer the seconds one call took."""
    serve_calls((jax_worker if kind == "jax" else torch_worker)(folder, lengths, task), warmup)


def bench_model(folder: Path, lengths: list[int], reps: int, warmup: int,
                task: str = "forward") -> dict[int, dict[str, list[float]]]:
    jax_env, torch_env = worker_envs()
    command = [str(Path(__file__).resolve()), "--folder", str(folder), "--lengths", ",".join(map(str, lengths)),
               "--warmup", str(warmup), "--task", task, "--worker"]
    ours = Worker("jax", [sys.executable, *command, "jax"], jax_env, close_timeout=120)
    theirs = Worker("torch", [str(BENCH_PYTHON), *command, "torch"], torch_env, close_timeout=120)
    return paired_times(ours, theirs, lengths, reps)


def machine() -> str:
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines()
        name = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        name = "unknown CPU"
    return f"{name}, {os.cpu_count()} cores"


def print_table(header: str, lines: list[str], title: str = "") -> None:
    """Prints the machine, the date and the load average, an optional title, then the table."""
    print(f"\n{machine()}; {datetime.date.today().isoformat()}; load average {os.getloadavg()[0]:.1f}")
    print(*([title] if title else []), header, "-" * len(header), *lines, sep="\n")


def main() -> int:
    if {"--sweep", "--sweep-worker"} & set(sys.argv):  # the knock-out sweep section below
        return sweep_main()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="trained,gpt2-small", help="comma-separated: trained, gpt2-small")
    parser.add_argument("--reps", type=int, default=9, help="paired calls per model and length")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per length and side")
    parser.add_argument("--generate", action="store_true",
                        help=f"time generating {NEW_TOKENS} tokens with every attention map instead of one forward")
    parser.add_argument("--worker", choices=("jax", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--task", default="forward", choices=("forward", "generate"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--lengths", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, args.folder, [int(x) for x in args.lengths.split(",")], args.warmup, args.task)
        return 0
    ensure_bench_venv()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lm-bench-") as scratch:
        for name in args.models.split(","):
            folder, description = model_folder(name, Path(scratch))
            import json

            positions = json.loads((folder / "config.json").read_text())["n_positions"]
            task = "generate" if args.generate else "forward"
            lengths = [PROMPT_TOKENS] if args.generate else [t for t in LENGTHS if t <= positions]
            for tokens, t in bench_model(folder, lengths, args.reps, args.warmup, task).items():
                ratios = [a / b for a, b in zip(t["jax"], t["torch"])]
                q1, _, q3 = statistics.quantiles(ratios, n=4)
                shown = f"{tokens}+{NEW_TOKENS}" if args.generate else f"1x{tokens}"
                rows.append((description, shown, 1000 * statistics.median(t["jax"]),
                             1000 * statistics.median(t["torch"]), statistics.median(ratios), q1, q3, len(ratios)))
    print_table(f"{'model':50} | {'tokens':>6} | {'ours ms':>8} | {'HF ms':>8} | {'ratio':>5} | ratio IQR",
                [f"{description:50} | {config:>6} | {ours:8.1f} | {theirs:8.1f} | {ratio:5.2f} | {q1:.2f}-{q3:.2f} (n={n})"
                 for description, config, ours, theirs, ratio, q1, q3, n in rows])
    return 0


# ----------------------------------------------------------------------------- sweep: every head knocked out alone
# `bench/lm.py --sweep [--sweep-lengths 64,128] [--reps 3]`: GPT-2 small's shape (random, 12 × 12 heads, width
# 768). Ours: models/lm/knockout.py sweep_runs, one jitted call (for each layer, a batch of its 12 heads run from
# the plain residual stream entering it, the knocked-out head patched in; each batch's read-out unembeds the
# vocabulary in blocks). Hugging Face eager: a loop of 144 forwards, each with a forward
# pre-hook on one layer's attn.c_proj zeroing one head's slice of its input (the same "zero" knock-out), each
# computing the prompt's loss and the last position's probabilities. Both give a [12, 12] grid of the change in
# the top-1 probability and in the loss; the table prints their largest difference beside the times, and the
# load average: on a loaded machine the ratio says little (docs/PERFORMANCE.md holds the idle measurement).


def sweep_jax_worker(folder: str, tokens: int):
    from models.lm.knockout import sweep_runs
    from models.lm.loader import load_folder
    from models.lm.model import pad_ids

    lm = load_folder(folder)
    ids, mask = pad_ids(token_ids(tokens, lm.config.vocab_size), (tokens,))

    def call():
        probs, losses, _, prob, loss = sweep_runs(lm.state, ids[0], mask[0], graphdef=lm.graphdef, mode="zero")
        return np.asarray(probs) - float(prob), np.asarray(losses) - float(loss)

    return call


def sweep_torch_worker(folder: str, tokens: int):
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(THREADS)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    ids = torch.from_numpy(token_ids(tokens, model.config.vocab_size).astype(np.int64))
    layers, heads = model.config.n_layer, model.config.n_head
    width = model.config.n_embd // heads

    def run_once(hook_layer=None, head=None):
        handle = None
        if hook_layer is not None:
            def zero_head(module, args, head=head):
                x = args[0].clone()
                x[..., head * width:(head + 1) * width] = 0.0
                return (x,)
            handle = model.transformer.h[hook_layer].attn.c_proj.register_forward_pre_hook(zero_head)
        try:
            with torch.inference_mode():
                out = model(input_ids=ids, labels=ids)
        finally:
            if handle is not None:
                handle.remove()
        return torch.softmax(out.logits[0, -1], -1), float(out.loss)

    def call():
        plain_probs, plain_loss = run_once()
        answer = int(plain_probs.argmax())
        probs, losses = np.zeros((layers, heads)), np.zeros((layers, heads))
        for layer in range(layers):
            for head in range(heads):
                p, loss = run_once(layer, head)
                probs[layer, head], losses[layer, head] = float(p[answer]) - float(plain_probs[answer]), loss - plain_loss
        return probs, losses

    return call


def sweep_serve(kind: str, folder: str, tokens: int, warmup: int, out: str) -> None:
    """Worker loop: on each line, run one sweep and answer its seconds; the last grids go to `out` (.npz)."""
    call = (sweep_jax_worker if kind == "jax" else sweep_torch_worker)(folder, tokens)
    for _ in range(warmup):
        call()
    print("ready", flush=True)
    for _ in sys.stdin:
        start = time.perf_counter()
        probs, losses = call()
        print(time.perf_counter() - start, flush=True)
        np.savez(out, probs=probs, losses=losses)


def sweep_main() -> int:
    parser = argparse.ArgumentParser(description="the all-heads knock-out sweep against a loop of hooked HF forwards")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--sweep-lengths", default="64", help="comma-separated token counts (1 × T)")
    parser.add_argument("--reps", type=int, default=3, help="paired sweeps per length")
    parser.add_argument("--warmup", type=int, default=1, help="untimed sweeps per length and side")
    parser.add_argument("--sweep-worker", choices=("jax", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.sweep_worker:
        sweep_serve(args.sweep_worker, args.folder, int(args.sweep_lengths), args.warmup, args.out)
        return 0
    ensure_bench_venv()
    envs = dict(zip(("jax", "torch"), worker_envs()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="lm-sweep-") as scratch:
        folder, description = model_folder("gpt2-small", Path(scratch))
        for tokens in [int(x) for x in args.sweep_lengths.split(",")]:
            workers, outs = [], {}
            for kind, python in (("jax", sys.executable), ("torch", str(BENCH_PYTHON))):
                outs[kind] = str(Path(scratch) / f"{kind}-{tokens}.npz")
                command = [python, str(Path(__file__).resolve()), "--sweep-worker", kind, "--folder", str(folder),
                           "--sweep-lengths", str(tokens), "--warmup", str(args.warmup), "--out", outs[kind]]
                workers.append(Worker(kind, command, envs[kind], close_timeout=600))
            times = paired_times(*workers, [tokens], args.reps)[tokens]
            ours, theirs = np.load(outs["jax"]), np.load(outs["torch"])
            gap = max(np.abs(ours["probs"] - theirs["probs"]).max(), np.abs(ours["losses"] - theirs["losses"]).max())
            ratios = [a / b for a, b in zip(times["jax"], times["torch"])]
            rows.append((f"1x{tokens}", statistics.median(times["jax"]), statistics.median(times["torch"]),
                         statistics.median(ratios), min(ratios), max(ratios), gap, len(ratios)))
    print_table(f"{'tokens':>6} | {'ours s':>7} | {'HF loop s':>9} | {'ratio':>5} | ratio range | max |Δ| ours vs HF",
                [f"{config:>6} | {ours_s:7.2f} | {theirs_s:9.2f} | {ratio:5.2f} | {low:.2f}-{high:.2f} (n={n}) | {gap:.1e}"
                 for config, ours_s, theirs_s, ratio, low, high, gap, n in rows],
                f"all-heads knock-out sweep (144 heads, zero mode), {description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

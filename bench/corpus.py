"""Benchmark: the corpus pass of `cli.py corpus` (per-head statistics) against Hugging Face eager.

    GLIBC_TUNABLES=... nice -n 10 .venv/bin/python bench/corpus.py [--texts 500] [--reps 5]

The texts: the first N paragraphs (one per line, at least 4 words) of the Python tutorial as
Debian's python3-doc ships it (/usr/share/doc/python3.X/html/_sources/tutorial/, cleaned by
models/lm/task.py, the LM's own text), written once to a temporary file both sides read.

Three worker processes, each timed on a whole pass over the same texts, passes paired and the
order rotated each repetition (one process per side: allocator state and torch's spinning
threads stay apart):
- "ours": models.corpus.run.corpus_statistics with a CorpusModel, exactly `cli.py corpus`'s pass
  (tokenizing, length buckets, the jitted forward that computes the statistics on the device,
  the merge of means, spreads and top inputs), on one device;
- "ours-2dev": the same with XLA_FLAGS=--xla_force_host_platform_device_count=2 (the batch
  sharded over two host devices on the same cores);
- "hf": transformers' BertModel (attn_implementation="eager", output_attentions=True, 2 threads,
  inference_mode) from .bench-venv: the texts tokenized by the fast tokenizer, sorted by length and
  run in batches of HF_ROWS padded to the batch's longest, the same 11 statistics computed from
  the returned maps in torch (torch_statistics: the definitions of models/corpus/heads.py),
  then mean, spread and the 5 lowest-entropy inputs per head.
Compile time is not timed: each worker runs one untimed pass first. The first pass of each also
writes its per-head means, and the largest difference between the sides is printed.
Printed: per side the median seconds and tokens/s, the median of the paired ratios (ours / HF,
< 1 is faster) with their spread, the CPU, the date and the load average before and after.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lm import machine  # noqa: E402
from transformer import BENCH_PYTHON, GLIBC_TUNABLES, THREADS, _model_dir, ensure_bench_venv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HF_ROWS = 32
TOP_K = 5
# models/corpus/heads.py STATISTIC_IDS (the jax worker checks they agree; the torch venv has no jax).
STATISTIC_IDS = ("entropy", "cls", "sep", "self", "previous", "next", "punctuation", "previous_score",
                 "duplicate_score", "induction_score", "distance")


def bench_texts(count: int) -> list[str]:
    """Returns the first `count` paragraphs of at least 4 words of python3-doc's tutorial pages."""
    sys.path.insert(0, str(ROOT))
    from models.lm.task import load_documents

    texts = []
    for doc in load_documents():
        if doc.name.startswith("tutorial/"):
            texts += [line for line in doc.text.splitlines() if len(line.split()) >= 4]
    if len(texts) < count:
        raise SystemExit(f"python3-doc's tutorial has {len(texts)} paragraphs, fewer than {count}")
    return texts[:count]


# ----------------------------------------------------------------------------- workers


def ours_worker(texts: list[str]):
    from models.corpus import heads
    from models.corpus.run import CorpusModel, corpus_statistics
    from models.transformer.records import load_runner

    assert heads.STATISTIC_IDS == STATISTIC_IDS, heads.STATISTIC_IDS
    model = CorpusModel(load_runner(os.environ["ATTENTION_LAB_MODEL_DIR"]))

    def call():
        stats = corpus_statistics(texts, model)
        return stats.tokens, stats.mean, stats.std, stats.top_index

    return call, f"{model.devices} device(s)"


def torch_statistics(probs, ids, lengths, kinds):
    """float32 [B, H, S] of one layer's maps [B, H, T, T]: models/corpus/heads.py's batch_statistics in torch."""
    import torch

    t = probs.shape[-1]
    pos = torch.arange(t)
    n = lengths.float()[:, None]
    real = pos[None, :] < lengths[:, None]
    rows = probs * real[:, None, :, None]

    def query_mean(per_query, count):
        return torch.where(count > 0, per_query.sum(-1) / count.clamp(min=1.0), 0.0)

    safe = torch.where(rows > 0, rows, 1.0)
    entropy = query_mean(-(rows * torch.log(safe)).sum(-1), n)
    shares = torch.einsum("bhqk,bkc->bhc", rows, kinds.float()) / n[:, :, None]
    diag = torch.diagonal(rows, dim1=-2, dim2=-1)
    below = torch.diagonal(rows, offset=-1, dim1=-2, dim2=-1)
    above = torch.diagonal(rows, offset=1, dim1=-2, dim2=-1)
    following = query_mean(above * (pos[None, None, 1:] < lengths[:, None, None]), n - 1)
    total = rows.sum((-2, -1))

    def score(hit):
        return torch.where(total > 0, hit / torch.where(total > 0, total, 1.0), 0.0)

    earlier = pos[None, :, None] > pos[None, None, :]
    duplicate = (ids[:, :, None] == ids[:, None, :]) & earlier & real[:, None, :]
    induction = torch.nn.functional.pad(duplicate[:, :, :-1], (1, 0))
    gap = (pos[:, None] - pos[None, :]).abs().float()
    by_id = {
        "entropy": entropy, "cls": shares[..., 0], "sep": shares[..., 1], "self": query_mean(diag, n),
        "previous": query_mean(below, n - 1), "next": following, "punctuation": shares[..., 2],
        "previous_score": score(below.sum(-1)),
        "duplicate_score": score(torch.einsum("bhqk,bqk->bh", rows, duplicate.float())),
        "induction_score": score(torch.einsum("bhqk,bqk->bh", rows, induction.float())),
        "distance": query_mean((rows * gap).sum(-1), n),
    }
    return torch.stack([by_id[s] for s in STATISTIC_IDS], dim=-1)


def hf_worker(texts: list[str]):
    import torch
    from transformers import AutoTokenizer, BertModel

    from models.heads.statistics import is_punctuation

    torch.set_num_threads(THREADS)
    folder = os.environ["ATTENTION_LAB_MODEL_DIR"]
    model = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    vocab = tokenizer.convert_ids_to_tokens(list(range(tokenizer.vocab_size)))
    punctuation = torch.tensor([is_punctuation(token) for token in vocab])
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id

    def call():
        encoded = tokenizer(texts, truncation=True, max_length=512)["input_ids"]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        values = torch.empty(len(encoded), model.config.num_hidden_layers, model.config.num_attention_heads,
                             len(STATISTIC_IDS))
        with torch.inference_mode():
            for start in range(0, len(order), HF_ROWS):
                chosen = order[start:start + HF_ROWS]
                length = max(len(encoded[i]) for i in chosen)
                ids = torch.zeros(len(chosen), length, dtype=torch.long)
                for row, i in enumerate(chosen):
                    ids[row, :len(encoded[i])] = torch.tensor(encoded[i])
                lengths = torch.tensor([len(encoded[i]) for i in chosen])
                mask = (torch.arange(length)[None, :] < lengths[:, None]).long()
                out = model(input_ids=ids, attention_mask=mask, output_attentions=True)
                kinds = torch.stack([ids == cls_id, ids == sep_id, punctuation[ids]], dim=-1) & mask.bool()[..., None]
                stats = torch.stack([torch_statistics(p, ids, lengths, kinds) for p in out.attentions], dim=1)
                values[torch.tensor(chosen)] = stats
        values = values.double()
        mean, std = values.mean(0), values.std(0, unbiased=False)
        top = torch.argsort(values[..., 0].permute(1, 2, 0), dim=-1, stable=True)[..., :TOP_K]
        return sum(len(e) for e in encoded), mean.numpy(), std.numpy(), top.numpy()

    return call, "2 threads"


def serve(kind: str, text_file: str, out: str) -> None:
    """Worker loop: one untimed pass (writes its statistics to `out`), then one timed pass per stdin line."""
    sys.path.insert(0, str(ROOT))
    texts = Path(text_file).read_text(encoding="utf-8").splitlines()
    call, note = (hf_worker if kind == "hf" else ours_worker)(texts)
    tokens, mean, std, top = call()
    np.savez(out, mean=mean, std=std, top=top)
    print(json.dumps({"ready": note}), flush=True)
    for _ in sys.stdin:
        start = time.perf_counter()
        tokens, *_ = call()
        print(json.dumps({"seconds": time.perf_counter() - start, "tokens": tokens}), flush=True)


class Worker:
    def __init__(self, kind: str, python: str, text_file: Path, out: Path, env: dict[str, str]):
        command = [python, str(Path(__file__).resolve()), "--worker", "hf" if kind == "hf" else "ours",
                   "--text-file", str(text_file), "--out", str(out)]
        self.kind = kind
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"{kind} worker failed to start (said {line!r})")
        self.note = json.loads(line)["ready"]

    def time(self) -> dict:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500, help="paragraphs of the Python tutorial")
    parser.add_argument("--reps", type=int, default=5, help="timed passes per side")
    parser.add_argument("--sides", default="ours,ours-2dev,hf", help="comma-separated: ours, ours-2dev, hf")
    parser.add_argument("--worker", choices=("ours", "hf"), help=argparse.SUPPRESS)
    parser.add_argument("--text-file", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, args.text_file, args.out)
        return 0
    ensure_bench_venv()
    load_before = os.getloadavg()
    sides = args.sides.split(",")
    base = {**os.environ, "PYTHONPATH": str(ROOT), "ATTENTION_LAB_MODEL_DIR": _model_dir()}
    base.pop("XLA_FLAGS", None)
    envs = {"ours": {**base, "GLIBC_TUNABLES": GLIBC_TUNABLES},
            "ours-2dev": {**base, "GLIBC_TUNABLES": GLIBC_TUNABLES,
                          "XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
            "hf": {k: v for k, v in base.items() if k != "GLIBC_TUNABLES"}}
    with tempfile.TemporaryDirectory(prefix="corpus-bench-") as scratch:
        text_file = Path(scratch) / "texts.txt"
        text_file.write_text("\n".join(bench_texts(args.texts)) + "\n", encoding="utf-8")
        workers = {}
        try:
            for side in sides:  # started one at a time: each compiles alone
                python = str(BENCH_PYTHON) if side == "hf" else sys.executable
                workers[side] = Worker(side, python, text_file, Path(scratch) / f"{side}.npz", envs[side])
            times = {side: [] for side in sides}
            tokens = {}
            for rep in range(args.reps):
                for side in sides[rep % len(sides):] + sides[: rep % len(sides)]:  # rotate who goes first
                    answer = workers[side].time()
                    times[side].append(answer["seconds"])
                    tokens[side] = answer["tokens"]
        finally:
            for worker in workers.values():
                worker.close()
        results = {side: np.load(Path(scratch) / f"{side}.npz") for side in sides}
    print(f"\n{machine()}; {datetime.date.today().isoformat()}; load average {load_before[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; {args.texts} paragraphs of python3-doc's tutorial, "
          f"{tokens[sides[0]]:,} tokens")
    if "hf" in results:
        for side in sides[:-1] if sides[-1] == "hf" else [s for s in sides if s != "hf"]:
            gap = np.abs(results[side]["mean"] - results["hf"]["mean"]).max()
            same_top = (results[side]["top"][..., 0] == results["hf"]["top"][..., 0]).mean()
            print(f"{side} vs hf: largest |mean difference| {gap:.1e}; same sharpest input for {same_top:.0%} of heads")
    print(f"{'side':>10} | {'median s':>8} | {'tokens/s':>8} | {'ratio to hf':>11} | ratio range (n)")
    for side in sides:
        median = statistics.median(times[side])
        line = f"{side:>10} | {median:8.2f} | {tokens[side] / median:8,.0f} | "
        if "hf" in times and side != "hf":
            ratios = [a / b for a, b in zip(times[side], times["hf"])]
            line += f"{statistics.median(ratios):11.2f} | {min(ratios):.2f}-{max(ratios):.2f} ({len(ratios)})"
        print(line + f"   [{workers[side].note}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

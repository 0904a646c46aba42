"""Benchmark: a researcher's folder at its real size, as whole processes (issue 56 §5).

A random-weight folder with Qwen2.5-0.5B's shapes (24 layers, 14 query and 2 key/value heads, width 896, vocabulary
151,936, tied embeddings, bf16 safetensors in shards) is written once by transformers in .bench-venv. Then, per
length, `cli.py export --mechanism lm --format npz` (every map of every layer to one file) runs against a plain
transformers script doing the same job (float32, eager attention, output_attentions, every map to one .npz), each
under /usr/bin/time -v, alternating, and the table gives the medians of wall time and peak memory (max RSS) and the
ratios ours / transformers.

    .venv/bin/python bench/real_size.py --reps 3 --lengths 128,1024 [--folder /tmp/qwen-shapes]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transformer import BENCH_PYTHON, ensure_bench_venv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MAKE_FOLDER = r"""
import json, sys, torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import Qwen2Config, Qwen2ForCausalLM
folder = sys.argv[1]
config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                     num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1e6,
                     tie_word_embeddings=True, rms_norm_eps=1e-6)
torch.manual_seed(0)
model = Qwen2ForCausalLM(config).to(torch.bfloat16)
model.save_pretrained(folder, max_shard_size="500MB")
tokenizer = Tokenizer(models.WordLevel({f"t{i}": i for i in range(config.vocab_size)}, unk_token="t0"))
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer.save(f"{folder}/tokenizer.json")
"""
HF_EXPORT = r"""
import sys, numpy as np, torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM
folder, text, out = sys.argv[1], sys.argv[2], sys.argv[3]
model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32, attn_implementation="eager")
ids = torch.tensor([Tokenizer.from_file(f"{folder}/tokenizer.json").encode(text).ids])
with torch.no_grad():
    maps = model(ids, output_attentions=True).attentions
keep = int(sys.argv[4]) if len(sys.argv) > 4 else len(maps)  # the first `keep` layers, as ours exports them
np.savez(out, weights=torch.stack([m[0] for m in maps[:keep]]).numpy())
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Returns (wall seconds, max RSS in GB) of one whole process under /usr/bin/time -v."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], env=env, capture_output=True, text=True, check=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    hours, minutes, seconds = (float(x) if x else 0.0 for x in wall.groups())
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return hours * 3600 + minutes * 60 + seconds, rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lengths", default="128,1024")
    parser.add_argument("--layers", type=int, default=0,
                        help="export only layers 0..N-1 on both sides (0: all; ours refuses all 24 layers at 1,024 "
                             "tokens: 1,344 MB of maps is over models/lm/records.py MAX_RECORD_BYTES)")
    parser.add_argument("--folder", default=str(Path(tempfile.gettempdir()) / "attention-lab-qwen2.5-0.5b-shapes"))
    args = parser.parse_args()
    ensure_bench_venv()
    folder = Path(args.folder)
    if not (folder / "config.json").is_file():
        print(f"writing the random folder {folder} (once) ...", flush=True)
        subprocess.run([str(BENCH_PYTHON), "-c", MAKE_FOLDER, str(folder)], check=True)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for tokens in (int(x) for x in args.lengths.split(",")):
            text = " ".join(f"t{(i * 7919) % 150_000 + 1}" for i in range(tokens))
            ours_cmd = [sys.executable, str(ROOT / "cli.py"), "export", "--mechanism", "lm", "--model-dir",
                        str(folder), "--text", text, "--format", "npz", "--out", f"{scratch}/ours.npz", "--force",
                        *(["--layers", f"0-{args.layers - 1}"] if args.layers else [])]
            theirs_cmd = [str(BENCH_PYTHON), "-c", HF_EXPORT, str(folder), text, f"{scratch}/hf.npz",
                          *([str(args.layers)] if args.layers else [])]
            ours, theirs = [], []
            for _ in range(args.reps):  # alternating, so that drift hits both sides alike
                ours.append(timed(ours_cmd, env))
                theirs.append(timed(theirs_cmd, env))
            o_wall, t_wall = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in theirs)
            o_rss, t_rss = statistics.median(r for _, r in ours), statistics.median(r for _, r in theirs)
            rows.append(f"{tokens:>6} | {o_wall:>8.1f} | {t_wall:>8.1f} | {o_wall / t_wall:>5.2f} | "
                        f"{o_rss:>7.2f} | {t_rss:>7.2f} | {o_rss / t_rss:>5.2f}")
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores; {datetime.date.today()}; load average {load:.1f}; medians of {args.reps} runs")
    kept = f"layers 0-{args.layers - 1}" if args.layers else "every layer"
    print(f"Qwen2.5-0.5B shapes, random bf16 weights; the maps of {kept} to one .npz (baseline: transformers)")
    print("tokens |  ours s  |   hf s   | ratio | ours GB |  hf GB  | ratio")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

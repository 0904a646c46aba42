"""Prints the quality table of the committed date models on 1,000 held-out generated dates.

    .venv/bin/python bench/seq2seq_quality.py            # print markdown tables
    .venv/bin/python bench/seq2seq_quality.py --write    # also write checkpoints/seq2seq/quality.json

Columns: exact match (greedy output == ISO date), alignment accuracy (share of output digits whose
attention argmax is inside the true span), window coverage (local: share of output digits whose true
span overlaps [p_t − D, p_t + D]), exact match on the monotonic formats, and training time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.seq2seq import task as dates  # noqa: E402
from models.seq2seq.model import VARIANTS  # noqa: E402
from models.seq2seq.quality import QUALITY_FILE, evaluate, held_out_examples, monotonic_exact_match  # noqa: E402
from models.seq2seq.records import load_variant  # noqa: E402


def _pct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {QUALITY_FILE}")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    args = parser.parse_args(argv)
    examples = held_out_examples()
    results = {}
    print(f"{len(examples)} held-out dates (seed disjoint from training), formats uniform over {len(dates.FORMAT_IDS)}\n")
    print("| variant | exact match | alignment accuracy | window coverage | exact match, monotonic formats "
          "| training steps | training time | eval time |")
    print("|---|---|---|---|---|---|---|---|")
    for variant in args.variants:
        info = load_variant(variant)[3]
        start = time.perf_counter()
        q = evaluate(variant, examples)
        seconds = time.perf_counter() - start
        mono = monotonic_exact_match(q, examples)
        results[variant] = {
            "exact_match": q.exact_match, "alignment_accuracy": q.alignment_accuracy,
            "window_coverage": q.window_coverage, "monotonic_exact_match": mono, "per_format": q.per_format,
            "per_format_coverage": q.per_format_coverage,
            "train_seconds": info["train_seconds"], "steps": info["steps"],
        }
        print(f"| {variant} | {_pct(q.exact_match)} | {_pct(q.alignment_accuracy)} | {_pct(q.window_coverage)} "
              f"| {_pct(mono)} | {info['steps']} | {info['train_seconds'] / 60:.1f} min | {seconds:.1f} s |")
    print("\nExact match per format:\n")
    print("| format | example | " + " | ".join(results) + " |")
    print("|---|---|" + "---|" * len(results))
    for f, example in dates.FORMATS.items():
        cells = " | ".join(_pct(r["per_format"].get(f)) for r in results.values())
        mark = " (monotonic)" if f in dates.MONOTONIC_FORMATS else ""
        print(f"| {f}{mark} | `{example}` | {cells} |")
    local = {v: r for v, r in results.items() if r["per_format_coverage"]}
    if local:
        print("\nWindow coverage per format (share of output digits whose true span overlaps [p_t − D, p_t + D]):\n")
        print("| format | " + " | ".join(local) + " |")
        print("|---|" + "---|" * len(local))
        for f in dates.FORMATS:
            print(f"| {f} | " + " | ".join(_pct(r["per_format_coverage"].get(f)) for r in local.values()) + " |")
    if args.write:
        QUALITY_FILE.write_text(json.dumps({
            "held_out": len(examples), "variants": results, "format_examples": dates.FORMATS,
            "monotonic_formats": list(dates.MONOTONIC_FORMATS),
        }, indent=1, ensure_ascii=False))
        print(f"\nwrote {QUALITY_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

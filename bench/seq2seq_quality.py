"""Prints the quality table of the committed date models (RNNs and the Transformer) on 1,000 held-out dates.

    .venv/bin/python bench/seq2seq_quality.py            # print markdown tables
    .venv/bin/python bench/seq2seq_quality.py --write    # also write checkpoints/seq2seq/quality.json

Columns: exact match (greedy output == ISO date), alignment accuracy (share of output digits whose
attention argmax is inside the true span), window coverage (local: share of output digits whose true
span overlaps [p_t − D, p_t + D]), exact match on the monotonic formats, and training time.
The Transformer encoder–decoder (models/encdec) gets two rows, its best cross-attention head
and its last layer's head mean, and a per-head table with the alignment of each field (year,
month, day digits); --write stores its figures under "transformer" in quality.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.encdec.quality import evaluate as evaluate_transformer  # noqa: E402
from models.encdec.quality import quality_dict  # noqa: E402
from models.encdec.records import load_model  # noqa: E402
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
    parser.add_argument("--no-transformer", action="store_true", help="leave the Transformer out")
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
    transformer = None if args.no_transformer else _transformer_rows(examples)
    columns = {**results, **({"transformer": transformer} if transformer else {})}
    print("\nExact match per format:\n")
    print("| format | example | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for f, example in dates.FORMATS.items():
        cells = " | ".join(_pct(r["per_format"].get(f)) for r in columns.values())
        mark = " (monotonic)" if f in dates.MONOTONIC_FORMATS else ""
        print(f"| {f}{mark} | `{example}` | {cells} |")
    local = {v: r for v, r in results.items() if r["per_format_coverage"]}
    if local:
        print("\nWindow coverage per format (share of output digits whose true span overlaps [p_t − D, p_t + D]):\n")
        print("| format | " + " | ".join(local) + " |")
        print("|---|" + "---|" * len(local))
        for f in dates.FORMATS:
            print(f"| {f} | " + " | ".join(_pct(r["per_format_coverage"].get(f)) for r in local.values()) + " |")
    if transformer:
        _print_heads(transformer)
    if args.write:
        old = json.loads(QUALITY_FILE.read_text()) if QUALITY_FILE.is_file() else {}
        written = {**old, "held_out": len(examples), "variants": {**old.get("variants", {}), **results},
                   "format_examples": dates.FORMATS, "monotonic_formats": list(dates.MONOTONIC_FORMATS)}
        if transformer:
            written["transformer"] = transformer
        QUALITY_FILE.write_text(json.dumps(written, indent=1, ensure_ascii=False))
        print(f"\nwrote {QUALITY_FILE}")
    return 0


def _transformer_rows(examples) -> dict:
    """Prints the Transformer's two rows of the main table and returns its quality.json entry."""
    info = load_model()[3]
    start = time.perf_counter()
    q = evaluate_transformer(examples)
    seconds = time.perf_counter() - start
    layer, head = q.best_head
    mono = sum(q.per_format[f] * sum(e.format == f for e in examples) for f in dates.MONOTONIC_FORMATS) / sum(
        e.format in dates.MONOTONIC_FORMATS for e in examples)
    last = len(q.mean_alignment) - 1
    for name, alignment in ((f"transformer, best cross head (layer {layer}, head {head})", q.best_alignment),
                            (f"transformer, layer {last} head mean", float(q.mean_alignment[last]))):
        print(f"| {name} | {_pct(q.exact_match)} | {_pct(alignment)} | — | {_pct(mono)} | {info['steps']} "
              f"| {info['train_seconds'] / 60:.1f} min | {seconds:.1f} s |")
    return {**quality_dict(q), "monotonic_exact_match": mono, "train_seconds": info["train_seconds"],
            "steps": info["steps"], "stopped_by": info.get("stopped_by")}


def _print_heads(transformer: dict) -> None:
    """Prints the Transformer's per-head alignment table: every digit, then each field's digits."""
    print("\nTransformer cross-attention, alignment accuracy per head (argmax inside the true span):\n")
    print("| layer | head | all digits | year digits | month digits | day digits |")
    print("|---|---|---|---|---|---|")
    fields = transformer["field_alignment"]
    for layer, row in enumerate(transformer["head_alignment"]):
        for head, value in enumerate(row):
            mark = " **(best)**" if [layer, head] == transformer["best_head"] else ""
            cells = " | ".join(_pct(fields[f][layer][head]) for f in ("year", "month", "day"))
            print(f"| {layer} | {head}{mark} | {_pct(value)} | {cells} |")
    for layer, value in enumerate(transformer["head_mean_alignment"]):
        print(f"| {layer} | mean of heads | {_pct(value)} | — | — | — |")


if __name__ == "__main__":
    sys.exit(main())

"""Quality of the date models on held-out generated dates: exact match and alignment.

- exact match: the greedy output equals the ISO date;
- alignment accuracy: the share of output digits whose attention argmax falls inside the
  true source span (the '-' separators have no span and are skipped);
- window coverage (local variants): the share of output digits whose true span overlaps
  the window [p_t − D, p_t + D].
All inputs are padded to the input cap, so each variant compiles once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from models.seq2seq import task as dates
from models.seq2seq.checkpoint import CHECKPOINT
from models.seq2seq.config import DIGITS, span_arrays
from models.seq2seq.model import LOCAL_VARIANTS, NO_ATTENTION_VARIANTS, apply, batch_rows, pad_batch
from models.seq2seq.records import load_variant

HELD_OUT_SEED = 20_180_509  # disjoint from the training stream (seeded [1, init seed])
HELD_OUT_SIZE = 1000
QUALITY_FILE = CHECKPOINT.folder / "quality.json"  # written by `python -m models.quality seq2seq --write`


@dataclass(frozen=True)
class VariantQuality:
    """Measured quality of one variant on a list of examples."""

    variant: str
    exact_match: float
    alignment_accuracy: float | None  # None for the variants without attention
    window_coverage: float | None  # local variants only
    per_format: dict[str, float]  # exact match per format id
    count: int
    per_format_coverage: dict[str, float] | None = None  # window coverage per format (local variants)


def evaluate(variant: str, examples: list[dates.DateExample], window: int | None = None) -> VariantQuality:
    """Returns the quality of one committed variant on `examples` (one batched, jitted call)."""
    cfg, graphdef, params, _ = load_variant(variant)
    d = cfg.window if window is None else int(window)
    n = len(examples)
    src, lengths = pad_batch([dates.encode_source(e.source).ids for e in examples], dates.MAX_INPUT_CHARS, batch_rows(n))
    dummy = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
    logits, alpha, centers = apply(graphdef, params, src, lengths, dummy, jnp.float32(d), teacher_forcing=False)
    logits, alpha, centers = logits[:n], alpha[:n], centers[:n]
    tokens = np.asarray(jnp.argmax(logits, -1))
    targets = np.stack([dates.encode_target(e.target) for e in examples])
    correct = np.all(tokens == targets, axis=1)
    start, end = span_arrays(examples)
    argmax = np.asarray(jnp.argmax(alpha, -1))  # [N, 10]
    inside = (argmax >= start) & (argmax < end)
    alignment = None if variant in NO_ATTENTION_VARIANTS else float(inside[:, DIGITS].mean())
    formats = np.asarray([e.format for e in examples])
    present = [f for f in dates.FORMAT_IDS if np.any(formats == f)]
    coverage, per_format_coverage = None, None
    if variant in LOCAL_VARIANTS:
        p = np.asarray(centers)
        overlaps = (start <= p + d) & (end - 1 >= p - d)
        coverage = float(overlaps[:, DIGITS].mean())
        per_format_coverage = {f: float(overlaps[formats == f][:, DIGITS].mean()) for f in present}
    per_format = {f: float(correct[formats == f].mean()) for f in present}
    return VariantQuality(
        variant, float(correct.mean()), alignment, coverage, per_format, len(examples), per_format_coverage
    )


def held_out_examples(n: int = HELD_OUT_SIZE) -> list[dates.DateExample]:
    """Returns the held-out examples of the quality test."""
    return dates.generate(n, HELD_OUT_SEED)


def monotonic_exact_match(quality: VariantQuality, examples: list[dates.DateExample]) -> float:
    """Returns exact match over the monotonic formats only (count-weighted)."""
    formats = [e.format for e in examples]
    counts = {f: formats.count(f) for f in dates.MONOTONIC_FORMATS}
    total = sum(counts.values())
    return sum(quality.per_format[f] * counts[f] for f in dates.MONOTONIC_FORMATS) / total


def read_quality() -> dict | None:
    """Returns the measured quality table written by `python -m models.quality seq2seq --write`, or None."""
    if not QUALITY_FILE.is_file():
        return None
    return json.loads(QUALITY_FILE.read_text())


def per_format_rows(variant: str) -> list[dict[str, str]]:
    """Returns the measured per-format table of one variant, one row per format (for the page):
    format (its example), exact match, share of digits whose true span lies in the window,
    monotonic. Empty when no measurement was written."""
    quality = read_quality()
    if not quality or variant not in quality.get("variants", {}):
        return []
    measured = quality["variants"][variant]
    examples = quality.get("format_examples", {})
    coverage = measured.get("per_format_coverage") or {}
    monotonic = set(quality.get("monotonic_formats", []))
    return [
        {"format": examples.get(f, f), "exact match": f"{v:.1%}",
         "true span inside the window": f"{coverage[f]:.1%}" if f in coverage else "—",
         "monotonic": "yes" if f in monotonic else "no"}
        for f, v in measured["per_format"].items()
    ]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def report(quick: bool = False, write: bool = False) -> str:
    """Returns every RNN variant's quality on the 1,000 held-out dates (50 with `quick`), Markdown: exact match,
    alignment accuracy, window coverage, exact match on the monotonic formats, training steps and time; then
    exact match and window coverage per format. With `write`, also stores the figures in QUALITY_FILE."""
    import time

    from models.seq2seq.model import ALL_VARIANTS as VARIANTS

    examples = held_out_examples(50 if quick else HELD_OUT_SIZE)
    results = {}
    lines = [f"{len(examples)} held-out dates (seed disjoint from training), formats uniform over "
             f"{len(dates.FORMAT_IDS)}", "",
             "| variant | exact match | alignment accuracy | window coverage | exact match, monotonic formats "
             "| training steps | training time | eval time |", "|---|---|---|---|---|---|---|---|"]
    for variant in VARIANTS:
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
        lines.append(f"| {variant} | {_pct(q.exact_match)} | {_pct(q.alignment_accuracy)} | {_pct(q.window_coverage)} "
                     f"| {_pct(mono)} | {info['steps']} | {info['train_seconds'] / 60:.1f} min | {seconds:.1f} s |")
    lines += ["", "Exact match per format:", "", "| format | example | " + " | ".join(results) + " |",
              "|---|---|" + "---|" * len(results)]
    for f, example in dates.FORMATS.items():
        mark = " (monotonic)" if f in dates.MONOTONIC_FORMATS else ""
        lines.append(f"| {f}{mark} | `{example}` | " + " | ".join(_pct(r["per_format"].get(f)) for r in results.values())
                     + " |")
    local = {v: r for v, r in results.items() if r["per_format_coverage"]}
    if local:
        lines += ["", "Window coverage per format (share of output digits whose true span overlaps [p_t − D, p_t + D]):",
                  "", "| format | " + " | ".join(local) + " |", "|---|" + "---|" * len(local)]
        lines += [f"| {f} | " + " | ".join(_pct(r["per_format_coverage"].get(f)) for r in local.values()) + " |"
                  for f in dates.FORMATS]
    if write:
        old = json.loads(QUALITY_FILE.read_text()) if QUALITY_FILE.is_file() else {}
        QUALITY_FILE.write_text(json.dumps(
            {**old, "held_out": len(examples), "variants": {**old.get("variants", {}), **results},
             "format_examples": dates.FORMATS, "monotonic_formats": list(dates.MONOTONIC_FORMATS)},
            indent=1, ensure_ascii=False))
        lines += ["", f"wrote {QUALITY_FILE}"]
    from models.seq2seq import bottleneck

    per_bucket = 20 if quick else bottleneck.PER_BUCKET
    curve = bottleneck.curve_dict(bottleneck.measure(per_bucket), per_bucket, 0.0)
    lines += ["", f"The bottleneck: exact match by input length, dates inside filler text, {per_bucket} held-out "
              "inputs per bucket (models/seq2seq/bottleneck.py; curve.json holds the committed measurement):", "",
              bottleneck.table(curve)]
    return "\n".join(lines)

"""Quality of the Transformer encoder–decoder on held-out generated dates: exact match and alignment.

- exact match: the greedy output equals the ISO date;
- alignment accuracy of a cross-attention head: the share of output digits whose attention
  argmax (over the source characters) falls inside the digit's true source span — the same
  measure as the RNN models' (models/seq2seq/quality.py), per layer and head, per field
  (year, month, day digits), and for each layer's head mean;
- the best head: the (layer, head) with the highest alignment accuracy.
The ground-truth spans are only ever read here, to measure; training never sees them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from models.capture import Capture
from models.checkpoint import CHECKPOINT_ROOT
from models.encdec.forward import KindCapture, read_own_output
from models.encdec.model import batch_rows, pad_batch
from models.seq2seq import task as dates

# The same 1,000 held-out dates as the RNN variants (models/seq2seq/quality.py's seed; a test
# checks the two agree): disjoint by seed from every training stream.
HELD_OUT_SEED = 20_180_509
HELD_OUT_SIZE = 1000
FIELDS = {"year": (0, 1, 2, 3), "month": (5, 6), "day": (8, 9)}
DIGITS = np.array([i for positions in FIELDS.values() for i in positions])
# One file for the RNN variants and the Transformer: `python -m models.quality seq2seq|encdec --write`.
QUALITY_FILE = CHECKPOINT_ROOT / "seq2seq" / "quality.json"
CROSS_MAPS = KindCapture(decoder=Capture(logits=False), cross=Capture(logits=False, maps=True))


@dataclass(frozen=True)
class EncDecQuality:
    """Measured quality of one set of weights on a list of examples.

    head_alignment [L, H]: alignment accuracy of each cross-attention head over all digits;
    field_alignment: {field: [L, H]} the same over that field's digits only;
    mean_alignment [L]: alignment accuracy of each layer's mean over its heads.
    """

    exact_match: float
    per_format: dict[str, float]
    head_alignment: np.ndarray
    field_alignment: dict[str, np.ndarray]
    mean_alignment: np.ndarray
    count: int

    @property
    def best_head(self) -> tuple[int, int]:
        """Returns (layer, head) of the best-aligned cross-attention head (first on ties)."""
        layer, head = np.unravel_index(int(np.argmax(self.head_alignment)), self.head_alignment.shape)
        return int(layer), int(head)

    @property
    def best_alignment(self) -> float:
        """Returns the alignment accuracy of the best head."""
        return float(self.head_alignment[self.best_head])


def held_out_examples(n: int = HELD_OUT_SIZE) -> list[dates.DateExample]:
    """Returns the held-out examples of the quality test and bench (the RNN variants' set)."""
    return dates.generate(n, HELD_OUT_SEED)


def greedy_outputs(graphdef, params, examples: list[dates.DateExample]) -> tuple[np.ndarray, np.ndarray]:
    """Returns (tokens int [N, 10], cross-attention float32 [N, L, H, 10, S]) of greedy decoding (one jitted call)."""
    n = len(examples)
    src, lengths = pad_batch([dates.encode_source(e.source).ids for e in examples], dates.MAX_INPUT_CHARS,
                             batch_rows(n))
    tokens, seen = read_own_output(graphdef, params, src, lengths, capture=CROSS_MAPS)
    return np.asarray(tokens)[:n], np.stack(seen["cross"]["maps"], axis=1)[:n]


def inside_span(weights: np.ndarray, examples: list[dates.DateExample]) -> np.ndarray:
    """Returns bool [..., N, 10]: whether each output character's attention argmax lies in its true span.

    weights [..., N, 10, S] (any leading axes, e.g. layer and head moved to the front).
    """
    spans = np.asarray([e.spans for e in examples], np.int64)  # [N, 10, 2]
    argmax = np.argmax(weights, axis=-1)
    return (argmax >= spans[..., 0]) & (argmax < spans[..., 1])


def measure(tokens: np.ndarray, cross: np.ndarray, examples: list[dates.DateExample]) -> EncDecQuality:
    """Returns the quality of greedy tokens [N, 10] and cross-attention [N, L, H, 10, S] on `examples`."""
    targets = np.stack([dates.encode_target(e.target) for e in examples])
    correct = np.all(tokens == targets, axis=1)
    per_head = inside_span(np.moveaxis(cross, 0, 2), examples)  # [L, H, N, 10]
    head_mean = inside_span(np.moveaxis(cross.mean(axis=2), 0, 1), examples)  # [L, N, 10]
    formats = np.asarray([e.format for e in examples])
    return EncDecQuality(
        exact_match=float(correct.mean()),
        per_format={f: float(correct[formats == f].mean()) for f in dates.FORMAT_IDS if np.any(formats == f)},
        head_alignment=per_head[..., DIGITS].mean(axis=(-2, -1)),
        field_alignment={name: per_head[..., list(pos)].mean(axis=(-2, -1)) for name, pos in FIELDS.items()},
        mean_alignment=head_mean[..., DIGITS].mean(axis=(-2, -1)),
        count=len(examples),
    )


def evaluate_params(graphdef, params, examples: list[dates.DateExample]) -> EncDecQuality:
    """Returns the quality of the given weights on `examples`."""
    tokens, cross = greedy_outputs(graphdef, params, examples)
    return measure(tokens, cross, examples)


def evaluate(examples: list[dates.DateExample], step: int | None = None) -> EncDecQuality:
    """Returns the quality of the committed checkpoint (or one of its snapshots) on `examples`."""
    from models.encdec.records import weights_at

    graphdef, params = weights_at(step)
    return evaluate_params(graphdef, params, examples)


def quality_dict(quality: EncDecQuality) -> dict:
    """Returns the JSON-safe form `python -m models.quality encdec --write` stores in quality.json."""
    return {
        "exact_match": quality.exact_match,
        "per_format": quality.per_format,
        "best_head": list(quality.best_head),
        "best_head_alignment": quality.best_alignment,
        "head_alignment": quality.head_alignment.round(6).tolist(),
        "field_alignment": {k: v.round(6).tolist() for k, v in quality.field_alignment.items()},
        "head_mean_alignment": quality.mean_alignment.round(6).tolist(),
        "count": quality.count,
    }


def measured_quality() -> dict | None:
    """Returns the Transformer's entry of quality.json (see quality_dict), or None if none was written."""
    if not QUALITY_FILE.is_file():
        return None
    return json.loads(QUALITY_FILE.read_text()).get("transformer")


def head_table_rows() -> list[dict[str, str]]:
    """Returns the measured per-head table for the page, one row per cross-attention head:
    layer, head, alignment over all digits and over each field's digits. Empty when none was written."""
    measured = measured_quality()
    if not measured:
        return []
    fields = measured["field_alignment"]
    return [
        {"layer": str(layer), "head": str(head) + (" (best)" if [layer, head] == measured["best_head"] else ""),
         "all digits": f"{value:.1%}", **{f"{name} digits": f"{fields[name][layer][head]:.1%}" for name in FIELDS}}
        for layer, row in enumerate(measured["head_alignment"]) for head, value in enumerate(row)
    ]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def report(quick: bool = False, write: bool = False) -> str:
    """Returns the committed Transformer's quality on the 1,000 held-out dates (50 with `quick`), in the
    RNN variants' columns (its best cross-attention head and its last layer's head mean), exact match per
    format, and the alignment of every cross-attention head over all digits and per field. With `write`,
    also stores the figures under "transformer" in checkpoints/seq2seq/quality.json (the page reads them)."""
    import time

    from models.encdec.records import load_model

    examples = held_out_examples(50 if quick else HELD_OUT_SIZE)
    info = load_model()[3]
    start = time.perf_counter()
    q = evaluate(examples)
    seconds = time.perf_counter() - start
    layer, head = q.best_head
    monotonic = [e for e in examples if e.format in dates.MONOTONIC_FORMATS]
    mono = sum(q.per_format[f] * sum(e.format == f for e in examples) for f in dates.MONOTONIC_FORMATS) / max(
        len(monotonic), 1)
    last = len(q.mean_alignment) - 1
    lines = [f"{len(examples)} held-out dates (seed disjoint from training), formats uniform over "
             f"{len(dates.FORMAT_IDS)}", "",
             "| model | exact match | alignment accuracy | exact match, monotonic formats | training steps "
             "| training time | eval time |", "|---|---|---|---|---|---|---|"]
    for name, alignment in ((f"transformer, best cross head (layer {layer}, head {head})", q.best_alignment),
                            (f"transformer, layer {last} head mean", float(q.mean_alignment[last]))):
        lines.append(f"| {name} | {_pct(q.exact_match)} | {_pct(alignment)} | {_pct(mono)} | {info['steps']} "
                     f"| {info['train_seconds'] / 60:.1f} min | {seconds:.1f} s |")
    lines += ["", "Exact match per format:", "", "| format | example | transformer |", "|---|---|---|"]
    for f, example in dates.FORMATS.items():
        mark = " (monotonic)" if f in dates.MONOTONIC_FORMATS else ""
        lines.append(f"| {f}{mark} | `{example}` | {_pct(q.per_format.get(f))} |")
    measured = {**quality_dict(q), "monotonic_exact_match": mono, "train_seconds": info["train_seconds"],
                "steps": info["steps"], "stopped_by": info.get("stopped_by")}
    lines += ["", "Transformer cross-attention, alignment accuracy per head (argmax inside the true span):", "",
              "| layer | head | all digits | year digits | month digits | day digits |", "|---|---|---|---|---|---|"]
    fields = measured["field_alignment"]
    for row_layer, row in enumerate(measured["head_alignment"]):
        for row_head, value in enumerate(row):
            best = " **(best)**" if [row_layer, row_head] == measured["best_head"] else ""
            cells = " | ".join(_pct(fields[f][row_layer][row_head]) for f in FIELDS)
            lines.append(f"| {row_layer} | {row_head}{best} | {_pct(value)} | {cells} |")
    for row_layer, value in enumerate(measured["head_mean_alignment"]):
        lines.append(f"| {row_layer} | mean of heads | {_pct(value)} | — | — | — |")
    if write:
        old = json.loads(QUALITY_FILE.read_text()) if QUALITY_FILE.is_file() else {}
        QUALITY_FILE.write_text(json.dumps({**old, "transformer": measured}, indent=1, ensure_ascii=False))
        lines += ["", f"wrote {QUALITY_FILE}"]
    return "\n".join(lines)

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

from models.checkpoint import CHECKPOINT_ROOT
from models.encdec.model import batch_rows, greedy, pad_batch
from models.seq2seq import task as dates

# The same 1,000 held-out dates as the RNN variants (models/seq2seq/quality.py's seed; a test
# checks the two agree): disjoint by seed from every training stream.
HELD_OUT_SEED = 20_180_509
HELD_OUT_SIZE = 1000
FIELDS = {"year": (0, 1, 2, 3), "month": (5, 6), "day": (8, 9)}
DIGITS = np.array([i for positions in FIELDS.values() for i in positions])
# One table for the RNN variants and the Transformer, written by bench/seq2seq_quality.py --write.
QUALITY_FILE = CHECKPOINT_ROOT / "seq2seq" / "quality.json"


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
    tokens, _, _, _, cross = greedy(graphdef, params, src, lengths)
    return np.asarray(tokens)[:n], np.asarray(cross, np.float32)[:n]


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
    """Returns the JSON-safe form bench/seq2seq_quality.py writes into quality.json."""
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

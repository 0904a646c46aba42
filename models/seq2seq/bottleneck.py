"""The bottleneck, measured: exact match against input length, with and without attention.

Bahdanau et al. (2015, Fig. 2) showed that an encoder–decoder whose decoder reads one fixed
vector loses BLEU as sentences grow, and that attention does not. Dates are short, so here each
date is written inside filler text (models/seq2seq/task.py, ``in_text``: its true spans stay
known), from the date alone up to MAX_LENGTH characters. Three models with the same encoder, the
same decoder and the same sizes, each started from its committed date model and trained the same way
on the same stream of inputs up to TRAIN_LENGTH characters
(``python -m models.train seq2seq --variant ID --max-length 120 --init-from …``), are compared per
length bucket on held-out examples: no attention (c = h_T, Sutskever et al.'s q), Bahdanau, Luong
general. As in Bahdanau et al.'s figure (models trained on sentences of up to 30 or 50 words, tested
on longer ones), the buckets go past the training length: there a fixed vector must carry the date
further than it ever learnt to.

    python -m models.seq2seq.bottleneck            # prints the table
    python -m models.seq2seq.bottleneck --write    # and writes checkpoints/seq2seq/bottleneck/curve.json

The page and docs read curve.json; the tests measure a smaller sample again from the checkpoints.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.record import AttentionRecord
from models.seq2seq import in_text
from models.seq2seq import task as dates
from models.seq2seq.checkpoint import BOTTLENECK_DIR, CHECKPOINT

MODELS = ("no-attention", "bahdanau", "luong-general")
ATTENTION_MODELS = ("bahdanau", "luong-general")
TRAIN_LENGTH = 120  # the longest training input (--max-length)
MAX_LENGTH = 480  # the longest held-out input; RNN weights do not depend on the input length
# Input length buckets [low, high] in characters; the first holds the date alone or nearly, the last
# three lie past TRAIN_LENGTH.
BUCKETS = ((1, 30), (31, 60), (61, 120), (121, 240), (241, 360), (361, 480))
HELD_OUT_SEED = 20_150_901  # disjoint from the training stream (seeded [1, init seed]) and its validation (7)
PER_BUCKET = 500
CURVE_FILE = BOTTLENECK_DIR / "curve.json"
# The claims of the curve (issue 42): on the longest bucket attention beats no attention by at least
# LONG_GAP of exact match; on the shortest, no attention is within SHORT_GAP of attention.
LONG_GAP, SHORT_GAP = 0.20, 0.10


@dataclass(frozen=True)
class BucketScores:
    """Per-bucket measurements of one model: exact match, and for attention models alignment accuracy
    (the share of output digits whose α argmax lies in the true span)."""

    model: str
    exact_match: tuple[float, ...]
    alignment: tuple[float, ...] | None


def held_out(per_bucket: int = PER_BUCKET, seed: int = HELD_OUT_SEED) -> list[list[dates.DateExample]]:
    """Returns one list of examples per bucket: dates inside filler text, lengths uniform in the bucket."""
    rng = np.random.default_rng(seed)
    return [in_text.sample_in_text(rng, per_bucket, low, high) for low, high in BUCKETS]


def _load(model: str, folder: Path = BOTTLENECK_DIR):

    path = CHECKPOINT.path(model, folder)
    if not path.is_file():
        raise FileNotFoundError(f"no bottleneck checkpoint at {path}; train it (docs/models/seq2seq.md)")
    return CHECKPOINT.load(path)


def score(model: str, buckets: list[list[dates.DateExample]], folder: Path = BOTTLENECK_DIR) -> BucketScores:
    """Returns the exact match (and alignment accuracy) of one bottleneck checkpoint on each bucket;
    every input padded to MAX_LENGTH, one batch per bucket (the three models' weights do not depend on
    their configured max_source, unlike luong-location's)."""
    import jax.numpy as jnp

    from models.seq2seq.config import DIGITS, span_arrays
    from models.seq2seq.model import apply, pad_batch

    cfg, graphdef, params, _ = _load(model, folder)
    exact, aligned = [], []
    for examples in buckets:
        ids = [dates.encode_source(e.source, max_chars=MAX_LENGTH).ids for e in examples]
        src, lengths = pad_batch(ids, MAX_LENGTH)
        dummy = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
        logits, alpha, _ = apply(graphdef, params, src, lengths, dummy, jnp.float32(cfg.window), teacher_forcing=False)
        tokens = np.asarray(logits).argmax(-1)
        targets = np.stack([dates.encode_target(e.target) for e in examples])
        exact.append(float(np.all(tokens == targets, axis=1).mean()))
        start, end = span_arrays(examples)
        argmax = np.asarray(alpha).argmax(-1)
        aligned.append(float(((argmax >= start) & (argmax < end))[:, DIGITS].mean()))
    return BucketScores(model, tuple(exact), tuple(aligned) if model in ATTENTION_MODELS else None)


def claims(scores: dict[str, BucketScores]) -> dict[str, float]:
    """Returns the two gaps the curve claims: best attention − no attention on the longest bucket, and
    |best attention − no attention| on the shortest."""
    best = [max(scores[m].exact_match[i] for m in ATTENTION_MODELS) for i in range(len(BUCKETS))]
    none = scores["no-attention"].exact_match
    return {"long_gap": best[-1] - none[-1], "short_gap": abs(best[0] - none[0])}


def measure(per_bucket: int = PER_BUCKET, models: tuple[str, ...] = MODELS,
            folder: Path = BOTTLENECK_DIR) -> dict[str, BucketScores]:
    """Returns {model: BucketScores} on the held-out buckets (checkpoints from `folder`)."""
    buckets = held_out(per_bucket)
    return {m: score(m, buckets, folder) for m in models}


def curve_dict(scores: dict[str, BucketScores], per_bucket: int, seconds: float,
               folder: Path = BOTTLENECK_DIR) -> dict:
    """Returns the JSON of curve.json: buckets, per-model exact match and alignment, the claims, provenance."""

    training = {}
    for m in scores:
        _, _, info = CHECKPOINT.load_weights(CHECKPOINT.path(m, folder))
        training[m] = {k: info.get(k) for k in ("steps", "batch", "lr", "seed", "max_length", "train_seconds",
                                                "validation_exact_match")}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = ""
    return {
        "buckets": [list(b) for b in BUCKETS],
        "train_length": TRAIN_LENGTH,
        "per_bucket": per_bucket,
        "seed": HELD_OUT_SEED,
        "exact_match": {m: list(s.exact_match) for m, s in scores.items()},
        "alignment": {m: list(s.alignment) for m, s in scores.items() if s.alignment is not None},
        "claims": claims(scores) if set(MODELS) <= set(scores) else None,
        "training": training,
        "measured": {"date": dt.date.today().isoformat(), "commit": commit, "seconds": round(seconds, 1)},
    }


def read_curve() -> dict | None:
    """Returns the committed curve (curve.json), or None when it was never written."""
    if not CURVE_FILE.is_file():
        return None
    return json.loads(CURVE_FILE.read_text())


def curve_record(curve: dict) -> AttentionRecord:
    """Returns the committed curve as a record for the page's figure and its exports: exact match
    [model, length bucket] (not attention weights; meta says so), alignment accuracy in extras."""
    models = list(curve["exact_match"])
    names = [f"{low}–{high}" for low, high in curve["buckets"]]
    meta = {"what": "exact match (share of held-out inputs decoded exactly) per input-length bucket, not attention",
            "per_bucket": curve["per_bucket"], "seed": curve["seed"], "claims": curve["claims"],
            "measured": curve["measured"], "alignment_accuracy": curve.get("alignment", {}),
            "train_length": curve.get("train_length"),
            # the index of the first bucket longer than any training input (None: all within)
            "first_past_training": next((i for i, (low, _) in enumerate(curve["buckets"])
                                         if curve.get("train_length") and low > curve["train_length"]), None)}
    return AttentionRecord(
        mechanism="no-attention", weights=np.asarray([curve["exact_match"][m] for m in models], np.float32),
        axes=("model", "length"), query_labels=models, key_labels=names, meta=meta,
    )


def table(curve: dict) -> str:
    """Returns the markdown table of a curve: one row per length bucket, exact match per model."""
    models = list(curve["exact_match"])
    lines = ["| input length (characters) | " + " | ".join(models) + " |", "|---" * (len(models) + 1) + "|"]
    for i, name in enumerate(f"{low}–{high}" for low, high in curve["buckets"]):
        lines.append(f"| {name} | " + " | ".join(f"{curve['exact_match'][m][i]:.1%}" for m in models) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.seq2seq.bottleneck", description=__doc__.split("\n")[0])
    parser.add_argument("--per-bucket", type=int, default=PER_BUCKET, help=f"held-out inputs per bucket ({PER_BUCKET})")
    parser.add_argument("--write", action="store_true", help=f"write {CURVE_FILE}")
    parser.add_argument("--checkpoints", type=Path, default=BOTTLENECK_DIR,
                        help="folder of the models to measure (default: the committed ones)")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS, help="models to measure")
    args = parser.parse_args(argv)
    if args.write and (args.checkpoints.resolve() != BOTTLENECK_DIR.resolve() or tuple(args.models) != MODELS):
        parser.error("--write measures the committed checkpoints, every model of MODELS")
    start = time.perf_counter()
    scores = measure(args.per_bucket, tuple(args.models), args.checkpoints)
    curve = curve_dict(scores, args.per_bucket, time.perf_counter() - start, args.checkpoints)
    print(f"Exact match by input length, {args.per_bucket} held-out inputs per bucket (seed {HELD_OUT_SEED})\n")
    print(table(curve))
    gaps = curve["claims"]
    if gaps is None:
        return 0
    print(f"\nlongest bucket: attention − no attention = {gaps['long_gap']:+.1%} (goal ≥ {LONG_GAP:.0%}); "
          f"shortest: |difference| = {gaps['short_gap']:.1%} (goal ≤ {SHORT_GAP:.0%})")
    if args.write:
        CURVE_FILE.write_text(json.dumps(curve, indent=1) + "\n")
        print(f"wrote {CURVE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

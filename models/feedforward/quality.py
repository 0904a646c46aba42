"""Quality of a feed-forward attention model on fresh addition sequences (ground truth: the marks).

- mse: mean squared error of the predicted sum;
- top2: share of sequences whose two largest α are exactly the two marked steps;
- mass: mean α on the two marked steps.
"""

from __future__ import annotations

import numpy as np

from models import padding
from models.feedforward.model import FeedForwardAttention, FeedForwardRunner
from models.feedforward.task import LENGTH_BUCKETS, sample_batch


def evaluate_runner(runner: FeedForwardRunner, lengths, *, seed: int, batch: int = 50) -> dict[str, float]:
    """Returns {"mse", "top2", "mass"} of a model on fresh sequences of the given lengths.

    Sequences are batched and padded to the bucket of each batch's longest one.
    """
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, np.int32)
    errors, top2, mass = [], [], []
    for start in range(0, len(lengths), batch):
        chunk = lengths[start : start + batch]
        data = sample_batch(rng, chunk, padding.bucket(int(chunk.max()), LENGTH_BUCKETS))
        prediction, alpha = runner(data.inputs, data.lengths)
        errors.append((prediction - data.targets) ** 2)
        rows = np.arange(len(chunk))[:, None]
        mass.append(alpha[rows, data.marked].sum(1))
        top = np.sort(np.argpartition(-alpha, 1, axis=1)[:, :2], axis=1)
        top2.append(np.all(top == data.marked, axis=1))
    return {
        "mse": float(np.concatenate(errors).mean()),
        "top2": float(np.concatenate(top2).mean()),
        "mass": float(np.concatenate(mass).mean()),
    }


def evaluate(model: FeedForwardAttention, lengths, seed: int = 12345, batch: int = 50) -> dict[str, float]:
    """Returns evaluate_runner() of an in-memory model (the training loop's validation)."""
    return evaluate_runner(FeedForwardRunner(model), lengths, seed=seed, batch=batch)


REPORT_SEED = 99_000  # the report's fresh sequences; disjoint from training and from evaluate()'s default


def _one_sequence_ms(runner: FeedForwardRunner, length: int, repeats: int = 7) -> float:
    """Returns the median milliseconds of one forward pass on one sequence of `length` (compiled first)."""
    from models.feedforward.task import make_sequence

    inputs, _, _ = make_sequence(length, seed=1)
    runner.run_one(inputs)
    return 1000 * float(np.median([runner.run_one(inputs)[2] for _ in range(repeats)]))


def _batch_ms_per_sequence(runner: FeedForwardRunner, length: int, batch: int = 50) -> float:
    """Returns milliseconds per sequence of a batched forward pass of `batch` sequences (compiled first)."""
    import time

    data = sample_batch(np.random.default_rng(0), np.full(batch, length), padding.bucket(length, LENGTH_BUCKETS))
    runner(data.inputs, data.lengths)
    start = time.perf_counter()
    for _ in range(3):
        runner(data.inputs, data.lengths)
    return 1000 * (time.perf_counter() - start) / (3 * batch)


def report(quick: bool = False) -> str:
    """Returns the quality and speed table of the committed models (Markdown): per model and test length,
    MSE of the sum, top-2 = marked, α mass on the marked steps, and forward-pass times. 1,000 fresh
    sequences per row (`quick`: 20, and the T = 10,000 rows left out)."""
    from models.feedforward.model import PAPER_LENGTHS
    from models.feedforward.records import load_runner
    from models.feedforward.task import lengths_around

    n = 20 if quick else 1_000
    lines = [f"{n} fresh sequences per row (seed {REPORT_SEED}); MSE of the sum (targets in [−2, 2], variance 2/3)",
             "",
             "| model | trained on | test T | MSE | top-2 = marked | α mass on marked | 1 sequence (ms) "
             "| batch of 50 (ms/seq) | batch: ms per 1,000 steps |",
             "|---|---|---|---|---|---|---|---|---|"]
    rows = [("paper", t0, f"T₀ = {t0:,} ± 10 %", t0, True) for t0 in PAPER_LENGTHS]
    rows += [("unbounded", None, "T = 50–1,000", t, False) for t in (100, 1_000, 10_000)]
    for variant, t0, trained, test_t, around in rows:
        if quick and test_t > 1_000:
            continue
        runner = load_runner(variant, t0)
        rng = np.random.default_rng(REPORT_SEED + test_t)
        lengths = lengths_around(rng, test_t, n) if around else np.full(n, test_t)
        quality = evaluate_runner(runner, lengths, seed=REPORT_SEED + test_t + (0 if around else 1))
        shown_t = f"{test_t:,} ± 10 %" if around else f"{test_t:,}"
        per_seq = _batch_ms_per_sequence(runner, test_t)
        lines.append(f"| {runner.name} | {trained} | {shown_t} | {quality['mse']:.2g} | {quality['top2']:.1%} "
                     f"| {quality['mass']:.1%} | {_one_sequence_ms(runner, test_t):.2f} | {per_seq:.3f} "
                     f"| {1000 * per_seq / test_t:.3f} |")
    return "\n".join(lines)

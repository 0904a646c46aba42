"""Quality of the induction model, measured against the task's ground truth.

- per-head scores (models/heads/detectors.py, TransformerLens's definitions): previous-token,
  duplicate-token and induction (Σ A·P / Σ A), and Olsson et al.'s prefix-matching score on
  [BOS] + r + r, each the mean over a batch of sequences;
- the loss on each half of [BOS] + r + r: the first copy is unpredictable (ln 50 ≈ 3.91 at best),
  the second, after its first token, is predictable by copying;
- the phase change, read from the training log: the steepest fall of the repeated-half loss and
  the first logged step where some head's prefix-matching score reaches the goal of 0.4;
- copying of short repeats: the share of a second copy's tokens (after its first) that are the
  model's greedy next-token prediction, on [BOS] + r + r with r of 3–8 tokens, on short segments
  placed inside uniform tokens, and on hand-typed examples (text + the stretch it repeats).
numpy here; `measure` and the `*_copying` functions run the jitted model once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.heads import detectors as hd
from models.induction import task
from models.induction.model import apply, pad_tokens
from models.lm.quality import next_token_nll  # the same measure as the decoder LMs'

LOG_SEED = 12_345  # the training log's sequences
HELD_OUT_SEED = 20_220_308  # the quality test's and bench's sequences
HALF = 31  # r of 31 tokens: [BOS] + r + r fills 63 of the 64 positions
COUNT = 32
GOAL = 0.4  # prefix-matching score the committed model must reach (random ≈ 1/T)
SHORT_HALVES = (3, 4, 6, 8)  # |r| of the short-repeat figures
SHORT_GOAL = 0.8  # share of a 4-token repeat's second copy predicted, and of the typed examples'
LOG_SHORT_HALF = 4  # the training log also records copying on [BOS] + r + r with |r| = 4
SCORES = ("previous", "duplicate", "induction", "prefix_matching")
SCORE_TITLES = {"previous": "previous-token", "duplicate": "duplicate-token", "induction": "induction",
                "prefix_matching": "prefix-matching"}


def head_scores(weights: np.ndarray, tokens: np.ndarray, half: int | None = None) -> dict[str, np.ndarray]:
    """Returns {score name: float32 [L, H]}, each the mean over the batch.

    weights [B, L, H, T, T]; tokens int [B, T]; half: the sequences are [BOS] + r + r with r of
    `half` tokens (adds "prefix_matching").
    """
    weights = np.asarray(weights, np.float64)
    per_sequence = [hd.head_scores(w, t) for w, t in zip(weights, np.asarray(tokens))]
    out = {name: np.mean([s[name] for s in per_sequence], axis=0).astype(np.float32) for name in hd.PATTERNS}
    if half is not None:
        out["prefix_matching"] = hd.prefix_matching_score(weights, half).mean(axis=0).astype(np.float32)
    return out


def half_losses(logits: np.ndarray, tokens: np.ndarray, half: int) -> tuple[float, float]:
    """Returns (mean loss on the first copy's tokens, mean loss on the second copy's tokens after
    its first) of [BOS] + r + r.  logits [B, T, V]; tokens [B, T], T = 1 + 2·half."""
    losses = next_token_nll(logits, tokens)  # column t − 1 predicts token t
    return float(losses[:, :half].mean()), float(losses[:, half + 1 :].mean())


@dataclass(frozen=True)
class Measurement:
    """Scores and losses of one set of parameters on [BOS] + r + r sequences."""

    scores: dict[str, np.ndarray]  # name -> [L, H]
    first_half_loss: float
    repeated_loss: float


def measure(graphdef, params, *, seed: int = HELD_OUT_SEED, count: int = COUNT, half: int = HALF) -> Measurement:
    """Returns the head scores and half losses of `params` on `count` seeded [BOS] + r + r sequences."""
    tokens = task.repeated_batch(seed, count, half)
    logits, weights = apply(graphdef, params, tokens)
    first, repeated = half_losses(np.asarray(logits), tokens, half)
    return Measurement(head_scores(np.asarray(weights), tokens, half), first, repeated)


def drop_window(steps: np.ndarray, loss: np.ndarray, *, share: float = 0.25,
                min_fall: float = 1.0) -> tuple[int, int] | None:
    """Returns (first, last) logged step of the loss's steepest fall: the stretch around its fastest
    fall (the loss smoothed over 3 logs) where it falls at least `share` as fast; None when the loss
    never falls by `min_fall` nats from its early plateau to its end.  steps, loss [N]."""
    steps, loss = np.asarray(steps), np.asarray(loss, np.float64)
    n = max(1, len(loss) // 10)
    if len(loss) < 4 or float(np.median(loss[1 : n + 1])) - float(np.median(loss[-n:])) < min_fall:
        return None
    padded = np.concatenate([loss[:1], loss, loss[-1:]])
    smooth = np.convolve(padded, np.ones(3) / 3, mode="valid")  # [N]
    rate = -np.diff(smooth) / np.diff(steps)  # [N − 1]: fall per step between logs i and i + 1
    peak = int(np.argmax(rate))
    fast = rate >= share * rate[peak]
    first, last = peak, peak
    while first > 0 and fast[first - 1]:
        first -= 1
    while last < len(rate) - 1 and fast[last + 1]:
        last += 1
    return int(steps[first]), int(steps[last + 1])


@dataclass(frozen=True)
class PhaseChange:
    """The phase change as the training log shows it."""

    best_head: tuple[int, int]  # (layer, head) with the highest final prefix-matching score
    best_score: float  # its final prefix-matching score
    emerged_step: int | None  # first logged step where any head's prefix-matching score >= GOAL
    drop: tuple[int, int] | None  # the steepest fall of the repeated-half loss (first, last step)
    repeated_before: float  # repeated-half loss at the start of the drop
    repeated_after: float  # at its end
    repeated_final: float  # at the last logged step
    baseline: float  # 1/T of the log's sequences

    @property
    def coincides(self) -> bool:
        """Returns whether the head reached the goal inside the drop window."""
        if self.emerged_step is None or self.drop is None:
            return False
        return self.drop[0] <= self.emerged_step <= self.drop[1]


def phase_change(log: Mapping[str, Any]) -> PhaseChange:
    """Returns the phase change read from a training log (checkpoint info["log"])."""
    steps = np.asarray(log["step"])
    prefix = np.asarray(log["prefix_matching"], np.float64)  # [N, L, H]
    repeated = np.asarray(log["repeated_loss"], np.float64)
    final = prefix[-1]
    best = np.unravel_index(int(np.argmax(final)), final.shape)
    reached = np.flatnonzero(prefix.reshape(len(steps), -1).max(-1) >= GOAL)
    drop = drop_window(steps, repeated)
    before = repeated[int(np.searchsorted(steps, drop[0]))] if drop else repeated[0]
    after = repeated[int(np.searchsorted(steps, drop[1]))] if drop else repeated[-1]
    return PhaseChange(
        best_head=(int(best[0]), int(best[1])), best_score=float(final[best]),
        emerged_step=int(steps[reached[0]]) if reached.size else None, drop=drop,
        repeated_before=float(before), repeated_after=float(after), repeated_final=float(repeated[-1]),
        baseline=1.0 / (1 + 2 * int(log.get("half", HALF))),
    )


# ------------------------------------------------------------------ copying short repeats


def copy_accuracy(logits: np.ndarray, tokens: np.ndarray, targets: np.ndarray) -> float:
    """Returns the share of target positions whose token is the greedy prediction made one position before.

    logits [B, T, V]; tokens int [B, T]; targets bool [B, T] (True at t: token t is to be predicted).
    """
    hits = np.asarray(logits).argmax(-1)[:, :-1] == np.asarray(tokens)[:, 1:]  # [B, T − 1]: t − 1 predicts t
    return float(hits[np.asarray(targets, bool)[:, 1:]].mean())


def repeat_targets(count: int, half: int) -> np.ndarray:
    """Returns bool [count, 1 + 2·half]: the second copy of [BOS] + r + r after its first token."""
    targets = np.zeros((count, 1 + 2 * half), bool)
    targets[:, half + 2 :] = True
    return targets


def short_repeat_copying(graphdef, params, half: int, *, seed: int = HELD_OUT_SEED, count: int = 256,
                         placed: bool = False) -> float:
    """Returns the share of second-copy tokens predicted on `count` seeded sequences: [BOS] + r + r with
    |r| = half, or with `placed` a segment of `half` tokens written twice among 63 uniform tokens."""
    if placed:
        batch = task.sample_batch(np.random.default_rng(seed), count, segments=(half, half))
        tokens, targets = batch.tokens, batch.copied
    else:
        tokens, targets = task.repeated_batch(seed, count, half), repeat_targets(count, half)
    padded = pad_tokens(list(tokens))  # a length bucket: every |r| does not compile again
    padded_targets = np.zeros(padded.shape, bool)
    padded_targets[: len(tokens), : tokens.shape[1]] = targets
    logits, _ = apply(graphdef, params, padded)
    return copy_accuracy(np.asarray(logits), padded, padded_targets)


@dataclass(frozen=True)
class TypedRepeat:
    """A hand-typed sequence with its repeat: ids int32 [T] ([BOS] first); targets bool [T], the
    second occurrence of the repeat after its first token; next_id: the token that should follow the
    text (what followed the repeat the first time), or None."""

    text: str
    ids: np.ndarray
    targets: np.ndarray
    next_id: int | None


def typed_repeat(example: Mapping[str, Any]) -> TypedRepeat:
    """Returns the example {"text", "repeat", "next"} encoded, its targets located (the first two
    non-overlapping occurrences of the repeat); ValueError when the repeat is not there twice."""
    ids = task.encode_text(example["text"]).ids
    repeat = task.encode_text(example["repeat"]).ids[1:]
    n = len(repeat)
    starts = [s for s in range(1, len(ids) - n + 1) if np.array_equal(ids[s : s + n], repeat)]
    second = next((s for s in starts[1:] if s >= starts[0] + n), None)
    if second is None:
        raise ValueError(f"{example['repeat']!r} does not appear twice in {example['text']!r}")
    targets = np.zeros(len(ids), bool)
    targets[second + 1 : second + n] = True
    following = example.get("next")
    return TypedRepeat(example["text"], ids, targets, None if following is None else task.TOKEN_IDS[following])


@dataclass(frozen=True)
class TypedCopying:
    """The model on hand-typed repeats."""

    copied: float  # share of the second copies' tokens (after their first) predicted
    positions: int  # how many such tokens
    continued: float  # share of the texts whose next-token prediction after the text is `next_id`
    texts: int  # how many texts have a `next_id`
    missed: tuple[str, ...]  # texts with a target or a continuation the model got wrong


def typed_copying(graphdef, params, examples: Sequence[TypedRepeat]) -> TypedCopying:
    """Returns how well `params` copies the typed repeats (one padded, jitted call)."""
    logits, _ = apply(graphdef, params, pad_tokens([e.ids for e in examples]))
    predicted = np.asarray(logits).argmax(-1)  # [rows, bucket]
    hits, continued, missed = [], [], []
    for row, e in enumerate(examples):
        t = np.flatnonzero(e.targets)
        ok = predicted[row, t - 1] == e.ids[t]
        hits.extend(ok.tolist())
        good = bool(ok.all())
        if e.next_id is not None:
            continued.append(int(predicted[row, len(e.ids) - 1]) == e.next_id)
            good = good and continued[-1]
        if not good:
            missed.append(e.text)
    return TypedCopying(float(np.mean(hits)), len(hits), float(np.mean(continued)) if continued else float("nan"),
                        len(continued), tuple(missed))


REPORT_HELD_OUT = 64  # sequences per snapshot in report()
REPORT_SHORT_COUNT = 256  # sequences per short-repeat figure in report()
REPORT_HALVES = (*SHORT_HALVES, 10, 15, 20, 31)
TYPED_FIXTURE = "tests/fixtures/induction_typed.json"


def _log_rows(info: Mapping[str, Any]) -> list[str]:
    """Returns the training log's table: the phase change and the random baseline."""
    change = phase_change(info["log"])
    short = np.asarray(info["log"]["short_copied"][1:], np.float64)
    steps = np.asarray(info["log"]["step"][1:])
    reached = np.flatnonzero(short >= SHORT_GOAL)
    drop = f"steps {change.drop[0]}–{change.drop[1]}" if change.drop else "none"
    return [
        "| figure (training log) | value |", "|---|---|",
        f"| best prefix-matching score (final) | {change.best_score:.3f} "
        f"(L{change.best_head[0]}H{change.best_head[1]}) |",
        f"| first logged step with a head >= {GOAL} | {change.emerged_step} |",
        f"| steepest fall of the repeated-half loss | {drop} |",
        f"| repeated-half loss before → after the fall → final | {change.repeated_before:.3f} → "
        f"{change.repeated_after:.3f} → {change.repeated_final:.3f} nats |",
        f"| head reached the goal inside the fall | {'yes' if change.coincides else 'no'} |",
        f"| first logged step copying >= {SHORT_GOAL:.0%} of a {info['log_short_half']}-token repeat "
        f"| {steps[reached[0]] if reached.size else 'never'} (final {short[-1]:.1%}) |",
        f"| random baseline 1/T (T = {1 + 2 * HALF}) | {change.baseline:.4f} |",
        f"| unpredictable floor ln 50 (first copy) | {np.log(50):.3f} nats |", ""]


def _snapshot_rows(graphdef, snapshots: Mapping[int, Any], held_out: int, short_count: int) -> list[str]:
    """Returns every snapshot re-measured on held-out sequences: best head of each type, losses, copying."""
    lines = [f"{held_out} held-out sequences [BOS] + r + r (seed {HELD_OUT_SEED}), every snapshot:", "",
             "| step | best prefix-matching (head) | best previous-token (head) | best duplicate-token (head) "
             "| loss, first copy | loss, repeated half | second copy predicted, r of 31 | r of 4 |",
             "|---|---|---|---|---|---|---|---|"]
    tokens = task.repeated_batch(HELD_OUT_SEED, held_out, HALF)
    targets = repeat_targets(held_out, HALF)
    for step, snapshot in snapshots.items():
        m = measure(graphdef, snapshot, seed=HELD_OUT_SEED, count=held_out)
        cells = []
        for name in ("prefix_matching", "previous", "duplicate"):
            s = m.scores[name]
            layer, h = np.unravel_index(int(s.argmax()), s.shape)
            cells.append(f"{s.max():.3f} (L{layer}H{h})")
        long = copy_accuracy(np.asarray(apply(graphdef, snapshot, tokens)[0]), tokens, targets)
        four = short_repeat_copying(graphdef, snapshot, 4, count=short_count)
        lines.append(f"| {step} | {' | '.join(cells)} | {m.first_half_loss:.3f} | {m.repeated_loss:.3f} "
                     f"| {long:.1%} | {four:.1%} |")
    return lines


def _repeat_length_rows(graphdef, params, short_count: int) -> list[str]:
    """Returns the final model on repeats of every length, at the start and placed among uniform tokens."""
    lines = ["", f"The final model on repeats of every length ({short_count} held-out sequences each, seed "
             f"{HELD_OUT_SEED}): [BOS] + r + r (T = 1 + 2·|r|), and r written twice at random places "
             "among 63 uniform tokens:", "",
             "| length of r | best prefix-matching | loss, repeated half | mean p(next token), repeated half "
             "| second copy predicted, [BOS] + r + r | placed among uniform tokens |", "|---|---|---|---|---|---|"]
    for half in REPORT_HALVES:
        tokens = task.repeated_batch(HELD_OUT_SEED, short_count, half)
        m = measure(graphdef, params, seed=HELD_OUT_SEED, count=short_count, half=half)
        logits, _ = apply(graphdef, params, tokens)
        p_next = np.exp(-next_token_nll(np.asarray(logits), tokens)[:, half + 1 :]).mean()
        at_start = short_repeat_copying(graphdef, params, half, count=short_count)
        placed = short_repeat_copying(graphdef, params, half, count=short_count, placed=True)
        lines.append(f"| {half} | {m.scores['prefix_matching'].max():.3f} | {m.repeated_loss:.3f} | {p_next:.2f} "
                     f"| {at_start:.1%} | {placed:.1%} |")
    return lines


def _typed_rows(graphdef, params, root) -> list[str]:
    """Returns the hand-typed repeats' figures (tests/fixtures/induction_typed.json)."""
    import json

    examples = [typed_repeat(e) for e in json.loads((root / TYPED_FIXTURE).read_text())["examples"]]
    result = typed_copying(graphdef, params, examples)
    return ["", f"Hand-typed repeats ({TYPED_FIXTURE}, {len(examples)} texts written before training):", "",
            "| figure | value |", "|---|---|",
            f"| second-copy tokens predicted | {result.copied:.1%} of {result.positions} |",
            f"| next token after the text is the copied one | {result.continued:.1%} of {result.texts} |",
            f"| texts with a miss | {', '.join(repr(t) for t in result.missed) or 'none'} |"]


def _training_overlap(info: Mapping[str, Any], short_count: int) -> str:
    """Returns how many held-out short [BOS] + r + r the regenerated training stream also began with."""
    if [tuple(f.values()) for f in info["mixture"]] != [(f.name, f.share, list(f.segments), f.at_start)
                                                       for f in task.MIXTURE]:
        return "(the checkpoint was trained on another mixture: overlap not measured)"
    rng = np.random.default_rng(info["train_seed"] + info["seed"])
    starts: dict[int, set] = {h: set() for h in SHORT_HALVES}
    for _ in range(info["steps"]):
        tokens = task.sample_mixture(rng, info["batch"]).tokens
        for h in starts:
            starts[h].update(map(bytes, tokens[:, : 1 + 2 * h].astype(np.int8)))
    seen = {h: sum(bytes(s.astype(np.int8)) in starts[h] for s in task.repeated_batch(HELD_OUT_SEED, short_count, h))
            for h in starts}
    return (f"Held-out [BOS] + r + r that the training stream also began with ({info['steps']:,} steps × "
            f"{info['batch']} sequences): " + ", ".join(f"|r| = {h}: {n} of {short_count}" for h, n in seen.items()))


def report(quick: bool = False) -> str:
    """Returns the key figures of the committed model (Markdown): the phase change from the training log;
    every snapshot re-measured on held-out sequences (a seed the log and the training stream never used);
    the final model on repeats of 3 … 31 tokens; the hand-typed repeats; and how many held-out short
    sequences the regenerated training stream contained. `quick`: 8 and 16 sequences instead of 64 and
    256, the first and last snapshots only, and no training-stream overlap."""
    import time
    from pathlib import Path

    from models import checkpoint as shared
    from models.induction.checkpoint import CHECKPOINT

    cfg, graphdef, params, info = CHECKPOINT.load()
    held_out, short_count = (8, 16) if quick else (REPORT_HELD_OUT, REPORT_SHORT_COUNT)
    snapshots = shared.snapshots_with_final(CHECKPOINT.file, CHECKPOINT.family, params, info)
    if quick:
        steps = list(snapshots)
        snapshots = {step: snapshots[step] for step in (steps[0], steps[-1])}
    lines = [f"model: {cfg.layers} layers × {cfg.heads} heads, width {cfg.width}, vocabulary {cfg.vocab} ([BOS] + 50); "
             f"trained {info['steps']:,} steps, batch {info['batch']}, peak lr {info['lr']:g}, "
             f"{info['train_seconds'] / 60:.1f} min; mixture "
             + ", ".join(f"{f['name']} {f['share']:.0%} ({f['segments'][0]}–{f['segments'][1]} tokens"
                         f"{', at the start' if f['at_start'] else ''})" for f in info["mixture"]), ""]
    lines += _log_rows(info)
    start = time.perf_counter()
    lines += _snapshot_rows(graphdef, snapshots, held_out, short_count)
    lines += _repeat_length_rows(graphdef, params, short_count)
    lines += _typed_rows(graphdef, params, Path(__file__).resolve().parents[2])
    lines += ["", f"measured in {time.perf_counter() - start:.1f} s"]
    if not quick:
        lines += ["", _training_overlap(info, short_count)]
    return "\n".join(lines)

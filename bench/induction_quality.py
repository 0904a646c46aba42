"""Prints the key figures of the committed induction model (checkpoints/induction/model.safetensors).

    .venv/bin/python bench/induction_quality.py

From the training log (32 sequences [BOS] + r + r measured every 25 steps during training): the
best prefix-matching score and the step where some head first reaches 0.4, the steepest fall of
the loss on the repeated half, before and after it, and the random baseline 1/T. Then every
snapshot re-measured on held-out sequences (a seed the log and the training stream never used):
each head type's best score, the loss on each half, the share of the second copy's tokens the model
predicts, on |r| = 31 and on |r| = 4; the final model on repeats of 3 … 31 tokens, at the start
([BOS] + r + r) and placed among uniform tokens; the hand-typed repeats of
tests/fixtures/induction_typed.json; and how many held-out short sequences the training stream
happened to contain (it is regenerated from its seed).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from models.induction import quality, task  # noqa: E402
from models.induction.model import apply  # noqa: E402
from models.induction.records import load_model, load_model_snapshots  # noqa: E402

HELD_OUT = 64  # sequences per snapshot
SHORT_COUNT = 256  # sequences per short-repeat figure
TYPED = ROOT / "tests" / "fixtures" / "induction_typed.json"
HALVES = (*quality.SHORT_HALVES, 10, 15, 20, 31)


def log_table(info: dict) -> None:
    change = quality.phase_change(info["log"])
    print("| figure (training log) | value |\n|---|---|")
    head = f"L{change.best_head[0]}H{change.best_head[1]}"
    print(f"| best prefix-matching score (final) | {change.best_score:.3f} ({head}) |")
    print(f"| first logged step with a head >= {quality.GOAL} | {change.emerged_step} |")
    print(f"| steepest fall of the repeated-half loss | steps {change.drop[0]}–{change.drop[1]} |" if change.drop else
          "| steepest fall of the repeated-half loss | none |")
    print(f"| repeated-half loss before → after the fall → final | {change.repeated_before:.3f} → "
          f"{change.repeated_after:.3f} → {change.repeated_final:.3f} nats |")
    print(f"| head reached the goal inside the fall | {'yes' if change.coincides else 'no'} |")
    short = np.asarray(info["log"]["short_copied"][1:], np.float64)
    steps = np.asarray(info["log"]["step"][1:])
    reached = np.flatnonzero(short >= quality.SHORT_GOAL)
    print(f"| first logged step copying >= {quality.SHORT_GOAL:.0%} of a {info['log_short_half']}-token repeat "
          f"| {steps[reached[0]] if reached.size else 'never'} (final {short[-1]:.1%}) |")
    print(f"| random baseline 1/T (T = {1 + 2 * quality.HALF}) | {change.baseline:.4f} |")
    print(f"| unpredictable floor ln 50 (first copy) | {np.log(50):.3f} nats |\n")


def snapshot_table(graphdef) -> None:
    print(f"{HELD_OUT} held-out sequences [BOS] + r + r (seed {quality.HELD_OUT_SEED}), every snapshot:\n")
    print("| step | best prefix-matching (head) | best previous-token (head) | best duplicate-token (head) "
          "| loss, first copy | loss, repeated half | second copy predicted, r of 31 | r of 4 |")
    print("|---|---|---|---|---|---|---|---|")
    tokens = task.repeated_batch(quality.HELD_OUT_SEED, HELD_OUT, quality.HALF)
    targets = quality.repeat_targets(HELD_OUT, quality.HALF)
    for step, snapshot in load_model_snapshots().items():
        m = quality.measure(graphdef, snapshot, seed=quality.HELD_OUT_SEED, count=HELD_OUT)
        cells = []
        for name in ("prefix_matching", "previous", "duplicate"):
            s = m.scores[name]
            layer, h = np.unravel_index(int(s.argmax()), s.shape)
            cells.append(f"{s.max():.3f} (L{layer}H{h})")
        long = quality.copy_accuracy(np.asarray(apply(graphdef, snapshot, tokens)[0]), tokens, targets)
        four = quality.short_repeat_copying(graphdef, snapshot, 4, count=SHORT_COUNT)
        print(f"| {step} | {' | '.join(cells)} | {m.first_half_loss:.3f} | {m.repeated_loss:.3f} "
              f"| {long:.1%} | {four:.1%} |")


def repeat_length_table(graphdef, params) -> None:
    print(f"\nThe final model on repeats of every length ({SHORT_COUNT} held-out sequences each, seed "
          f"{quality.HELD_OUT_SEED}): [BOS] + r + r (T = 1 + 2·|r|), and r written twice at random places "
          "among 63 uniform tokens:\n")
    print("| length of r | best prefix-matching | loss, repeated half | mean p(next token), repeated half "
          "| second copy predicted, [BOS] + r + r | placed among uniform tokens |")
    print("|---|---|---|---|---|---|")
    for half in HALVES:
        tokens = task.repeated_batch(quality.HELD_OUT_SEED, SHORT_COUNT, half)
        m = quality.measure(graphdef, params, seed=quality.HELD_OUT_SEED, count=SHORT_COUNT, half=half)
        logits, _ = apply(graphdef, params, tokens)
        p_next = np.exp(-quality.next_token_losses(np.asarray(logits), tokens)[:, half + 1 :]).mean()
        at_start = quality.short_repeat_copying(graphdef, params, half, count=SHORT_COUNT)
        placed = quality.short_repeat_copying(graphdef, params, half, count=SHORT_COUNT, placed=True)
        print(f"| {half} | {m.scores['prefix_matching'].max():.3f} | {m.repeated_loss:.3f} | {p_next:.2f} "
              f"| {at_start:.1%} | {placed:.1%} |")


def typed_table(graphdef, params) -> None:
    examples = [quality.typed_repeat(e) for e in json.loads(TYPED.read_text())["examples"]]
    result = quality.typed_copying(graphdef, params, examples)
    print(f"\nHand-typed repeats ({TYPED.relative_to(ROOT)}, {len(examples)} texts written before training):\n")
    print("| figure | value |\n|---|---|")
    print(f"| second-copy tokens predicted | {result.copied:.1%} of {result.positions} |")
    print(f"| next token after the text is the copied one | {result.continued:.1%} of {result.texts} |")
    print(f"| texts with a miss | {', '.join(repr(t) for t in result.missed) or 'none'} |")


def training_overlap(info: dict) -> None:
    # The training stream, regenerated: how many held-out [BOS] + r + r of the short lengths it held.
    if [tuple(f.values()) for f in info["mixture"]] != [(f.name, f.share, list(f.segments), f.at_start)
                                                       for f in task.MIXTURE]:
        print("\n(the checkpoint was trained on another mixture: overlap not measured)")
        return
    rng = np.random.default_rng(info["train_seed"] + info["seed"])
    starts = {h: set() for h in quality.SHORT_HALVES}
    for _ in range(info["steps"]):
        tokens = task.sample_mixture(rng, info["batch"]).tokens
        for h in starts:
            starts[h].update(map(bytes, tokens[:, : 1 + 2 * h].astype(np.int8)))
    seen = {h: sum(bytes(s.astype(np.int8)) in starts[h] for s in task.repeated_batch(quality.HELD_OUT_SEED,
                                                                                      SHORT_COUNT, h))
            for h in starts}
    print(f"\nHeld-out [BOS] + r + r that the training stream also began with ({info['steps']:,} steps × "
          f"{info['batch']} sequences): " + ", ".join(f"|r| = {h}: {n} of {SHORT_COUNT}" for h, n in seen.items()))


def main() -> int:
    cfg, graphdef, params, info = load_model()
    print(f"model: {cfg.layers} layers × {cfg.heads} heads, width {cfg.width}, vocabulary {cfg.vocab} ([BOS] + 50); "
          f"trained {info['steps']:,} steps, batch {info['batch']}, peak lr {info['lr']:g}, "
          f"{info['train_seconds'] / 60:.1f} min; mixture "
          + ", ".join(f"{f['name']} {f['share']:.0%} ({f['segments'][0]}–{f['segments'][1]} tokens"
                      f"{', at the start' if f['at_start'] else ''})" for f in info["mixture"]) + "\n")
    log_table(info)
    start = time.perf_counter()
    snapshot_table(graphdef)
    repeat_length_table(graphdef, params)
    typed_table(graphdef, params)
    print(f"\nmeasured in {time.perf_counter() - start:.1f} s")
    training_overlap(info)
    return 0


if __name__ == "__main__":
    sys.exit(main())

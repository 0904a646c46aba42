"""Prints the key figures of the committed induction model (checkpoints/induction/model.safetensors).

    .venv/bin/python bench/induction_quality.py

From the training log (32 sequences [BOS] + r + r measured every 25 steps during training): the
best prefix-matching score and the step where some head first reaches 0.4, the steepest fall of
the loss on the repeated half, before and after it, and the random baseline 1/T. Then every
snapshot re-measured on 64 held-out sequences (a seed the log never saw): each head type's best
score, the loss on each half, and the share of the second copy's tokens the model predicts; and the
final model on shorter repeats (|r| = 4 … 31).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from models.induction import quality, task  # noqa: E402
from models.induction.model import apply  # noqa: E402
from models.induction.records import load_model, load_model_snapshots  # noqa: E402

HELD_OUT = 64


def copy_accuracy(graphdef, params, tokens: np.ndarray, half: int) -> float:
    """Returns the share of the second copy's tokens (after its first) that the greedy prediction gets right."""
    logits, _ = apply(graphdef, params, tokens)
    predicted = np.asarray(logits).argmax(-1)[:, :-1]  # column t − 1 predicts token t
    return float((predicted[:, half + 1 :] == tokens[:, half + 2 :]).mean())


def main() -> int:
    cfg, graphdef, params, info = load_model()
    change = quality.phase_change(info["log"])
    print(f"model: {cfg.layers} layers × {cfg.heads} heads, width {cfg.width}, vocabulary {cfg.vocab} ([BOS] + 50); "
          f"trained {info['steps']:,} steps, batch {info['batch']}, peak lr {info['lr']:g}, "
          f"{info['train_seconds'] / 60:.1f} min\n")
    print("| figure (training log) | value |\n|---|---|")
    head = f"L{change.best_head[0]}H{change.best_head[1]}"
    print(f"| best prefix-matching score (final) | {change.best_score:.3f} ({head}) |")
    print(f"| first logged step with a head >= {quality.GOAL} | {change.emerged_step} |")
    print(f"| steepest fall of the repeated-half loss | steps {change.drop[0]}–{change.drop[1]} |" if change.drop else
          "| steepest fall of the repeated-half loss | none |")
    print(f"| repeated-half loss before → after the fall → final | {change.repeated_before:.3f} → "
          f"{change.repeated_after:.3f} → {change.repeated_final:.3f} nats |")
    print(f"| head reached the goal inside the fall | {'yes' if change.coincides else 'no'} |")
    print(f"| random baseline 1/T (T = {1 + 2 * quality.HALF}) | {change.baseline:.4f} |")
    print(f"| unpredictable floor ln 50 (first copy) | {np.log(50):.3f} nats |\n")

    tokens = task.repeated_batch(quality.HELD_OUT_SEED, HELD_OUT, quality.HALF)
    print(f"{HELD_OUT} held-out sequences [BOS] + r + r (seed {quality.HELD_OUT_SEED}), every snapshot:\n")
    print("| step | best prefix-matching (head) | best previous-token (head) | best duplicate-token (head) "
          "| loss, first copy | loss, repeated half | second copy predicted |")
    print("|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for step, snapshot in load_model_snapshots().items():
        m = quality.measure(graphdef, snapshot, seed=quality.HELD_OUT_SEED, count=HELD_OUT)
        cells = []
        for name in ("prefix_matching", "previous", "duplicate"):
            s = m.scores[name]
            layer, h = np.unravel_index(int(s.argmax()), s.shape)
            cells.append(f"{s.max():.3f} (L{layer}H{h})")
        accuracy = copy_accuracy(graphdef, snapshot, tokens, quality.HALF)
        print(f"| {step} | {' | '.join(cells)} | {m.first_half_loss:.3f} | {m.repeated_loss:.3f} | {accuracy:.1%} |")
    print(f"\nmeasured in {time.perf_counter() - start:.1f} s\n")

    print(f"The final model on shorter repeats ({HELD_OUT} held-out [BOS] + r + r each, T = 1 + 2·|r|):\n")
    print("| length of r | best prefix-matching | loss, repeated half | mean p(next token), repeated half | second copy predicted |")
    print("|---|---|---|---|---|")
    for half in (4, 8, 10, 15, 20, 31):
        short = task.repeated_batch(quality.HELD_OUT_SEED, HELD_OUT, half)
        m = quality.measure(graphdef, params, seed=quality.HELD_OUT_SEED, count=HELD_OUT, half=half)
        logits, _ = apply(graphdef, params, short)
        p_next = np.exp(-quality.next_token_losses(np.asarray(logits), short)[:, half + 1 :]).mean()
        print(f"| {half} | {m.scores['prefix_matching'].max():.3f} | {m.repeated_loss:.3f} | {p_next:.2f} "
              f"| {copy_accuracy(graphdef, params, short, half):.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

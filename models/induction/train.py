"""Training of the induction model: ``python -m models.train induction``.

Adam on the next-token cross-entropy of repeated-segment sequences, every position counted. Two
stages: the original task (one 8–24-token segment twice at random places) until the induction head
has formed, that is until `--mix-delay` steps after some head's prefix-matching score in the log
first reaches the goal; then a mixture (models/induction/task.py MIXTURE) of that task, [BOS] + r + r
with |r| of 3–31 at the start, and 3–8-token segments at random places, so that short repeats
starting early (typed text) are copied too. Why not the mixture from the start: with it, the same
4,000 steps formed no induction head at all (no head's prefix-matching score above 0.03; the model
lowered its loss on short repeats by other means); docs/models/induction.md has the figures. The learning rate warms up for 100 steps, stays at its peak and decays
(cosine, to a tenth) over the last quarter of the run. Every ``--log-every`` steps the model is
measured on a fixed batch of [BOS] + r + r sequences (models/induction/quality.py: each head's
scores, the loss on each half, and the share of a 4-token repeat's second copy it predicts) and its parameters are kept in memory; at the end about 20 of
them become the checkpoint's snapshots, half of them inside the drop of the repeated-half loss,
so the page's slider is dense where the induction head forms.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np
import optax
from flax import nnx

from models.checkpoint import flat_params
from models.induction import quality, task
from models.induction.checkpoint import CHECKPOINT
from models.induction.model import PRESETS, apply, make_model, training_logits
from models.training import NO_PROGRESS, StopRequest, TqdmProgress, make_train_step

TRAIN_SEED = 1  # the data stream is default_rng(TRAIN_SEED + init seed)
WARMUP = 100
DENSE_SHARE = 0.5  # of the snapshots, over the loss drop (widened by half its width)
MIXTURE_WHEN = ("after-head", "always", "never")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, default=5000, help="training steps (default 5000)")
    parser.add_argument("--batch", type=int, default=32, help="sequences per step (default 32)")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak Adam learning rate (default 3e-3)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation seed (the data stream follows it)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="induction", help="model size (default induction)")
    parser.add_argument("--log-every", type=int, default=25, help="steps between measurements (default 25)")
    parser.add_argument("--snapshots", type=int, default=20, help="snapshots kept, the final weights included (default 20)")
    parser.add_argument("--mixture", choices=MIXTURE_WHEN, default="after-head",
                        help="when the short-repeat mixture replaces the original task: after-head (default; "
                        "--mix-delay steps after a head's prefix-matching score reaches the goal), always, never")
    parser.add_argument("--mix-delay", type=int, default=200,
                        help="steps between the induction head's emergence and the mixture (default 200)")
    CHECKPOINT.add_output_arguments(parser)


def learning_rate(peak: float, steps: int) -> optax.Schedule:
    """Returns the schedule: linear warm-up, constant peak, cosine decay to peak/10 over the last quarter."""
    decay_from = max(WARMUP + 1, int(0.75 * steps))
    return optax.join_schedules(
        [optax.linear_schedule(0.0, peak, WARMUP), optax.constant_schedule(peak),
         optax.cosine_decay_schedule(peak, max(1, steps - decay_from), alpha=0.1)],
        [WARMUP, decay_from],
    )


def make_step(graphdef, optimizer):
    """Returns the jitted step (params, opt_state, tokens [B, T]) -> (params, opt_state, loss, None)."""

    def loss_fn(params, tokens):
        logits = training_logits(nnx.merge(graphdef, params), tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    return make_train_step(loss_fn, optimizer)


def choose_snapshots(steps: list[int], repeated_loss: list[float], count: int) -> list[int]:
    """Returns about `count` of the logged steps, the first and the last included: half of them evenly
    over the drop of the repeated-half loss (its steepest fall, widened by half its width on each
    side), the rest evenly before and after it; evenly over the run when the loss never dropped."""
    logged = np.asarray(steps)
    window = quality.drop_window(logged, np.asarray(repeated_loss))
    if window is None or count < 4:
        wanted = np.linspace(logged[0], logged[-1], count)
    else:
        pad = max(logged[1] - logged[0], (window[1] - window[0]) // 2)
        start, end = max(logged[0], window[0] - pad), min(logged[-1], window[1] + pad)
        dense = max(2, int(round(DENSE_SHARE * count)))
        outside = max(2, count - dense)  # at least the first and the last step
        span_before, span_after = start - logged[0], logged[-1] - end
        before = int(np.clip(round(outside * span_before / max(1, span_before + span_after)), 1, outside - 1))
        wanted = np.concatenate([np.linspace(logged[0], start, before + 1)[:-1], np.linspace(start, end, dense),
                                 np.linspace(end, logged[-1], outside - before + 1)[1:]])
    nearest = logged[np.abs(logged[None, :] - wanted[:, None]).argmin(axis=1)]
    return sorted({int(logged[0]), int(logged[-1]), *map(int, nearest)})


def _measure(graphdef, params, tokens) -> dict:
    # One log entry: the loss on each half and every head's scores on the log's sequences, and the
    # share of short repeats' second copies predicted.
    logits, weights = apply(graphdef, params, tokens)
    first, repeated = quality.half_losses(np.asarray(logits), tokens, quality.HALF)
    scores = quality.head_scores(np.asarray(weights), tokens, quality.HALF)
    short = quality.short_repeat_copying(graphdef, params, quality.LOG_SHORT_HALF, seed=quality.LOG_SEED,
                                         count=2 * quality.COUNT)
    return {"first_half_loss": round(first, 5), "repeated_loss": round(repeated, 5), "short_copied": round(short, 4),
            **{name: np.round(scores[name], 4).tolist() for name in quality.SCORES}}


def train(args: argparse.Namespace, stop: StopRequest | None = None, progress=None):
    """Returns (cfg, final params, {step: flat params} of the chosen snapshots, info)."""
    stop, progress = stop or StopRequest(), progress or NO_PROGRESS
    cfg = PRESETS[args.preset]
    graphdef, params = make_model(cfg, seed=args.seed)
    optimizer = optax.adam(learning_rate(args.lr, args.steps))
    opt_state = optimizer.init(params)
    step_fn = make_step(graphdef, optimizer)
    rng = np.random.default_rng(TRAIN_SEED + args.seed)
    probe = task.repeated_batch(quality.LOG_SEED, quality.COUNT, quality.HALF)
    log = {"step": [0], "loss": [None], "seconds": [0.0], **{k: [v] for k, v in _measure(graphdef, params, probe).items()}}
    kept = {0: flat_params(params)}
    mix_from = 0 if args.mixture == "always" else None  # the last step of the original task alone
    start, losses, done = time.perf_counter(), [], 0
    for step in range(1, args.steps + 1):
        if stop.requested:  # Ctrl-C, SIGUSR1: keep what has been learnt so far
            print(f"induction: stopping early at step {done}")
            break
        mixed = mix_from is not None and step > mix_from
        batch = task.sample_mixture(rng, args.batch) if mixed else task.sample_batch(rng, args.batch)
        params, opt_state, loss, _ = step_fn(params, opt_state, batch.tokens)
        losses.append(loss)
        done = step
        if step % args.log_every == 0 or step == args.steps:
            entry = {"step": step, "loss": round(float(np.mean(jax.device_get(losses))), 5),
                     "seconds": round(time.perf_counter() - start, 2), **_measure(graphdef, params, probe)}
            for key, value in entry.items():
                log[key].append(value)
            losses = []
            if mix_from is None and args.mixture == "after-head" and np.max(entry["prefix_matching"]) >= quality.GOAL:
                mix_from = step + args.mix_delay
            kept[step] = {k: v.copy() for k, v in flat_params(params).items()}  # params are donated next step
            progress.update(step, args.steps, loss=entry["loss"], repeated=entry["repeated_loss"])
    progress.close()
    seconds = time.perf_counter() - start
    if log["step"][-1] != done:  # stopped between two measurements
        kept[done] = flat_params(params)
        for key, value in {"step": done, "loss": None, "seconds": round(seconds, 2),
                           **_measure(graphdef, params, probe)}.items():
            log[key].append(value)
    chosen = choose_snapshots(log["step"], log["repeated_loss"], args.snapshots)
    snapshots = {s: kept[s] for s in chosen if s != done}
    info = {"steps": done, "final_step": done, "batch": args.batch, "lr": args.lr, "seed": args.seed,
            "train_seed": TRAIN_SEED, "train_seconds": round(seconds, 1), "log_every": args.log_every,
            "log_sequences": {"seed": quality.LOG_SEED, "count": quality.COUNT, "half": quality.HALF},
            "mixture": [{"name": f.name, "share": f.share, "segments": list(f.segments), "at_start": f.at_start}
                        for f in task.MIXTURE],
            "mixture_when": args.mixture, "mixture_from": mix_from if mix_from is not None and mix_from < done else None,
            "log_short_half": quality.LOG_SHORT_HALF, "log": log}
    return cfg, flat_params(params), snapshots, info


def run(args: argparse.Namespace) -> int:
    """Returns 0 after training and writing the checkpoint (runs/induction/ unless --overwrite-committed)."""
    folder = CHECKPOINT.output_folder(args)
    stop = StopRequest()
    with stop.on_signals():
        cfg, final, snapshots, info = train(args, stop, TqdmProgress("induction", args.steps, every=args.log_every))
    out = CHECKPOINT.save(folder / CHECKPOINT.file_name, cfg, final, snapshots, info)
    change = quality.phase_change(info["log"])
    print(f"induction: {info['train_seconds']:.0f} s, {len(snapshots)} snapshots + final; best prefix-matching "
          f"{change.best_score:.3f} (L{change.best_head[0]}H{change.best_head[1]}), reached {quality.GOAL} at step "
          f"{change.emerged_step}, repeated-half loss drop {change.drop}, mixture after step {info['mixture_from']}, "
          f"{quality.LOG_SHORT_HALF}-token repeats copied {info['log']['short_copied'][-1]:.1%} -> {out}")
    return 0

"""Training of the Transformer encoder–decoder: ``python -m models.train encdec``.

The same generator and encoding as the Bahdanau/Luong models (models/seq2seq/task.py):
teacher forcing (the decoder reads <s> and the true characters before each position),
cross-entropy over the 10 output characters, Adam with warm-up and cosine decay, every batch
padded to the 40-character input cap (one shape, one compile). Greedy decoding is only used
to measure.

Early stop: every ``--eval-every`` steps the greedy exact match on 500 validation dates (their
own seed) is measured; training stops once it has reached ``--stop-at`` at ``--patience``
evaluations in a row. Ctrl-C or SIGUSR1 also stops after the current step and saves. The
defaults are the committed model's recipe (1,500 steps, 7.6 minutes on the busy 2-core machine).

Snapshots: parameters are kept every 25 steps early on, every 100 later; at the end about ten
of them, spaced like the RNN models' (densely early, where the attention forms) over the steps
actually run, go into the checkpoint as float16.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import numpy as np
import optax

from models.checkpoint import flat_params
from models.encdec.checkpoint import CHECKPOINT
from models.encdec.forward import teacher_forced
from models.encdec.model import PRESETS, make_model, pad_batch, teacher_inputs
from models.encdec.quality import evaluate_params
from models.seq2seq import task as dates
from models.training import StopRequest, TqdmProgress, make_train_step

TRAIN_SEED = 3  # the training stream is [TRAIN_SEED, init seed]; held-out and validation have their own seeds
VALIDATION_SEED = 7
VALIDATION_SIZE = 500
TRAIN_LENGTH = dates.MAX_INPUT_CHARS
SNAPSHOT_FRACTIONS = (0.0, 0.02, 0.05, 0.1, 0.16, 0.25, 0.4, 0.6, 0.8)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default="date", choices=tuple(PRESETS), help="model size (default date)")
    parser.add_argument("--steps", type=int, default=1500,
                        help="at most this many steps; the cosine schedule spans them (default 1500)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--lr", type=float, default=2e-3, help="peak Adam learning rate (default 2e-3)")
    parser.add_argument("--warmup", type=int, default=200, help="learning-rate warm-up steps (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation seed")
    parser.add_argument("--eval-every", type=int, default=250, help="validation every N steps (default 250)")
    parser.add_argument("--stop-at", type=float, default=0.998,
                        help="early stop once validation exact match reaches this (default 0.998: one miss in 500)")
    parser.add_argument("--patience", type=int, default=2,
                        help="... at this many validations in a row (default 2; 0 = never stop early)")
    CHECKPOINT.add_output_arguments(parser)


def batch_arrays(examples: list[dates.DateExample], bucket: int | None = None):
    """Returns (src ids [B, bucket], lengths [B], teacher inputs [B, 10], targets [B, 10])."""
    src, lengths = pad_batch([dates.encode_source(e.source).ids for e in examples], bucket)
    targets = np.stack([dates.encode_target(e.target) for e in examples])
    return src, lengths, teacher_inputs(targets), targets


def cross_entropy_step(graphdef, optimizer):
    """Returns the jitted step (params, opt_state, src, lengths, tgt_in, targets) -> (params, opt_state, loss, None)."""

    def loss_fn(params, src, lengths, tgt_in, targets):
        logits = teacher_forced(graphdef, params, src, lengths, tgt_in)["logits"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    return make_train_step(loss_fn, optimizer)


def kept_steps(total: int) -> list[int]:
    """Returns the steps whose parameters are held in memory while training (0 included)."""
    return sorted({*range(0, min(total, 500) + 1, 25), *range(0, total + 1, 100)})


def pick_snapshots(held: dict[int, dict], done: int) -> dict[int, dict]:
    """Returns the ~10 held snapshots nearest to SNAPSHOT_FRACTIONS of the steps run (the final step excluded)."""
    steps = sorted(s for s in held if s < done)
    picked = {min(steps, key=lambda s: abs(s - f * done)) for f in SNAPSHOT_FRACTIONS} if steps else set()
    return {s: held[s] for s in sorted(picked)}


class EarlyStop:
    """Says when validation exact match has reached `target` at `patience` evaluations in a row."""

    def __init__(self, target: float, patience: int):
        self.target, self.patience, self.streak = target, patience, 0

    def update(self, exact_match: float) -> bool:
        """Returns whether training should stop after this evaluation."""
        self.streak = self.streak + 1 if exact_match >= self.target else 0
        return self.patience > 0 and self.streak >= self.patience


def train(args: argparse.Namespace, stop: StopRequest | None = None, progress=None) -> dict:
    """Trains the model, writes its checkpoint (atomically) and returns the training facts."""
    stop = stop or StopRequest()
    cfg = PRESETS[args.preset]
    graphdef, params = make_model(cfg, seed=args.seed)
    rng = np.random.default_rng([TRAIN_SEED, args.seed])
    warmup = min(args.warmup, args.steps // 2)  # a short smoke run still warms up and decays
    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, warmup, max(args.steps, warmup + 1),
                                                  end_value=args.lr * 0.05)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    opt_state = optimizer.init(params)
    step_fn = cross_entropy_step(graphdef, optimizer)
    validation = dates.generate(VALIDATION_SIZE, VALIDATION_SEED)
    early = EarlyStop(args.stop_at, args.patience)
    keep = set(kept_steps(args.steps))
    held = {0: flat_params(params)}
    log, evals, losses, done, reason = [], [], [], 0, "steps"
    progress = progress or TqdmProgress("encdec", args.steps)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        if stop.requested:
            reason = "stop request"
            break
        params, opt_state, loss, _ = step_fn(params, opt_state, *batch_arrays(dates.sample(rng, args.batch), TRAIN_LENGTH))
        losses.append(loss)
        done = step
        if step in keep:
            held[step] = flat_params(params)
        if step % 50 == 0:
            mean = float(np.mean(jax.device_get(losses)))
            losses = []
            log.append([step, round(mean, 5), round(time.perf_counter() - start, 2)])
            progress.update(step, args.steps, loss=mean)
        if step % args.eval_every == 0:
            exact = evaluate_params(graphdef, params, validation).exact_match
            evals.append([step, exact])
            progress.update(step, args.steps, **({"loss": log[-1][1]} if log else {}), val_exact=exact)
            if early.update(exact):
                reason = f"early stop: validation exact match >= {args.stop_at} at {args.patience} evaluations in a row"
                break
    progress.close()
    seconds = time.perf_counter() - start
    measured = evaluate_params(graphdef, params, validation)
    info = {
        "steps": done, "final_step": done, "planned_steps": args.steps, "stopped_by": reason, "batch": args.batch,
        "lr": args.lr, "warmup": args.warmup, "seed": args.seed, "train_seed": TRAIN_SEED,
        "train_seconds": round(seconds, 1), "validation_exact_match": measured.exact_match,
        "validation_best_cross_head": list(measured.best_head), "log": log, "evaluations": evals,
    }
    out = Path(args.out) / CHECKPOINT.file_name
    CHECKPOINT.save(out, cfg, flat_params(params), pick_snapshots(held, done), info)
    print(f"encdec: {done} steps in {seconds:.0f} s ({reason}); validation exact match {measured.exact_match:.4f}, "
          f"best cross head {measured.best_head} aligned {measured.best_alignment:.3f} -> {out}")
    return info


def run(args: argparse.Namespace) -> int:
    if args.steps < 1 or args.eval_every < 1:
        raise SystemExit("--steps and --eval-every must be at least 1")
    args.out = CHECKPOINT.output_folder(args)
    stop = StopRequest()
    with stop.on_signals():
        train(args, stop)
    return 0

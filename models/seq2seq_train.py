"""Training of the date-normalisation models: ``python -m models.train seq2seq --variant ID``.

Teacher forcing, Adam, cross-entropy over the 10 output characters; batches are padded to
the length bucket of their longest source. About 10 snapshots are kept for the page's
"watch it learn" slider (spaced more densely early, where the attention forms).
"""

from __future__ import annotations

import argparse
import signal
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

from models import dates
from models.seq2seq import VARIANTS, Seq2SeqConfig, apply, make_model, pad_batch, teacher_inputs
from models.seq2seq_checkpoint import CHECKPOINT_DIR, params_for_save, save_checkpoint

TRAIN_SEED = 1  # training draws come from the stream [TRAIN_SEED, init seed]; see seq2seq_quality
VALIDATION_SEED = 7
# Training pads every batch to the input cap: one shape, one compile (compiles cost ~1 min
# on a busy 2-core machine; the few extra padded steps cost less).
TRAIN_LENGTH = dates.MAX_INPUT_CHARS
SNAPSHOT_FRACTIONS = (0.0, 0.02, 0.05, 0.1, 0.16, 0.25, 0.4, 0.6, 0.8, 1.0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, choices=(*VARIANTS, "all"), help="attention variant id, or all")
    parser.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak Adam learning rate (default 3e-3)")
    parser.add_argument("--window", type=int, default=3, help="D of the local variants (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation seed")
    parser.add_argument("--out", type=Path, default=CHECKPOINT_DIR, help="checkpoint root folder")


def batch_arrays(examples: list[dates.DateExample], bucket: int | None = None):
    """Returns (src ids [B, bucket], lengths [B], teacher inputs [B, 10], targets [B, 10])."""
    src, lengths = pad_batch([dates.encode_source(e.source).ids for e in examples], bucket)
    targets = np.stack([dates.encode_target(e.target) for e in examples])
    return src, lengths, teacher_inputs(targets), targets


def make_train_step(graphdef, optimizer):
    """Returns the jitted step (params, opt_state, batch..., window) -> (params, opt_state, loss)."""

    def loss_fn(params, src, lengths, tgt_in, targets, window):
        logits, _, _ = apply(graphdef, params, src, lengths, tgt_in, window, teacher_forcing=True)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    @partial(jax.jit, donate_argnums=(0, 1))
    def step(params, opt_state, src, lengths, tgt_in, targets, window):
        loss, grads = jax.value_and_grad(loss_fn)(params, src, lengths, tgt_in, targets, window)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def greedy_accuracy(graphdef, params, examples, window: float) -> float:
    """Returns the exact-match share of greedy decoding over `examples`."""
    src, lengths, tgt_in, targets = batch_arrays(examples)
    logits, _, _ = apply(graphdef, params, src, lengths, tgt_in, jnp.float32(window), teacher_forcing=False)
    return float(np.mean(np.all(np.asarray(jnp.argmax(logits, -1)) == targets, axis=1)))


class _StopRequest:
    """Turns the first Ctrl-C (or SIGUSR1) into a request to stop after the current step."""

    def __init__(self):
        self.requested = False
        self._previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGUSR1)}

    def _handle(self, signum, frame):
        self.requested = True

    def restore(self):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def snapshot_steps(total: int) -> list[int]:
    """Returns the steps at which parameters are snapshotted (0 = untrained, total = final)."""
    return sorted({int(round(f * total)) for f in SNAPSHOT_FRACTIONS})


def train_variant(variant: str, args: argparse.Namespace) -> dict:
    """Trains one variant, writes its checkpoint and returns its summary."""
    from tqdm import tqdm

    cfg = Seq2SeqConfig(variant=variant, window=args.window)
    graphdef, params = make_model(cfg, seed=args.seed)
    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, 100, args.steps, end_value=args.lr * 0.05)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    opt_state = optimizer.init(params)
    step_fn = make_train_step(graphdef, optimizer)
    rng = np.random.default_rng([TRAIN_SEED, args.seed])
    window = jnp.float32(cfg.window)
    keep = snapshot_steps(args.steps)
    snapshots = {0: params_for_save(params)}
    log, start, losses = [], time.perf_counter(), []
    bar = tqdm(range(1, args.steps + 1), desc=variant, unit="step", dynamic_ncols=True)
    stop = _StopRequest()
    for step in bar:
        if stop.requested:  # Ctrl-C or SIGUSR1: finish with what has been learnt so far
            print(f"{variant}: stopping early at step {step - 1}")
            args = argparse.Namespace(**{**vars(args), "steps": step - 1})
            snapshots[step - 1] = params_for_save(params)
            break
        examples = dates.sample(rng, args.batch)
        params, opt_state, loss = step_fn(params, opt_state, *batch_arrays(examples, TRAIN_LENGTH), window)
        losses.append(loss)
        if step % 50 == 0 or step == args.steps:
            mean = float(np.mean(jax.device_get(losses)))
            losses = []
            log.append([step, round(mean, 5), round(time.perf_counter() - start, 2)])
            bar.set_postfix(loss=f"{mean:.4f}")
        if step in keep:
            snapshots[step] = params_for_save(params)
    stop.restore()
    seconds = time.perf_counter() - start
    validation = greedy_accuracy(graphdef, params, dates.generate(500, VALIDATION_SEED), cfg.window)
    final = snapshots.pop(args.steps)
    info = {
        "steps": args.steps, "batch": args.batch, "lr": args.lr, "seed": args.seed,
        "train_seed": TRAIN_SEED, "train_seconds": round(seconds, 1), "validation_exact_match": validation,
        "log": log,
    }
    save_checkpoint(args.out / variant, cfg, final, snapshots, info | {"final_step": args.steps})
    print(f"{variant}: {seconds:.0f} s, validation exact match {validation:.4f} -> {args.out / variant}")
    return info


def run(args: argparse.Namespace) -> int:
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    for variant in variants:
        train_variant(variant, args)
    return 0

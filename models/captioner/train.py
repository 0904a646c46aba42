"""Training of the scene captioner: ``python -m models.train captioner --variant soft|hard``.

Soft attention minimises the caption's cross-entropy plus the paper's doubly stochastic
regulariser λ Σ_i (1 − Σ_t α_ti)² (λ = --ds-lambda).

Hard attention follows Xu et al. (2015) §4.1: for a sampled location sequence s̃ the loss is
−log p(y | s̃, a)  (gradient for every weight given the locations)
−λ_r (log p(y | s̃, a) − b) log p(s̃ | a)   (REINFORCE for the attention weights)
−λ_e H[s̃]  (entropy bonus), with the moving-average baseline b ← 0.9 b + 0.1 log p(y | s̃, a).
As in the paper, with probability 0.5 an example uses the expected context Σ α a instead of a
sample (those examples get no REINFORCE term).

Scenes are drawn fresh for every batch (half of them re-rendered: anti-aliased, other shades,
JPEG); data generation runs in a background thread beside the jitted step.
"""

from __future__ import annotations

import argparse
import queue
import threading
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models.captioner import task as S
from models.captioner.model import CHECKPOINT, PRESETS, Captioner, CaptionerRunner, encode_captions, teacher_forced
from models.captioner.quality import VALIDATION_SEED, decode_mode, evaluate
from models.training import NO_PROGRESS, StopRequest, TqdmProgress, make_train_step, output_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=("soft", "hard"), default="soft")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="default")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--ds-lambda", type=float, default=0.02, help="doubly stochastic regulariser λ (soft)")
    parser.add_argument("--reinforce", type=float, default=1.0, help="REINFORCE weight λ_r (hard)")
    parser.add_argument("--entropy", type=float, default=0.002, help="entropy bonus λ_e (hard)")
    parser.add_argument("--soft-share", type=float, default=0.5, help="hard: share of examples using Σ α a")
    parser.add_argument("--other-fraction", type=float, default=0.5, help="share of re-rendered scenes")
    parser.add_argument("--seed", type=int, default=0, help="training seed (< 9000)")
    parser.add_argument("--eval-every", type=int, default=250, help="validate and save every N steps (0: only at the end, no validation)")
    parser.add_argument("--init", type=Path, default=None, help="start from this checkpoint")
    parser.add_argument("--out", type=Path, default=None,
                        help="checkpoint file (default runs/captioner/<variant>.safetensors)")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="write checkpoints/captioner/<variant>.safetensors, replacing the committed model")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def make_loss(graphdef, cfg, args):
    hard = cfg.variant == "hard"

    def loss_fn(params, images, inputs, targets, mask, key, baseline):
        model = nnx.merge(graphdef, params)
        logits, alphas, locs, used_soft = teacher_forced(model, images, inputs, key, args.soft_share)
        logp = jax.nn.log_softmax(logits)  # [B, T, V]
        token_logp = jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0] * mask  # [B, T]
        seq_logp = token_logp.sum(-1)  # [B]
        n_tokens = mask.sum()
        ce = -token_logp.sum() / n_tokens
        accuracy = ((jnp.argmax(logits, -1) == targets) * mask).sum() / n_tokens
        stats = {"ce": ce, "acc": accuracy}
        if not hard:
            coverage = (alphas * mask[..., None]).sum(1)  # [B, L]: Σ_t α_ti
            ds = args.ds_lambda * jnp.mean(jnp.sum((1.0 - coverage) ** 2, -1))
            stats["ds"] = ds
            return ce + ds, (stats, jnp.mean(seq_logp))
        loc_logp = jnp.log(jnp.take_along_axis(alphas, locs[..., None], axis=-1)[..., 0] + 1e-12)
        loc_logp = (loc_logp * mask).sum(-1)  # [B] log p(s̃ | a)
        sampled = (~used_soft).astype(jnp.float32)
        advantage = jax.lax.stop_gradient(seq_logp - baseline)
        reinforce = -args.reinforce * jnp.sum(advantage * loc_logp * sampled) / jnp.maximum(sampled.sum(), 1.0)
        entropy = -(alphas * jnp.log(alphas + 1e-12)).sum(-1)  # [B, T]
        entropy = (entropy * mask).sum() / n_tokens
        stats["entropy"] = entropy
        mean_sampled_logp = jnp.sum(seq_logp * sampled) / jnp.maximum(sampled.sum(), 1.0)
        return ce + reinforce / STEPS_NORM - args.entropy * entropy, (stats, mean_sampled_logp)

    return loss_fn


STEPS_NORM = 9.0  # REINFORCE term per token, on the same scale as the per-token cross-entropy


def _batches(seed: int, batch: int, other_fraction: float, out: queue.Queue, stop: threading.Event):
    rng = np.random.default_rng(seed)
    while not stop.is_set():
        images, scenes = S.scene_batch(rng, batch, other_fraction)
        inputs, targets, mask = encode_captions([s.caption for s in scenes])
        while not stop.is_set():
            try:
                out.put((images, inputs, targets, mask), timeout=0.5)
                break
            except queue.Full:
                continue


def initial_model(args) -> Captioner:
    """Returns the model a run starts from: --init's checkpoint (as --variant), or a fresh --preset."""
    from dataclasses import replace

    if args.init:
        model = CHECKPOINT.load_module(args.init)
        model.cfg = replace(model.cfg, variant=args.variant)
        return model
    return Captioner(replace(PRESETS[args.preset], variant=args.variant), rngs=nnx.Rngs(args.seed))


def train(args, stop: StopRequest | None = None) -> Path:
    """Trains one variant; returns the checkpoint path (saved at every validation and at the end)."""
    stop = stop or StopRequest()
    model = initial_model(args)
    cfg = model.cfg
    graphdef, params = nnx.split(model)
    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, min(200, args.steps // 10 + 1), args.steps, args.lr * 0.05)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    opt_state = tx.init(params)
    train_step = make_train_step(make_loss(graphdef, cfg, args), tx, has_aux=True)
    out = output_file(args.out, CHECKPOINT.path(cfg.variant), overwrite_committed=getattr(args, "overwrite_committed", False))

    def save(step, seconds):
        CHECKPOINT.save(out, cfg, nnx.merge(graphdef, params), info={
            "steps": step, "batch": args.batch, "train_seconds": round(seconds, 1), "seed": args.seed,
            "ds_lambda": args.ds_lambda, "reinforce": args.reinforce, "entropy": args.entropy,
            "soft_share": args.soft_share, "lr": args.lr, "init": str(args.init) if args.init else None,
            "log": log})

    data: queue.Queue = queue.Queue(maxsize=4)
    done = threading.Event()
    worker = threading.Thread(target=_batches, args=(args.seed, args.batch, args.other_fraction, data, done), daemon=True)
    worker.start()
    if args.eval_every:
        val_images, val_scenes = S.scene_batch(np.random.default_rng(VALIDATION_SEED), 500, 0.5)
    key = jax.random.key(args.seed)
    baseline = jnp.float32(-10.0)
    started, log, pending, step = time.time(), [], [], 0
    block = max(1, args.steps // 100)  # the loss log keeps at most ~100 means
    progress = NO_PROGRESS if args.quiet else TqdmProgress(f"captioner {cfg.variant}", args.steps, every=50)
    try:
        while step < args.steps and not stop.requested:
            step += 1
            images, inputs, targets, mask = data.get()
            key, sub = jax.random.split(key)
            params, opt_state, loss, (stats, seq_logp) = train_step(
                params, opt_state, images, inputs, targets, mask, sub, baseline
            )
            baseline = 0.9 * baseline + 0.1 * seq_logp
            pending.append((loss, stats["ce"]))
            if step % block == 0 or step == args.steps:  # log: [step, mean loss, mean cross-entropy]
                log.append([step, *(round(float(x), 5) for x in np.mean(jax.device_get(pending), axis=0))])
                pending = []
                progress.update(step, args.steps, **{k: float(v) for k, v in stats.items()})
            if args.eval_every and (step % args.eval_every == 0 or step == args.steps):
                q = evaluate(CaptionerRunner(nnx.merge(graphdef, params)), val_images, val_scenes,
                             mode=decode_mode(cfg.variant))
                print(f"step {step}: validation caption accuracy {q.caption_accuracy:.3f}, shape mass "
                      f"{q.shape_mass:.3f}, hit rate {q.hit_rate:.3f} ({time.time() - started:.0f} s)")
                save(step, time.time() - started)  # an interrupted run keeps its latest weights
    finally:
        done.set()
        progress.close()
    elapsed = time.time() - started
    save(step, elapsed)
    print(f"saved {out} after {elapsed:.0f} s ({step} steps)")
    return out


def run(args) -> int:
    stop = StopRequest()
    with stop.on_signals():
        train(args, stop)
    return 0

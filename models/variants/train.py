"""Training of the attention variants side by side: ``python -m models.variants.train --variant NAME --task TASK
--seed S`` (or ``python -m models.train variants …``), ``--all`` for the grid.

Every variant gets the same decoder (models/variants/model.py), the same data stream per (task, seed), the same
budget: BUDGET[task] Adam steps of BATCH sequences at a peak learning rate (warm-up, then cosine decay). The loss is
the cross-entropy on the scored positions only (MQAR's answers, induction's second copy). A run writes
runs/variants/<task>-<variant>-s<seed>.safetensors (seed 0 with --overwrite-committed: the committed
checkpoints/variants/<task>-<variant>.safetensors, weights rounded to float16: the page draws them) and prints the measures of
models/variants/quality.py; ``--all --table FILE`` writes the table of every run as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import optax
from flax import nnx

from models.checkpoint import flat_params
from models.training import NO_PROGRESS, RUNS_ROOT, StopRequest, make_train_step
from models.variants import quality, tasks
from models.variants.checkpoint import CHECKPOINT, config_for
from models.variants.model import VARIANTS, make_model, masked_loss

# (steps, peak learning rate) per task, the same for every variant and seed; measured on mha seed 0: MQAR reached
# 1.0 in 3,000 steps at 3e-3 and stayed at ~0.3 (guessing among the pairs' values) at 1e-2.
BUDGET = {"mqar": (2500, 3e-3), "induction": (1500, 1e-2)}
BATCH, WARMUP = 32, 50
GRID_VARIANTS = (
    "mha",
    "gqa",
    "mla",
    "learned",
    "nope",
    "alibi",
    "sigmoid",
    "sink",
    "gated",
    "differential",
    "linear",
    "mqa",
    "softmax1",
)
GRID_SEEDS = (0, 1, 2)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="mha", help="attention variant (default mha)")
    parser.add_argument("--task", choices=tasks.TASKS, default="mqar", help="task (default mqar)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation and data seed (default 0)")
    parser.add_argument(
        "--steps", type=int, default=None, help="training steps (default: the task's, the same for all)"
    )
    parser.add_argument("--all", action="store_true", help="train the grid: every variant, task and seed 0-2")
    parser.add_argument("--table", type=Path, default=None, help="with --all: write every run's measures as JSON")
    CHECKPOINT.add_output_arguments(parser)


def train(variant: str, task: str, seed: int, steps: int | None = None, stop: StopRequest | None = None, progress=None):
    """Returns (cfg, final params State, info) of one run."""
    stop, progress = stop or StopRequest(), progress or NO_PROGRESS
    cfg = config_for(variant, task)
    steps, lr = BUDGET[task][0] if steps is None else steps, BUDGET[task][1]
    graphdef, params = make_model(cfg, seed=seed)
    schedule = optax.warmup_cosine_decay_schedule(0.0, lr, WARMUP, max(steps, WARMUP + 1), lr / 10)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    opt_state = optimizer.init(params)
    step_fn = make_train_step(lambda p, *b: masked_loss(nnx.merge(graphdef, p), *b), optimizer)
    gen = tasks.rng(tasks.TRAIN, task, seed)
    start, losses, done = time.perf_counter(), [], 0
    for step in range(1, steps + 1):
        if stop.requested:
            break
        params, opt_state, loss, _ = step_fn(params, opt_state, *tasks.batch(task, gen, BATCH))
        losses.append(loss)
        done = step
        if step % 50 == 0:
            progress.update(step, steps, loss=float(np.mean(losses[-50:])))
    progress.close()
    info = {
        "variant": variant,
        "task": task,
        "seed": seed,
        "steps": done,
        "batch": BATCH,
        "lr": lr,
        "final_loss": round(float(np.mean(losses[-50:])), 5) if losses else None,
        "train_seconds": round(time.perf_counter() - start, 1),
    }
    return cfg, params, info


def one_run(variant: str, task: str, seed: int, folder: Path, steps: int | None = None) -> dict:
    """Trains, saves and measures one run; returns its row of the table."""
    if folder == CHECKPOINT.folder and seed != 0:  # only seed 0 is committed
        folder = RUNS_ROOT / "variants"
        folder.mkdir(parents=True, exist_ok=True)
    cfg, params, info = train(variant, task, seed, steps)
    name = f"{task}-{variant}" + ("" if folder == CHECKPOINT.folder else f"-s{seed}")
    path = CHECKPOINT.save(CHECKPOINT.path(name, folder), cfg, half_precision(params), info=info)
    _, graphdef, params, _ = CHECKPOINT.load(path)  # measured as committed
    row = {**info, **quality.measure(graphdef, params, cfg, task)}
    print(json.dumps(row), flush=True)
    return row


def half_precision(params) -> dict[str, np.ndarray]:
    """Returns the parameters rounded to float16 and back (the committed files hold what the table measures)."""
    return {k: v.astype(np.float16).astype(np.float32) for k, v in flat_params(params).items()}


def run(args: argparse.Namespace) -> int:
    """Returns 0 after one run, or the grid with --all (sequentially: one process, one run at a time)."""
    folder = CHECKPOINT.output_folder(args)
    folder.mkdir(parents=True, exist_ok=True)
    if not args.all:
        one_run(args.variant, args.task, args.seed, folder, args.steps)
        return 0
    rows = []
    for seed in GRID_SEEDS:  # seed 0 of everything first: the committed checkpoints
        for variant in GRID_VARIANTS:
            for task in tasks.TASKS:
                target = folder if seed == 0 else RUNS_ROOT / "variants"
                rows.append(one_run(variant, task, seed, target, args.steps))
                if args.table:
                    args.table.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.variants.train", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

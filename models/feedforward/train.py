"""Training for feed-forward attention: ``python -m models.train feedforward ...``.

    python -m models.train feedforward --variant paper --length 100     # one model per T₀,
    python -m models.train feedforward --variant paper --length 1000    # lengths T₀ ± 10 %
    python -m models.train feedforward --variant paper --length 10000
    python -m models.train feedforward --variant unbounded              # lengths 50–1,000

Adam on the mean squared error, fresh random sequences every step (the paper's setting).
Each step's batch is padded to one fixed length, so a run compiles once. `--init` continues
from a checkpoint; `--layer-lr` gives single layers their own rate (0 freezes them);
`--lbfgs N` trains every layer by L-BFGS on a fixed set of sequences instead of Adam (how
paper-T10000 was finished; docs/models/feedforward.md).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models.checkpoint import dotted_name
from models.feedforward.checkpoint import CHECKPOINT, checkpoint_path
from models.feedforward.model import PAPER, PAPER_LENGTHS, UNBOUNDED, FeedForwardAttention, FeedForwardConfig
from models.feedforward.quality import evaluate
from models.feedforward.task import lengths_around, max_length_around, sample_batch
from models.training import NO_PROGRESS, Progress, StopRequest, TqdmProgress, make_train_step, output_file

UNBOUNDED_LENGTHS = (50, 1_000)
LAYERS = ("w_xh", "w_hc", "w_cs", "w_sy")
LBFGS_CHUNK = 64  # sequences per chunk of the full-batch loss (bounds memory at T = 11,000)

# Defaults per run: (steps, batch, learning rate). Larger T₀ gets smaller batches: a batch
# of 16 × 11,000 steps already holds 17.6 M hidden activations.
DEFAULTS = {
    ("paper", 100): (3_000, 64, 3e-3),
    ("paper", 1_000): (3_000, 32, 3e-3),
    ("paper", 10_000): (3_000, 16, 3e-3),
    ("unbounded", None): (4_000, 32, 3e-3),
}


@dataclass(frozen=True)
class TrainResult:
    """The trained model, its loss history (one value per step) and the wall time in seconds."""

    model: FeedForwardAttention
    losses: np.ndarray
    seconds: float


def mse_loss(graphdef):
    """Returns loss(params, inputs, mask, targets): the mean squared error of the predicted sums."""

    def loss_fn(params, inputs, mask, targets):
        prediction, _ = nnx.merge(graphdef, params)(inputs, mask)
        return jnp.mean((prediction - targets) ** 2)

    return loss_fn


def batch_lengths(rng: np.random.Generator, variant: str, length: int | None, batch: int) -> tuple[np.ndarray, int]:
    """Returns (lengths [batch], padded length) for one training step."""
    if variant == "paper":
        return lengths_around(rng, length, batch), max_length_around(length)
    low, high = UNBOUNDED_LENGTHS
    return rng.integers(low, high + 1, size=batch).astype(np.int32), high


def train(
    variant: str,
    length: int | None = None,
    *,
    steps: int,
    batch: int,
    learning_rate: float,
    seed: int = 0,
    cfg: FeedForwardConfig | None = None,
    init: FeedForwardAttention | None = None,
    progress: Progress = NO_PROGRESS,
    constant_lr: bool = False,
    layer_lr: dict[str, float] | None = None,
    stop: StopRequest | None = None,
) -> TrainResult:
    """Returns a model trained for `steps` Adam steps on fresh addition batches.

    `layer_lr`: {layer name: constant rate (after the warm-up)} for any of w_xh, w_hc, w_cs,
    w_sy (0 freezes a layer); the layers not named keep `learning_rate`.
    """
    cfg = cfg or (PAPER if variant == "paper" else UNBOUNDED)
    model = init if init is not None else FeedForwardAttention(cfg, rngs=nnx.Rngs(seed))
    graphdef, params = nnx.split(model)
    warmup = min(100, steps // 10 + 1)
    schedule = (
        optax.linear_schedule(0.0, learning_rate, warmup)
        if constant_lr
        else optax.warmup_cosine_decay_schedule(0.0, learning_rate, warmup, steps, learning_rate / 30)
    )
    rates = dict(layer_lr or {})
    unknown = set(rates) - set(LAYERS)
    if unknown:
        raise ValueError(f"unknown layers {sorted(unknown)}; known: {', '.join(LAYERS)}")
    adam = optax.adam(schedule)
    if rates:
        labels = jax.tree_util.tree_map_with_path(lambda path, _: dotted_name(path).split(".")[0], params)
        adam = optax.multi_transform(
            {name: optax.adam(optax.linear_schedule(0.0, rates[name], warmup)) if name in rates else adam
             for name in LAYERS},
            labels,
        )
    tx = optax.chain(optax.clip_by_global_norm(1.0), adam)
    opt_state = tx.init(params)
    train_step = make_train_step(mse_loss(graphdef), tx)
    rng = np.random.default_rng(seed + 1)

    def adam_step(params, opt_state):
        data = sample_batch(rng, *batch_lengths(rng, variant, length, batch))
        return train_step(params, opt_state, data.inputs, data.mask, data.targets)[:3]

    return _steps(adam_step, graphdef, params, opt_state, steps, progress, stop, report_every=50)


def _steps(step: Callable, graphdef, params, state, count: int, progress: Progress, stop: StopRequest | None, *,
           report_every: int = 1) -> TrainResult:
    """Returns the model after `count` steps (params, state, loss) = step(params, state), fewer on a stop
    request; reports the mean loss of the last `report_every` steps every `report_every` steps and at the end."""
    losses = []
    stop = stop or StopRequest()
    start = time.perf_counter()
    for i in range(count):
        if stop.requested:
            break
        params, state, loss = step(params, state)
        losses.append(float(loss))
        if (i + 1) % report_every == 0 or i == count - 1:
            progress.update(i + 1, count, mse=float(np.mean(losses[-report_every:])))
    progress.close()
    return TrainResult(nnx.merge(graphdef, params), np.asarray(losses, np.float32), time.perf_counter() - start)


def train_lbfgs(
    length: int, *, iterations: int, sequences: int, seed: int = 0, init: FeedForwardAttention,
    progress: Progress = NO_PROGRESS, stop: StopRequest | None = None,
) -> TrainResult:
    """Returns `init` trained end to end by L-BFGS on one fixed set of `sequences` addition
    sequences of T₀ ± 10 % (full batch: the loss is deterministic, as L-BFGS needs).

    Every parameter trains. On long sequences the tanh bound makes the loss very ill-conditioned
    (the readout must amplify a signal ~e²/T over a constant ~T/e² times larger), which Adam's
    per-parameter steps do not overcome; L-BFGS's curvature estimate does.
    """
    graphdef, params = nnx.split(init)
    rng = np.random.default_rng(seed + 1)
    chunks = -(-sequences // LBFGS_CHUNK)
    data = sample_batch(rng, lengths_around(rng, length, chunks * LBFGS_CHUNK), max_length_around(length))
    xs = jnp.asarray(data.inputs).reshape(chunks, LBFGS_CHUNK, *data.inputs.shape[1:])
    ms = jnp.asarray(data.mask).reshape(chunks, LBFGS_CHUNK, -1)
    ys = jnp.asarray(data.targets).reshape(chunks, LBFGS_CHUNK)

    def loss_fn(p):
        def chunk(total, batch):
            x, m, y = batch
            prediction, _ = nnx.merge(graphdef, p)(x, m)
            return total + jnp.sum((prediction - y) ** 2), None

        total, _ = jax.lax.scan(chunk, jnp.float32(0), (xs, ms, ys))
        return total / (chunks * LBFGS_CHUNK)

    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss_fn)

    @jax.jit
    def step(p, state):
        value, grad = value_and_grad(p, state=state)
        updates, state = optimizer.update(grad, state, p, value=value, grad=grad, value_fn=loss_fn)
        return optax.apply_updates(p, updates), state, value

    return _steps(step, graphdef, params, optimizer.init(params), iterations, progress, stop)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=("paper", "unbounded"), required=True)
    parser.add_argument("--length", type=int, choices=PAPER_LENGTHS, help="T₀ of a paper-form model")
    parser.add_argument("--steps", type=int, help="Adam steps (default per variant)")
    parser.add_argument("--batch", type=int, help="sequences per step (default per variant)")
    parser.add_argument("--lr", type=float, help="peak learning rate (default 3e-3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--constant-lr", action="store_true", help="no cosine decay after the warm-up")
    parser.add_argument(
        "--layer-lr", action="append", default=[], metavar="LAYER=LR",
        help="own constant rate for one layer (w_xh, w_hc, w_cs, w_sy; 0 freezes it); repeatable",
    )
    parser.add_argument(
        "--lbfgs", type=int, default=0, metavar="ITERATIONS",
        help="instead of Adam: this many L-BFGS iterations on a fixed set of --sequences sequences (needs --init)",
    )
    parser.add_argument("--sequences", type=int, default=256, help="the fixed training set of --lbfgs (default 256)")
    parser.add_argument("--init", type=Path, help="start from this checkpoint instead of random weights")
    parser.add_argument("--out", type=Path, help="checkpoint path (default runs/feedforward/<name>.safetensors)")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="write checkpoints/feedforward/<name>.safetensors, replacing the committed model")


def parse_layer_lr(items: list[str]) -> dict[str, float]:
    """Returns {layer: rate} from ["w_sy=1e-2", ...]; SystemExit with one line if malformed."""
    rates = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            rates[name] = float(value)
        except ValueError:
            raise SystemExit(f"--layer-lr wants LAYER=RATE, got {item!r}") from None
        if name not in LAYERS:
            raise SystemExit(f"--layer-lr: unknown layer {name!r}; known: {', '.join(LAYERS)}")
    return rates


def run(args: argparse.Namespace) -> int:
    if args.variant == "paper" and args.length is None:
        raise SystemExit("--variant paper needs --length 100, 1000 or 10000")
    length = args.length if args.variant == "paper" else None
    steps, batch, lr = DEFAULTS[(args.variant, length)]
    steps, batch, lr = (steps if args.steps is None else args.steps), args.batch or batch, args.lr or lr
    if steps < 1 and not args.lbfgs:
        raise SystemExit("--steps must be at least 1")
    init = CHECKPOINT.load_module(args.init) if args.init else None
    out = output_file(args.out, checkpoint_path(args.variant, length), overwrite_committed=args.overwrite_committed)
    name = f"feedforward {args.variant}" + (f" T0={length}" if length else "")
    stop = StopRequest()
    with stop.on_signals():
        if args.lbfgs:
            if init is None or length is None:
                raise SystemExit("--lbfgs needs --variant paper, --length and --init")
            result = train_lbfgs(length, iterations=args.lbfgs, sequences=args.sequences, seed=args.seed, init=init,
                                 progress=TqdmProgress(f"{name} L-BFGS", args.lbfgs, unit="iter"), stop=stop)
        else:
            result = train(
                args.variant, length, steps=steps, batch=batch, learning_rate=lr, seed=args.seed, init=init,
                progress=TqdmProgress(name, steps), constant_lr=args.constant_lr,
                layer_lr=parse_layer_lr(args.layer_lr), stop=stop,
            )
    test_lengths = (
        lengths_around(np.random.default_rng(7), length, 200)
        if length
        else np.random.default_rng(7).integers(UNBOUNDED_LENGTHS[0], UNBOUNDED_LENGTHS[1] + 1, 200)
    )
    scores = evaluate(result.model, test_lengths)
    meta = {
        "variant": args.variant,
        "length": length,
        "steps": len(result.losses) if not args.lbfgs else steps,
        "batch": batch,
        "learning_rate": lr,
        "seed": args.seed,
        "init": str(args.init) if args.init else None,
        "constant_lr": args.constant_lr,
        "layer_lr": parse_layer_lr(args.layer_lr),
        "lbfgs_iterations": args.lbfgs,
        "lbfgs_sequences": args.sequences if args.lbfgs else None,
        "train_seconds": round(result.seconds, 1),
        "final_loss": float(result.losses[-1]) if len(result.losses) else None,
        **{f"val_{k}": v for k, v in scores.items()},
    }
    CHECKPOINT.save(out, result.model.cfg, result.model, info=meta)
    print(f"saved {out} after {result.seconds:.0f} s: " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
    return 0

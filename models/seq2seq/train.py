"""Training of the date-normalisation models: ``python -m models.train seq2seq --variant ID``.

Teacher forcing, Adam, cross-entropy over the 10 output characters; batches are padded to
the length bucket of their longest source. About 10 snapshots are kept for the page's
"watch it learn" slider (spaced more densely early, where the attention forms).

``--warm-start checkpoints/seq2seq/luong-general`` starts from another trained variant
instead of random weights: every parameter the two share (embeddings, encoder, decoder,
read-out) is copied, then for ``--fit-steps`` steps only the new variant's own attention
head (W_a of luong-location; W_p, v_p of local-p) is fitted to reproduce the attention of
the model it came from (cross-entropy to its α; squared distance to its mean position),
and then the whole model trains on the output cross-entropy as usual. The teacher was
itself trained on the output alone, so no ground-truth alignment enters training.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

from models.checkpoint import dotted_name, filled_state, flat_params
from models.seq2seq import in_text
from models.seq2seq import task as dates
from models.seq2seq.checkpoint import BOTTLENECK_DIR, CHECKPOINT
from models.seq2seq.model import (
    ALL_VARIANTS,
    PRESETS,
    Seq2SeqConfig,
    apply,
    make_model,
    pad_batch,
    teacher_inputs,
)
from models.training import StopRequest, TqdmProgress, output_folder
from models.training import make_train_step as shared_train_step

TRAIN_SEED = 1  # training draws come from the stream [TRAIN_SEED, init seed]; see seq2seq_quality
VALIDATION_SEED = 7
# Training pads every batch to the input cap: one shape, one compile (compiles cost ~1 min
# on a busy 2-core machine; the few extra padded steps cost less).
TRAIN_LENGTH = dates.MAX_INPUT_CHARS
SNAPSHOT_FRACTIONS = (0.0, 0.02, 0.05, 0.1, 0.16, 0.25, 0.4, 0.6, 0.8, 1.0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, choices=(*ALL_VARIANTS, "all"), help="variant id, or all")
    parser.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak Adam learning rate (default 3e-3)")
    parser.add_argument("--window", type=int, default=3, help="D of the local variants (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation seed")
    parser.add_argument("--out", type=Path, default=None,
                        help="checkpoint folder (default runs/seq2seq; never the committed checkpoints "
                        "unless --overwrite-committed)")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="write into checkpoints/seq2seq, replacing the committed model")
    parser.add_argument(
        "--warm-start", type=Path, metavar="FILE",
        help="start from this trained checkpoint (shared weights copied, the head fitted to its attention)",
    )
    parser.add_argument(
        "--max-length", type=int, default=0, metavar="N",
        help="the bottleneck experiment: train on dates inside filler text (half the batch 1..30 characters, "
        "half 1..N), with the 'bottleneck' preset, into checkpoints/seq2seq/bottleneck (default 0: plain dates)",
    )
    parser.add_argument(
        "--init-from", type=Path, metavar="FILE",
        help="start from every weight of this checkpoint of the same variant and sizes (e.g. the committed "
        "plain-date model) instead of random weights",
    )
    parser.add_argument("--preset", choices=tuple(PRESETS), default=None,
                        help="model sizes (default: 'date', or 'bottleneck' with --max-length)")
    parser.add_argument("--fit-steps", type=int, default=300, help="head-fitting steps of --warm-start (default 300)")
    parser.add_argument(
        "--guide", type=float, default=0.0, metavar="LAMBDA",
        help="with --warm-start: add LAMBDA × the head-fitting loss to the cross-entropy (default 0)",
    )
    parser.add_argument(
        "--guide-until", type=float, default=1.0, metavar="FRACTION",
        help="apply --guide for this fraction of the steps, then train on the cross-entropy alone (default 1)",
    )


def batch_arrays(examples: list[dates.DateExample], bucket: int | None = None):
    """Returns (src ids [B, bucket], lengths [B], teacher inputs [B, 10], targets [B, 10]).

    Sources are cut at the bucket (at least the input cap), so a bucket beyond the cap reads longer text."""
    cap = max(bucket or 0, dates.MAX_INPUT_CHARS)
    src, lengths = pad_batch([dates.encode_source(e.source, max_chars=cap).ids for e in examples], bucket)
    targets = np.stack([dates.encode_target(e.target) for e in examples])
    return src, lengths, teacher_inputs(targets), targets


def make_train_step(graphdef, optimizer, variant: str | None = None, teacher=None):
    """Returns the jitted step (params, opt_state, batch..., window[, guide]) -> (params, opt_state, loss).

    With a `teacher` (graphdef, params), the loss is cross-entropy + λ·distill_loss against the
    teacher's attention, λ = guide (0: plain cross-entropy; traced, so changing it never
    recompiles). The returned loss is the cross-entropy.
    """

    def loss_fn(params, src, lengths, tgt_in, targets, window, guide):
        logits, alpha, centers = apply(graphdef, params, src, lengths, tgt_in, window, teacher_forcing=True)
        nll = optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()
        if teacher is None:
            return nll, nll
        _, t_alpha, _ = apply(*teacher, src, lengths, tgt_in, window, teacher_forcing=True)
        return nll + guide * distill_loss(variant, alpha, centers, jax.lax.stop_gradient(t_alpha)), nll

    shared = shared_train_step(loss_fn, optimizer, has_aux=True)

    def step(params, opt_state, src, lengths, tgt_in, targets, window, guide=0.0):
        params, opt_state, _, nll = shared(params, opt_state, src, lengths, tgt_in, targets, window, jnp.float32(guide))
        return params, opt_state, nll

    return step


# Parameters each variant has of its own: what --warm-start fits before training everything.
HEAD_PARAMS = {"luong-location": ("att_w",), "local-p": ("pos_w", "pos_v")}


def warm_start_params(params, teacher_flat: dict[str, np.ndarray]):
    """Returns (params with every same-named, same-shaped teacher tensor copied, names not copied)."""
    own = flat_params(params)
    copied = {k: v for k, v in teacher_flat.items() if k in own and own[k].shape == v.shape}
    kept = sorted(set(own) - set(copied))
    return filled_state(params, own | copied, where="warm start"), kept


def distill_loss(variant: str, alpha, centers, teacher_alpha):
    """Returns the head-fitting loss against a teacher's attention [B, 10, T].

    local-p: squared distance of p_t to the teacher's mean position Σ_s α_s·s;
    otherwise: cross-entropy of the student's α against the teacher's.
    """
    if variant == "local-p":
        target = jnp.einsum("bts,s->bt", teacher_alpha, jnp.arange(teacher_alpha.shape[-1], dtype=jnp.float32))
        return jnp.mean((centers - target) ** 2)
    return -jnp.mean(jnp.sum(teacher_alpha * jnp.log(alpha + 1e-9), axis=-1))


def fit_head(variant: str, graphdef, params, teacher, rng, steps: int, batch: int, lr: float, window):
    """Returns (params, final loss): `steps` Adam steps on the head parameters alone."""
    t_graphdef, t_params = teacher
    heads = HEAD_PARAMS.get(variant, ())
    if not heads:
        raise SystemExit(f"--warm-start has no head to fit for {variant}; it fits {', '.join(HEAD_PARAMS)}")
    # Everything but the head is frozen: its updates are set to zero.
    labels = jax.tree_util.tree_map_with_path(lambda path, _: "head" if dotted_name(path) in heads else "frozen", params)
    optimizer = optax.multi_transform({"head": optax.adam(lr), "frozen": optax.set_to_zero()}, labels)

    def loss_fn(p, src, lengths, tgt_in):
        _, t_alpha, _ = apply(t_graphdef, t_params, src, lengths, tgt_in, window, teacher_forcing=True)
        _, alpha, centers = apply(graphdef, p, src, lengths, tgt_in, window, teacher_forcing=True)
        return distill_loss(variant, alpha, centers, jax.lax.stop_gradient(t_alpha))

    step = shared_train_step(loss_fn, optimizer)
    opt_state = optimizer.init(params)
    progress = TqdmProgress(f"{variant} head fit", steps)
    loss = jnp.float32(0)
    for i in range(1, steps + 1):
        src, lengths, tgt_in, _ = batch_arrays(dates.sample(rng, batch), TRAIN_LENGTH)
        params, opt_state, loss, _ = step(params, opt_state, src, lengths, tgt_in)
        progress.update(i, steps)
    progress.close()
    return params, float(loss)


def greedy_accuracy(graphdef, params, examples, window: float, bucket: int | None = None) -> float:
    """Returns the exact-match share of greedy decoding over `examples`."""
    src, lengths, tgt_in, targets = batch_arrays(examples, bucket)
    logits, _, _ = apply(graphdef, params, src, lengths, tgt_in, jnp.float32(window), teacher_forcing=False)
    return float(np.mean(np.all(np.asarray(jnp.argmax(logits, -1)) == targets, axis=1)))


def snapshot_steps(total: int) -> list[int]:
    """Returns the steps at which parameters are snapshotted (0 = untrained, total = final)."""
    return sorted({int(round(f * total)) for f in SNAPSHOT_FRACTIONS})


def train_variant(variant: str, args: argparse.Namespace, stop: StopRequest | None = None) -> dict:
    """Trains one variant, writes its checkpoint (atomically) and returns its summary."""
    stop = stop or StopRequest()
    cfg = model_config(variant, args)
    length = getattr(args, "max_length", 0) or TRAIN_LENGTH
    graphdef, params = make_model(cfg, seed=args.seed)
    rng = np.random.default_rng([TRAIN_SEED, args.seed])
    window = jnp.float32(cfg.window)
    warm, teacher = {}, None
    if getattr(args, "init_from", None):
        params = initial_params(variant, cfg, params, args.init_from)
        warm = {"init_from": args.init_from.stem}
    if getattr(args, "warm_start", None):
        _, t_graphdef, t_params, _ = CHECKPOINT.load(args.warm_start)
        params, kept = warm_start_params(params, flat_params(t_params))
        fit_start = time.perf_counter()
        params, fit_loss = fit_head(
            variant, graphdef, params, (t_graphdef, t_params), rng, args.fit_steps, args.batch, args.lr, window
        )
        fit_seconds = round(time.perf_counter() - fit_start, 1)
        teacher = (t_graphdef, t_params) if args.guide > 0 else None
        warm = {"warm_start": args.warm_start.stem, "fit_steps": args.fit_steps, "fit_loss": round(fit_loss, 5),
                "fit_seconds": fit_seconds, "not_copied": kept, "guide": args.guide, "guide_until": args.guide_until}
        print(f"{variant}: warm start from {args.warm_start} (own: {', '.join(kept)}), head-fit loss {fit_loss:.4f}")
    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, 100, args.steps, end_value=args.lr * 0.05)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    opt_state = optimizer.init(params)
    step_fn = make_train_step(graphdef, optimizer, variant, teacher)
    guide_steps = int(round(args.guide_until * args.steps)) if teacher is not None else 0
    keep = snapshot_steps(args.steps)
    snapshots = {0: flat_params(params)}
    log, start, losses, done = [], time.perf_counter(), [], 0
    progress = TqdmProgress(variant, args.steps)
    for step in range(1, args.steps + 1):
        if stop.requested:  # Ctrl-C, SIGUSR1: finish with what has been learnt so far
            print(f"{variant}: stopping early at step {done}")
            break
        examples = draw(rng, args.batch, args)
        guide = args.guide if step <= guide_steps else 0.0
        params, opt_state, loss = step_fn(params, opt_state, *batch_arrays(examples, length), window, guide)
        losses.append(loss)
        done = step
        if step % 50 == 0 or step == args.steps:
            mean = float(np.mean(jax.device_get(losses)))
            losses = []
            log.append([step, round(mean, 5), round(time.perf_counter() - start, 2)])
            progress.update(step, args.steps, loss=mean)
        if step in keep:
            snapshots[step] = flat_params(params)
    progress.close()
    seconds = time.perf_counter() - start
    validation = greedy_accuracy(graphdef, params, draw(np.random.default_rng(VALIDATION_SEED), 500, args),
                                 cfg.window, length)
    snapshots.pop(done, None)
    info = {
        "steps": done, "batch": args.batch, "lr": args.lr, "seed": args.seed,
        "train_seed": TRAIN_SEED, "max_length": getattr(args, "max_length", 0), "train_seconds": round(seconds, 1), "validation_exact_match": validation,
        "log": log, **warm, "final_step": done,
    }
    out = CHECKPOINT.path(variant, args.out)
    CHECKPOINT.save(out, cfg, flat_params(params), snapshots, info)
    print(f"{variant}: {seconds:.0f} s, validation exact match {validation:.4f} -> {out}")
    return info


def model_config(variant: str, args: argparse.Namespace) -> Seq2SeqConfig:
    """Returns the config of a run: the preset's sizes (--preset; 'bottleneck' with --max-length), the
    variant, D, and with --max-length the longest input."""
    max_length = getattr(args, "max_length", 0)
    preset = PRESETS[getattr(args, "preset", None) or ("bottleneck" if max_length else "date")]
    fields = {**preset.__dict__, "variant": variant, "window": args.window}
    return Seq2SeqConfig(**fields | ({"max_source": max_length} if max_length else {}))


# With --max-length, this share of each batch is short (1..SHORT_LENGTH characters: mostly the date alone),
# so that every model keeps learning the dates themselves while it learns to find them in long text.
SHORT_SHARE, SHORT_LENGTH = 0.5, 30


def draw(rng: np.random.Generator, n: int, args: argparse.Namespace) -> list[dates.DateExample]:
    """Returns n training examples: plain dates, or with --max-length dates inside filler text, half the batch
    1..SHORT_LENGTH characters long, half 1..N."""
    max_length = getattr(args, "max_length", 0)
    if not max_length:
        return dates.sample(rng, n)
    short = int(round(SHORT_SHARE * n))
    return in_text.sample_in_text(rng, short, 1, SHORT_LENGTH) + in_text.sample_in_text(rng, n - short, 1, max_length)


def initial_params(variant: str, cfg: Seq2SeqConfig, params, path: Path):
    """Returns params filled with every weight of the checkpoint at `path`; SystemExit with one line when
    it is another variant or another size (each name and shape must match)."""
    other, tensors, _ = CHECKPOINT.load_weights(path)
    if other.variant != variant:
        raise SystemExit(f"--init-from: {path} is a {other.variant} model, not {variant}")
    own = flat_params(params)
    if set(own) != set(tensors) or any(own[k].shape != tensors[k].shape for k in own):
        raise SystemExit(f"--init-from: {path} has other sizes than the {variant} model trained here")
    return filled_state(params, tensors, where="--init-from")


def check_arguments(args: argparse.Namespace) -> None:
    """SystemExit with one line for flag combinations that would be ignored or fail later."""
    warm = getattr(args, "warm_start", None)
    if warm is None and (getattr(args, "guide", 0.0) > 0 or getattr(args, "guide_until", 1.0) != 1.0):
        raise SystemExit("--guide and --guide-until need --warm-start (the model whose attention guides)")
    if warm is not None and args.variant not in HEAD_PARAMS:
        raise SystemExit(f"--warm-start fits the head of {' or '.join(HEAD_PARAMS)}, not {args.variant}")
    if warm is not None and not warm.is_file():
        raise SystemExit(f"--warm-start: no checkpoint at {warm}")
    if not 0.0 <= getattr(args, "guide_until", 1.0) <= 1.0:
        raise SystemExit("--guide-until is a fraction of the steps, between 0 and 1")
    if getattr(args, "max_length", 0) and not dates.MAX_INPUT_CHARS <= args.max_length <= 1000:
        raise SystemExit(f"--max-length is the longest input, between {dates.MAX_INPUT_CHARS} and 1000 characters")
    init = getattr(args, "init_from", None)
    if init is not None and not init.is_file():
        raise SystemExit(f"--init-from: no checkpoint at {init}")
    if init is not None and warm is not None:
        raise SystemExit("give --init-from or --warm-start, not both")
    if getattr(args, "max_length", 0) and warm is not None:
        raise SystemExit("--max-length trains from random weights; --warm-start reads plain dates")


def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    variants = ALL_VARIANTS if args.variant == "all" else (args.variant,)
    committed = BOTTLENECK_DIR if getattr(args, "max_length", 0) else CHECKPOINT.folder
    args.out = output_folder(args.out, committed, [f"{v}.safetensors" for v in variants],
                             overwrite_committed=args.overwrite_committed)
    stop = StopRequest()
    with stop.on_signals():
        for variant in variants:
            if not stop.requested:
                train_variant(variant, args, stop)
    return 0

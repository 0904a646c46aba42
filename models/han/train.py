"""Training of hierarchical attention networks: the step, epochs over documents, and the entry
point ``python -m models.train han`` (generated reviews).

The built-in model has two heads over one shared attention: sentiment (negative/positive)
and topic (food/service/price/ambience). Only the opinion sentences of a review carry
either label, so both heads push attention towards them. In-app training ("train your
own") uses the same step and epochs through OwnTraining.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import io
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models.han.checkpoint import CHECKPOINT, save_checkpoint
from models.han.data import Batch, Document, batch_shape, encode_document, load_word_embeddings, make_batch
from models.han.model import HAN, REVIEWS, HANConfig, embed
from models.han.task import SENTIMENTS, TOPICS, Review, generate_reviews
from models.options import Option
from models.training import NO_PROGRESS, RUNS_ROOT, Progress, StopRequest, TqdmProgress, make_train_step, output_file

TRAIN_SEED = 0


def head_losses(model: HAN, table, batch: dict) -> jnp.ndarray:
    """Returns the mean cross-entropy summed over heads.  batch: ids, masks, labels [B, K], row_mask [B]."""
    logits, *_ = model(embed(table, batch["ids"]), batch["piece_mask"], batch["sentence_mask"])
    total = 0.0
    for k, head_logits in enumerate(logits):
        ce = optax.softmax_cross_entropy_with_integer_labels(head_logits, batch["labels"][:, k])
        total = total + jnp.sum(ce * batch["row_mask"]) / jnp.maximum(jnp.sum(batch["row_mask"]), 1.0)
    return total


@functools.lru_cache(maxsize=8)
def compiled_train_step(graphdef, optimizer: optax.GradientTransformation) -> Callable:
    """Returns jit((state, opt_state, table, batch) -> (state, opt_state, loss, None)), one per model shape."""
    return make_train_step(lambda state, table, batch: head_losses(nnx.merge(graphdef, state), table, batch), optimizer)


def batch_arrays(batch: Batch, labels: np.ndarray, rows: int) -> dict:
    """Returns the dict a train step takes.  labels [n, K] int for the first n rows."""
    full = np.zeros((batch.ids.shape[0], labels.shape[1]), np.int32)
    full[: len(labels)] = labels
    row_mask = np.zeros(batch.ids.shape[0], np.float32)
    row_mask[:rows] = 1.0
    return {
        "ids": batch.ids,
        "piece_mask": batch.piece_mask,
        "sentence_mask": batch.sentence_mask,
        "labels": full,
        "row_mask": row_mask,
    }


@functools.lru_cache(maxsize=8)
def adam_optimizer(learning_rate: float) -> optax.GradientTransformation:
    """Returns clipped Adam at this rate: one object per rate, so the jitted step of a model
    shape compiles once per process, not once per training (compiled_train_step is cached by it)."""
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adam(learning_rate))


@dataclass
class TrainState:
    """A HAN under training: the split module, the optimiser and its state."""

    graphdef: Any
    state: Any
    optimizer: optax.GradientTransformation
    opt_state: Any

    @classmethod
    def create(cls, cfg: HANConfig, seed: int = 0, learning_rate: float = 3e-3) -> TrainState:
        model = HAN(cfg, rngs=nnx.Rngs(seed))
        graphdef, state = nnx.split(model, nnx.Param)
        optimizer = adam_optimizer(learning_rate)
        return cls(graphdef, state, optimizer, optimizer.init(state))

    def model(self) -> HAN:
        return nnx.merge(self.graphdef, self.state)


def train_epochs(
    train: TrainState,
    docs: Sequence[Document],
    labels: np.ndarray,
    *,
    epochs: int,
    batch_size: int = 32,
    seed: int = 0,
    table: np.ndarray | None = None,
    progress: Progress = NO_PROGRESS,
    max_steps: int | None = None,
    stop: StopRequest | None = None,
) -> list[float]:
    """Trains in place; returns the mean loss of each epoch.  labels [n, K] int.

    progress gets (step, total, loss=...) after every step; a stop request ends training
    after the current step, keeping every step done. All batches are padded to one shape
    (the buckets that fit the longest document), so a run compiles once.
    """
    table = jnp.asarray(load_word_embeddings() if table is None else table)
    step_fn = compiled_train_step(train.graphdef, train.optimizer)
    stop = stop or StopRequest()
    rng = np.random.default_rng(seed)
    n = len(docs)
    shape = batch_shape(docs)
    per_epoch = (n + batch_size - 1) // batch_size
    total = per_epoch * epochs if max_steps is None else min(max_steps, per_epoch * epochs)
    losses, step = [], 0
    for _ in range(epochs):
        order = rng.permutation(n)
        epoch_losses = []
        for start in range(0, n, batch_size):
            if step >= total or stop.requested:
                break
            idx = order[start : start + batch_size]
            arrays = batch_arrays(make_batch([docs[j] for j in idx], batch_size, shape), labels[idx], len(idx))
            train.state, train.opt_state, loss, _ = step_fn(train.state, train.opt_state, table, arrays)
            step += 1
            epoch_losses.append(float(loss))
            progress.update(step, total, loss=epoch_losses[-1])
        if epoch_losses:
            losses.append(float(np.mean(epoch_losses)))
    return losses


@dataclass
class OwnTraining:
    """One user's in-app training run ("train your own"): the data, the model under training,
    and how far it got. Made by the page from an uploaded CSV; trained epoch by epoch.

    data_name says which upload the model was trained on; steps counts every step kept (a
    stop mid-epoch keeps the steps done).
    """

    cfg: HANConfig
    train: TrainState
    docs: list[Document]
    labels: np.ndarray  # int [n, 1]
    epochs: int
    data_name: str
    epoch: int = 0
    steps: int = 0
    losses: list[float] = field(default_factory=list)
    stop: StopRequest = field(default_factory=StopRequest)

    @property
    def running(self) -> bool:
        return self.epoch < self.epochs and not self.stop.requested

    @property
    def finished(self) -> bool:
        return self.epoch >= self.epochs

    @property
    def total_steps(self) -> int:
        return -(-len(self.docs) // OWN_BATCH) * self.epochs


OWN_EPOCHS = Option("epochs", "int", default=5, low=1, high=10, step=1, label="Epochs",
                    help="passes over the uploaded rows")
OWN_MAX_EPOCHS = int(OWN_EPOCHS.high)
OWN_BATCH = 8


def own_config(classes: tuple[str, ...]) -> HANConfig:
    """Returns the config of an in-app model: small, so a few hundred rows train in tens of seconds."""
    return HANConfig(heads=(("label", tuple(classes)),), word_hidden=24, word_attention=32,
                     sentence_hidden=24, sentence_attention=32)


def start_own(texts: Sequence[str], labels: np.ndarray, classes: tuple[str, ...], *, epochs: int,
              data_name: str) -> OwnTraining:
    """Returns a fresh OwnTraining on labelled texts (labels int [n] into classes); InputError if a text is unusable."""
    docs = [encode_document(t) for t in texts]
    cfg = own_config(classes)
    return OwnTraining(cfg, TrainState.create(cfg, seed=0, learning_rate=1e-2), docs,
                       np.asarray(labels, np.int32)[:, None], epochs, data_name)


def train_own_epoch(own: OwnTraining, progress: Progress = NO_PROGRESS) -> None:
    """Trains `own` one more epoch in place (or until its stop request); every step done is kept."""
    done_before = own.steps

    class Counting:
        def update(self, step: int, total: int, **metrics: float) -> None:
            own.steps = done_before + step
            progress.update(own.steps, own.total_steps, **metrics)

        def close(self) -> None:
            pass

    losses = train_epochs(own.train, own.docs, own.labels, epochs=1, batch_size=OWN_BATCH, seed=own.epoch,
                          progress=Counting(), stop=own.stop)
    own.losses.extend(losses)
    if not own.stop.requested:
        own.epoch += 1


@dataclass(frozen=True)
class OwnModel:
    """A model trained in the app, as the page shows it and as it is kept on disk."""

    cfg: HANConfig
    graphdef: Any
    state: Any
    data_name: str
    rows: int
    epochs: int
    epoch: int
    steps: int
    losses: tuple[float, ...]
    note: str = ""  # why training ended early, if it did

    @property
    def finished(self) -> bool:
        return self.epoch >= self.epochs

    def info(self) -> dict[str, Any]:
        return {"trained_on": self.data_name, "rows": self.rows, "epochs": self.epochs, "epoch": self.epoch,
                "steps": self.steps, "losses": list(self.losses), "note": self.note}


def own_model(own: OwnTraining, note: str = "") -> OwnModel:
    """Returns the OwnModel of a training run as it stands."""
    return OwnModel(own.cfg, own.train.graphdef, own.train.state, own.data_name, len(own.docs), own.epochs,
                    own.epoch, own.steps, tuple(own.losses), note)


def train_own(texts: Sequence[str], labels: np.ndarray, classes: tuple[str, ...], *, epochs: int, data_name: str,
              progress, save_to: Path | None = None) -> OwnModel:
    """The app's training job: reads the documents, trains epoch by epoch within the job's budget
    (progress: a models.training.JobProgress), saving the model after every epoch to `save_to`."""
    progress.note("reading the documents")
    own = start_own(texts, labels, classes, epochs=epochs, data_name=data_name)
    own.stop = progress.stop
    progress.note(f"epoch 1/{own.epochs}: preparing (the first training on this server compiles its step)")
    while own.running:
        progress.note(f"epoch {own.epoch + 1}/{own.epochs}")
        train_own_epoch(own, progress)
        if save_to is not None:
            save_own_model(own_model(own), save_to)
    model = own_model(own, getattr(progress, "budget_note", ""))
    if save_to is not None:
        save_own_model(model, save_to)
    return model


OWN_DIR = RUNS_ROOT / "app" / "han"  # in-app models, kept OWN_TTL seconds so a reload finds them
OWN_TTL = 24 * 3600
OWN_KEEP = 200
_OWN_ID = re.compile(r"[A-Za-z0-9_-]{8,32}")


def own_model_path(job_id: str, folder: Path | None = None) -> Path | None:
    """Returns where an in-app model is kept (default folder OWN_DIR), or None for an id that is not one of ours."""
    return (folder or OWN_DIR) / f"{job_id}.safetensors" if _OWN_ID.fullmatch(str(job_id or "")) else None


def save_own_model(model: OwnModel, path: Path) -> Path:
    """Writes an in-app model (atomically) and drops kept models past their time."""
    save_checkpoint(path, model.state, model.cfg, model.info())
    purge_own_models(path.parent)
    return path


def load_own_model(path: Path | None) -> OwnModel | None:
    """Returns the in-app model kept at `path`, or None if it is missing, expired or unreadable."""
    from models.han.checkpoint import load_checkpoint

    if path is None or not path.is_file() or time.time() - path.stat().st_mtime > OWN_TTL:
        return None
    try:
        cfg, graphdef, state, info = load_checkpoint(path)
    except Exception:  # noqa: BLE001 - a damaged or foreign file is simply not there
        return None
    return OwnModel(cfg, graphdef, state, str(info.get("trained_on", "")), int(info.get("rows", 0)),
                    int(info.get("epochs", 0)), int(info.get("epoch", 0)), int(info.get("steps", 0)),
                    tuple(float(x) for x in info.get("losses", [])), str(info.get("note", "")))


def purge_own_models(folder: Path, *, ttl: float = OWN_TTL, keep: int = OWN_KEEP) -> None:
    """Deletes in-app models older than ttl seconds, and all but the newest `keep`."""
    if not folder.is_dir():
        return
    files = sorted(folder.glob("*.safetensors"), key=lambda p: p.stat().st_mtime, reverse=True)
    now = time.time()
    for index, path in enumerate(files):
        if index >= keep or now - path.stat().st_mtime > ttl:
            with contextlib.suppress(OSError):
                path.unlink()


def review_labels(reviews: Sequence[Review]) -> np.ndarray:
    """Returns int32 [n, 2]: (sentiment index, topic index) per review."""
    return np.asarray([[SENTIMENTS.index(r.sentiment), TOPICS.index(r.topic)] for r in reviews], np.int32)


def example_csv_bytes(count: int = 200, seed: int = 7) -> bytes:
    """Returns a CSV (text,label) of generated reviews labelled by sentiment: a template for uploads."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["text", "label"])
    for review in generate_reviews(count, seed):
        writer.writerow([review.text, review.sentiment])
    return out.getvalue().encode("utf-8")


def train_reviews(
    cfg: HANConfig = REVIEWS, *, documents: int = 4000, epochs: int = 4, batch_size: int = 32,
    learning_rate: float = 3e-3, seed: int = TRAIN_SEED, progress: Progress = NO_PROGRESS,
    max_steps: int | None = None, stop: StopRequest | None = None,
) -> tuple[TrainState, list[float]]:
    """Returns a HAN trained on generated reviews, and its loss per epoch."""
    reviews = generate_reviews(documents, seed)
    docs = [encode_document(r.text) for r in reviews]
    train = TrainState.create(cfg, seed=seed, learning_rate=learning_rate)
    losses = train_epochs(train, docs, review_labels(reviews), epochs=epochs, batch_size=batch_size,
                          seed=seed, progress=progress, max_steps=max_steps, stop=stop)
    progress.close()
    return train, losses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--documents", type=int, default=4000, help="generated training reviews")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=TRAIN_SEED)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke tests)")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint file (default runs/han/han.safetensors)")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="write checkpoints/han/han.safetensors, replacing the committed model")


def run(args: argparse.Namespace) -> int:
    from models.han.quality import HELD_OUT_SEED, PLAIN_REVIEWS, load_plain_reviews, plain_quality, review_quality
    from models.han.records import HANPredictor

    out = output_file(args.out, CHECKPOINT, overwrite_committed=args.overwrite_committed)
    start = time.perf_counter()
    stop = StopRequest()
    steps = -(-args.documents // args.batch) * args.epochs
    with stop.on_signals():
        train, losses = train_reviews(
            REVIEWS, documents=args.documents, epochs=args.epochs, batch_size=args.batch, learning_rate=args.lr,
            seed=args.seed, progress=TqdmProgress("han", min(steps, args.max_steps or steps)),
            max_steps=args.max_steps, stop=stop,
        )
    seconds = time.perf_counter() - start
    info = {
        "trained_on": f"{args.documents} generated reviews, seed {args.seed}, {args.epochs} epochs, batch {args.batch}",
        "training_seconds": round(seconds),
        "epoch_losses": [round(x, 4) for x in losses],
    }
    save_checkpoint(out, train.state, REVIEWS, info)
    print(f"epoch losses {[round(x, 4) for x in losses]}; trained in {seconds:.0f} s; wrote {out}")
    predictor = HANPredictor(REVIEWS, train.graphdef, train.state)
    quality = review_quality(predictor, generate_reviews(500, HELD_OUT_SEED))
    for name, value in quality.rows():
        print(f"  {name}: {value:.1%}")
    if PLAIN_REVIEWS.is_file():
        plain = plain_quality(predictor, load_plain_reviews())
        print(f"  plain reviews: top sentence is the opinion {plain.top_sentence_is_opinion:.0%}, "
              f"sentiment {plain.sentiment_accuracy:.0%}, topic {plain.topic_accuracy:.0%}")
        for miss in plain.misses:
            print(f"    missed: {miss}")
    return 0

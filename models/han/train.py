"""Training of hierarchical attention networks: the step, epochs over documents, and the entry
point ``python -m models.train han`` (generated reviews).

The built-in model has two heads over one shared attention: sentiment (negative/positive)
and topic (quality/service/price/ambience). Only the opinion sentences of a review carry
either label, so both heads push attention towards them. Targets are distributions: a
review with two opinions on two topics has half of each, a review without an opinion has
uniform targets, and for those reviews a spread term, KL(uniform ‖ sentence α), asks the
sentence attention to say that nothing stands out. In-app training ("train your own") uses
the same features, step and epochs through OwnTraining.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models.han.data import Document, batch_shape, encode_document, make_batch
from models.han.features import FEATURES, document_vectors, feature_batch, feature_dim
from models.han.model import CHECKPOINT, HAN, REVIEWS, HANConfig
from models.han.store import OwnModel, save_own_model
from models.han.task import SENTIMENTS, TOPICS, Review, generate_reviews
from models.options import Option
from models.training import NO_PROGRESS, Progress, StopRequest, TqdmProgress, make_train_step, output_file

TRAIN_SEED = 0
SPREAD_WEIGHT = 1.0  # weight of KL(uniform ‖ sentence α) on reviews without an opinion


def spread_penalty(sentence_scores, sentence_mask) -> jnp.ndarray:
    """Returns KL(uniform ‖ α) per document [B] over its real sentences (0 when α is uniform).

    sentence_scores [B, S] (uᵀu_s before the softmax), sentence_mask [B, S] bool.
    """
    log_alpha = jax.nn.log_softmax(jnp.where(sentence_mask, sentence_scores, -1e9), axis=-1)
    count = jnp.maximum(jnp.sum(sentence_mask, axis=-1), 1)
    mean_log_alpha = jnp.sum(jnp.where(sentence_mask, log_alpha, 0.0), axis=-1) / count
    return -jnp.log(count) - mean_log_alpha


def head_losses(model: HAN, batch: dict, spread_weight: float = SPREAD_WEIGHT) -> jnp.ndarray:
    """Returns the mean soft cross-entropy summed over heads, plus spread_weight × the mean spread
    penalty of the rows marked in batch["spread"].  batch: x [B, S, T, E], masks, targets (one
    [B, C_k] distribution per head), row_mask [B], spread [B]."""
    logits, _, _, _, sentence_scores = model(batch["x"], batch["piece_mask"], batch["sentence_mask"])
    rows = jnp.maximum(jnp.sum(batch["row_mask"]), 1.0)
    total = 0.0
    for head_logits, target in zip(logits, batch["targets"]):
        total = total + jnp.sum(optax.softmax_cross_entropy(head_logits, target) * batch["row_mask"]) / rows
    penalty = spread_penalty(sentence_scores, batch["sentence_mask"]) * batch["spread"]
    return total + spread_weight * jnp.sum(penalty) / jnp.maximum(jnp.sum(batch["spread"]), 1.0)


@functools.lru_cache(maxsize=8)
def compiled_train_step(graphdef, optimizer: optax.GradientTransformation, spread_weight: float = SPREAD_WEIGHT) -> Callable:
    """Returns jit((state, opt_state, batch) -> (state, opt_state, loss, None)), one per model shape."""
    return make_train_step(lambda state, batch: head_losses(nnx.merge(graphdef, state), batch, spread_weight), optimizer)


def one_hot_targets(labels: np.ndarray, cfg: HANConfig) -> tuple[np.ndarray, ...]:
    """Returns one float32 [n, C_k] one-hot target per head.  labels [n, K] int."""
    labels = np.asarray(labels).reshape(len(labels), -1)
    return tuple(np.eye(len(classes), dtype=np.float32)[labels[:, k]] for k, (_, classes) in enumerate(cfg.heads))


def batch_arrays(x: np.ndarray, batch, targets: Sequence[np.ndarray], spread: np.ndarray, rows: int) -> dict:
    """Returns the dict a train step takes: targets and spread for the first `rows` rows, zero beyond."""
    size = x.shape[0]

    def padded(a: np.ndarray) -> np.ndarray:
        out = np.zeros((size, *a.shape[1:]), np.float32)
        out[: len(a)] = a
        return out

    row_mask = np.zeros(size, np.float32)
    row_mask[:rows] = 1.0
    return {"x": x, "piece_mask": batch.piece_mask, "sentence_mask": batch.sentence_mask,
            "targets": tuple(padded(t) for t in targets), "row_mask": row_mask, "spread": padded(spread)}


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
    targets: Sequence[np.ndarray],
    *,
    vectors: Sequence[Sequence[np.ndarray]],
    epochs: int,
    spread: np.ndarray | None = None,
    spread_weight: float = SPREAD_WEIGHT,
    batch_size: int = 32,
    seed: int = 0,
    progress: Progress = NO_PROGRESS,
    max_steps: int | None = None,
    stop: StopRequest | None = None,
) -> list[float]:
    """Trains in place; returns the mean loss of each epoch.

    targets: one float32 [n, C_k] distribution per head; vectors: per document, per sentence
    [T_i, E] (models.han.features.document_vectors); spread [n]: 1 for documents whose
    sentence attention should be uniform (no opinion), default none. progress gets (step,
    total, loss=...) after every step; a stop request ends training after the current step,
    keeping every step done. All batches are padded to one shape (the buckets that fit the
    longest document), so a run compiles once.
    """
    step_fn = compiled_train_step(train.graphdef, train.optimizer, spread_weight)
    stop = stop or StopRequest()
    rng = np.random.default_rng(seed)
    n = len(docs)
    spread = np.zeros(n, np.float32) if spread is None else np.asarray(spread, np.float32)
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
            batch = make_batch([docs[j] for j in idx], batch_size, shape)
            x = feature_batch([vectors[j] for j in idx], batch)
            arrays = batch_arrays(x, batch, [t[idx] for t in targets], spread[idx], len(idx))
            train.state, train.opt_state, loss, _ = step_fn(train.state, train.opt_state, arrays)
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
    vectors: list  # per document, per sentence float16 [T_i, E] (the frozen MiniLM features)
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
OWN_BATCH = 8


def own_config(classes: tuple[str, ...]) -> HANConfig:
    """Returns the config of an in-app model: small, so a few hundred rows train in tens of seconds."""
    return HANConfig(heads=(("label", tuple(classes)),), word_hidden=24, word_attention=32,
                     sentence_hidden=24, sentence_attention=32, embed_dim=REVIEWS.embed_dim, features=REVIEWS.features)


def start_own(texts: Sequence[str], labels: np.ndarray, classes: tuple[str, ...], *, epochs: int,
              data_name: str) -> OwnTraining:
    """Returns a fresh OwnTraining on labelled texts (labels int [n] into classes); InputError if a text is unusable."""
    docs = [encode_document(t) for t in texts]
    cfg = own_config(classes)
    vectors = document_vectors(docs, cfg.features, dtype=np.float16)
    return OwnTraining(cfg, TrainState.create(cfg, seed=0, learning_rate=1e-2), docs,
                       np.asarray(labels, np.int32)[:, None], vectors, epochs, data_name)


def train_own_epoch(own: OwnTraining, progress: Progress = NO_PROGRESS) -> None:
    """Trains `own` one more epoch in place (or until its stop request); every step done is kept."""
    done_before = own.steps

    class Counting:
        def update(self, step: int, total: int, **metrics: float) -> None:
            own.steps = done_before + step
            progress.update(own.steps, own.total_steps, **metrics)

        def close(self) -> None:
            pass

    losses = train_epochs(own.train, own.docs, one_hot_targets(own.labels, own.cfg), vectors=own.vectors, epochs=1,
                          batch_size=OWN_BATCH, seed=own.epoch, progress=Counting(), stop=own.stop)
    own.losses.extend(losses)
    if not own.stop.requested:
        own.epoch += 1


def own_model(own: OwnTraining, note: str = "") -> OwnModel:
    """Returns the OwnModel of a training run as it stands."""
    return OwnModel(own.cfg, own.train.graphdef, own.train.state, own.data_name, len(own.docs), own.epochs,
                    own.epoch, own.steps, tuple(own.losses), note)


def train_own(texts: Sequence[str], labels: np.ndarray, classes: tuple[str, ...], *, epochs: int, data_name: str,
              progress, save_to: Path | None = None) -> OwnModel:
    """The app's training job: reads the documents, trains epoch by epoch within the job's budget
    (progress: a models.training.JobProgress), saving the model after every epoch to `save_to`."""
    progress.note("reading the documents (MiniLM's vectors of every sentence)")
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


def review_targets(reviews: Sequence[Review]) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Returns ((sentiment [n, 2], topic [n, 4]) target distributions, spread [n]).

    Sentiment: one-hot, uniform for a review without an opinion; topic: the mean of its
    opinions' one-hots (uniform without one); spread: 1 for reviews without an opinion.
    """
    sentiment = np.full((len(reviews), len(SENTIMENTS)), 1 / len(SENTIMENTS), np.float32)
    topic = np.full((len(reviews), len(TOPICS)), 1 / len(TOPICS), np.float32)
    for i, review in enumerate(reviews):
        if review.sentiment is not None:
            sentiment[i] = np.eye(len(SENTIMENTS))[SENTIMENTS.index(review.sentiment)]
            topic[i] = np.mean([np.eye(len(TOPICS))[TOPICS.index(t)] for t in review.topics], axis=0)
    return (sentiment, topic), np.asarray([review.sentiment is None for review in reviews], np.float32)


@functools.lru_cache(maxsize=4)
def example_csv_bytes(count: int = 200, seed: int = 7) -> bytes:
    """Returns a CSV (text,label) of generated reviews with an opinion, labelled by sentiment: a template
    for uploads. Kept once made: generating it takes about 0.3 s, and the page offers it on every rerun."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["text", "label"])
    written, start = 0, seed
    while written < count:
        for review in generate_reviews(count, start):
            if review.sentiment is not None and written < count:
                writer.writerow([review.text, review.sentiment])
                written += 1
        start += 1000
    return out.getvalue().encode("utf-8")


def train_reviews(
    cfg: HANConfig = REVIEWS, *, documents: int = 3000, epochs: int = 4, batch_size: int = 32,
    learning_rate: float = 3e-3, seed: int = TRAIN_SEED, spread_weight: float = SPREAD_WEIGHT,
    progress: Progress = NO_PROGRESS, max_steps: int | None = None, stop: StopRequest | None = None,
) -> tuple[TrainState, list[float]]:
    """Returns a HAN trained on generated reviews, and its loss per epoch."""
    reviews = generate_reviews(documents, seed)
    docs = [encode_document(r.text) for r in reviews]
    vectors = document_vectors(docs, cfg.features, dtype=np.float16)
    targets, spread = review_targets(reviews)
    train = TrainState.create(cfg, seed=seed, learning_rate=learning_rate)
    losses = train_epochs(train, docs, targets, vectors=vectors, spread=spread, spread_weight=spread_weight,
                          epochs=epochs, batch_size=batch_size, seed=seed, progress=progress, max_steps=max_steps,
                          stop=stop)
    progress.close()
    return train, losses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--documents", type=int, default=3000, help="generated training reviews")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=TRAIN_SEED)
    parser.add_argument("--features", choices=FEATURES, default=REVIEWS.features,
                        help="frozen MiniLM vectors the network reads (models/han/features.py)")
    parser.add_argument("--spread-weight", type=float, default=SPREAD_WEIGHT,
                        help="weight of KL(uniform || sentence attention) on reviews without an opinion")
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke tests)")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint file (default runs/han/han.safetensors)")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="write checkpoints/han/han.safetensors, replacing the committed model")


def run(args: argparse.Namespace) -> int:
    from models.han.quality import calibrate_no_opinion, print_report
    from models.han.records import HANPredictor

    out = output_file(args.out, CHECKPOINT.file, overwrite_committed=args.overwrite_committed)
    cfg = dataclasses.replace(REVIEWS, features=args.features, embed_dim=feature_dim(args.features))
    start = time.perf_counter()
    stop = StopRequest()
    steps = -(-args.documents // args.batch) * args.epochs
    with stop.on_signals():
        train, losses = train_reviews(
            cfg, documents=args.documents, epochs=args.epochs, batch_size=args.batch, learning_rate=args.lr,
            seed=args.seed, spread_weight=args.spread_weight,
            progress=TqdmProgress("han", min(steps, args.max_steps or steps)), max_steps=args.max_steps, stop=stop,
        )
    seconds = time.perf_counter() - start
    predictor = HANPredictor(cfg, train.graphdef, train.state)
    threshold, balanced = calibrate_no_opinion(predictor)
    info = {
        "trained_on": f"{args.documents} generated reviews, seed {args.seed}, {args.epochs} epochs, batch {args.batch}, "
                      f"features {args.features}, spread weight {args.spread_weight}",
        "training_seconds": round(seconds),
        "epoch_losses": [round(x, 4) for x in losses],
        "no_opinion_spread": round(threshold, 4),
        "no_opinion_balanced_accuracy": round(balanced, 4),
    }
    CHECKPOINT.save(out, cfg, train.state, info=info)
    print(f"epoch losses {info['epoch_losses']}; trained in {seconds:.0f} s; wrote {out}")
    print_report(HANPredictor(cfg, train.graphdef, train.state, meta=info))
    return 0

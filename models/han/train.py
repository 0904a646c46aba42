"""Training and quality measures of the HAN on generated reviews: ``python -m models.train han``.

The built-in model has two heads over one shared attention: sentiment (negative/positive)
and topic (food/service/price/ambience). Only the opinion sentences of a review carry
either label, so both heads push attention towards them.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.han.model import (
    CHECKPOINT,
    REVIEWS,
    HANConfig,
    HANPredictor,
    HANResult,
    TrainState,
    save_checkpoint,
    train_epochs,
)
from models.han.data import encode_document
from models.han.task import SENTIMENTS, TOPICS, Review, generate_reviews

TRAIN_SEED = 0
HELD_OUT_SEED = 12345  # the quality test's documents; never trained on
PLAIN_REVIEWS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "han_plain_reviews.json"


def review_labels(reviews: Sequence[Review]) -> np.ndarray:
    """Returns int32 [n, 2]: (sentiment index, topic index) per review."""
    return np.asarray([[SENTIMENTS.index(r.sentiment), TOPICS.index(r.topic)] for r in reviews], np.int32)


def _strip(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum())


@dataclass(frozen=True)
class Quality:
    """Quality of a HAN on labelled documents (shares in [0, 1])."""

    documents: int
    sentiment_accuracy: float
    topic_accuracy: float
    top_sentence_label_bearing: float
    top3_words_label_bearing: float

    def rows(self) -> list[tuple[str, float]]:
        return [
            ("sentiment accuracy", self.sentiment_accuracy),
            ("topic accuracy", self.topic_accuracy),
            ("top-attended sentence is label-bearing", self.top_sentence_label_bearing),
            ("top-3 words of that sentence include a label word", self.top3_words_label_bearing),
        ]


def review_quality(predictor: HANPredictor, reviews: Sequence[Review]) -> Quality:
    """Returns the Quality on generated reviews (ground truth from the generator)."""
    results = predictor.run_batch([encode_document(r.text) for r in reviews])
    sent_ok = topic_ok = top_ok = words_ok = 0
    for review, result in zip(reviews, results):
        assert len(result.doc.sentences) == len(review.sentences), "sentence split differs from the generator's"
        sent_ok += result.predictions[0] == review.sentiment
        topic_ok += result.predictions[1] == review.topic
        top = int(np.argmax(result.sentence_alpha))
        top_ok += top in review.label_sentences
        top3 = np.argsort(-result.word_alpha[top])[:3]
        words_ok += bool(set(top3.tolist()) & set(review.label_words[top]))
    n = len(reviews)
    return Quality(n, sent_ok / n, topic_ok / n, top_ok / n, words_ok / n)


@dataclass(frozen=True)
class PlainQuality:
    """Quality on hand-written reviews: accuracies and the top sentence being the opinion."""

    documents: int
    sentiment_accuracy: float
    topic_accuracy: float
    top_sentence_is_opinion: float
    misses: tuple[str, ...]


def load_plain_reviews(path: Path = PLAIN_REVIEWS) -> list[dict]:
    """Returns the hand-written reviews: text, sentiment, topic, opinion (sentence indices)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["reviews"]


def plain_quality(predictor: HANPredictor, reviews: Sequence[dict]) -> PlainQuality:
    """Returns the PlainQuality of the predictor on hand-written reviews."""
    results = predictor.run_batch([encode_document(r["text"]) for r in reviews])
    sent_ok = topic_ok = top_ok = 0
    misses = []
    for review, result in zip(reviews, results):
        sent_ok += result.predictions[0] == review["sentiment"]
        topic_ok += result.predictions[1] == review["topic"]
        top = int(np.argmax(result.sentence_alpha))
        if top in review["opinion"]:
            top_ok += 1
        else:
            misses.append(result.doc.sentences[top])
    n = len(reviews)
    return PlainQuality(n, sent_ok / n, topic_ok / n, top_ok / n, tuple(misses))


def top_words(result: HANResult, k: int = 3) -> list[str]:
    """Returns the k highest-weighted words of the top-attended sentence."""
    top = int(np.argmax(result.sentence_alpha))
    order = np.argsort(-result.word_alpha[top])[:k]
    return [result.doc.words[top][j] for j in order]


def example_csv_bytes(count: int = 200, seed: int = 7) -> bytes:
    """Returns a CSV (text,label) of generated reviews labelled by sentiment: a template for uploads."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["text", "label"])
    for review in generate_reviews(count, seed):
        writer.writerow([review.text, review.sentiment])
    return out.getvalue().encode("utf-8")


def train_reviews(
    cfg: HANConfig = REVIEWS, *, documents: int = 4000, epochs: int = 4, batch_size: int = 32,
    learning_rate: float = 3e-3, seed: int = TRAIN_SEED, progress: bool = False, max_steps: int | None = None,
) -> tuple[TrainState, list[float]]:
    """Returns a HAN trained on generated reviews, and its loss per epoch."""
    reviews = generate_reviews(documents, seed)
    docs = [encode_document(r.text) for r in reviews]
    train = TrainState.create(cfg, seed=seed, learning_rate=learning_rate)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=(len(docs) + batch_size - 1) // batch_size * epochs, desc="han", unit="step")

    def on_step(step, total, loss):
        if bar is not None:
            bar.total = total
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}")

    losses = train_epochs(train, docs, review_labels(reviews), epochs=epochs, batch_size=batch_size,
                          seed=seed, on_step=on_step, max_steps=max_steps)
    if bar is not None:
        bar.close()
    return train, losses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--documents", type=int, default=4000, help="generated training reviews")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=TRAIN_SEED)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke tests)")
    parser.add_argument("--out", type=Path, default=CHECKPOINT, help="checkpoint file (.safetensors)")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    train, losses = train_reviews(
        REVIEWS, documents=args.documents, epochs=args.epochs, batch_size=args.batch,
        learning_rate=args.lr, seed=args.seed, progress=True, max_steps=args.max_steps,
    )
    seconds = time.perf_counter() - start
    meta = {
        "trained_on": f"{args.documents} generated reviews, seed {args.seed}, {args.epochs} epochs, batch {args.batch}",
        "training_seconds": f"{seconds:.0f}",
        "epoch_losses": json.dumps([round(x, 4) for x in losses]),
    }
    save_checkpoint(args.out, train.graphdef, train.state, REVIEWS, meta)
    print(f"epoch losses {[round(x, 4) for x in losses]}; trained in {seconds:.0f} s; wrote {args.out}")
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

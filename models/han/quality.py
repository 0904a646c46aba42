"""Quality of a HAN against known answers: generated reviews (the generator's ground truth) and
hand-written reviews (tests/fixtures, each opinion sentence marked by the person who wrote it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.han.data import encode_document
from models.han.records import HANPredictor, HANResult
from models.han.task import Review

HELD_OUT_SEED = 12345  # the quality test's generated documents; never trained on
PLAIN_REVIEWS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "han_plain_reviews.json"


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

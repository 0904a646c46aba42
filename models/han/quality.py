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
from models.han.spread import sentence_spread
from models.han.task import Review, generate_reviews

HELD_OUT_SEED = 12345  # the quality test's generated documents; never trained on
VALIDATION_SEED = 4242  # the no-opinion rule's calibration documents; never trained on
FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
PLAIN_REVIEWS = FIXTURES / "han_plain_reviews.json"  # the first 20 hand-written reviews (restaurants)
NEW_REVIEWS = FIXTURES / "han_reviews_new.json"  # 48 more, in many domains, written before training
TOPIC_ALIASES = {"food": "quality"}  # the first fixture's topic names -> the heads' names


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
    """Returns the Quality on generated reviews with an opinion (ground truth from the generator).

    Topic: right when the prediction is the topic of one of the review's opinions.
    """
    reviews = [r for r in reviews if r.label_sentences]
    results = predictor.run_batch([encode_document(r.text) for r in reviews])
    sent_ok = topic_ok = top_ok = words_ok = 0
    for review, result in zip(reviews, results):
        assert len(result.doc.sentences) == len(review.sentences), "sentence split differs from the generator's"
        sent_ok += result.predictions[0] == review.sentiment
        topic_ok += result.predictions[1] in review.topics
        top = int(np.argmax(result.sentence_alpha))
        top_ok += top in review.label_sentences
        top3 = np.argsort(-result.word_alpha[top])[:3]
        words_ok += bool(set(top3.tolist()) & set(review.label_words[top]))
    n = len(reviews)
    return Quality(n, sent_ok / n, topic_ok / n, top_ok / n, words_ok / n)


def calibrate_no_opinion(predictor: HANPredictor, count: int = 600) -> tuple[float, float]:
    """Returns (threshold, balanced accuracy): the sentence-α spread at or above which the page
    says "no opinion sentence", chosen on generated reviews of VALIDATION_SEED (never trained on,
    not the quality test's) to best tell reviews without an opinion from those with one."""
    reviews = generate_reviews(count, VALIDATION_SEED)
    spreads = [r.spread for r in predictor.run_batch([encode_document(r.text) for r in reviews])]
    without = np.asarray([s for s, r in zip(spreads, reviews) if not r.label_sentences])
    with_opinion = np.asarray([s for s, r in zip(spreads, reviews) if r.label_sentences])
    candidates = np.unique(np.concatenate([without, with_opinion]))
    cuts = (candidates[1:] + candidates[:-1]) / 2 if len(candidates) > 1 else candidates
    scores = [((without >= c).mean() + (with_opinion < c).mean()) / 2 for c in cuts]
    best = int(np.argmax(scores))
    return float(cuts[best]), float(scores[best])


def top_words(result: HANResult, k: int = 3) -> list[str]:
    """Returns the k highest-weighted words of the top-attended sentence."""
    top = int(np.argmax(result.sentence_alpha))
    order = np.argsort(-result.word_alpha[top])[:k]
    return [result.doc.words[top][j] for j in order]


def says_no_opinion(result: HANResult) -> bool:
    """Returns the page's verdict "no opinion sentence" for a result (False for a model without the rule)."""
    return bool(result.no_opinion)


def print_report(predictor: HANPredictor) -> None:
    """Prints the quality on held-out generated reviews and on both hand-written fixtures."""
    for name, value in review_quality(predictor, generate_reviews(500, HELD_OUT_SEED)).rows():
        print(f"  {name}: {value:.1%}")
    for path in (PLAIN_REVIEWS, NEW_REVIEWS):
        q = hand_written_quality(predictor, load_reviews(path), says_no_opinion)
        print(f"  {path.name}: top sentence is an opinion {q.top_sentence:.0%}, sentiment {q.sentiment:.0%}, "
              f"topic {q.topic:.0%}, no-opinion reviews flagged {q.no_opinion}, false alarms {q.false_alarms:.0%}")
        for miss in q.misses:
            print(f"    missed: {miss}")


@dataclass(frozen=True)
class HandWrittenQuality:
    """Quality on a hand-written fixture (shares in [0, 1]; None where the fixture has no such review).

    top_sentence: the top-attended sentence is an opinion sentence (reviews with one);
    sentiment, topic: head accuracy on reviews with an opinion (topic: any of its opinions' topics);
    no_opinion: reviews without an opinion that the no-opinion rule flags, false_alarms: reviews
    with an opinion that it flags; misses: "review index: top sentence" for each top-sentence miss.
    """

    documents: int
    top_sentence: float
    sentiment: float
    topic: float | None
    no_opinion: float | None
    false_alarms: float
    misses: tuple[str, ...]
    spread_with: tuple[float, ...]  # sentence-α spread of the reviews with an opinion
    spread_without: tuple[float, ...]  # and of those without


def load_reviews(path: Path) -> list[dict]:
    """Returns a hand-written fixture's reviews as dicts: text, sentiment (None: no opinion),
    topics (one per opinion sentence) and opinion (sentence indices)."""
    reviews = json.loads(Path(path).read_text(encoding="utf-8"))["reviews"]
    out = []
    for r in reviews:
        topics = r.get("topics", [r["topic"]] * len(r["opinion"]) if "topic" in r else [])
        out.append({"text": r["text"], "sentiment": r["sentiment"], "opinion": list(r["opinion"]),
                    "topics": [TOPIC_ALIASES.get(t, t) for t in topics]})
    return out


def hand_written_quality(predictor: HANPredictor, reviews: Sequence[dict], says_no_opinion=None) -> HandWrittenQuality:
    """Returns the HandWrittenQuality of a predictor on load_reviews() dicts.

    says_no_opinion(result) -> bool is the page's rule for "no sentence carries an opinion";
    None: the predictor has no such rule (no_opinion and false_alarms are then None and 0).
    """
    results = predictor.run_batch([encode_document(r["text"]) for r in reviews])
    top_ok, sent_ok, topic_ok, flagged_without, flagged_with = [], [], [], [], []
    misses, spread_with, spread_without = [], [], []
    topic_head = len(predictor.cfg.heads) > 1
    for index, (review, result) in enumerate(zip(reviews, results)):
        flag = bool(says_no_opinion(result)) if says_no_opinion else False
        spread = sentence_spread(result.sentence_alpha)
        if not review["opinion"]:
            flagged_without.append(flag)
            spread_without.append(spread)
            continue
        spread_with.append(spread)
        flagged_with.append(flag)
        top = int(np.argmax(result.sentence_alpha))
        top_ok.append(top in review["opinion"])
        if not top_ok[-1]:
            misses.append(f"{index}: {result.doc.sentences[top]}")
        sent_ok.append(result.predictions[0] == review["sentiment"])
        if topic_head:
            topic_ok.append(TOPIC_ALIASES.get(result.predictions[1], result.predictions[1]) in review["topics"])
    return HandWrittenQuality(
        len(reviews), float(np.mean(top_ok)), float(np.mean(sent_ok)), float(np.mean(topic_ok)) if topic_ok else None,
        float(np.mean(flagged_without)) if flagged_without and says_no_opinion else None,
        float(np.mean(flagged_with)) if flagged_with else 0.0, tuple(misses), tuple(spread_with), tuple(spread_without),
    )


REPORT_BARS = {"sentiment accuracy": 0.95, "topic accuracy": 0.90, "top-attended sentence is label-bearing": 0.90,
               "top-3 words of that sentence include a label word": 0.85}  # tests/models/han/test_quality.py's


def report(quick: bool = False) -> str:
    """Returns the committed HAN's quality (Markdown): held-out generated reviews against their bars, both
    hand-written sets, the shortcut probes and the inference time; 1,000 generated reviews (50 with `quick`)."""
    import time

    from models.han.model import CHECKPOINT
    from models.han.probes import probe_markdown, probe_table
    from models.han.records import HANPredictor

    predictor = HANPredictor.from_checkpoint(CHECKPOINT.file)
    reviews = generate_reviews(50 if quick else 1000, HELD_OUT_SEED)
    predictor.run_batch([encode_document(r.text) for r in reviews[:8]])  # compiles outside the timing
    start = time.perf_counter()
    quality = review_quality(predictor, reviews)
    seconds = time.perf_counter() - start
    lines = [f"Checkpoint {CHECKPOINT.file.name}: {predictor.meta.get('trained_on', '?')}, trained in "
             f"{predictor.meta.get('training_seconds', '?')} s; no-opinion threshold {predictor.no_opinion_spread}",
             "", f"| measure | held-out generated with an opinion ({quality.documents}) | bar |", "|---|---|---|"]
    lines += [f"| {name} | {value:.1%} | ≥ {REPORT_BARS[name]:.0%} |" for name, value in quality.rows()]
    lines += ["", "| hand-written set | reviews | top sentence is an opinion | sentiment | topic | no-opinion reviews "
              "flagged | reviews with an opinion flagged |", "|---|---|---|---|---|---|---|"]
    for path in (PLAIN_REVIEWS, NEW_REVIEWS):
        written = load_reviews(path)
        q = hand_written_quality(predictor, written, says_no_opinion if predictor.no_opinion_spread else None)
        with_opinion = sum(bool(r["opinion"]) for r in written)
        flagged = "n/a" if q.no_opinion is None else f"{q.no_opinion:.0%} of {len(written) - with_opinion}"
        topic = "n/a" if q.topic is None else f"{q.topic:.0%}"
        lines.append(f"| {path.name} | {len(written)} | {q.top_sentence:.0%} ({round(q.top_sentence * with_opinion)}/"
                     f"{with_opinion}) | {q.sentiment:.0%} | {topic} | {flagged} | {q.false_alarms:.0%} |")
        lines += [f"|  | | miss {m} | | | | |" for m in q.misses]
    lines += ["", probe_markdown(probe_table(predictor)), "",
              f"Inference: {quality.documents} documents in {seconds:.2f} s ({1000 * seconds / quality.documents:.1f} ms "
              "per document with MiniLM's vectors, batches of 8)"]
    results = predictor.run_batch([encode_document(r["text"]) for r in load_reviews(NEW_REVIEWS)[:5]])
    lines.append("Top-3 words of the top sentence, first five new hand-written reviews: "
                 + "; ".join(", ".join(top_words(r)) for r in results))
    return "\n".join(lines)

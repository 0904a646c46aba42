"""Quality of the committed HAN checkpoint (checkpoints/han/han.safetensors), as measured in docs/models/han.md.

Held-out generated reviews (a seed never trained on); the first 20 hand-written reviews; the
48 written for issue 13 before training (tests/fixtures/han_reviews_new.json); the shortcut
probes (tests/fixtures/han_probes.json). Each bar is the measured figure less about one
document, so a change that costs more than one review fails.
"""

import pytest

from models.han.model import CHECKPOINT
from models.han.probes import probe_table
from models.han.quality import (
    HELD_OUT_SEED,
    NEW_REVIEWS,
    PLAIN_REVIEWS,
    hand_written_quality,
    load_reviews,
    review_quality,
    says_no_opinion,
)
from models.han.records import HANPredictor
from models.han.task import generate_reviews

HELD_OUT = 100


@pytest.fixture(scope="module")
def predictor():
    return HANPredictor.from_checkpoint(CHECKPOINT.file)


def test_checkpoint_is_small_and_loads_strictly():
    assert CHECKPOINT.file.stat().st_size <= 2_000_000
    cfg, _, _, meta = CHECKPOINT.load()
    assert [name for name, _ in cfg.heads] == ["sentiment", "topic"] and cfg.features == "contextual"
    assert "generated reviews" in meta["trained_on"]
    assert 0.5 < meta["no_opinion_spread"] <= 1.0  # the no-opinion rule's measured threshold


def test_held_out_generated_reviews(predictor):
    # measured on 400: sentiment 98.8%, topic 99.4%, top sentence 100%, top-3 words 98.3%
    quality = review_quality(predictor, generate_reviews(HELD_OUT, HELD_OUT_SEED))
    assert quality.sentiment_accuracy >= 0.95
    assert quality.topic_accuracy >= 0.95
    assert quality.top_sentence_label_bearing >= 0.97
    assert quality.top3_words_label_bearing >= 0.95


def test_first_hand_written_reviews(predictor):
    # measured: top sentence 20/20, sentiment 17/20, topic 20/20
    quality = hand_written_quality(predictor, load_reviews(PLAIN_REVIEWS), says_no_opinion)
    assert quality.documents == 20
    assert quality.top_sentence >= 0.95, quality.misses
    assert quality.sentiment >= 0.80
    assert quality.topic >= 0.90
    assert quality.false_alarms <= 0.05


def test_new_hand_written_reviews_nobody_tuned_to(predictor):
    # measured: top sentence 41/43, sentiment 39/43, topic 39/43; no-opinion reviews flagged 4/5,
    # reviews with an opinion flagged 0/43. Goal of issue 13: >= 90% top sentence and sentiment.
    reviews = load_reviews(NEW_REVIEWS)
    quality = hand_written_quality(predictor, reviews, says_no_opinion)
    assert quality.documents == 48 and sum(not r["opinion"] for r in reviews) == 5
    assert quality.top_sentence >= 40 / 43 - 1e-9, quality.misses
    assert quality.sentiment >= 38 / 43 - 1e-9
    assert quality.topic >= 38 / 43 - 1e-9
    assert quality.no_opinion >= 3 / 5 - 1e-9
    assert quality.false_alarms <= 1 / 43 + 1e-9


def test_shortcut_probes(predictor):
    # Before issue 13: colour neutrals took the top sentence in 56% / 79% of documents, and
    # without an opinion the attention put >= 0.5 on one sentence in 88%. Measured after:
    # colour 100% / 100%, no opinion peaked 6% / 4% with spread 0.94 / 0.96.
    table = probe_table(predictor)
    for column in ("generated", "hand_written"):
        rows = {row.probe: row for row in table[column]}
        assert rows["neutral: colour"].top_sentence >= 0.95
        assert rows["neutral: object"].top_sentence >= 0.95
        assert rows["no opinion"].peaked <= 0.10 and rows["no opinion"].spread >= 0.90
        assert min(rows[f"position {p}"].top_sentence for p in range(1, 5)) >= 0.84
        assert rows["negation"].sentiment >= 0.83

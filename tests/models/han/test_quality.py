"""Quality of the committed HAN checkpoint (checkpoints/han/han.safetensors).

Held-out generated reviews (a seed never trained on): accuracy >= 95% on both heads; the
top-attended sentence carries the labels >= 85%; the top three words of that sentence
include a label-bearing word >= 85%. Hand-written reviews (tests/fixtures): the
top-attended sentence is the opinion sentence.
"""

import pytest

from models.han.checkpoint import CHECKPOINT, load_checkpoint
from models.han.quality import HELD_OUT_SEED, load_plain_reviews, plain_quality, review_quality
from models.han.records import HANPredictor
from models.han.task import generate_reviews

HELD_OUT = 400
PLAIN_BAR = 0.95  # measured 19/20 on the committed checkpoint (docs/models/han.md); one miss allowed


@pytest.fixture(scope="module")
def predictor():
    return HANPredictor.from_checkpoint(CHECKPOINT)


def test_checkpoint_is_small_and_loads_strictly():
    assert CHECKPOINT.stat().st_size <= 5_000_000
    cfg, _, _, meta = load_checkpoint(CHECKPOINT)
    assert [name for name, _ in cfg.heads] == ["sentiment", "topic"]
    assert "generated reviews" in meta["trained_on"]


def test_held_out_generated_reviews(predictor):
    quality = review_quality(predictor, generate_reviews(HELD_OUT, HELD_OUT_SEED))
    assert quality.sentiment_accuracy >= 0.95
    assert quality.topic_accuracy >= 0.95
    assert quality.top_sentence_label_bearing >= 0.85
    assert quality.top3_words_label_bearing >= 0.85


def test_hand_written_reviews_top_sentence_is_the_opinion(predictor):
    quality = plain_quality(predictor, load_plain_reviews())
    assert quality.documents == 20
    assert quality.top_sentence_is_opinion >= PLAIN_BAR, quality.misses

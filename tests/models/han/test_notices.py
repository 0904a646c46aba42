"""What the HAN page says beside the figure when no sentence stands out (models/han/records.py).

Even sentence attention has two readings: the review has no opinion (trained towards even attention
and a 50/50 sentiment), or several sentences judge alike (even attention, confident sentiment). Only
the first is "no opinion"; the reviews below were written for this test, not taken from a fixture.
"""

import numpy as np

from models.han import records
from models.registry import get_mechanism

HAN = get_mechanism("han")
NO_OPINION = ("The kettle is grey. It has a blue light and a metal lid. We keep it next to the fridge. "
              "I bought it on a Tuesday.")


def reading(text: str) -> dict:
    return HAN.build({"text": text}).meta


def test_every_sentence_judging_is_not_called_a_review_without_an_opinion():
    for text in ("The food was delicious and the portions generous. Sadly the waiter ignored us for half an hour. "
                 "The bill was fair.",
                 "Great phone. Terrible battery. Nice screen."):
        meta = reading(text)
        assert meta["even_attention"] and meta["no_opinion"] is False, text
        assert meta["attention_notice"].startswith("No sentence stands out")
        assert "yet the prediction is confident" in meta["attention_notice"]
        assert "found no opinion sentence" not in meta["attention_notice"]


def test_a_review_without_an_opinion_is_still_said_to_have_none():
    meta = reading(NO_OPINION)
    assert meta["even_attention"] and meta["no_opinion"] is True
    assert "found no opinion sentence" in meta["attention_notice"]


def test_one_opinion_among_neutral_sentences_needs_no_notice():
    meta = reading("We parked behind the station. The food was delicious. The bill came to 40 euros.")
    assert not meta["even_attention"] and not meta["no_opinion"] and meta["attention_notice"] == ""


def test_the_guess_line_decides_whether_even_attention_means_no_opinion(monkeypatch):
    # The same reading with records.GUESS just above, then just below, the sentiment head's confidence:
    # even attention is "no opinion" exactly when the confidence is under the line.
    predictor = records.default_predictor()
    result = predictor.analyse(NO_OPINION)
    assert result.even
    confidence = float(np.max(result.probabilities[records.sentiment_head(result.heads)]))
    assert 0.5 < confidence < records.GUESS  # close to a guess, as the review was trained to read
    monkeypatch.setattr(records, "GUESS", confidence + 1e-4)
    assert predictor.analyse(NO_OPINION).no_opinion is True
    monkeypatch.setattr(records, "GUESS", confidence - 1e-4)
    assert predictor.analyse(NO_OPINION).no_opinion is False

"""The induction record builders on the committed checkpoint: shapes, rows, scores, predictions,
snapshots, typed text and the curves' record."""

import numpy as np
import pytest

from models.induction import task
from models.induction.records import (
    induction_head,
    prediction_rows,
    snapshot_steps,
    training_record,
)
from models.record import InputError
from models.registry import get_mechanism

MECHANISM = get_mechanism("induction")


def test_a_generated_sequence_gives_every_head_with_scores_and_predictions():
    record = MECHANISM.build({"seed": 4, "length": 63})
    t = 63  # [BOS] + r + r with r of (64 − 1) // 2 = 31 tokens
    assert record.axes == ("layer", "head", "query", "key") and record.weights.shape == (2, 4, t, t)
    ids = record.extras["tokens"]
    np.testing.assert_array_equal(ids, task.generated_sequence(4, 64))
    assert record.query_labels == record.key_labels == task.labels_of(ids) and record.query_labels[0] == "[BOS]"
    np.testing.assert_allclose(record.weights.sum(-1), 1.0, atol=1e-5)
    assert np.all(record.weights[..., np.triu(np.ones((t, t), bool), 1)] == 0.0)
    meta = record.meta
    assert set(meta["scores"]) == {"previous-token", "duplicate-token", "induction", "prefix-matching"}
    assert np.asarray(meta["scores"]["prefix-matching"]).shape == (2, 4)
    assert meta["source"] == "generated" and meta["half"] == 31 and meta["final"]
    assert meta["random_baseline"] == pytest.approx(1 / t)
    # The second copy is predicted by copying: almost every prediction there is the next token of r.
    predicted = record.extras["predicted"]
    assert np.mean(predicted[32:-1] == ids[33:]) > 0.8
    layer, head = induction_head()
    assert meta["induction_head"] == [layer, head]
    np.testing.assert_array_equal(meta["copies_from"], record.weights[layer, head].argmax(-1))


def test_typed_text_is_continued_by_copying():
    record = MECHANISM.build({"text": "e cat w sky n bee h jam t map r car e cat w sky n bee h jam"})
    assert record.meta["source"] == "text" and "prefix-matching" not in record.meta["scores"]
    assert record.query_labels[0] == "[BOS]" and record.weights.shape[-1] == 21
    assert record.meta["predictions"][-1] == "t" and record.meta["prediction_probabilities"][-1] > 0.3  # measured 0.47
    rows = prediction_rows(record)
    assert len(rows) == 21 and rows[-1]["predicted next"] == "t" and rows[-1]["copied"] == "yes"
    assert rows[-1]["induction head reads"] == "9: t"  # the token after the earlier "jam"
    short = MECHANISM.build({"text": "a b c d a b c"})  # a short typed repeat is continued too
    assert short.meta["predictions"][-3:] == ["b", "c", "d"] and short.meta["copied"][-1]
    # Before the phase change the same sequence is not continued.
    untrained = MECHANISM.build({"text": "e cat w sky n bee h jam t map r car e cat w sky n bee h jam", "step": 0})
    assert untrained.meta["prediction_probabilities"][-1] < 0.1


def test_bad_text_gets_one_line_and_long_text_a_notice():
    with pytest.raises(InputError, match="'zebra'"):
        MECHANISM.build({"text": "a b zebra"})
    long = MECHANISM.build({"text": " ".join(["a", "b"] * 40)})
    assert long.weights.shape[-1] == 64 and "only the first 63 tokens" in long.meta["notices"][0]
    blank = MECHANISM.build({"text": "   ", "length": 9})
    assert blank.meta["source"] == "generated" and blank.weights.shape[-1] == 9


def test_snapshots_run_and_unknown_steps_are_refused():
    steps = snapshot_steps()
    assert steps[0] == 0 and 15 <= len(steps) <= 21
    first = MECHANISM.build({"seed": 1, "step": 0})
    final = MECHANISM.build({"seed": 1})
    last = MECHANISM.build({"seed": 1, "step": steps[-1]})
    np.testing.assert_array_equal(last.weights, final.weights)
    assert first.meta["step"] == 0 and not first.meta["final"] and not np.allclose(first.weights, final.weights)
    missing = next(s for s in range(1, 100) if s not in steps)
    with pytest.raises(InputError, match=f"no snapshot at step {missing}"):
        MECHANISM.build({"seed": 1, "step": missing})


def test_the_curves_record_is_the_training_log():
    record = training_record()
    steps = record.extras["steps"]
    assert record.axes == ("score", "head", "step") and record.weights.shape == (3, 8, len(steps))
    assert record.query_labels == ("previous-token", "duplicate-token", "prefix-matching")
    assert len(record.key_labels) == 8 * len(steps) and record.key_labels[0] == "L0H0 @ 0"
    assert np.all(np.diff(steps) > 0) and set(record.extras["snapshot_steps"]) <= set(steps.tolist())
    assert np.isnan(record.extras["loss"][0]) and np.all(np.isfinite(record.extras["loss"][1:]))
    assert np.all((record.weights >= 0) & (record.weights <= 1))

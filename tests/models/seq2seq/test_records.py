"""The seq2seq record builders on the committed checkpoints: labels, windows, snapshots, batches."""

import numpy as np
import pytest

from models.record import InputError
from models.registry import get_mechanism
from models.seq2seq.model import LOCAL_VARIANTS, VARIANTS
from models.seq2seq.records import decode_batch, random_example, snapshot_steps, warm_start_of

TEXT = "9 May 2018"


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_record_per_variant_reads_output_by_input(variant):
    record = get_mechanism(variant).build({"text": TEXT})
    assert record.mechanism == variant and record.axes == ("query", "key")
    assert "".join(record.query_labels) == record.meta["output"] == "2018-05-09"
    assert record.key_labels == tuple(TEXT) and record.weights.shape == (10, len(TEXT))
    assert np.all(record.weights >= 0) and np.all(record.weights.sum(1) <= 1 + 1e-5)
    if variant in LOCAL_VARIANTS:
        assert record.extras["window_center"].shape == (10,) and int(record.extras["window_half_width"]) == 3
        assert record.meta["window_half_width"] == 3
    else:
        assert "window_center" not in record.extras
        np.testing.assert_allclose(record.weights.sum(1), 1.0, rtol=1e-5)


def test_the_window_is_applied_at_inference():
    narrow = get_mechanism("local-m").build({"text": TEXT, "window": 1})
    wide = get_mechanism("local-m").build({"text": TEXT, "window": 8})
    distance = np.abs(np.arange(len(TEXT))[None, :] - narrow.extras["window_center"][:, None])
    assert np.all(narrow.weights[distance > 1] == 0)
    assert (wide.weights > 0).sum() > (narrow.weights > 0).sum()


def test_snapshots_start_untrained_or_warm_and_end_at_the_final_weights():
    steps = snapshot_steps("bahdanau")
    assert steps[0] == 0 and len(steps) >= 8 and steps == sorted(steps)
    final = get_mechanism("bahdanau").build({"text": TEXT})
    last = get_mechanism("bahdanau").build({"text": TEXT, "step": steps[-1]})
    np.testing.assert_array_equal(last.weights, final.weights)
    first = get_mechanism("bahdanau").build({"text": TEXT, "step": 0})
    assert first.meta["snapshot_step"] == 0 and not np.allclose(first.weights, final.weights)
    assert warm_start_of("bahdanau") is None and warm_start_of("local-p") == "luong-general"
    with pytest.raises(InputError, match="no snapshot at step 7"):
        get_mechanism("bahdanau").build({"text": TEXT, "step": 7})


def test_a_batch_equals_the_single_builds_and_keeps_the_order():
    texts = ["2018/05/09", "May 9th 2018", "9.5.2018"]
    mechanism = get_mechanism("luong-general")
    batch = mechanism.build_many([{"text": t} for t in texts])
    for text, record in zip(texts, batch):
        single = mechanism.build({"text": text})
        assert record.key_labels == tuple(text)
        np.testing.assert_allclose(record.weights, single.weights, atol=2e-5)
    decoded = decode_batch("luong-general", texts)
    assert [d.output for d in decoded] == ["2018-05-09"] * 3


def test_notices_for_cut_unknown_and_impossible_input():
    record = get_mechanism("bahdanau").build({"text": "☃ 31 February 2018 " + "x" * 40})
    notices = " ".join(record.meta["notices"])
    assert "capped at 40 characters" in notices and "'☃'" in notices
    assert record.meta["truncated"] and record.meta["unknown_characters"] == ["☃"]
    impossible = get_mechanism("bahdanau").build({"text": "31 February 2018"})
    assert not impossible.meta["valid_date"] or impossible.meta["output"] != "2018-02-31"


def test_random_example_is_seeded():
    assert random_example(5) == random_example(5) and random_example(5) != random_example(6)


def test_prose_gets_the_outside_notice():
    prose = get_mechanism("bahdanau").build({"text": "The cat sat on the mat"})
    assert any("does not look like a date" in n for n in prose.meta["notices"])
    date = get_mechanism("bahdanau").build({"text": TEXT})
    assert not any("does not look like a date" in n for n in date.meta["notices"])

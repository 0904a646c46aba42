"""The registry's three encoder–decoder records on the committed checkpoint, the page's record builders, the CLI."""

import json

import numpy as np
import pytest

from cli import main
from models.encdec.quality import held_out_examples
from models.encdec.records import (
    best_cross_head,
    decoding_step_record,
    encoder_rollout_record,
    head_record,
    snapshot_steps,
)
from models.record import InputError
from models.registry import get_mechanism

TEXT = "9 May 2018"


@pytest.fixture(scope="module")
def records():
    return {kind: get_mechanism(f"transformer-{kind}").build({"text": TEXT}) for kind in ("encoder", "decoder", "cross")}


def test_three_records_of_one_decoding(records):
    enc, dec, cross = records["encoder"], records["decoder"], records["cross"]
    for record in records.values():
        assert record.axes == ("layer", "head", "query", "key") and record.weights.dtype == np.float32
        assert record.weights.shape[:2] == (2, 4)
        np.testing.assert_allclose(record.weights.sum(-1), 1.0, atol=1e-5)
        assert record.meta["output"] == "2018-05-09" and record.meta["notices"] == []
    assert enc.weights.shape[2:] == (len(TEXT), len(TEXT)) and enc.query_labels == enc.key_labels == tuple(TEXT)
    assert dec.weights.shape[2:] == (10, 10) and "".join(dec.query_labels) == "2018-05-09"
    assert dec.key_labels == ("<s>", *"2018-05-0")
    assert np.all(dec.weights[..., np.triu_indices(10, k=1)[0], np.triu_indices(10, k=1)[1]] == 0.0)
    assert cross.weights.shape[2:] == (10, len(TEXT)) and cross.key_labels == tuple(TEXT)
    assert cross.mechanism == "transformer-cross" and cross.meta["attention"] == "cross"


def test_notices_truncation_and_unknown_characters():
    cross = get_mechanism("transformer-cross")
    long = cross.build({"text": "9 May 2018 " * 6})
    assert long.weights.shape[-1] == 40 and any("capped at 40" in n for n in long.meta["notices"])
    odd = cross.build({"text": "9 May 2018 ☃"})
    assert odd.key_labels[-1] == "<unk>" and any("☃" in n for n in odd.meta["notices"])
    prose = cross.build({"text": "hello there"})
    assert any("does not look like a date" in n for n in prose.meta["notices"])
    with pytest.raises(InputError, match="empty"):
        cross.build({"text": "   "})
    with pytest.raises(InputError, match="no snapshot at step 7"):
        cross.build({"text": TEXT, "step": 7})


def test_snapshots_change_the_weights_and_step_0_is_untrained(records):
    steps = snapshot_steps()
    assert steps[0] == 0 and 9 <= len(steps) <= 11
    first = get_mechanism("transformer-cross").build({"text": TEXT, "step": 0})
    assert first.meta["snapshot_step"] == 0 and first.meta["output"] != "2018-05-09"
    final = get_mechanism("transformer-cross").build({"text": TEXT, "step": steps[-1]})
    np.testing.assert_allclose(final.weights, records["cross"].weights, atol=1e-6)


def test_batch_builder_equals_one_at_a_time(records):
    # 20 inputs: the 1,024-row batch bucket, which the quality test compiles anyway.
    examples = held_out_examples(18)
    texts = [TEXT, "2018/05/09"] + [e.source for e in examples]
    batch = get_mechanism("transformer-cross").build_many([{"text": t} for t in texts])
    assert [r.meta["output"] for r in batch[:2]] == ["2018-05-09"] * 2
    assert sum(r.meta["output"] == e.target for r, e in zip(batch[2:], examples)) >= 17
    np.testing.assert_allclose(batch[0].weights, records["cross"].weights, atol=1e-5)
    for record, example in zip(batch[2:], examples):
        assert record.weights.shape == (2, 4, 10, len(example.source))


def test_figure_records(records):
    one = head_record(records["cross"], 1, 2)
    assert one.axes == ("query", "key") and np.array_equal(one.weights, records["cross"].weights[1, 2])
    step = decoding_step_record(records["decoder"], 3)
    assert step.weights.shape == (8, 4) and step.key_labels == ("<s>", "2", "0", "1")
    np.testing.assert_array_equal(step.weights[6], records["decoder"].weights[1, 2, 3, :4])
    assert step.meta["writing"] == "8" and step.query_labels[5] == "layer 1 · head 1"
    cross_step = decoding_step_record(records["cross"], 9)
    assert cross_step.weights.shape == (8, len(TEXT))
    with pytest.raises(InputError):
        decoding_step_record(records["cross"], 10)
    layer, head = best_cross_head()
    assert 0 <= layer < 2 and 0 <= head < 4


@pytest.mark.parametrize("fusion", ["mean", "max"])
def test_encoder_rollout_rows_sum_to_one(fusion, records):
    from models.heads.rollout import attention_rollout

    rolled = encoder_rollout_record(get_mechanism("transformer-encoder"), TEXT, fusion=fusion)
    assert rolled.axes == ("query", "key") and rolled.weights.shape == (len(TEXT), len(TEXT))
    np.testing.assert_allclose(rolled.weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(rolled.weights, attention_rollout(records["encoder"].weights, fusion), atol=1e-6)
    assert rolled.meta["fusion"] == fusion and rolled.meta["output"] == "2018-05-09"
    flow = encoder_rollout_record(get_mechanism("transformer-encoder"), TEXT, method="flow", fusion=fusion)
    np.testing.assert_allclose(flow.weights.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("kind, shape", [("encoder", (2, 4, 10, 10)), ("decoder", (2, 4, 10, 10)),
                                         ("cross", (2, 4, 10, 10))])
def test_cli_exports_each_record(kind, shape, tmp_path):
    out = tmp_path / "f.npz"
    assert main(["export", "--mechanism", f"transformer-{kind}", "--text", TEXT, "--format", "npz",
                 "--out", str(out)]) == 0
    data = np.load(out)
    assert data["weights"].shape == shape and data["weights"].dtype == np.float32
    assert list(data["axes"]) == ["layer", "head", "query", "key"]
    meta = json.loads(str(data["meta_json"]))
    assert meta["output"] == "2018-05-09" and meta["attention"] == kind
    assert len(data["query_labels"]) == shape[2] and len(data["key_labels"]) == shape[3]

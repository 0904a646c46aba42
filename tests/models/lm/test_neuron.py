"""The neuron view of a decoder LM: q ⊙ k and its scaled sum against numpy, the softmax against the exported map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.lm.neuron import neuron_parts
from models.lm.records import load_runner
from models.record import InputError
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
TEXT = "The cat sat on the mat. The cat sat on the"


@pytest.fixture(scope="module", params=["trained", "llama", "mistral", "gpt2_untied_scaled"])
def runner(request):
    return load_runner(None if request.param == "trained" else FIXTURES / request.param)


def test_softmax_equals_the_exported_map_row(runner):
    record = runner.attention(TEXT)
    ids = record.extras["input_ids"]
    cfg = runner.config
    t = len(ids)
    for layer in range(cfg.num_layers):
        for head in range(cfg.num_heads):
            for query in (0, t // 2, t - 1):
                parts = neuron_parts(runner.lm, ids, layer, head, query)
                # float32: the neuron view sums q·k in its own order, so sharp maps differ by a few ulps
                np.testing.assert_allclose(parts.weights, record.weights[layer, head, query], rtol=1e-5, atol=1e-6)


def test_product_and_scores_against_numpy(runner):
    ids = runner.encode(TEXT).ids
    cfg = runner.config
    parts = neuron_parts(runner.lm, ids, cfg.num_layers - 1, cfg.num_heads - 1, -1)
    assert parts.q.shape == (cfg.head_dim,) and parts.k.shape == (len(ids), cfg.head_dim)
    assert parts.kv_head == (cfg.num_heads - 1) // (cfg.num_heads // cfg.num_kv_heads)
    q, k = parts.q.astype(np.float64), parts.k.astype(np.float64)
    np.testing.assert_allclose(parts.product, q[None] * k, rtol=1e-6, atol=1e-7)
    scale = 1 / np.sqrt(cfg.head_dim) / (cfg.num_layers if cfg.scale_attn_by_inverse_layer_idx else 1)
    assert parts.scale == pytest.approx(scale)
    np.testing.assert_allclose(parts.scores, (q[None] * k).sum(-1) * scale, rtol=1e-5, atol=1e-6)
    shown = np.where(parts.visible, parts.scores.astype(np.float64), -np.inf)
    np.testing.assert_allclose(parts.weights, np.exp(shown - shown.max()) / np.exp(shown - shown.max()).sum(), atol=1e-6)


def test_a_query_sees_only_earlier_keys_and_its_window():
    runner = load_runner(FIXTURES / "mistral")  # sliding window 16
    ids = runner.encode(TEXT + " and the dog sat on the rug by the door").ids
    assert len(ids) > 20
    parts = neuron_parts(runner.lm, ids, 0, 0, 20)
    assert parts.visible.tolist() == [5 <= j <= 20 for j in range(len(ids))]
    assert np.all(parts.weights[~parts.visible] == 0)


def test_the_record():
    record = get_mechanism("lm-neuron").build({"text": TEXT, "model_dir": str(FIXTURES / "llama"), "layer": 1, "head": 5,
                                  "position": 3})
    assert record.mechanism == "lm-neuron" and record.axes == ("key",)
    assert record.meta["kv_head"] == 1 and record.meta["query"] == 3
    assert record.weights.shape == (len(record.key_labels),) and record.extras["product"].shape[1] == 4
    assert record.query_labels == (record.key_labels[3],)


@pytest.mark.parametrize("layer, head, query, message", [
    (2, 0, -1, "layer must be a whole number from 0 to 1 (or -1 for the last); got 2"),
    (0, 8, -1, "head must be a whole number from 0 to 7 (or -1 for the last); got 8"),
    (0, 0, 400, "query position must be a whole number from 0 to"),
])
def test_bad_positions_are_one_line(layer, head, query, message):
    runner = load_runner(FIXTURES / "llama")
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        neuron_parts(runner.lm, runner.encode(TEXT).ids, layer, head, query)

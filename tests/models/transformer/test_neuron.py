"""The neuron view of MiniLM: q ⊙ k and its scaled sum against numpy, the softmax against the exported map."""

from __future__ import annotations

import numpy as np
import pytest

from models.record import InputError
from models.transformer import records as sa
from models.transformer.neuron import neuron_parts
from tests.models.transformer.tiny_bert import make_tiny_bert

TEXT = "The cat sat on the mat, and the dog sat on the rug."


@pytest.fixture(scope="module", params=["minilm", "tiny"])
def runner(request, tmp_path_factory):
    if request.param == "minilm":
        return sa.shared_runner(None)
    return sa.load_runner(str(make_tiny_bert(tmp_path_factory.mktemp("tiny_neuron"))))


def test_softmax_equals_the_exported_map_row(runner):
    record = runner.attention(TEXT)
    t = len(record.query_labels)
    cfg = runner.config
    for layer in range(cfg.num_hidden_layers):
        for head in range(cfg.num_attention_heads):
            for query in (0, t // 2, t - 1):
                parts = neuron_parts(runner, TEXT, layer, head, query)
                np.testing.assert_allclose(parts.weights, record.weights[layer, head, query], atol=1e-6)


def test_product_and_scores_against_numpy(runner):
    parts = neuron_parts(runner, TEXT, -1, 1, 2)
    d = runner.config.hidden_size // runner.config.num_attention_heads
    q, k = parts.q.astype(np.float64), parts.k.astype(np.float64)
    assert q.shape == (d,) and k.shape[1] == d
    np.testing.assert_allclose(parts.product, q[None] * k, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(parts.scores, (q[None] * k).sum(-1) / np.sqrt(d), rtol=1e-5, atol=1e-6)
    e = np.exp(parts.scores - parts.scores.max())
    np.testing.assert_allclose(parts.weights, e / e.sum(), atol=1e-7)
    assert parts.visible.all() and parts.kv_head == 1


def test_a_head_outside_the_model_is_one_line(runner):
    with pytest.raises(InputError, match=r"^head must be a whole number from 0 to"):
        neuron_parts(runner, TEXT, 0, 99, 0)

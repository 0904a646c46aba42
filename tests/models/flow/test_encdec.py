"""The date Transformer's graph (models/flow/encdec.py) on the committed model: the cross-attention step against
a numpy oracle, the parts summing back to the decoder's stream, and the route reaching the source."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from models.encdec.forward import feed_forward
from models.encdec.model import LENGTH_BUCKETS, batch_rows, pad_batch
from models.encdec.records import weights_at
from models.flow.encdec import flow, graphs_of
from models.flow.records import encdec_flow_record
from models.seq2seq import task as dates

TEXT = "9 May 2018"


@pytest.fixture(scope="module")
def run():
    graphdef, params = weights_at(None)
    source = dates.encode_source(TEXT)
    src, lengths = pad_batch([source.ids], LENGTH_BUCKETS[-1], batch_rows(1))
    out = flow(graphdef, params, src, lengths, parts=True)
    seen = jax.tree.map(np.asarray, out.pop("captures"))
    from flax import nnx

    return nnx.merge(graphdef, params), len(source.ids), out, seen


def weights(parts: np.ndarray, whole: np.ndarray) -> np.ndarray:
    raw = np.maximum(0, np.abs(whole).sum() - np.abs(whole - parts).sum(-1))
    return raw / raw.sum()


def test_cross_step_matches_the_oracle_and_the_parts_sum_to_the_stream(run):
    model, n, out, seen = run
    encoder, decoder = graphs_of(out, n)
    dec, cross = seen["decoder"], seen["cross"]
    for layer_index, layer in enumerate(model.decoder):
        y = dec["residual"][layer_index][0].astype(np.float64)
        blocks = []
        for block, kind in ((layer.self_attention, dec), (layer.cross_attention, cross)):
            w_o = np.asarray(block.w_o[...], np.float64).reshape(4, -1, y.shape[-1])
            alpha, v = kind["maps"][layer_index][0], kind["values"][layer_index][0]
            blocks.append((alpha[..., None] * np.einsum("hsd,hde->hse", v, w_o)[:, None], np.asarray(block.b_o[...])))
        (self_parts, self_bias), (cross_parts, cross_bias) = blocks
        mid = y + self_parts.sum((0, 2)) + self_bias
        crossed = mid + cross_parts.sum((0, 2)) + cross_bias
        after = crossed + np.asarray(feed_forward(layer.feed_forward, layer.norm_3(crossed)))
        np.testing.assert_allclose(after, dec["residual"][layer_index + 1][0], atol=1e-5)
        for i in range(crossed.shape[0]):
            parts = np.concatenate([cross_parts[:, i, :n].reshape(-1, y.shape[-1]), mid[i][None]])
            expected = weights(parts, crossed[i])
            got = np.append(decoder.cross_heads[layer_index, :, i].ravel(), decoder.residual_cross[layer_index, i])
            np.testing.assert_allclose(got, expected, atol=2e-5)
    for graph in (encoder, decoder):
        np.testing.assert_allclose(graph.heads.sum((1, 3)) + graph.residual_attention, 1.0, atol=1e-5)
        np.testing.assert_allclose(graph.ffn + graph.residual_ffn, 1.0, atol=1e-5)
    np.testing.assert_allclose(decoder.cross_heads.sum((1, 3)) + decoder.residual_cross, 1.0, atol=1e-5)


def test_the_route_from_the_day_reaches_its_digit():
    record = encdec_flow_record(None, {"text": TEXT, "threshold": 0.04, "position": -1})  # "9" of 2018-05-09
    assert record.meta["output"] == "2018-05-09" and record.weights.shape == (2, 10, len(TEXT))
    memory = record.extras["route_memory"]
    assert memory[0] and record.key_labels[0] == "9"
    encoder_start = record.extras["encoder_route_nodes"][-1]
    np.testing.assert_array_equal(encoder_start, memory)
    everything = encdec_flow_record(None, {"text": TEXT, "threshold": 0.0, "position": 0})
    assert everything.extras["route_memory"].all() and everything.extras["encoder_route_nodes"].all()

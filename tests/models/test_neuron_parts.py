"""The neuron view's shared arithmetic (models/neuron.py): q ⊙ k, the scaled scores, the softmax over the visible keys."""

import numpy as np
import pytest

from models.neuron import NeuronParts, neuron_index, query_key_parts
from models.record import InputError


def test_the_parts_are_the_product_its_scaled_sum_and_the_softmax_over_the_visible_keys():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=4).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    visible = np.array([True, True, False, True, False])
    parts = query_key_parts(q, k, 0.5, visible, kv_head=2)
    scores = (k @ q) * 0.5
    expected = np.where(visible, np.exp(scores - scores[visible].max()), 0.0)
    assert isinstance(parts, NeuronParts) and parts.kv_head == 2 and parts.scale == 0.5
    np.testing.assert_allclose(parts.product, q[None] * k, rtol=1e-6)
    np.testing.assert_allclose(parts.scores, scores, rtol=1e-5)  # before the mask
    np.testing.assert_allclose(parts.weights, expected / expected.sum(), rtol=1e-5, atol=1e-7)
    assert parts.weights[~visible].tolist() == [0.0, 0.0]
    assert {a.dtype for a in (parts.product, parts.scores, parts.weights)} == {np.dtype(np.float32)}


@pytest.mark.parametrize(("value", "index"), [(0, 0), (2, 2), (-1, 2), (np.int64(-3), 0)])
def test_an_index_counts_from_the_end_when_negative(value, index):
    assert neuron_index("layer", value, 3) == index


@pytest.mark.parametrize("value", [3, -4, True, 1.0, "1", None])
def test_an_index_outside_the_model_is_one_line_of_input_error(value):
    with pytest.raises(InputError, match=r"^layer must be a whole number from 0 to 2 \(or -1 for the last\)"):
        neuron_index("layer", value, 3)

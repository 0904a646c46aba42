"""The BERT module's pure maths: the additive-bias softmax against the attention core's masked_softmax."""

import numpy as np
import pytest

from models.attention import masked_softmax
from models.transformer.model import BertConfig, bias_softmax, key_bias


def test_bias_softmax_equals_masked_softmax_with_exact_zeros_on_padding():
    rng = np.random.default_rng(0)
    scores = (rng.standard_normal((3, 2, 5, 7)) * 30).astype(np.float32)  # large scores: no overflow
    lengths = np.array([7, 3, 1])
    mask = np.arange(7)[None, :] < lengths[:, None]  # [B, T]
    ours = np.asarray(bias_softmax(scores, key_bias(mask)))
    expected = np.asarray(masked_softmax(scores, mask[:, None, None, :]))
    np.testing.assert_allclose(ours, expected, atol=1e-6)
    assert (ours[1, :, :, 3:] == 0).all() and (ours[2, :, :, 1:] == 0).all()
    np.testing.assert_allclose(ours[2, :, :, 0], 1.0)


def test_numpy_oracle_for_softmax():
    scores = np.array([[[[1.0, 2.0, 3.0]]]], dtype=np.float32)
    e = np.exp(scores - 3.0)
    np.testing.assert_allclose(bias_softmax(scores, key_bias(np.ones((1, 3), bool))), e / e.sum(), rtol=1e-6)


def test_config_keeps_only_known_fields_and_checks_heads():
    cfg = BertConfig.from_dict({"hidden_size": 8, "num_attention_heads": 2, "architectures": ["BertModel"]})
    assert cfg.head_dim == 4 and cfg.num_hidden_layers == 6
    with pytest.raises(ValueError, match="not divisible"):
        BertConfig(hidden_size=10, num_attention_heads=3)
    with pytest.raises(ValueError, match="hidden_act"):
        BertConfig(hidden_act="swish")

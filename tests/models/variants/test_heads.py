"""MHA, MQA, GQA and MLA against their numpy oracles; MLA's cache is its latent, and absorbing W_uk into the
query gives the same weights and output."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.variants import heads, positions
from models.variants.records import mla_weights
from tests.models.variants import oracle

RNG = np.random.default_rng(0)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([(4, 4), (4, 2), (4, 1), (6, 3), (6, 2), (8, 4)]), st.integers(0, 2**16))
def test_grouped_query_attention_equals_head_by_head_oracle(shape, seed):
    num_heads, kv_heads = shape  # (H, H): MHA; (H, 1): MQA; the rest: GQA with G = H / K
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((num_heads, 5, 4)).astype(np.float32)
    k = rng.standard_normal((kv_heads, 7, 4)).astype(np.float32)
    v = rng.standard_normal((kv_heads, 7, 3)).astype(np.float32)
    out, weights = heads.grouped_query_attention(q, k, v)
    want_out, want_weights = oracle.grouped(q, k, v)
    np.testing.assert_allclose(weights, want_weights, atol=2e-6)
    np.testing.assert_allclose(out, want_out, atol=2e-6)


def test_grouped_query_attention_masks_and_batches():
    q = RNG.standard_normal((2, 4, 5, 4)).astype(np.float32)
    k = RNG.standard_normal((2, 2, 5, 4)).astype(np.float32)
    v = RNG.standard_normal((2, 2, 5, 3)).astype(np.float32)
    mask = np.tril(np.ones((5, 5), bool))
    _, weights = heads.grouped_query_attention(q, k, v, mask)
    for b in range(2):
        for h in range(4):
            _, want = oracle.attention(q[b, h], k[b, h // 2], v[b, h // 2], mask)
            np.testing.assert_allclose(weights[b, h], want, atol=2e-6)
    with pytest.raises(ValueError, match="do not divide"):
        heads.grouped_query_attention(q[:, :3], k, v)


def test_kv_cache_bytes_shrink_with_fewer_kv_heads():
    assert heads.kv_cache_bytes(8, 64) == 8 * 2 * 64 * 4
    assert heads.kv_cache_bytes(1, 64) * 8 == heads.kv_cache_bytes(8, 64)


def _mla_case(seed: int = 1, t: int = 3, s: int = 6):
    rng = np.random.default_rng(seed)
    w = mla_weights(seed)
    x_q = rng.standard_normal((t, 4)).astype(np.float32)
    x_kv = rng.standard_normal((s, 4)).astype(np.float32)
    inv_freq = positions.rope_inverse_frequencies(2, base=10.0)
    q_pos, k_pos = np.arange(s - t, s), np.arange(s)
    return w, x_q, x_kv, q_pos, k_pos, inv_freq


def test_mla_equals_oracle_and_the_absorbed_form_gives_the_same_scores():
    w, x_q, x_kv, q_pos, k_pos, inv_freq = _mla_case()
    cache = heads.mla_cache(x_kv, w, positions.rope_tables(k_pos, inv_freq))
    rope_q = positions.rope_tables(q_pos, inv_freq)
    out, weights = heads.mla_attention(x_q, cache, w, rope_q)
    want_out, want_weights = oracle.mla(x_q, x_kv, w, q_pos, k_pos, inv_freq)
    np.testing.assert_allclose(weights, want_weights, atol=2e-6)
    np.testing.assert_allclose(out, want_out, atol=2e-6)
    absorbed_out, absorbed = heads.mla_attention(x_q, cache, w, rope_q, absorbed=True)
    np.testing.assert_allclose(absorbed, weights, atol=1e-6)
    np.testing.assert_allclose(absorbed_out, out, atol=1e-6)


def test_mla_cache_is_the_latent_and_the_rope_key():
    w, x_q, x_kv, q_pos, k_pos, inv_freq = _mla_case()
    latent, k_rope = heads.mla_cache(x_kv, w, positions.rope_tables(k_pos, inv_freq))
    np.testing.assert_allclose(latent, x_kv @ np.asarray(w.w_dkv), atol=1e-6)
    np.testing.assert_allclose(k_rope, oracle.rotate_pairs(x_kv @ np.asarray(w.w_kr), k_pos, inv_freq), atol=1e-6)
    # The attention reads the tokens through the cache only: a cache from other tokens gives other weights,
    # the same cache the same weights, whatever x_kv was.
    rope_q = positions.rope_tables(q_pos, inv_freq)
    _, weights = heads.mla_attention(x_q, (latent, k_rope), w, rope_q)
    _, again = heads.mla_attention(x_q, (np.array(latent), np.array(k_rope)), w, rope_q)
    np.testing.assert_array_equal(weights, again)
    assert heads.mla_cache_bytes(w) == (2 + 2) * 4 < heads.kv_cache_bytes(2, 2)

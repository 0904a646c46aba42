"""Per-head statistics, combined heads and the model view's block averages, against numpy oracles."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.heads import statistics as stats
from models.record import AttentionRecord
from tests.models.heads.random_records import TOKENS, softmax_rows, transformer_record


def test_statistics_match_loop_oracles():
    record = transformer_record()
    w = record.weights.astype(np.float64)
    got = stats.head_statistics(record)
    assert set(got) == set(stats.STATISTIC_IDS)
    for name, values in got.items():
        assert values.shape == (2, 3) and values.dtype == np.float32, name
    T = len(TOKENS)
    for layer in range(2):
        for head in range(3):
            a = w[layer, head]
            entropy = np.mean([-sum(p * np.log(p) for p in row if p > 0) for row in a])
            np.testing.assert_allclose(got["entropy"][layer, head], entropy, rtol=1e-5)
            np.testing.assert_allclose(got["cls"][layer, head], a[:, 0].mean(), rtol=1e-5)
            np.testing.assert_allclose(got["sep"][layer, head], a[:, T - 1].mean(), rtol=1e-5)
            np.testing.assert_allclose(got["self"][layer, head], np.mean([a[i, i] for i in range(T)]), rtol=1e-5)
            np.testing.assert_allclose(got["previous"][layer, head], np.mean([a[i, i - 1] for i in range(1, T)]), rtol=1e-5)
            np.testing.assert_allclose(got["next"][layer, head], np.mean([a[i, i + 1] for i in range(T - 1)]), rtol=1e-5)
            np.testing.assert_allclose(got["punctuation"][layer, head], (a[:, 4] + a[:, 8]).mean(), rtol=1e-5)


def test_pattern_scores_and_sinks_match_loop_oracles():
    tokens = ("[CLS]", "the", "cat", "saw", "the", "cat", ".", "[SEP]")
    record = transformer_record(tokens, layers=2, heads=3, seed=4)
    w = record.weights.astype(np.float64)
    T = len(tokens)
    previous = stats.head_statistic(record.weights, tokens, "previous_score")
    duplicate = stats.head_statistic(record.weights, tokens, "duplicate_score")
    kept = stats.head_statistic(record.weights, tokens, "duplicate_score", exclude_special=True)
    special = {0, T - 1}
    sinks = 0
    for layer in range(2):
        for head in range(3):
            a = w[layer, head]
            np.testing.assert_allclose(previous[layer, head], sum(a[q, q - 1] for q in range(1, T)) / a.sum(), rtol=1e-5)
            hits = [(q, k) for q in range(T) for k in range(q) if tokens[k] == tokens[q]]
            assert hits == [(4, 1), (5, 2)]
            np.testing.assert_allclose(duplicate[layer, head], sum(a[q, k] for q, k in hits) / a.sum(), rtol=1e-5)
            rest = sum(a[q, k] for q in range(T) for k in range(T) if k not in special)
            np.testing.assert_allclose(kept[layer, head], sum(a[q, k] for q, k in hits) / rest, rtol=1e-5)
            sinks += np.mean([a[q, 0] + a[q, T - 1] for q in range(T)]) > 0.5
    assert stats.special_sinks(record) == (sinks, 6)
    sink = np.zeros((1, 1, T, T))
    sink[..., 0] = 0.6
    sink[..., 3] = 0.4
    parked = AttentionRecord("transformer", sink, ("layer", "head", "query", "key"), tokens, tokens)
    assert stats.special_sinks(parked) == (1, 1)
    assert stats.special_sinks(parked, threshold=0.7) == (0, 1)


def test_statistics_of_known_patterns():
    T = 6
    labels = ["[CLS]", "a", "b", ".", "c", "[SEP]"]
    prev = np.zeros((T, T))
    prev[0, 0] = 1.0
    for i in range(1, T):
        prev[i, i - 1] = 1.0
    to_cls = np.zeros((T, T))
    to_cls[:, 0] = 1.0
    uniform = np.full((T, T), 1.0 / T)
    w = np.stack([prev, to_cls, uniform])[None]  # [1, 3, T, T]
    np.testing.assert_allclose(stats.head_statistic(w, labels, "previous")[0], [1.0, 1 / (T - 1), 1 / T], atol=1e-6)
    np.testing.assert_allclose(stats.head_statistic(w, labels, "cls")[0], [2 / T, 1.0, 1 / T], atol=1e-6)
    np.testing.assert_allclose(stats.head_statistic(w, labels, "entropy")[0], [0.0, 0.0, np.log(T)], atol=1e-6)
    np.testing.assert_allclose(stats.head_statistic(w, labels, "punctuation")[0], [1 / T, 0.0, 1 / T], atol=1e-6)


def test_two_token_input_and_unknown_statistic():
    w = np.array([[[[0.5, 0.5], [0.25, 0.75]]]], dtype=np.float32)
    labels = ["[CLS]", "[SEP]"]
    np.testing.assert_allclose(stats.head_statistic(w, labels, "previous"), [[0.25]])
    np.testing.assert_allclose(stats.head_statistic(w, labels, "next"), [[0.5]])
    one = np.ones((1, 1, 1, 1), dtype=np.float32)
    assert stats.head_statistic(one, ["[CLS]"], "previous").tolist() == [[0.0]]
    with pytest.raises(KeyError, match="entropy"):
        stats.head_statistic(w, labels, "nonsense")


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 20), seed=st.integers(0, 10_000))
def test_shares_lie_in_unit_interval_and_entropy_is_bounded(length, seed):
    labels = ["[CLS]", *["w", ",", "[SEP]", "x"] * 5][:length]
    w = softmax_rows(np.random.default_rng(seed), (2, 2, length, length))
    for name in stats.STATISTIC_IDS:
        values = stats.head_statistic(w, labels, name)
        assert np.all(np.isfinite(values))
        if name == "entropy":
            assert np.all(values >= -1e-6) and np.all(values <= np.log(length) + 1e-5)
        else:
            assert np.all(values >= -1e-6) and np.all(values <= 1 + 1e-6), name


def test_punctuation_detection():
    assert stats.is_punctuation(",") and stats.is_punctuation("...") and stats.is_punctuation("「")
    assert not stats.is_punctuation("a,") and not stats.is_punctuation("[SEP]") and not stats.is_punctuation("")
    assert not stats.is_punctuation("$")  # a symbol (Sc), not punctuation


def test_combine_heads_mean_and_max():
    record = transformer_record()
    w = record.weights
    mean = stats.combine_heads(w, [(0, 1), (1, 2)], "mean")
    np.testing.assert_allclose(mean, (w[0, 1] + w[1, 2]) / 2, rtol=1e-6)
    np.testing.assert_allclose(mean.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(stats.combine_heads(w, [(0, 1), (1, 2)], "max"), np.maximum(w[0, 1], w[1, 2]))
    with pytest.raises(ValueError):
        stats.combine_heads(w, [], "mean")


def test_export_records_of_one_map_and_of_a_statistic():
    record = transformer_record()
    one = stats.matrix_record(record, record.weights[1, 2], layer=1, head=2)
    assert one.axes == ("query", "key") and one.meta["layer"] == 1 and one.query_labels == TOKENS
    np.testing.assert_array_equal(one.weights, record.weights[1, 2])
    values = stats.head_statistic(record.weights, TOKENS, "cls")
    table = stats.statistic_record(record, values, "cls")
    assert table.weights.shape == (2, 3) and table.key_labels == ("head 0", "head 1", "head 2")
    assert table.meta["statistic"] == "cls"


def test_block_average_matches_a_loop_oracle_with_a_ragged_last_block():
    rng = np.random.default_rng(1)
    maps = rng.random((2, 10, 7)).astype(np.float32)
    out, eq, ek = stats.block_average(maps, max_cells=4)
    assert eq.tolist() == [0, 3, 6, 9, 10] and ek.tolist() == [0, 2, 4, 6, 7]
    for r in range(4):
        for c in range(4):
            block = maps[:, eq[r] : eq[r + 1], ek[c] : ek[c + 1]]
            np.testing.assert_allclose(out[:, r, c], block.mean(axis=(-2, -1)), rtol=1e-6)
    same, _, _ = stats.block_average(maps, max_cells=64)
    assert same is maps or np.array_equal(same, maps)


def test_block_averaged_rows_keep_their_mass_per_key_block():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 130, 130))
    out, eq, ek = stats.block_average(np.exp(x) / np.exp(x).sum(-1, keepdims=True))
    assert out.shape[-2:] == (44, 44)  # ceil(130 / 64) = 3 tokens per block
    # Mean over a block's rows of the summed mass in key blocks = 1 when every row sums to 1.
    np.testing.assert_allclose((out * np.diff(ek)).sum(-1), 1.0, atol=1e-4)

"""Word-piece merging (models/transformer/word_pieces.py) against a loop oracle."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.transformer import word_pieces as wp
from tests.models.heads.random_records import TOKENS, transformer_record


def test_word_index_joins_pieces_but_never_onto_special_tokens():
    assert wp.word_index(TOKENS).tolist() == [0, 1, 1, 2, 3, 4, 4, 4, 5, 6]
    assert wp.word_index(["[CLS]", "##a", "b", "[SEP]", "##c"]).tolist() == [0, 1, 2, 3, 4]
    assert wp.merged_labels(TOKENS, wp.word_index(TOKENS)) == [
        "[CLS]", "playing", "cards", ",", "funnyer", "!", "[SEP]"
    ]


def test_merge_averages_rows_and_sums_columns_like_a_loop_oracle():
    record = transformer_record()
    merged = wp.merge_word_pieces(record)
    index = wp.word_index(TOKENS)
    words = int(index.max()) + 1
    w = record.weights.astype(np.float64)
    oracle = np.zeros((2, 3, words, words))
    for a in range(words):
        rows = np.flatnonzero(index == a)
        for b in range(words):
            cols = np.flatnonzero(index == b)
            oracle[:, :, a, b] = w[:, :, rows][:, :, :, cols].sum(axis=-1).mean(axis=-1)
    np.testing.assert_allclose(merged.weights, oracle, atol=1e-6)
    assert merged.query_labels == merged.key_labels == ("[CLS]", "playing", "cards", ",", "funnyer", "!", "[SEP]")
    assert merged.axes == record.axes and merged.meta["merged_word_pieces"] is True
    assert merged.extras["token_to_word"].tolist() == index.tolist()


def test_merge_maps_segments_of_a_pair_to_words():
    tokens = ("[CLS]", "a", "##b", "[SEP]", "c", "##d", "[SEP]")
    record = transformer_record(tokens, segments=[0, 0, 0, 0, 1, 1, 1])
    merged = wp.merge_word_pieces(record)
    assert merged.query_labels == ("[CLS]", "ab", "[SEP]", "cd", "[SEP]")
    assert merged.meta["segments"] == [0, 0, 0, 1, 1]


@settings(max_examples=40, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(["the", "##s", "cat", "##ty", ".", "[SEP]", "run"]), min_size=1, max_size=14),
    seed=st.integers(0, 10_000),
)
def test_merged_rows_still_sum_to_one_and_mass_is_kept(pieces, seed):
    tokens = ["[CLS]", *pieces]
    record = transformer_record(tuple(tokens), layers=1, heads=2, seed=seed)
    merged = wp.merge_word_pieces(record)
    np.testing.assert_allclose(merged.weights.sum(axis=-1), 1.0, atol=1e-5)
    # Summing the merged columns over words, weighted by word sizes, gives back the total mass.
    sizes = np.bincount(wp.word_index(tokens))
    np.testing.assert_allclose((merged.weights.sum(axis=-1) * sizes).sum(axis=-1), len(tokens), atol=1e-4)
    assert np.all(merged.weights >= 0)


def test_pieces_marked_at_a_words_start_join_the_other_way():
    # RoBERTa's byte-level BPE (and ModernBERT's) marks a word's first piece with "Ġ", XLM-R's SentencePiece with
    # "▁": every unmarked piece continues the word before it, and never a special token.
    roberta = ["<s>", "The", "Ġ", "c", "at", "Ġsat", ".", "</s>", "</s>", "A", "Ġdog", "</s>"]
    assert wp.word_index(roberta).tolist() == [0, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8]
    assert wp.merged_labels(roberta, wp.word_index(roberta)) == [
        "<s>", "The", "cat", "sat.", "</s>", "</s>", "A", "dog", "</s>"
    ]
    xlmr = ["<s>", "▁", "我", "爱", "▁T", "he", "▁", "</s>"]
    assert wp.merged_labels(xlmr, wp.word_index(xlmr)) == ["<s>", "我爱", "The", "▁", "</s>"]


def test_a_roberta_record_merges_into_words_whose_rows_still_sum_to_one():
    from pathlib import Path

    from models.transformer.records import load_runner

    runner = load_runner(Path(__file__).resolve().parents[2] / "fixtures" / "encoders" / "roberta")
    merged = wp.merge_word_pieces(runner.attention("The cat sat on the mat."))
    assert list(merged.query_labels) == ["<s>", "The", "cat", "sat", "on", "the", "mat.", "</s>"]
    np.testing.assert_allclose(merged.weights.sum(-1), 1.0, atol=1e-5)

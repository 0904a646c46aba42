"""The repeated-segment generator and the typed-token encoder: ground truth, seeds, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.induction import task
from models.record import InputError


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 6))
def test_every_sequence_holds_one_segment_twice_and_the_ground_truth_points_at_it(seed, batch):
    b = task.sample_batch(np.random.default_rng(seed), batch)
    assert b.tokens.shape == (batch, task.SEQUENCE_LENGTH) and b.tokens.dtype == np.int32
    assert np.all(b.tokens[:, 0] == task.BOS_ID)
    assert np.all((b.tokens[:, 1:] >= 1) & (b.tokens[:, 1:] < len(task.VOCAB)))
    low, high = task.SEGMENT_LENGTHS
    assert np.all((b.segment >= low) & (b.segment <= high))
    assert np.all(b.first >= 1) and np.all(b.first + b.segment <= b.second)  # no overlap, after [BOS]
    assert np.all(b.second + b.segment <= task.SEQUENCE_LENGTH)
    for row in range(batch):
        f, s, n = b.first[row], b.second[row], b.segment[row]
        np.testing.assert_array_equal(b.tokens[row, f : f + n], b.tokens[row, s : s + n])
        source = b.source[row]
        assert list(np.flatnonzero(source >= 0)) == list(range(s, s + n))
        assert np.all(b.tokens[row, source >= 0] == b.tokens[row, source[source >= 0]])
        # predictable = inside the second copy, after its first token (that one follows an unrelated token)
        assert list(np.flatnonzero(b.copied[row])) == list(range(s + 1, s + n))


def test_the_generator_is_seeded_and_refuses_segments_that_do_not_fit():
    a = task.sample_batch(np.random.default_rng(3), 4)
    b = task.sample_batch(np.random.default_rng(3), 4)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    with pytest.raises(ValueError, match="do not fit"):
        task.sample_batch(np.random.default_rng(0), 1, length=40, segments=(8, 24))


@pytest.mark.parametrize("length", [3, 4, 17, 63, 64])
def test_generated_sequence_is_bos_then_r_twice(length):
    ids = task.generated_sequence(7, length)
    half = (length - 1) // 2
    assert ids.shape == (1 + 2 * half,) and ids[0] == task.BOS_ID
    np.testing.assert_array_equal(ids[1 : 1 + half], ids[1 + half :])
    np.testing.assert_array_equal(ids, task.generated_sequence(7, length))
    assert not np.array_equal(ids, task.generated_sequence(8, length)) or half < 3


def test_typed_tokens_are_read_case_blind_after_bos():
    encoded = task.encode_text("  K dog  m SUN\tk ")
    assert encoded.labels == ("[BOS]", "k", "dog", "m", "sun", "k")
    assert encoded.ids[0] == task.BOS_ID and encoded.ids[1] == encoded.ids[5] == task.TOKEN_IDS["k"]
    assert task.labels_of(encoded.ids) == encoded.labels and not encoded.truncated
    assert task.encode_text("[BOS] a b").labels == ("[BOS]", "a", "b")  # a pasted label row
    long = task.encode_text(" ".join(["a"] * 100))
    assert long.truncated and len(long.ids) == task.SEQUENCE_LENGTH


def test_unknown_tokens_get_one_line_naming_them():
    with pytest.raises(InputError) as info:
        task.encode_text("a dog zebra b 42 zebra [BOS]")
    message = str(info.value)
    assert "'zebra'" in message and "'42'" in message and "'[bos]'" in message and "\n" not in message
    assert message.count("zebra") == 1
    with pytest.raises(InputError, match="type a few tokens"):
        task.encode_text("   ")


def test_the_vocabulary_is_fifty_typeable_tokens_and_bos():
    assert len(task.TOKENS) == 50 == len(set(task.TOKENS))
    assert task.VOCAB[task.BOS_ID] == task.BOS
    assert all(t == t.lower() and " " not in t for t in task.TOKENS)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40))
def test_the_training_mixture_holds_each_kind_with_its_lengths_and_places(seed, batch):
    b = task.sample_mixture(np.random.default_rng(seed), batch)
    assert b.tokens.shape == (batch, task.SEQUENCE_LENGTH) and np.all(b.tokens[:, 0] == task.BOS_ID)
    assert b.kind.shape == (batch,) and set(b.kind.tolist()) <= set(range(len(task.MIXTURE)))
    for row in range(batch):
        kind = task.MIXTURE[b.kind[row]]
        f, s, n = b.first[row], b.second[row], b.segment[row]
        assert kind.segments[0] <= n <= kind.segments[1]
        assert 1 <= f and f + n <= s and s + n <= task.SEQUENCE_LENGTH
        if kind.at_start:  # [BOS] + r + r, then uniform tokens
            assert f == 1 and s == 1 + n
        np.testing.assert_array_equal(b.tokens[row, f : f + n], b.tokens[row, s : s + n])
        assert list(np.flatnonzero(b.copied[row])) == list(range(s + 1, s + n))


def test_the_mixture_draws_every_kind_at_its_share_and_short_repeats_at_the_start():
    b = task.sample_mixture(np.random.default_rng(0), 4000)
    shares = np.bincount(b.kind, minlength=len(task.MIXTURE)) / 4000
    np.testing.assert_allclose(shares, [f.share for f in task.MIXTURE], atol=0.03)
    at_start = b.first == 1
    assert np.any(at_start & (b.second == 4) & (b.segment == 3))  # [BOS] + r + r with |r| = 3
    assert b.segment.min() == 3 and b.segment.max() == 31
    np.testing.assert_array_equal(task.sample_mixture(np.random.default_rng(5), 9).tokens,
                                  task.sample_mixture(np.random.default_rng(5), 9).tokens)

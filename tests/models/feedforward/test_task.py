"""The addition problem generator: ranges, markers, targets, seeding, bad input."""

import numpy as np
import pytest

from models.feedforward.task import (
    LENGTH_BUCKETS,
    MAX_LENGTH,
    check_length,
    lengths_around,
    make_sequence,
    max_length_around,
    paper_marked_positions,
    sample_batch,
)
from models.padding import bucket
from models.record import InputError


@pytest.mark.parametrize("length", [2, 3, 7, 100, 1_000, 10_000])
def test_sequence_has_two_marks_and_target_is_their_sum(length):
    inputs, marked, target = make_sequence(length, seed=3)
    assert inputs.shape == (length, 2) and inputs.dtype == np.float32
    assert np.all(inputs[:, 0] >= -1) and np.all(inputs[:, 0] <= 1)
    assert sorted(np.flatnonzero(inputs[:, 1]).tolist()) == list(marked)
    assert set(np.unique(inputs[:, 1]).tolist()) <= {0.0, 1.0}
    assert target == pytest.approx(float(inputs[marked[0], 0] + inputs[marked[1], 0]))


def test_paper_placement_first_ten_then_before_middle():
    rng = np.random.default_rng(0)
    for _ in range(500):
        first, second = paper_marked_positions(rng, 1_000)
        assert first != second
        assert min(first, second) < 10 and max(first, second) < 500


def test_seed_fixes_values_and_chosen_marks_keep_them():
    a, marked_a, _ = make_sequence(500, seed=11)
    b, marked_b, _ = make_sequence(500, seed=11)
    c, _, _ = make_sequence(500, seed=12)
    np.testing.assert_array_equal(a, b)
    assert marked_a == marked_b
    assert not np.array_equal(a[:, 0], c[:, 0])
    chosen, marked, target = make_sequence(500, seed=11, marked=(499, 7))
    np.testing.assert_array_equal(chosen[:, 0], a[:, 0])
    assert marked == (7, 499) and target == pytest.approx(float(a[7, 0] + a[499, 0]))


def test_values_are_uniform_on_the_paper_range():
    inputs, _, _ = make_sequence(MAX_LENGTH, seed=0)
    values = inputs[:, 0]
    assert abs(values.mean()) < 0.03 and abs(values.var() - 1 / 3) < 0.02


@pytest.mark.parametrize("bad", [0, 1, 10_001, -5, 2.5, "x", None, float("nan")])
def test_bad_lengths_raise_one_line_input_errors(bad):
    with pytest.raises(InputError) as info:
        check_length(bad)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("marked", [(3, 3), (0, 100), (-1, 5), (1,), "ab"])
def test_bad_marks_raise_input_errors(marked):
    with pytest.raises(InputError):
        make_sequence(100, seed=0, marked=marked)


def test_batch_is_padded_masked_and_consistent():
    rng = np.random.default_rng(1)
    lengths = lengths_around(rng, 100, 64)
    assert lengths.min() >= 90 and lengths.max() <= 110 == max_length_around(100)
    batch = sample_batch(rng, lengths, pad_to=110)
    assert batch.inputs.shape == (64, 110, 2) and batch.mask.shape == (64, 110)
    np.testing.assert_array_equal(batch.mask.sum(1), lengths)
    assert np.all(batch.inputs[~batch.mask] == 0)
    assert np.all(batch.inputs[..., 1].sum(1) == 2)
    rows = np.arange(64)
    assert np.all(batch.marked[:, 1] < lengths)
    np.testing.assert_allclose(
        batch.targets, batch.inputs[rows, batch.marked[:, 0], 0] + batch.inputs[rows, batch.marked[:, 1], 0]
    )


def test_buckets_hold_every_length():
    assert bucket(2, LENGTH_BUCKETS) == LENGTH_BUCKETS[0]
    assert bucket(1_000, LENGTH_BUCKETS) == 1_024 and bucket(1_025, LENGTH_BUCKETS) == 2_048
    assert bucket(MAX_LENGTH, LENGTH_BUCKETS) >= MAX_LENGTH and bucket(11_000, LENGTH_BUCKETS) >= 11_000

"""The variants' tasks (models/variants/tasks.py): the scored targets are the answers, checked against a lookup
oracle written independently, and the held-out streams differ from the training ones."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.variants import tasks


def _lookup(row):
    """The token after the latest earlier occurrence of each token (None where there is none)."""
    out = []
    for t, token in enumerate(row):
        earlier = [j for j in range(t) if row[j] == token]
        out.append(row[earlier[-1] + 1] if earlier else None)
    return out


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_mqar_answers_are_the_queried_values(seed):
    batch = tasks.mqar_batch(np.random.default_rng(seed), 4)
    assert batch.tokens.shape == (4, tasks.MQAR_LENGTH) and batch.scored.sum(1).tolist() == [tasks.QUERIES] * 4
    for row, targets, scored in zip(batch.tokens, batch.targets, batch.scored):
        assert row[0] == 0
        pairs = dict(zip(row[1 : 1 + 2 * tasks.PAIRS : 2], row[2 : 2 + 2 * tasks.PAIRS : 2]))
        assert len(pairs) == tasks.PAIRS and all(1 <= k <= tasks.KEYS < v for k, v in pairs.items())
        for t in np.flatnonzero(scored):
            assert targets[t] == row[t + 1] == pairs[row[t]]  # the answer is the queried key's value
            assert _lookup(row)[t] == targets[t]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), half=st.sampled_from([None, 8, 16, 32]))
def test_induction_answers_are_the_second_copy(seed, half):
    batch = tasks.induction_batch(np.random.default_rng(seed), 3, half=half)
    for row, targets, scored in zip(batch.tokens, batch.targets, batch.scored):
        n = int(np.count_nonzero(row)) // 2
        r = row[1 : 1 + n]
        assert len(set(r.tolist())) == n and (half is None and tasks.MIN_HALF <= n <= tasks.HALF or n == half)
        np.testing.assert_array_equal(row[1 + n : 1 + 2 * n], r)
        assert np.flatnonzero(scored).tolist() == list(range(n + 1, 2 * n))
        for t in np.flatnonzero(scored):
            assert targets[t] == r[t - n] == _lookup(row)[t]


def test_answers_by_lookup_is_the_oracle():
    for task in tasks.TASKS:
        batch = tasks.batch(task, np.random.default_rng(1), 8)
        want = np.array([[a or 0 for a in _lookup(row)] for row in batch.tokens])
        np.testing.assert_array_equal(tasks.answers_by_lookup(batch.tokens), want)
        np.testing.assert_array_equal(tasks.answers_by_lookup(batch.tokens)[batch.scored], batch.targets[batch.scored])


def test_seeds_are_reproducible_and_held_out_streams_differ():
    for task in tasks.TASKS:
        a = tasks.batch(task, tasks.rng(tasks.TRAIN, task, 0), 64).tokens
        np.testing.assert_array_equal(a, tasks.batch(task, tasks.rng(tasks.TRAIN, task, 0), 64).tokens)
        held = tasks.batch(task, tasks.rng(tasks.HELD_OUT, task, 0), 64).tokens
        assert not {r.tobytes() for r in a} & {r.tobytes() for r in held}

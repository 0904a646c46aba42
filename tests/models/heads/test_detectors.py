"""Head detector scores against loop oracles written from their definitions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.heads import detectors as hd


def oracle(weights, tokens, name, exclude=None):
    t = len(tokens)
    hit = total = 0.0
    for q in range(t):
        for k in range(t):
            if exclude is not None and exclude[k]:
                continue
            a = weights[q, k]
            total += a
            if name == "previous":
                on = k == q - 1
            elif name == "duplicate":
                on = k < q and tokens[k] == tokens[q]
            else:
                on = 1 <= k <= q and k - 1 < q and tokens[k - 1] == tokens[q]
            hit += a * on
    return hit / total if total else 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=12), st.integers(0, 10**6), st.booleans())
def test_scores_match_the_definitions(tokens, seed, exclude_first):
    rng = np.random.default_rng(seed)
    w = rng.random((len(tokens), len(tokens)))
    w /= w.sum(1, keepdims=True)
    exclude = np.zeros(len(tokens), bool)
    exclude[0] = exclude_first
    scores = hd.head_scores(w[None], tokens, exclude)
    for name in hd.PATTERNS:
        assert scores[name][0] == pytest.approx(oracle(w, tokens, name, exclude), rel=1e-5, abs=1e-7)


def test_ideal_heads_score_one_and_a_uniform_head_scores_about_one_over_t():
    half, vocab = 10, 50
    tokens = hd.repeated_sequence(np.random.default_rng(0), half, vocab)
    t = len(tokens)
    previous = np.zeros((t, t))
    previous[0, 0] = 1.0
    previous[np.arange(1, t), np.arange(t - 1)] = 1.0
    assert hd.head_score(previous, hd.previous_token_pattern(t)) == pytest.approx((t - 1) / t)
    induction = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    queries = np.arange(half + 1, 2 * half + 1)
    induction[queries] = 0.0
    induction[queries, queries - half + 1] = 1.0  # looks at the token after the earlier copy
    assert hd.prefix_matching_score(induction, half) == pytest.approx(1.0)
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    assert hd.prefix_matching_score(uniform, half) == pytest.approx(np.mean(1.0 / (queries + 1)), rel=1e-6)
    assert hd.prefix_matching_score(uniform, half) < 2.0 / half


def test_sinks_are_counted():
    w = np.zeros((2, 3, 4, 4))
    w[..., 0] = 1.0  # every map on the first key
    w[1, 2] = np.eye(4)  # except one
    assert hd.heads_mostly_on(w, np.array([True, False, False, False])).sum() == 5

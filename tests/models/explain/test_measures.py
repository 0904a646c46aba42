"""The measures against hand-computed cases and brute-force oracles."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from models.explain import measures as m


def test_aer_of_a_hand_made_alignment():
    # Three outputs over four inputs. Sure: 0→0, 1→2; possible also 1→3; output 2 is not scored.
    w = np.array([[0.9, 0.1, 0.0, 0.0], [0.0, 0.1, 0.2, 0.7], [1.0, 0.0, 0.0, 0.0]])
    sure = np.zeros((3, 4), bool)
    sure[0, 0] = sure[1, 2] = True
    possible = sure.copy()
    possible[1, 3] = True
    rows = np.array([True, True, False])
    # A = {0→0, 1→3}: |A∩S| = 1, |A∩P| = 2, |A| = 2, |S| = 2 → 1 − 3/4
    assert m.alignment_error_rate([w], [sure], [possible], [rows]) == pytest.approx(0.25)
    assert m.alignment_error_rate([w], [sure], [sure], [rows]) == pytest.approx(0.5)
    perfect = np.where(sure, 1.0, 0.0)
    assert m.alignment_error_rate([perfect], [sure], [possible], [rows]) == 0.0


def test_aer_pools_links_over_the_corpus_not_rates():
    w1, s1 = np.eye(2), np.eye(2, dtype=bool)  # perfect: 2 links, 2 sure
    w2, s2 = np.array([[0.0, 1.0]]), np.array([[True, False]])  # wrong: 1 link, 1 sure
    pooled = m.alignment_error_rate([w1, w2], [s1, s2], [s1, s2])
    assert pooled == pytest.approx(1 - (2 + 2) / (3 + 3))  # not the mean of 0 and 1


def test_mass_and_top_k_against_a_loop():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(5, 7))
    truth = rng.random((5, 7)) < 0.3
    truth[:, 0] = True
    for r in range(5):
        a = np.abs(w[r])
        assert m.mass_on_truth(w, truth)[r] == pytest.approx(a[truth[r]].sum() / a.sum())
        k = truth[r].sum()
        best = np.argsort(-a)[:k]
        assert m.top_k_hit(w, truth)[r] == pytest.approx(truth[r][best].mean())
        assert m.top_k_hit(w, truth, k=2)[r] == pytest.approx(truth[r][np.argsort(-a)[:2]].mean())


def test_the_paper_form_of_feedforward_attention_low_mass_but_right_top_2():
    # Raffel & Ellis: α spread thin over 100 steps, yet its two largest on the marked steps.
    w = np.full(100, 0.88 / 98)
    w[[3, 60]] = 0.06
    truth = np.zeros(100, bool)
    truth[[3, 60]] = True
    assert m.mass_on_truth(w, truth) == pytest.approx(0.12)
    assert m.top_k_hit(w, truth) == 1.0


def test_pointing_game():
    heat = np.zeros((4, 4))
    heat[1, 2] = -3.0  # the largest by magnitude
    heat[3, 3] = 2.0
    mask = np.zeros((4, 4), bool)
    mask[1, 2] = True
    assert m.pointing_game(heat, mask)
    assert not m.pointing_game(heat, ~mask)


def test_aopc_of_a_linear_model_against_a_brute_force_oracle():
    x = np.array([3.0, -1.0, 0.5, 2.0, 0.0, 1.0, -2.0, 4.0, 0.2, 0.1])
    valid = np.ones(10, bool)
    valid[9] = False  # padding: never deleted, never kept alone

    def output(keep):
        return (np.where(keep, x, 0.0)).sum(axis=-1)

    scores = x.copy()  # gradient × input of a sum: the exact contributions
    comp, suff = m.aopc(output, scores, valid=valid)
    full = x[valid].sum()
    order = np.argsort(-np.abs(np.where(valid, x, 0)), kind="stable")[:9]
    expected_comp = np.mean([full - (full - x[order[: max(1, int(np.ceil(q * 9)))]].sum()) for q in m.FRACTIONS])
    expected_suff = np.mean([full - x[order[: max(1, int(np.ceil(q * 9)))]].sum() for q in m.FRACTIONS])
    assert comp == pytest.approx(expected_comp)
    assert suff == pytest.approx(expected_suff)
    worse_comp, _ = m.aopc(output, -np.abs(scores) + 10, valid=valid)  # a ranking that deletes the least first
    assert comp > worse_comp


def test_kendall_tau_against_pair_counting():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=9), rng.normal(size=9)
    pairs = list(itertools.combinations(range(9), 2))
    sign = [np.sign((abs(a[i]) - abs(a[j])) * (abs(b[i]) - abs(b[j]))) for i, j in pairs]
    assert m.kendall_tau(a, b) == pytest.approx(np.sum(sign) / len(pairs))
    assert m.kendall_tau(a, a) == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, (3, 6), elements=st.floats(-5, 5)))
def test_shares_are_distributions_or_zero(w):
    s = m.shares(w)
    sums = s.sum(axis=-1)
    assert np.all(s >= 0)
    assert np.allclose(sums[np.abs(w).sum(-1) > 0], 1.0)
    assert np.all(sums[np.abs(w).sum(-1) == 0] == 0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 10_000))
def test_deletion_masks_split_the_valid_inputs(n, seed):
    rng = np.random.default_rng(seed)
    scores, valid = rng.normal(size=n), rng.random(n) < 0.8
    valid[0] = True
    comprehensive, sufficient = m.deletion_masks(scores, valid=valid)
    assert np.all(comprehensive ^ sufficient == valid)
    assert np.all(sufficient.sum(axis=-1) >= 1)
    assert np.all(np.diff(sufficient.sum(axis=-1)) >= 0)  # more deleted as the fraction grows


def test_date_truth_marks_the_fields_and_skips_the_separators():
    from models.explain import dates as truth_of
    from models.seq2seq import task as dates

    example = dates.render("d-month-y", __import__("datetime").date(2018, 5, 9))
    sure, possible, rows = truth_of.truth(example)
    assert example.target == "2018-05-09" and list(rows) == [True] * 4 + [False] + [True] * 2 + [False] + [True] * 2
    year = [i for i, ch in enumerate(example.source) if ch.isdigit() and i > 2]
    assert set(np.nonzero(sure[0])[0]) == set(year)  # '2' of 2018: the year's characters
    assert not sure[4].any() and not possible[4].any()  # the '-': no truth, not scored
    spaces = [i for i, ch in enumerate(example.source) if ch == " "]
    assert possible[0, spaces].all() and not sure[0, spaces].any()
    perfect = np.where(sure, 1.0, 0.0)
    assert truth_of.aer([perfect], [example]) == 0.0
    assert truth_of.aer([perfect[:, ::-1]], [example]) > 0.5  # the fields reversed

"""α_B − α_A over shared tokens: alignment and difference against loop oracles."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.compare import ONLY_A, ONLY_B, SHARED, align_tokens, difference_matrix, difference_record


def test_alignment_of_a_replaced_word():
    alignment = align_tokens(["[CLS]", "the", "cat", "sat", "[SEP]"], ["[CLS]", "the", "dog", "sat", "down", "[SEP]"])
    assert alignment.labels == ("[CLS]", "the", "cat", "dog", "sat", "down", "[SEP]")
    assert alignment.sources() == [SHARED, SHARED, ONLY_A, ONLY_B, SHARED, ONLY_B, SHARED]
    assert alignment.in_a.tolist() == [0, 1, 2, -1, 3, -1, 4]
    assert alignment.in_b.tolist() == [0, 1, -1, 2, 3, 4, 5]


def test_difference_matches_a_loop_oracle():
    rng = np.random.default_rng(0)
    a_tokens, b_tokens = ["x", "a", "b", "c", "y"], ["x", "b", "z", "c", "y", "w"]
    ma, mb = rng.random((5, 5)), rng.random((6, 6))
    rows = cols = align_tokens(a_tokens, b_tokens)
    diff = difference_matrix(ma, mb, rows, cols)
    for r in range(len(rows.labels)):
        for c in range(len(cols.labels)):
            ia, ib, ja, jb = rows.in_a[r], rows.in_b[r], cols.in_a[c], cols.in_b[c]
            if min(ia, ib, ja, jb) < 0:
                assert np.isnan(diff[r, c])
            else:
                np.testing.assert_allclose(diff[r, c], mb[ib, jb] - ma[ia, ja], rtol=1e-6)


def test_the_same_input_differs_by_exactly_zero_and_the_record_marks_tokens():
    m = np.full((3, 3), 1 / 3)
    same = difference_record(m, m, (["a", "b", "c"],) * 2, (["a", "b", "c"],) * 2, mechanism="transformer")
    assert np.all(same.weights == 0.0) and same.meta["max_abs_difference"] == 0.0
    other = difference_record(m, np.eye(2), (["a", "b", "c"],) * 2, (["a", "c"],) * 2, mechanism="transformer")
    assert other.query_labels == ("a", f"b ({ONLY_A})", "c")
    assert other.extras["query_in_b"].tolist() == [0, -1, 1]
    np.testing.assert_allclose(other.weights[[0, 2]][:, [0, 2]], np.eye(2) - 1 / 3, rtol=1e-6)
    assert other.meta["shared_query_tokens"] == 2


def test_rows_and_columns_align_separately_for_cross_attention():
    # Seq2seq: rows are output characters, columns input characters.
    ma, mb = np.ones((2, 3)), np.zeros((3, 3))
    record = difference_record(ma, mb, (["1", "9"], ["a", "b", "c"]), (["1", "8", "9"], ["a", "b", "c"]), mechanism="m")
    assert record.query_labels == ("1", f"8 ({ONLY_B})", "9") and record.key_labels == ("a", "b", "c")
    assert np.isnan(record.weights[1]).all() and np.all(record.weights[[0, 2]] == -1.0)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.sampled_from("abcde"), min_size=1, max_size=12),
       b=st.lists(st.sampled_from("abcde"), min_size=1, max_size=12))
def test_alignment_keeps_every_token_once_in_order(a, b):
    alignment = align_tokens(a, b)
    assert [a[i] for i in alignment.in_a if i >= 0] == a and [b[j] for j in alignment.in_b if j >= 0] == b
    assert all(alignment.labels[k] == a[i] == b[j] for k, (i, j) in enumerate(zip(alignment.in_a, alignment.in_b))
               if i >= 0 and j >= 0)
    assert alignment.in_a[alignment.in_a >= 0].tolist() == sorted(alignment.in_a[alignment.in_a >= 0].tolist())
    assert alignment.in_b[alignment.in_b >= 0].tolist() == sorted(alignment.in_b[alignment.in_b >= 0].tolist())

"""The scoreboard recomputed on a sample of the held-out dates: its measures are shares, α's τ with itself is 1,
and the finding docs/QUALITY.md reports holds (on the dates the attention-based maps point at the true fields more
often than the gradient methods do)."""

import pytest

from models.explain.quality import METHODS, scoreboard


@pytest.fixture(scope="module")
def board():
    return scoreboard(12)


def test_every_map_is_scored_with_shares(board):
    assert set(board) == {"Transformer: α (last layer, head mean)", "Bahdanau: α"} | {f"Transformer: {m}" for m in METHODS}
    for name, measures in board.items():
        assert all(0.0 <= measures[k] <= 1.0 for k in ("aer", "mass", "top_k")), name
        assert -1.0 <= measures["tau"] <= 1.0
    assert board["Transformer: α (last layer, head mean)"]["tau"] == 1.0


def test_attention_based_maps_find_the_fields_better_than_gradients_on_the_dates(board):
    alpha = board["Transformer: α (last layer, head mean)"]["aer"]
    for gradient in ("gradient-x-input", "integrated-gradients"):
        assert alpha < board[f"Transformer: {gradient}"]["aer"]
    assert alpha < 0.3 and board["Bahdanau: α"]["aer"] < 0.3

"""Quality of the committed feed-forward attention checkpoints on fresh addition sequences.

Counts: 300 sequences at T₀ = 100 and 1,000, 150 at T = 10,000, per model (batched, jitted).
"""

import numpy as np
import pytest

from models.feedforward.checkpoint import checkpoint_path
from models.feedforward.model import PAPER_LENGTHS
from models.feedforward.quality import evaluate_runner
from models.feedforward.records import load_runner
from models.feedforward.task import lengths_around

SEQUENCES = {100: 300, 1_000: 300, 10_000: 150}
SEED = 2026  # training draws from other seeds; these sequences are fresh


def test_checkpoints_fit_the_budget():
    paths = [checkpoint_path("paper", t0) for t0 in PAPER_LENGTHS] + [checkpoint_path("unbounded")]
    assert sum(p.stat().st_size for p in paths) < 3 * 1024 * 1024


@pytest.mark.parametrize("t0", PAPER_LENGTHS)
def test_paper_form_solves_its_trained_length(t0):
    lengths = lengths_around(np.random.default_rng(SEED + t0), t0, SEQUENCES[t0])
    quality = evaluate_runner(load_runner("paper", t0), lengths, seed=SEED + t0)
    assert quality["mse"] < 0.01, quality
    assert quality["top2"] >= 0.95, quality


@pytest.mark.parametrize("length", [100, 1_000, 10_000])
def test_unbounded_score_generalises_to_long_sequences(length):
    lengths = np.full(SEQUENCES[length], length)
    quality = evaluate_runner(load_runner("unbounded"), lengths, seed=SEED + 1 + length)
    assert quality["mse"] < 0.01, quality
    assert quality["mass"] >= 0.90, quality

"""Quality of the committed captioners on 1,000 held-out scenes, drawn cleanly and re-rendered.

Bars (issue 5 §3): caption correctness ≥ 95 % soft, ≥ 90 % hard (mean over five sampling seeds); soft: ≥ 50 % of α's mass on
cells overlapping the object at its shape word; hard: the sampled cell on the object ≥ 70 %.
`python -m models.quality captioner` prints the full table.
"""

import functools

import pytest

from models.captioner.model import CHECKPOINT
from models.captioner.quality import evaluate, held_out_scenes
from models.captioner.records import load_runner

CHECKPOINT_BUDGET_BYTES = 8 * 1024 * 1024


@functools.lru_cache(maxsize=2)
def scenes(rendering):
    return held_out_scenes(rendering, 1000)


@pytest.mark.parametrize("rendering", ["clean", "other"])
def test_soft_captions_and_attention(rendering):
    images, scene_list = scenes(rendering)
    q = evaluate(load_runner("soft"), images, scene_list, mode="soft")
    assert q.caption_accuracy >= 0.95, q
    assert q.shape_mass >= 0.50, q


@functools.lru_cache(maxsize=2)
def hard_quality(rendering):
    images, scene_list = scenes(rendering)
    return evaluate(load_runner("hard"), images, scene_list, mode="sample", seed=0)


@pytest.mark.parametrize("rendering", ["clean", "other"])
def test_hard_samples_land_on_the_object(rendering):
    q = hard_quality(rendering)
    assert q.hit_rate >= 0.70, q


@pytest.mark.parametrize("rendering", ["clean", "other"])
def test_hard_captions(rendering):
    # A hard caption is a random draw: the bar holds for the mean over five sampling seeds
    # (measured 90.9 % clean, 90.7 % re-rendered; single seeds 89.9–91.4 %, README).
    images, scene_list = scenes(rendering)
    runner = load_runner("hard")
    accuracy = [evaluate(runner, images, scene_list, mode="sample", seed=s).caption_accuracy for s in range(5)]
    assert sum(accuracy) / len(accuracy) >= 0.90, accuracy


def test_checkpoints_fit_the_budget():
    sizes = [CHECKPOINT.path(v).stat().st_size for v in ("soft", "hard")]
    assert sum(sizes) <= CHECKPOINT_BUDGET_BYTES

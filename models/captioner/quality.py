"""Quality of a captioner on scenes with known answers: caption correctness and where it looks.

Used by the quality test (tests/models/test_captioner_quality.py), the benchmark
(bench/captioner_quality.py) and the training loop's validation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.captioner import task as S
from models.captioner.model import CaptionerRunner, tokens_to_words

# Training draws scenes from seeds below 9,000; validation uses 9,000; the test sets below.
TEST_SEEDS = {"clean": 10_001, "other": 10_002}
VALIDATION_SEED = 9_000


@dataclass(frozen=True)
class Quality:
    """Measured on one set of scenes with one decoding mode.

    caption_accuracy: share of captions naming the right objects with a true relation.
    shape_mass:       mean α mass on cells overlapping the object, at each shape word.
    shape_mass_share: share of shape words with at least half the α mass on the object.
    hit_rate:         share of shape words whose attended cell (sampled in "sample" mode,
                      the argmax cell otherwise) overlaps the object.
    """

    scenes: int
    caption_accuracy: float
    shape_mass: float
    shape_mass_share: float
    hit_rate: float
    shape_words: int


def evaluate(runner: CaptionerRunner, images: np.ndarray, scenes: list, *, mode: str, seed: int = 0) -> Quality:
    """Returns the Quality of `runner` on images [N, 64, 64, 3] with their scenes."""
    tokens, alphas, locations = runner.decode_batched(images, mode=mode, seed=seed)
    grid = runner.cfg.grid
    correct, masses, hits = 0, [], []
    for i, scene in enumerate(scenes):
        caption = " ".join(tokens_to_words(tokens[i]))
        pairs = S.shape_word_objects(caption, scene)
        if not pairs:
            continue
        correct += 1
        overlap = S.cell_overlap(S.object_masks(scene), grid).reshape(len(scene.objects), -1)
        for step, obj in pairs:
            masses.append(float(alphas[i, step][overlap[obj]].sum()))
            hits.append(bool(overlap[obj][locations[i, step]]))
    masses_arr = np.asarray(masses) if masses else np.zeros(1)
    return Quality(
        scenes=len(scenes),
        caption_accuracy=correct / max(len(scenes), 1),
        shape_mass=float(masses_arr.mean()),
        shape_mass_share=float((masses_arr >= 0.5).mean()),
        hit_rate=float(np.mean(hits)) if hits else 0.0,
        shape_words=len(masses),
    )


def held_out_scenes(rendering: str, n: int = 1000):
    """Returns (images, scenes): the held-out set for "clean" or "other" (re-rendered) scenes."""
    return S.held_out_set(n, seed=TEST_SEEDS[rendering], rendering=rendering)


def decode_mode(variant: str) -> str:
    """Returns how a variant is judged: soft reads Σ α a, hard samples one cell per word."""
    return "soft" if variant == "soft" else "sample"

"""Quality of a captioner on scenes with known answers: caption correctness and where it looks.

Used by the quality test (tests/models/captioner/test_quality.py), `python -m models.quality captioner`
(report() below) and the training loop's validation.
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


BARS = {"soft": (0.95, 0.50, None), "hard": (0.90, None, 0.70)}  # caption, mass, hit: tests/models/captioner


def report(quick: bool = False) -> str:
    """Returns the quality table of the committed captioners (Markdown): one row per (variant, decoding,
    rendering) on 1,000 held-out scenes drawn cleanly and 1,000 drawn "by another program" (anti-aliased,
    other shades, JPEG); 50 each with `quick`. Soft reads Σ α a; hard samples one cell per word (seed 0)
    and, in a second row, reads the argmax cell. Then each checkpoint's training steps and size."""
    import time

    from models.captioner.model import CHECKPOINT
    from models.captioner.records import load_runner

    n = 50 if quick else 1000
    sets = {r: held_out_scenes(r, n) for r in ("clean", "other")}
    lines = ["| model | decoder reads | scenes | caption correct | α mass on object at shape words | "
             "shape words with ≥ 50 % mass | attended cell on object | bar |", "|---|---|---|---|---|---|---|---|"]
    for variant, modes in (("soft", ("soft",)), ("hard", ("sample", "argmax"))):
        runner = load_runner(variant)
        for mode in modes:
            for rendering, (images, scenes) in sets.items():
                started = time.perf_counter()
                q = evaluate(runner, images, scenes, mode=mode, seed=0)
                caption_bar, mass_bar, hit_bar = BARS[variant]
                bar = f"caption ≥ {caption_bar:.0%}" + (f", mass ≥ {mass_bar:.0%}" if mass_bar else "")
                bar += f", hit ≥ {hit_bar:.0%}" if hit_bar else ""
                lines.append(f"| {variant} | {mode} | {n} {rendering} | {q.caption_accuracy:.1%} | {q.shape_mass:.1%} | "
                             f"{q.shape_mass_share:.1%} | {q.hit_rate:.1%} | "
                             f"{bar if mode != 'argmax' else '(for comparison)'} |"
                             f"  <!-- {time.perf_counter() - started:.1f} s -->")
    lines.append("")
    for variant in ("soft", "hard"):
        meta = CHECKPOINT.read_info(CHECKPOINT.path(variant))
        size = CHECKPOINT.path(variant).stat().st_size
        lines.append(f"{variant}: {meta.get('steps')} steps × batch {meta.get('batch')}, trained "
                     f"{meta.get('train_seconds')} s{' (from ' + str(meta['init']) + ')' if meta.get('init') else ''}, "
                     f"checkpoint {size / 1e6:.2f} MB")
    return "\n".join(lines)

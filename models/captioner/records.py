"""Registry builders for the image captioner: one image in, one AttentionRecord out.

Mechanisms "soft" and "hard" (models/registry.py) share one builder; the entry's variant
picks the checkpoint. Options (checked by the registry):
  image        a path, raw bytes, or a uint8 array [H, W, 3] (shrunk and padded to 64×64);
  temperature  divides the attention scores before the softmax;
  samples      hard only: N extra locations drawn from α for every word (0: none);
  seed         hard only: seeds the decoder's location draws and the N extra samples;
  mode         hard only: "sample" or "argmax", how the decoder picks its cell.
The record: weights α float32 (word, row, col), query_labels = the caption's words,
key_labels = cell names r0c0 … r7c7; extras caption (hard: decode_cells, and with samples:
samples [W, N] and frequencies [W, g, g], the share of draws in each cell).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from models import attention as core
from models.captioner.model import CHECKPOINT, STEPS, CaptionerRunner, tokens_to_words
from models.captioner.task import SCENE_DISTANCE_LIMIT, scene_distance
from models.image_input import fit_square, read_any_image
from models.record import AttentionRecord
from models.text import N_, Notice

SAMPLE_POOL = 2000
OUTSIDE_NOTICE = N_(
    "This image lies outside the scene world the captioner was trained on (distance {distance:.0f} from it; "
    "scenes stay under {limit:.0f}): it only knows circles, squares and triangles in four colours on white, "
    "so this caption and its attention mean nothing here."
)


@functools.lru_cache(maxsize=2)
def load_runner(variant: str) -> CaptionerRunner:
    """Returns the committed captioner of a variant ("soft" or "hard"), loaded once."""
    return CaptionerRunner(CHECKPOINT.load_module(CHECKPOINT.path(variant)))


@dataclass(frozen=True)
class Caption:
    """One decoded caption with its attention.

    words [W]; alphas float32 [W, g, g] (α at the step that emitted each word);
    decode_cells int [W] (the cell the decoder read: argmax of α for soft, sampled or argmax
    for hard); samples int [W, N] (extra draws from α, row-major cell indices) or None.
    """

    variant: str
    words: tuple[str, ...]
    alphas: np.ndarray
    decode_cells: np.ndarray
    samples: np.ndarray | None
    grid: int

    @property
    def caption(self) -> str:
        return " ".join(self.words)

    def frequencies(self) -> np.ndarray:
        """Returns float32 [W, g, g]: the share of the N samples that fell in each cell."""
        if self.samples is None:
            raise ValueError("no samples were drawn")
        g = self.grid
        return core.sample_frequencies(self.samples, g * g).reshape(len(self.words), g, g)


def load_image_option(value: Any) -> np.ndarray:
    """Returns uint8 [64, 64, 3], the model's input, from a path, bytes or an array."""
    return fit_square(read_any_image(value), 64)


def caption_image(
    image: np.ndarray,
    variant: str,
    *,
    mode: str = "soft",
    temperature: float = 1.0,
    samples: int = 0,
    seed: int = 0,
) -> Caption:
    """Returns the caption of a uint8 [64, 64, 3] image with per-word attention.

    mode: "soft" (Σ α a) for the soft model; "sample" or "argmax" for the hard one.
    """
    runner = load_runner(variant)
    tokens, alphas, cells = runner.decode(image[None], mode=mode, seed=seed, temperature=temperature)
    words = tokens_to_words(tokens[0])
    # An empty caption still shows where the model looked when it stopped.
    n = max(len(words), 1)
    labels = tuple(words) if words else ("<eos>",)
    g = runner.cfg.grid
    alpha = alphas[0, :n].reshape(n, g, g).astype(np.float32)
    drawn = None
    if samples:
        key = jax.random.fold_in(jax.random.key(int(seed)), STEPS)
        # Draw a fixed pool and keep the first N: one compile for every N up to the pool,
        # and a larger N extends the same draws (so the page shows them converge).
        pool = max(samples, SAMPLE_POOL)
        drawn = np.asarray(core.hard_sample(key, alphas[0], pool), np.int32)[:n, :samples]  # all STEPS rows: one shape
    return Caption(variant, labels, alpha, cells[0, :n].astype(np.int32), drawn, g)


def cell_labels(grid: int) -> tuple[str, ...]:
    """Returns r0c0 … r{g-1}c{g-1}, row-major."""
    return tuple(f"r{r}c{c}" for r in range(grid) for c in range(grid))


def to_record(mechanism_id: str, result: Caption, settings: Mapping[str, Any]) -> AttentionRecord:
    """Returns the AttentionRecord of a decoded caption; settings go to meta."""
    extras: dict[str, Any] = {"caption": result.caption}
    if result.variant == "hard":
        extras["decode_cells"] = result.decode_cells
        if result.samples is not None:
            extras["samples"] = result.samples
            extras["frequencies"] = result.frequencies()
    meta = {"variant": result.variant, "grid": result.grid, "model": f"checkpoints/captioner/{result.variant}.safetensors",
            **dict(settings)}
    return AttentionRecord(
        mechanism=mechanism_id,
        weights=result.alphas,
        axes=("word", "row", "col"),
        query_labels=result.words,
        key_labels=cell_labels(result.grid),
        meta=meta,
        extras=extras,
    )


def caption_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder of "soft" and "hard": the entry's variant captions options["image"]."""
    image = load_image_option(options["image"])
    hard = mechanism.variant == "hard"
    settings = {k: options[k] for k in ("temperature", "samples", "seed", "mode") if k in options}
    result = caption_image(
        image, mechanism.variant, mode=options["mode"] if hard else "soft", temperature=options["temperature"],
        samples=options.get("samples", 0), seed=options.get("seed", 0),
    )
    distance = scene_distance(image)
    settings["scene_distance"] = round(distance, 2)
    if distance > SCENE_DISTANCE_LIMIT:
        settings["notices"] = [Notice(OUTSIDE_NOTICE, distance=distance, limit=SCENE_DISTANCE_LIMIT)]
    return to_record(mechanism.id, result, settings)

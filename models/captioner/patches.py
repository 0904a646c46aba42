"""Self-attention over the patches of any photo, with no learned weights (Q = K = V = X).

The photo (longer side scaled to at most MAX_SIDE px) is cut into square patches of
`patch` px (the last partial row/column of pixels is dropped). Each patch j is described by
x_j = [r̄, ḡ, b̄ (its mean colour in [0, 1]), position_weight · (row, col) / grid], and every
feature is centred on its mean over all patches. One query patch i then attends to all
patches with the scaled dot product of the attention core:

    α_ij = softmax_j( x_i · x_j / (√d · τ) ),

so patches whose colour deviates from the photo's average in the same direction as the
query's (and, weighted by position_weight, that lie on the same side of the centre) get
the weight. Hard attention replaces α by its argmax or by N draws from it.

What it shows: how a dot product turns plain similarity into a distribution, and how the
temperature and the features decide what "similar" means. What it does not show: anything a
trained model has learned — there are no weights, no semantics, only colour and position.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from models import attention as core
from models.image_input import limit_side, read_any_image
from models.record import AttentionRecord, InputError

MAX_SIDE = 256
PATCH_RANGE = (4, 64)


@dataclass(frozen=True)
class PatchAttention:
    """One query patch's attention. weights float32 [gh, gw]; samples int [N] or None."""

    image: np.ndarray  # uint8 [H, W, 3], the scaled photo (cropped to whole patches)
    features: np.ndarray  # float32 [gh·gw, 5]
    soft: np.ndarray  # float32 [gh, gw]: α before any hard choice
    weights: np.ndarray  # float32 [gh, gw]: α, its one-hot argmax, or the sample frequencies
    query: tuple[int, int]
    patch: int
    samples: np.ndarray | None


def prepare_photo(image: np.ndarray, patch: int) -> np.ndarray:
    """Returns the photo scaled to MAX_SIDE and cropped to a whole number of patches."""
    patch = _check_patch(patch)
    photo = limit_side(np.asarray(image, np.uint8), MAX_SIDE)
    gh, gw = photo.shape[0] // patch, photo.shape[1] // patch
    if gh < 1 or gw < 1:
        side = min(photo.shape[:2])
        advice = (f"choose a patch size of at most {side} px" if side >= PATCH_RANGE[0] else
                  f"use an image of at least {PATCH_RANGE[0]}×{PATCH_RANGE[0]} px, the smallest patch")
        raise InputError(f"the image ({photo.shape[1]}×{photo.shape[0]} px) is smaller than one {patch}-px patch; {advice}")
    return photo[: gh * patch, : gw * patch]


def patch_features(photo: np.ndarray, patch: int, position_weight: float = 1.0) -> np.ndarray:
    """Returns float32 [gh·gw, 5]: centred [mean r, g, b in 0..1, w·row/gh, w·col/gw] per patch.

    photo uint8 [gh·patch, gw·patch, 3], patches row-major.
    """
    gh, gw = photo.shape[0] // patch, photo.shape[1] // patch
    colours = photo[: gh * patch, : gw * patch].reshape(gh, patch, gw, patch, 3).mean(axis=(1, 3)) / 255.0
    rows, cols = np.meshgrid(np.arange(gh) / max(gh, 1), np.arange(gw) / max(gw, 1), indexing="ij")
    feats = np.concatenate(
        [colours.reshape(-1, 3), position_weight * np.stack([rows.ravel(), cols.ravel()], -1)], axis=-1
    ).astype(np.float32)
    return feats - feats.mean(axis=0, keepdims=True)


def patch_attention(
    image: np.ndarray,
    *,
    patch: int = 16,
    query: tuple[int, int] = (0, 0),
    temperature: float = 0.1,
    mode: str = "soft",
    samples: int = 100,
    seed: int = 0,
    position_weight: float = 1.0,
) -> PatchAttention:
    """Returns the attention of the query patch (row, col) over all patches of the photo."""
    photo = prepare_photo(image, patch)
    gh, gw = photo.shape[0] // patch, photo.shape[1] // patch
    qr, qc = int(query[0]), int(query[1])
    if not (0 <= qr < gh and 0 <= qc < gw):
        raise InputError(f"query patch ({qr}, {qc}) is outside the {gh}×{gw} patch grid; rows 0–{gh - 1}, cols 0–{gw - 1}")
    x = patch_features(photo, patch, position_weight)  # [n, d]
    q = x[qr * gw + qc][None, :]  # [1, d]
    _, alpha = core.scaled_dot_product_attention(q, x, x, None, temperature)
    soft = np.asarray(alpha, np.float32)[0]  # [n]
    applied, drawn = core.apply_mode(soft, mode, seed=seed, num_samples=samples)
    return PatchAttention(
        image=photo, features=x, soft=soft.reshape(gh, gw), weights=np.asarray(applied, np.float32).reshape(gh, gw),
        query=(qr, qc), patch=patch, samples=drawn,
    )


def patch_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Builder of mechanism "patch-self-attention": one query patch over all patches.

    Options (checked by the registry): image (path, bytes or uint8 array), patch (px),
    query_patch (row, col), temperature, mode (soft / argmax / sample), samples, seed.
    """
    result = patch_attention(
        read_any_image(options["image"]), patch=options["patch"], query=options["query_patch"],
        temperature=options["temperature"], mode=options["mode"], samples=options["samples"], seed=options["seed"],
    )
    return patch_result_record(mechanism.id, result, temperature=options["temperature"], mode=options["mode"])


def patch_grid(image: np.ndarray, patch: int) -> tuple[int, int]:
    """Returns (rows, cols) of the patch grid of a photo at this patch size; InputError if none fits."""
    photo = prepare_photo(image, patch)
    return photo.shape[0] // patch, photo.shape[1] // patch


def scene_photo(scene_image: np.ndarray, scale: int = 4) -> np.ndarray:
    """Returns a 64×64 scene scaled up `scale` times (nearest): the photo the patch view cuts."""
    return np.kron(np.asarray(scene_image, np.uint8), np.ones((scale, scale, 1), np.uint8))


def patch_result_record(mechanism_id: str, result: PatchAttention, *, temperature: float, mode: str) -> AttentionRecord:
    """Returns the AttentionRecord (query, row, col) of a PatchAttention result."""
    gh, gw = result.weights.shape
    extras: dict[str, Any] = {"soft_weights": result.soft.reshape(1, gh, gw), "features": result.features}
    if result.samples is not None:
        extras["samples"] = result.samples[None, :]
    qr, qc = result.query
    return AttentionRecord(
        mechanism=mechanism_id,
        weights=result.weights[None],
        axes=("query", "row", "col"),
        query_labels=(f"r{qr}c{qc}",),
        key_labels=tuple(f"r{r}c{c}" for r in range(gh) for c in range(gw)),
        meta={"patch": result.patch, "query": [qr, qc], "temperature": float(temperature), "mode": mode,
              "features": "centred mean RGB + position"},
        extras=extras,
    )


def _check_patch(patch: int) -> int:
    patch = int(patch)
    if not PATCH_RANGE[0] <= patch <= PATCH_RANGE[1]:
        raise InputError(f"patch size must be between {PATCH_RANGE[0]} and {PATCH_RANGE[1]} px, got {patch}")
    return patch

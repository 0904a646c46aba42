"""Attention records of a vision transformer over a photo: every map, each head's [CLS] attention as a patch grid
(DINO's picture), rollout, one patch's attention, and the high-norm "artifact" patches.

Darcet et al. (2024), "Vision Transformers Need Registers": large ViTs (DINOv2, OpenCLIP, DeiT-III) repurpose a
few background patches as global stores; those tokens' output norms are outliers (about 10× the others'), and the
[CLS] map spikes on them. Here a patch is marked when the norm of its token leaving the last block (the residual
stream before the final norm) is an outlier among the image's patches:

    norm > max(ARTIFACT_RATIO · median, median + ARTIFACT_Z · 1.4826 · MAD)

(MAD: the median absolute deviation; 1.4826 · MAD estimates a standard deviation from the bulk, so a few outliers
do not raise the bar). Both bars must be passed: the ratio keeps a tightly clustered image from marking ordinary
spread, the robust z keeps a widely spread one from marking its bright half. docs/models/vit.md gives the measure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from models.capture import Capture
from models.heads.rollout import rollout_of_record
from models.image_input import read_any_image
from models.model_folders import model_dir_option
from models.record import AttentionRecord, InputError
from models.vit.model import LoadedVit, run, shared_vit
from models.vit.preprocess import model_view, normalised, view_shape

ARTIFACT_RATIO = 2.0
ARTIFACT_Z = 5.0
MAX_RECORD_BYTES = 640 * 2**20  # as the decoder's bound (models/lm/records.py): 12 × 12 maps over 2,000 tokens fit
VIEWS = ("all", "cls", "rollout", "patch")
AXES = ("layer", "head", "query", "key")
GRID_AXES = ("layer", "head", "query", "row", "col")


def token_labels(special: int, registers: int, rows: int, cols: int) -> tuple[str, ...]:
    """Returns the T labels: [CLS] ([DIST]), [REG1]…, then the patches row by row as r<row>c<col> (from 0)."""
    heads = ("[CLS]", "[DIST]")[:special]
    return (
        *heads,
        *(f"[REG{i + 1}]" for i in range(registers)),
        *(f"r{r}c{c}" for r in range(rows) for c in range(cols)),
    )


def artifact_threshold(norms: np.ndarray) -> float:
    """Returns the norm above which a patch is marked: max(ratio · median, median + z · 1.4826 · MAD).  norms [P]."""
    norms = np.asarray(norms, np.float64)
    median = float(np.median(norms))
    spread = 1.4826 * float(np.median(np.abs(norms - median)))
    return max(ARTIFACT_RATIO * median, median + ARTIFACT_Z * spread)


def record_bytes(vit: LoadedVit, height: int, width: int) -> int:
    """Returns the float32 bytes of every map for a photo of height × width (and what the forward holds beside)."""
    cfg = vit.config
    rows, cols = (side // cfg.patch_size for side in view_shape(height, width, vit.preprocess))
    tokens = cfg.special + cfg.registers + rows * cols
    return 2 * 4 * cfg.num_layers * cfg.num_heads * tokens * tokens


def attention_record(vit: LoadedVit, image: Any, mechanism_id: str = "vit") -> AttentionRecord:
    """Returns the ("layer", "head", "query", "key") record of every map over the photo, with the token norms and
    the artifact patches marked. image: a path, bytes or uint8 [H, W, 3].

    extras: photo uint8 [h, w, 3] (the part of the photo the model sees); norms float32 [L + 1, T] (each token's
    norm entering each block and after the last); artifacts int8 [rows, cols] (1: marked).
    """
    cfg = vit.config
    photo = read_any_image(image)
    needed = record_bytes(vit, photo.shape[0], photo.shape[1])
    if needed > MAX_RECORD_BYTES:
        raise InputError(
            f"the maps of this photo take {needed / 2**20:,.0f} MB, more than {MAX_RECORD_BYTES // 2**20} "
            "MB; use a smaller photo (the folder's preprocessing does not resize it)"
        )
    view = model_view(photo, vit.preprocess)
    rows, cols = view.shape[0] // cfg.patch_size, view.shape[1] // cfg.patch_size
    if rows < 1 or cols < 1:
        raise InputError(
            f"the photo ({view.shape[1]}×{view.shape[0]} px as the model sees it) is smaller than one "
            f"{cfg.patch_size}-px patch; use a larger photo"
        )
    out = run(vit, normalised(view, vit.preprocess), Capture(logits=False, maps=True, residual=True))
    maps = np.stack(out["maps"]).astype(np.float32)  # [L, H, T, T]
    norms = np.linalg.norm(out["residual"], axis=-1).astype(np.float32)  # [L + 1, T]
    first = cfg.special + cfg.registers
    threshold = artifact_threshold(norms[-1, first:])
    marked = (norms[-1, first:] > threshold).reshape(rows, cols)
    labels = token_labels(cfg.special, cfg.registers, rows, cols)
    return AttentionRecord(
        mechanism=mechanism_id,
        weights=maps,
        axes=AXES,
        query_labels=labels,
        key_labels=labels,
        meta={
            "model": vit.name,
            "model_type": cfg.model_type,
            "grid": [rows, cols],
            "patch_size": cfg.patch_size,
            "special": cfg.special,
            "registers": cfg.registers,
            "first_patch": first,
            "artifact_rule": f"norm > max({ARTIFACT_RATIO:g} × median, median + {ARTIFACT_Z:g} × 1.4826 × MAD)",
            "artifact_threshold": round(threshold, 6),
            "artifacts": int(marked.sum()),
        },
        extras={"photo": view, "norms": norms, "artifacts": marked.astype(np.int8)},
    )


def _grid(record: AttentionRecord) -> tuple[int, int, int]:
    rows, cols = record.meta["grid"]
    return int(rows), int(cols), int(record.meta["first_patch"])


def _grid_record(
    record: AttentionRecord, weights: np.ndarray, axes: tuple[str, ...], query: str, meta: Mapping[str, Any]
) -> AttentionRecord:
    rows, cols, first = _grid(record)
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=weights,
        axes=axes,
        query_labels=(query,),
        key_labels=record.key_labels[first:],
        meta={**record.meta, **meta},
        extras={name: record.extras[name] for name in ("photo", "artifacts") if name in record.extras},
    )


def cls_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("layer", "head", "query", "row", "col") record of each head's [CLS] attention over the patch
    grid [L, H, 1, rows, cols] (DINO's picture); what [CLS] gives the other special and register tokens is left out
    (meta "outside": its share per layer and head)."""
    return patch_record(record, None)


def patch_record(record: AttentionRecord, patch: tuple[int, int] | None) -> AttentionRecord:
    """Returns the ("layer", "head", "query", "row", "col") record of one query's attention over the patch grid
    [L, H, 1, rows, cols]: the patch at (row, col), or [CLS] for None."""
    rows, cols, first = _grid(record)
    if patch is None:
        index, label = 0, "[CLS]"
    else:
        row, col = patch
        if not (0 <= row < rows and 0 <= col < cols):
            raise InputError(
                f"patch {row},{col} is outside the {rows} × {cols} patch grid; rows 0-{rows - 1}, columns 0-{cols - 1}"
            )
        index, label = first + row * cols + col, f"r{row}c{col}"
    row_weights = record.weights[:, :, index, :]  # [L, H, T]
    grid = row_weights[:, :, first:].reshape(*row_weights.shape[:2], 1, rows, cols)
    outside = row_weights[:, :, :first].sum(axis=-1)
    return _grid_record(
        record,
        grid,
        GRID_AXES,
        label,
        {
            "view": "patch" if patch else "cls",
            "query": label,
            "outside": np.round(outside.astype(np.float64), 6).tolist(),
        },
    )


def rollout_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("query", "row", "col") record [1, rows, cols] of [CLS]'s row of attention rollout (heads
    averaged, residual identity, models/heads/rollout.py) over the patch grid."""
    rows, cols, first = _grid(record)
    rolled = rollout_of_record(record).weights[0]  # [T]: [CLS] at the top layer, over the input tokens
    return _grid_record(
        record,
        rolled[first:].reshape(1, rows, cols),
        ("query", "row", "col"),
        "[CLS]",
        {
            "view": "rollout",
            "method": "rollout",
            "fusion": "mean",
            "residual": 0.5,
            "outside": round(float(rolled[:first].sum()), 6),
        },
    )


def vit_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options model_dir, image, view (all, cls, rollout, patch) and query_patch -> one
    record (view "all": every map, [layer, head, T, T])."""
    vit = shared_vit(model_dir_option(options))
    full = attention_record(vit, options["image"], mechanism.id)
    view = options.get("view") or "all"
    if view == "cls":
        return cls_record(full)
    if view == "rollout":
        return rollout_record(full)
    if view == "patch":
        return patch_record(full, tuple(options.get("query_patch") or (0, 0)))
    return full


def vit_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: the bytes one photo's record holds while built (every map, twice)."""
    photo = read_any_image(options["image"])
    return record_bytes(shared_vit(model_dir_option(options)), photo.shape[0], photo.shape[1])

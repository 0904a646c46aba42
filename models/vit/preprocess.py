"""A photo turned into a vision transformer's pixel values exactly as the folder's image processor does it
(transformers' PIL backend): resize with the Pillow filter it names, centre crop, rescale, normalise.

numpy and Pillow only. The photo comes in as uint8 RGB (models/image_input.py decodes and bounds it; alpha is
composited on white, as transformers' convert_to_rgb does).
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image

from models.vit.config import Preprocess

_FILTERS = {
    "nearest": Image.Resampling.NEAREST,
    "lanczos": Image.Resampling.LANCZOS,
    "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC,
    "box": Image.Resampling.BOX,
    "hamming": Image.Resampling.HAMMING,
}


def resized_shape(height: int, width: int, size: tuple[str, int, int]) -> tuple[int, int]:
    """Returns (height, width) after the resize: a fixed size, or the shortest edge set to s and the other scaled
    and truncated (torchvision's rule, as transformers' get_resize_output_image_size)."""
    kind, first, second = size
    if kind == "height":
        return first, second
    short, long = (width, height) if width <= height else (height, width)
    new_long = int(first * long / short)
    return (new_long, first) if width <= height else (first, new_long)


def center_crop(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Returns the centre [height, width] of image [H, W, C], padded with zeros where the image is smaller (the
    same offsets as transformers' center_crop)."""
    rows, cols = image.shape[:2]
    top, left = (rows - height) // 2, (cols - width) // 2
    if top >= 0 and left >= 0:
        return image[top : top + height, left : left + width]
    new_rows, new_cols = max(height, rows), max(width, cols)
    canvas = np.zeros((new_rows, new_cols, image.shape[2]), image.dtype)
    pad_top, pad_left = math.ceil((new_rows - rows) / 2), math.ceil((new_cols - cols) / 2)
    canvas[pad_top : pad_top + rows, pad_left : pad_left + cols] = image
    top, left = top + pad_top, left + pad_left
    return canvas[max(0, top) : min(new_rows, top + height), max(0, left) : min(new_cols, left + width)]


def model_view(image: np.ndarray, steps: Preprocess) -> np.ndarray:
    """Returns uint8 [h, w, 3]: the part of image uint8 [H, W, 3] the model sees, resized and cropped (before
    rescaling), which the figures draw under the patch grid."""
    image = np.asarray(image, np.uint8)
    if steps.size is not None:
        height, width = resized_shape(image.shape[0], image.shape[1], steps.size)
        image = np.asarray(Image.fromarray(image).resize((width, height), _FILTERS[steps.resample]), np.uint8)
    return center_crop(image, *steps.crop) if steps.crop is not None else image


def view_shape(height: int, width: int, steps: Preprocess) -> tuple[int, int]:
    """Returns the (h, w) of model_view for a photo of height × width, without resizing anything."""
    if steps.size is not None:
        height, width = resized_shape(height, width, steps.size)
    return steps.crop if steps.crop is not None else (height, width)


def normalised(view: np.ndarray, steps: Preprocess) -> np.ndarray:
    """Returns float32 [3, h, w] of model_view's uint8 [h, w, 3]: rescaled in float64 and rounded to float32, then
    normalised in float32, as transformers does, so the values agree with its pixel_values to float32 rounding."""
    values = (view.astype(np.float64) * steps.rescale).astype(np.float32) if steps.rescale else view.astype(np.float32)
    if steps.mean is not None and steps.std is not None:
        values = (values - np.asarray(steps.mean, np.float32)) / np.asarray(steps.std, np.float32)
    return np.ascontiguousarray(values.transpose(2, 0, 1), dtype=np.float32)


def pixel_values(image: np.ndarray, steps: Preprocess) -> np.ndarray:
    """Returns float32 [3, h, w]: image uint8 [H, W, 3] resized, cropped, rescaled and normalised as `steps` say."""
    return normalised(model_view(image, steps), steps)

"""Reading user images safely: content-checked, size-capped, EXIF-rotated, alpha on white.

Every failure a user can cause raises models.record.InputError with one line saying what was
wrong and what to do; every image pillow can decode (PNG, JPEG, GIF, BMP, WebP, TIFF) comes
back as uint8 RGB, whatever its mode (1-bit, greyscale, 16-bit, palette, CMYK, alpha).
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from models.record import InputError

MAX_BYTES = 10 * 1024 * 1024  # 10 MB
MAX_PIXELS = 40_000_000  # checked from the header, before any pixel is decoded
ALLOWED_FORMATS = ("PNG", "JPEG", "GIF", "BMP", "WEBP", "TIFF")
WHITE = (255, 255, 255)


def read_image_file(path: str | Path) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3] from an image file; InputError if it is missing or bad."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"image file not found: {path}")
    size = file.stat().st_size
    if size > MAX_BYTES:
        raise InputError(_too_big_message(size))
    return decode_image(file.read_bytes())


def decode_image(data: bytes) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3] decoded from image bytes (first frame of an animation).

    The format is recognised from the content, never from a file name. Raises InputError for
    empty, oversized, non-image, truncated or decompression-bomb input.
    """
    if data is None or len(data) == 0:
        raise InputError("the file is empty (0 bytes); upload a PNG or JPEG image")
    if len(data) > MAX_BYTES:
        raise InputError(_too_big_message(len(data)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
            fmt = image.format
            if fmt not in ALLOWED_FORMATS:
                raise InputError(f"{fmt} images are not supported; upload a PNG or JPEG image")
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise InputError(
                    f"the image is {width}×{height} pixels ({width * height / 1e6:.0f} megapixels), over the "
                    f"limit of {MAX_PIXELS / 1e6:.0f}; scale it down and upload it again"
                )
            if getattr(image, "n_frames", 1) > 1:
                image.seek(0)  # animations: the first frame
            image.load()
            image = ImageOps.exif_transpose(image)
            return to_rgb(image)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(
            f"the image has too many pixels to decode safely (limit {MAX_PIXELS / 1e6:.0f} megapixels); "
            "scale it down and upload it again"
        ) from None
    except Image.UnidentifiedImageError:
        raise InputError(
            "the file is not an image pillow can read (its content was checked, not its name); upload a PNG or JPEG"
        ) from None
    except (OSError, SyntaxError, ValueError, EOFError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"the image data is truncated or corrupt ({detail}); upload the file again") from None


def to_rgb(image: Image.Image) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3]: 16-bit and float scaled to 8 bits, alpha composited on white."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        if mode.startswith("I;16") or (mode == "I" and values.max(initial=0) > 255):
            values = values / 257.0 if values.max(initial=0) <= 65535 else values / values.max() * 255.0
        elif mode == "F" and values.max(initial=0) <= 1.0:
            values = values * 255.0
        grey = np.clip(np.rint(values), 0, 255).astype(np.uint8)
        return np.repeat(grey[..., None], 3, axis=-1)
    has_alpha = mode in ("RGBA", "LA", "PA", "La", "RGBa") or (mode == "P" and "transparency" in image.info)
    if has_alpha:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, WHITE + (255,))
        return np.asarray(Image.alpha_composite(background, rgba).convert("RGB"), np.uint8)
    return np.asarray(image.convert("RGB"), np.uint8)


def read_any_image(value: Any) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3] from a path, bytes or an array; InputError if unusable."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("no image given; pass an image file (PNG or JPEG)")
    if isinstance(value, (str, Path)):
        return read_image_file(str(value).strip())
    if isinstance(value, (bytes, bytearray)):
        return decode_image(bytes(value))
    image = np.asarray(value)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError(f"an image array must be uint8 [H, W, 3], got {image.dtype} {image.shape}")
    return image


def fit_square(image: np.ndarray, size: int = 64) -> np.ndarray:
    """Returns uint8 [size, size, 3]: the image padded to a square with white, then resized.

    Padding keeps shapes undistorted (a circle stays a circle); the area-averaging resize
    anti-aliases large uploads the way scenes drawn by other programs look.
    """
    height, width = image.shape[:2]
    side = max(height, width)
    canvas = np.full((side, side, 3), 255, np.uint8)
    top, left = (side - height) // 2, (side - width) // 2
    canvas[top : top + height, left : left + width] = image
    resample = Image.Resampling.BOX if side >= size else Image.Resampling.NEAREST
    return np.asarray(Image.fromarray(canvas).resize((size, size), resample), np.uint8)


def limit_side(image: np.ndarray, max_side: int) -> np.ndarray:
    """Returns the image scaled down (area average) so that its longer side is at most max_side."""
    height, width = image.shape[:2]
    if max(height, width) <= max_side:
        return image
    scale = max_side / max(height, width)
    new = (max(1, round(width * scale)), max(1, round(height * scale)))
    return np.asarray(Image.fromarray(image).resize(new, Image.Resampling.BOX), np.uint8)


def _too_big_message(size: int) -> str:
    return f"the file is {size / 2**20:.1f} MB, over the {MAX_BYTES // 2**20} MB limit; upload a smaller image"


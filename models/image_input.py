"""Reading user images safely: content-checked, size-capped, shrunk on decode, EXIF-rotated, alpha on white.

Every failure a user can cause raises models.record.InputError with one line saying what was
wrong and what to do; every image pillow can decode of the formats offered (PNG, JPEG with
phone MPO files, GIF, BMP, WebP) comes back as uint8 RGB, whatever its mode (1-bit,
greyscale, 16-bit, palette, CMYK, alpha).

Memory stays bounded whatever is sent: the header is checked before any pixel is decoded,
JPEGs are decoded at a reduced scale (Image.draft), other formats are reduced right after
decoding (Image.reduce), and nothing is padded or copied until the longer side is at most
MAX_SIDE pixels. A 30,000 × 300 PNG therefore never becomes a 30,000² canvas.
"""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from models.record import InputError
from models.text import N_, Notice

MAX_BYTES = 10 * 1024 * 1024  # 10 MB
MAX_PIXELS = 40_000_000  # checked from the header, before any pixel is decoded
MAX_SIDE = 1024  # longest side kept after decoding; every model reads far fewer pixels
MAX_ASPECT = 20.0  # longer side / shorter side
ALLOWED_FORMATS = ("PNG", "JPEG", "MPO", "GIF", "BMP", "WEBP")
WHITE = (255, 255, 255)
# Everything pillow raises on malformed files, beyond its own UnidentifiedImageError.
_DECODE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError, KeyError,
                  ZeroDivisionError, TypeError, AttributeError, MemoryError, zlib.error, RuntimeError)


def read_image_file(path: str | Path) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3] from an image file; InputError if it is missing or bad."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"image file not found: {path}")
    with file.open("rb") as f:
        data = f.read(MAX_BYTES + 1)  # never more than the cap + 1 bytes
    if len(data) > MAX_BYTES:
        raise InputError(_too_big_message(file.stat().st_size))
    return decode_image(data)


def decode_image(data: bytes, max_side: int = MAX_SIDE) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3] decoded from image bytes (first frame of an animation),
    its longer side at most max_side.

    The format is recognised from the content, never from a file name. Raises InputError for
    empty, oversized, non-image, truncated, malformed, too elongated or decompression-bomb input.
    """
    if data is None or len(data) == 0:
        raise InputError(Notice(N_("the file is empty (0 bytes); upload a PNG or JPEG image")))
    if len(data) > MAX_BYTES:
        raise InputError(_too_big_message(len(data)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
            _check_header(image)
            if getattr(image, "n_frames", 1) > 1:
                image.seek(0)  # animations: the first frame
            if image.format in ("JPEG", "MPO"):
                image.draft("RGB", _draft_size(image.size, max_side))  # decode at 1/2, 1/4 or 1/8 scale
            image.load()
            image = _shrunk(ImageOps.exif_transpose(image), max_side)
            return to_rgb(image)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(Notice(
            N_("the image has too many pixels to decode safely (limit {limit:.0f} megapixels); "
               "scale it down and upload it again"), limit=MAX_PIXELS / 1e6,
        )) from None
    except Image.UnidentifiedImageError:
        raise InputError(Notice(
            N_("the file is not an image pillow can read (its content was checked, not its name); upload a PNG or JPEG")
        )) from None
    except _DECODE_ERRORS as error:
        detail = str(error).splitlines()[0][:80] if str(error) else type(error).__name__
        raise InputError(Notice(N_("the image data is truncated or corrupt ({detail}); upload the file again"),
                                detail=detail)) from None


def _check_header(image: Image.Image) -> None:
    fmt = image.format
    if fmt not in ALLOWED_FORMATS:
        raise InputError(Notice(N_("{format} images are not supported; upload a PNG or JPEG image"), format=fmt))
    width, height = image.size
    if width < 1 or height < 1:
        raise InputError(Notice(N_("the image has no pixels; upload a PNG or JPEG image")))
    if width * height > MAX_PIXELS:
        raise InputError(Notice(
            N_("the image is {width}×{height} pixels ({megapixels:.0f} megapixels), over the "
               "limit of {limit:.0f}; scale it down and upload it again"),
            width=width, height=height, megapixels=width * height / 1e6, limit=MAX_PIXELS / 1e6,
        ))
    if max(width, height) / min(width, height) > MAX_ASPECT:
        raise InputError(Notice(
            N_("the image is {width}×{height} pixels, more than {most:g} times longer one way than the other; "
               "crop it to a less elongated shape and upload it again"), width=width, height=height, most=MAX_ASPECT,
        ))


def _draft_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    # draft() picks the largest JPEG scale (1, 1/2, 1/4, 1/8) still at least this size.
    width, height = size
    scale = min(1.0, max_side / max(width, height))
    return max(1, int(width * scale)), max(1, int(height * scale))


def _shrunk(image: Image.Image, max_side: int) -> Image.Image:
    """Returns the image with its longer side at most max_side (integer reduce, then an area resize)."""
    longest = max(image.size)
    if longest <= max_side:
        return image
    factor = longest // max_side
    if factor >= 2 and image.mode not in ("P", "1"):
        image = image.reduce(factor)
    if max(image.size) > max_side:
        scale = max_side / max(image.size)
        new = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        resample = Image.Resampling.BOX if image.mode not in ("P", "1") else Image.Resampling.NEAREST
        image = image.resize(new, resample)
    return image


def to_rgb(image: Image.Image) -> np.ndarray:
    """Returns uint8 RGB [H, W, 3]: 16-bit and float scaled to 8 bits, alpha composited on white."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        if mode.startswith("I;16") or (mode == "I" and values.max(initial=0) > 255):
            values = values / 257.0 if values.max(initial=0) <= 65535 else values / values.max() * 255.0
        elif mode == "F" and values.max(initial=0) <= 1.0:
            values = values * 255.0
        grey = np.clip(np.rint(np.nan_to_num(values)), 0, 255).astype(np.uint8)
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
    if image.shape[0] * image.shape[1] > MAX_PIXELS:
        raise InputError(f"the image array has {image.shape[0] * image.shape[1]:,} pixels, over the limit")
    return limit_side(image, MAX_SIDE)


def fit_square(image: np.ndarray, size: int = 64) -> np.ndarray:
    """Returns uint8 [size, size, 3]: the image shrunk so its longer side is `size`, then padded
    to a square with white.

    Shrinking first keeps memory at the image's own size (a square canvas of a 30,000 × 300 px
    image's long side would take gigabytes); padding keeps shapes undistorted (a circle stays a circle); the
    area-averaging resize anti-aliases large uploads the way scenes drawn by other programs look.
    """
    height, width = image.shape[:2]
    scale = size / max(height, width)
    new = (max(1, round(width * scale)), max(1, round(height * scale)))
    resample = Image.Resampling.BOX if scale <= 1 else Image.Resampling.NEAREST
    small = np.asarray(Image.fromarray(np.asarray(image, np.uint8)).resize(new, resample), np.uint8)
    canvas = np.full((size, size, 3), 255, np.uint8)
    top, left = (size - small.shape[0]) // 2, (size - small.shape[1]) // 2
    canvas[top : top + small.shape[0], left : left + small.shape[1]] = small
    return canvas


def limit_side(image: np.ndarray, max_side: int) -> np.ndarray:
    """Returns the image scaled down (area average) so that its longer side is at most max_side."""
    height, width = image.shape[:2]
    if max(height, width) <= max_side:
        return image
    scale = max_side / max(height, width)
    new = (max(1, round(width * scale)), max(1, round(height * scale)))
    return np.asarray(Image.fromarray(image).resize(new, Image.Resampling.BOX), np.uint8)


def _too_big_message(size: int) -> Notice:
    return Notice(N_("the file is {size:.1f} MB, over the {limit} MB limit; upload a smaller image"),
                  size=size / 2**20, limit=MAX_BYTES // 2**20)

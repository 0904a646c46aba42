"""Upload validation: every bad input gets a one-line InputError, every odd image decodes."""

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from models import image_input
from models.image_input import decode_image, fit_square, limit_side, read_image_file
from models.record import InputError


def encode(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """Returns a PNG that declares width × height 1-bit pixels but carries one empty IDAT."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def red_square_png() -> bytes:
    array = np.full((20, 30, 3), 255, np.uint8)
    array[5:15, 5:15] = (200, 0, 0)
    return encode(Image.fromarray(array), "PNG")


def assert_one_line(error: InputError, *words: str):
    message = str(error)
    assert "\n" not in message and message
    for word in words:
        assert word in message.lower()


def test_png_decodes_to_rgb_array():
    out = decode_image(red_square_png())
    assert out.shape == (20, 30, 3) and out.dtype == np.uint8
    assert tuple(out[10, 10]) == (200, 0, 0) and tuple(out[0, 0]) == (255, 255, 255)


def test_non_image_bytes_with_image_extension(tmp_path):
    path = tmp_path / "photo.png"
    path.write_bytes(b"this is plain text, not a picture\n" * 10)
    with pytest.raises(InputError) as info:
        read_image_file(path)
    assert_one_line(info.value, "not an image", "content")


def test_zero_byte_file(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(InputError) as info:
        read_image_file(path)
    assert_one_line(info.value, "empty")


def test_truncated_png():
    data = encode(Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8)), "PNG")
    with pytest.raises(InputError) as info:
        decode_image(data[: len(data) // 2])
    assert_one_line(info.value, "truncated")


def test_huge_dimensions_rejected_before_decoding(monkeypatch):
    data = png_header_only(9_000, 8_000)  # 72 megapixels declared in a 60-byte file
    decoded = []
    monkeypatch.setattr(Image.Image, "load", lambda self: decoded.append(1))
    with pytest.raises(InputError) as info:
        decode_image(data)
    assert_one_line(info.value, "megapixels", "limit")
    assert not decoded  # the size was checked from the header alone


def test_pillow_bomb_guard_also_gives_one_line():
    data = png_header_only(14_000, 14_000)  # 196 MP: pillow's own guard fires at open
    with pytest.raises(InputError) as info:
        decode_image(data)
    assert_one_line(info.value, "megapixels")


def test_oversized_file_rejected(monkeypatch):
    monkeypatch.setattr(image_input, "MAX_BYTES", 1000)
    with pytest.raises(InputError) as info:
        decode_image(b"\x89PNG" + b"0" * 2000)
    assert_one_line(info.value, "limit")


def test_animated_gif_uses_first_frame():
    frames = [Image.new("RGB", (16, 16), colour) for colour in ((255, 0, 0), (0, 0, 255), (0, 255, 0))]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    out = decode_image(buffer.getvalue())
    assert out.shape == (16, 16, 3)
    assert out[8, 8, 0] > 200 and out[8, 8, 2] < 50  # red, the first frame


def test_sixteen_bit_greyscale_is_scaled_not_clipped():
    values = np.full((8, 8), 32896, np.uint16)  # 50 % grey in 16 bits
    out = decode_image(encode(Image.fromarray(values), "PNG"))
    assert out.shape == (8, 8, 3)
    assert np.all(np.abs(out.astype(int) - 128) <= 1)


def test_cmyk_jpeg():
    cmyk = Image.new("CMYK", (10, 10), (0, 255, 255, 0))  # red in CMYK
    out = decode_image(encode(cmyk, "JPEG"))
    assert out.shape == (10, 10, 3)
    assert out[5, 5, 0] > 180 and out[5, 5, 1] < 80 and out[5, 5, 2] < 80


def test_greyscale():
    out = decode_image(encode(Image.new("L", (5, 7), 100), "PNG"))
    assert out.shape == (7, 5, 3) and np.all(out == 100)


def test_alpha_is_composited_on_white():
    rgba = np.zeros((4, 4, 4), np.uint8)
    rgba[..., 0] = 255
    rgba[:, :2, 3] = 255  # left half opaque red, right half fully transparent
    out = decode_image(encode(Image.fromarray(rgba, "RGBA"), "PNG"))
    assert tuple(out[0, 0]) == (255, 0, 0)
    assert tuple(out[0, 3]) == (255, 255, 255)


def test_palette_with_transparency():
    image = Image.new("P", (4, 4), 0)
    image.putpalette([0, 0, 0, 0, 255, 0] + [0] * 762)
    image.putpixel((0, 0), 1)
    out = decode_image(encode(image, "PNG", transparency=0))
    assert tuple(out[0, 0]) == (0, 255, 0) and tuple(out[3, 3]) == (255, 255, 255)


def test_one_by_one_image_fits_the_model_input():
    out = decode_image(encode(Image.new("RGB", (1, 1), (10, 20, 30)), "PNG"))
    assert out.shape == (1, 1, 3)
    square = fit_square(out, 64)
    assert square.shape == (64, 64, 3) and tuple(square[32, 32]) == (10, 20, 30)


def test_exif_orientation_is_applied():
    array = np.zeros((10, 20, 3), np.uint8)  # landscape 20 wide, 10 high
    image = Image.fromarray(array)
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    out = decode_image(encode(image, "JPEG", exif=exif.tobytes()))
    assert out.shape == (20, 10, 3)


def test_fit_square_pads_with_white_and_limit_side_keeps_aspect():
    wide = np.zeros((32, 128, 3), np.uint8)
    square = fit_square(wide, 64)
    assert square.shape == (64, 64, 3)
    assert np.all(square[0] == 255) and np.all(square[32] == 0)
    small = limit_side(np.zeros((600, 300, 3), np.uint8), 200)
    assert small.shape == (200, 100, 3)


def test_a_wide_png_is_refused_before_any_pixel_and_a_tall_one_shrinks_on_decode():
    import tracemalloc

    from models.captioner.records import load_image_option

    wide = encode(Image.new("RGB", (30_000, 300), "white"), "PNG")  # 27 KB that once peaked at 6.2 GB
    tracemalloc.start()
    with pytest.raises(InputError) as info:
        load_image_option(wide)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert_one_line(info.value, "30000×300", "20 times longer")
    assert peak < 5_000_000
    tall = encode(Image.new("RGB", (1_000, 20_000), "white"), "PNG")  # 20 megapixels, 20:1 exactly
    tracemalloc.start()
    image = load_image_option(tall)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert image.shape == (64, 64, 3) and peak < 20_000_000  # the decoded photo never existed at full size in numpy
    decoded = image_input.decode_image(tall)
    assert decoded.shape[0] == image_input.MAX_SIDE and abs(decoded.shape[1] - image_input.MAX_SIDE / 20) <= 1.5


def test_phone_jpegs_decode_and_tiff_is_not_offered():
    jpeg = encode(Image.new("RGB", (2_000, 1_500), (10, 200, 30)), "JPEG", quality=90)
    decoded = decode_image(jpeg)
    assert decoded.shape == (768, 1024, 3) and abs(int(decoded[0, 0, 1]) - 200) <= 3  # draft + shrink
    mpo = Image.new("RGB", (64, 48), (200, 20, 20))
    second = Image.new("RGB", (64, 48), (20, 20, 200))
    buffer = io.BytesIO()
    mpo.save(buffer, format="MPO", save_all=True, append_images=[second])
    assert decode_image(buffer.getvalue())[0, 0].tolist()[0] > 150  # the first frame of a phone MPO
    with pytest.raises(InputError, match="TIFF images are not supported"):
        decode_image(encode(Image.new("RGB", (8, 8)), "TIFF"))


def _mutated(data: bytes, flips: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(data)
    for position, value in flips:
        out[position % len(out)] = value
    return bytes(out[:cut] if cut else out)


SEEDS = {
    "png": encode(Image.fromarray(np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8)), "PNG"),
    "jpeg": encode(Image.fromarray(np.random.default_rng(1).integers(0, 255, (24, 16, 3), dtype=np.uint8)), "JPEG"),
    "gif": encode(Image.new("P", (12, 9), 3), "GIF"),
}


@pytest.mark.parametrize("kind", SEEDS)
def test_mutated_image_bytes_raise_only_input_errors(kind):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as hs

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(hs.lists(hs.tuples(hs.integers(0, 10_000), hs.integers(0, 255)), max_size=8),
           hs.one_of(hs.none(), hs.integers(0, len(SEEDS[kind]))))
    def fuzz(flips, cut):
        try:
            image = decode_image(_mutated(SEEDS[kind], flips, cut))
        except InputError as error:
            assert "\n" not in str(error) and str(error)
        else:
            assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3

    fuzz()

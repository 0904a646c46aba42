"""The folder's image preprocessing, against transformers' own pixel_values (tests/fixtures/vit/*/reference.npz,
made by tools/make_vit_fixtures.py with its PIL image processors) and small numpy oracles."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.image_input import read_image_file
from models.record import InputError
from models.vit.config import preprocess_config, read_vit_config, vit_config
from models.vit.preprocess import center_crop, pixel_values, resized_shape, view_shape

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "vit"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", NAMES)
def test_pixel_values_equal_hugging_face(name):
    steps = preprocess_config(FIXTURES / name)
    reference = np.load(FIXTURES / name / "reference.npz")
    for i, photo in enumerate(reference["photos"]):
        values = pixel_values(read_image_file(ROOT / str(photo)), steps)
        expected = reference[f"pixel_values_{i}"]
        assert values.shape == expected.shape and values.dtype == np.float32
        np.testing.assert_allclose(values, expected, atol=1e-5, rtol=0)


def test_each_folder_says_its_own_steps():
    vit, dinov2 = preprocess_config(FIXTURES / "vit"), preprocess_config(FIXTURES / "dinov2")
    assert vit.size == ("height", 32, 32) and vit.resample == "bilinear" and vit.crop is None  # legacy size: 32
    assert vit.mean == (0.5, 0.5, 0.5) and vit.rescale == pytest.approx(1 / 255)
    assert dinov2.size == ("shortest_edge", 56, 0) and dinov2.resample == "bicubic" and dinov2.crop == (48, 48)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 600))
def test_shortest_edge_keeps_the_aspect_as_torchvision(height, width, edge):
    new_h, new_w = resized_shape(height, width, ("shortest_edge", edge, 0))
    # torchvision's rule: the shorter side becomes edge, the longer int(edge · long / short), truncated
    if width <= height:
        assert (new_h, new_w) == (int(edge * height / width), edge)
    else:
        assert (new_h, new_w) == (edge, int(edge * width / height))
    assert resized_shape(height, width, ("height", edge, 7)) == (edge, 7)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
def test_center_crop_takes_the_centre_or_pads_with_zeros(rows, cols, height, width):
    image = np.arange(1, rows * cols + 1, dtype=np.int32).reshape(rows, cols, 1)
    out = center_crop(image, height, width)
    assert out.shape == (height, width, 1)
    # Oracle: place both on a common canvas centred as transformers does (ceil for the padding, floor for the crop).
    canvas_h, canvas_w = max(rows, height), max(cols, width)
    canvas = np.zeros((canvas_h, canvas_w, 1), np.int32)
    pad_top, pad_left = -(-(canvas_h - rows) // 2), -(-(canvas_w - cols) // 2)
    canvas[pad_top : pad_top + rows, pad_left : pad_left + cols] = image
    top, left = pad_top + (rows - height) // 2, pad_left + (cols - width) // 2
    np.testing.assert_array_equal(out, canvas[top : top + height, left : left + width])


def test_view_shape_predicts_the_pixels_without_resizing():
    steps = preprocess_config(FIXTURES / "dinov2")
    image = np.zeros((30, 70, 3), np.uint8)
    assert view_shape(30, 70, steps) == pixel_values(image, steps).shape[1:]


def _folder_with(tmp_path: Path, name: str, **changes) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    for file in ("config.json", "preprocessor_config.json"):
        data = json.loads((FIXTURES / name / file).read_text())
        data.update(changes.get(file.split(".")[0].split("_")[0], {}))
        (folder / file).write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    "change, words",
    [
        ({"preprocessor": {"size": {"longest_edge": 50}}}, "size"),
        ({"preprocessor": {"resample": 9}}, "resample"),
        ({"preprocessor": {"do_pad": True}}, "do_pad"),
        ({"preprocessor": {"image_mean": [0.5, 0.5]}}, "image_mean"),
    ],
)
def test_unsupported_preprocessing_is_refused_in_one_line(tmp_path, change, words):
    folder = _folder_with(tmp_path, "dinov2", **change)
    with pytest.raises(InputError, match=words) as error:
        preprocess_config(folder)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"model_type": "swin"}, "'swin'"),
        ({"hidden_act": "mish"}, "hidden_act"),
        ({"num_channels": 1}, "num_channels"),
        ({"hidden_size": 30}, "multiple"),
    ],
)
def test_unsupported_configs_are_refused_in_one_line(change, words):
    data = json.loads((FIXTURES / "dinov2" / "config.json").read_text())
    with pytest.raises(InputError, match=words):
        vit_config({**data, **change})


def test_configs_read_the_rules_of_each_kind():
    configs = {name: read_vit_config(FIXTURES / name) for name in NAMES}
    assert configs["deit"].special == 2 and configs["vit"].special == 1
    assert configs["dinov2"].layer_scale and not configs["vit"].layer_scale
    assert configs["dinov2"].intermediate_size == 64  # hidden 32 × mlp_ratio 2
    reg = configs["dinov2_reg"]
    assert reg.registers == 3 and reg.swiglu and reg.interpolation == "bicubic_aa"
    assert reg.intermediate_size == 64  # int(96 · 2/3) rounded up to a multiple of 8
    assert configs["dinov2"].norm_eps == 1e-6 and configs["vit"].norm_eps == 1e-12


def test_a_folder_without_a_preprocessor_config_is_refused(tmp_path):
    with pytest.raises(InputError, match="preprocessor_config.json"):
        preprocess_config(tmp_path)

"""Parity with Hugging Face transformers (eager attention, output_attentions=True) on tiny random vision
transformers: tests/fixtures/vit/<name>/ holds folders as save_pretrained leaves them and HF's outputs on two
photos (tools/make_vit_fixtures.py, run in the torch venv), and for DINOv2 a non-square patch grid the position
embeddings are interpolated to. No torch here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from models.capture import Capture, Interventions
from models.record import InputError
from models.vit.model import bicubic_matrix, load_folder, run
from tests.models.parity_helpers import fixture_names, reference_case

FIXTURES, NAMES = fixture_names("vit")
TOLERANCE = 1e-4
MAPS = Capture(logits=False, maps=True)


case = reference_case("vit", load_folder)


def test_every_kind_has_a_fixture():
    kinds = {load_folder(FIXTURES / name).config.model_type for name in NAMES}
    assert kinds == {"vit", "deit", "dinov2", "dinov2_with_registers"}


def test_attention_and_output_equal_hugging_face(case):
    vit, ref = case
    suffixes = [key.removeprefix("attention_") for key in ref.files if key.startswith("attention_")]
    assert len(suffixes) >= 2
    for suffix in suffixes:
        out = run(vit, ref[f"pixel_values_{suffix}"], MAPS)
        maps = np.stack(out["maps"])
        expected = ref[f"attention_{suffix}"]
        assert maps.shape == expected.shape  # [layer, head, 1 + (registers) + patches, same]
        assert np.abs(maps - expected).max() < TOLERANCE, (vit.name, suffix)
        assert np.abs(out["final"] - ref[f"last_hidden_{suffix}"]).max() < TOLERANCE
        assert expected.max() > 0.6  # the fixture's maps are far from uniform, so parity means something


def test_dinov2_interpolates_positions_to_a_non_square_grid():
    for name, grid, tokens in (("dinov2", (5, 7), 1 + 35), ("dinov2_reg", (3, 7), 1 + 3 + 21)):
        vit, ref = load_folder(FIXTURES / name), np.load(FIXTURES / name / "reference.npz")
        assert vit.config.grid == 4 and ref["pixel_values_alt"].shape[1:] == (8 * grid[0], 8 * grid[1])
        maps = np.stack(run(vit, ref["pixel_values_alt"], MAPS)["maps"])
        assert maps.shape[-1] == tokens
        np.testing.assert_allclose(maps, ref["attention_alt"], atol=TOLERANCE, rtol=0)


# torch.nn.functional.interpolate(mode="bicubic", align_corners=False) of each basis vector, printed by torch 2.13:
# [out, in] for 4 -> 6 (a = -0.75) and 4 -> 3 with antialias=True (a = -0.5, the kernel stretched).
TORCH_4_TO_6 = [
    [1.086806, -0.086806, 0, 0],
    [0.5, 0.59375, -0.09375, 0],
    [-0.086805, 0.943287, 0.16088, -0.017361],
    [-0.017361, 0.16088, 0.943287, -0.086806],
    [0, -0.09375, 0.59375, 0.5],
    [0, 0, -0.086805, 1.086805],
]
TORCH_4_TO_3_AA = [
    [0.75286, 0.304348, -0.057208, 0],
    [-0.035201, 0.535201, 0.535201, -0.035201],
    [0, -0.057208, 0.304348, 0.75286],
]


def test_bicubic_matrices_equal_torch():
    np.testing.assert_allclose(bicubic_matrix(4, 6), TORCH_4_TO_6, atol=2e-6)
    np.testing.assert_allclose(bicubic_matrix(4, 3, antialias=True), TORCH_4_TO_3_AA, atol=2e-6)
    for size_in, size_out in ((4, 4), (16, 16)):
        np.testing.assert_allclose(bicubic_matrix(size_in, size_out), np.eye(size_in), atol=1e-12)
        np.testing.assert_allclose(bicubic_matrix(size_in, size_out, antialias=True), np.eye(size_in), atol=1e-12)
    for antialias in (False, True):
        np.testing.assert_allclose(bicubic_matrix(37, 23, antialias=antialias).sum(1), 1.0, atol=1e-12)


def test_jax_cubic_resize_is_not_torchs_kernel():
    # Why bicubic_matrix exists: jax.image.resize's cubic uses a = -0.5 when upsampling, torch a = -0.75.
    jax_matrix = np.asarray(jax.image.resize(jnp.eye(4), (4, 6), "cubic")).T
    assert np.abs(jax_matrix - np.asarray(TORCH_4_TO_6)).max() > 0.05


def test_a_head_knocked_out_changes_only_later_layers():
    vit, ref = load_folder(FIXTURES / "vit"), np.load(FIXTURES / "vit" / "reference.npz")
    pixels = ref["pixel_values_0"]
    keep = np.ones((vit.config.num_layers, vit.config.num_heads), np.float32)
    keep[1, 2] = 0.0
    plain = run(vit, pixels, Capture(logits=False, maps=True, heads=True))
    knocked = run(vit, pixels, Capture(logits=False, maps=True, heads=True), Interventions(head_keep=jnp.asarray(keep)))
    np.testing.assert_allclose(knocked["maps"][1], plain["maps"][1], atol=1e-6)  # the maps of layer 1 are unchanged
    assert np.abs(knocked["heads"][1][2]).max() == 0.0 and np.abs(plain["heads"][1][2]).max() > 0
    assert np.abs(knocked["final"] - plain["final"]).max() > 1e-3


def _copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder)
    return folder


def test_a_tensor_the_model_lacks_is_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = _copy(tmp_path, "vit")
    tensors = load_file(folder / "model.safetensors")
    save_file({**tensors, "encoder.layer.0.extra.weight": np.zeros(3, np.float32)}, folder / "model.safetensors")
    with pytest.raises(InputError, match="extra"):
        load_folder(folder)
    del tensors["encoder.layer.1.layernorm_after.weight"]
    save_file(tensors, folder / "model.safetensors")
    with pytest.raises(InputError, match="layernorm_after"):
        load_folder(folder)


def test_a_shape_the_config_does_not_give_is_refused(tmp_path):
    folder = _copy(tmp_path, "dinov2")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "image_size": 40}))
    with pytest.raises(InputError, match="positions"):
        load_folder(folder)

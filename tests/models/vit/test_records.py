"""The vision transformer's records: every map, [CLS] and patch grids, rollout against a numpy oracle, the
artifact rule on a constructed case, the registry entry and `cli.py export --mechanism vit`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from models.record import InputError
from models.registry_vit import VIT_MECHANISMS
from models.vit.model import load_folder
from models.vit.records import (
    ARTIFACT_RATIO,
    ARTIFACT_Z,
    artifact_threshold,
    attention_record,
    cls_record,
    patch_record,
    rollout_record,
    token_labels,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "vit"
PHOTO = ROOT / "tests" / "fixtures" / "photos" / "chelsea.jpg"


@pytest.fixture(scope="module")
def full():
    return attention_record(load_folder(FIXTURES / "dinov2_reg"), str(PHOTO))


def test_every_map_with_registers_kept_as_tokens(full):
    assert full.axes == ("layer", "head", "query", "key") and full.weights.shape == (2, 4, 40, 40)
    assert full.query_labels[:5] == ("[CLS]", "[REG1]", "[REG2]", "[REG3]", "r0c0")
    assert full.key_labels[-1] == "r5c5" and full.meta["grid"] == [6, 6] and full.meta["first_patch"] == 4
    np.testing.assert_allclose(full.weights.sum(-1), 1.0, atol=1e-5)
    assert full.extras["photo"].shape == (48, 48, 3) and full.extras["photo"].dtype == np.uint8
    assert full.extras["norms"].shape == (3, 40) and full.extras["artifacts"].shape == (6, 6)
    json.dumps(full.to_json_dict())


def test_labels_of_deit_name_the_distillation_token():
    assert token_labels(2, 0, 1, 2) == ("[CLS]", "[DIST]", "r0c0", "r0c1")


def test_cls_and_patch_grids_are_rows_of_the_maps(full):
    cls = cls_record(full)
    assert cls.axes == ("layer", "head", "query", "row", "col") and cls.weights.shape == (2, 4, 1, 6, 6)
    np.testing.assert_array_equal(cls.weights[1, 3, 0], full.weights[1, 3, 0, 4:].reshape(6, 6))
    np.testing.assert_allclose(cls.weights.sum((-1, -2, -3)) + np.asarray(cls.meta["outside"]), 1.0, atol=1e-5)
    patch = patch_record(full, (2, 5))
    assert patch.query_labels == ("r2c5",) and cls.key_labels == full.key_labels[4:]
    np.testing.assert_array_equal(patch.weights[0, 2, 0], full.weights[0, 2, 4 + 2 * 6 + 5, 4:].reshape(6, 6))
    with pytest.raises(InputError, match="outside the 6 × 6"):
        patch_record(full, (6, 0))


def _rollout_oracle(weights: np.ndarray) -> np.ndarray:
    # Abnar & Zuidema: per layer, heads averaged, half identity, rows renormalised; layers multiplied bottom-up.
    rolled = np.eye(weights.shape[-1])
    for layer in weights.astype(np.float64):
        mixed = 0.5 * layer.mean(0) + 0.5 * np.eye(layer.shape[-1])
        rolled = (mixed / mixed.sum(-1, keepdims=True)) @ rolled
    return rolled


def test_rollout_equals_a_numpy_oracle(full):
    rolled = rollout_record(full)
    assert rolled.axes == ("query", "row", "col") and rolled.weights.shape == (1, 6, 6)
    expected = _rollout_oracle(full.weights)[0]
    np.testing.assert_allclose(rolled.weights[0], expected[4:].reshape(6, 6), atol=1e-6)
    assert rolled.meta["outside"] == pytest.approx(expected[:4].sum(), abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1.0, 2.0), min_size=20, max_size=80), st.integers(0, 3), st.floats(4.0, 50.0))
def test_artifact_threshold_marks_the_outliers_only(bulk, count, factor):
    norms = np.asarray(bulk + [factor * max(bulk)] * count)
    median = np.median(norms)
    mad = np.median(np.abs(norms - median))
    threshold = artifact_threshold(norms)
    assert threshold == pytest.approx(max(ARTIFACT_RATIO * median, median + ARTIFACT_Z * 1.4826 * mad))
    assert int((norms > threshold).sum()) == count  # the bulk lies within 2× of its median: never marked


def _passthrough(vit):
    # The blocks' outputs zeroed: each token leaves the last block as it entered (patch embedding + position).
    flat = [
        (path, nnx.Param(jnp.zeros_like(leaf[...]) if path[0] == "layers" and path[2] in ("out", "fc2") else leaf[...]))
        for path, leaf in nnx.to_flat_state(vit.state)
    ]
    return dataclasses.replace(vit, state=nnx.from_flat_state(flat))


def test_high_norm_patches_are_marked_on_a_constructed_case():
    vit = _passthrough(load_folder(FIXTURES / "vit"))  # 32 × 32 px, 8-px patches, mean = std = 0.5
    photo = np.full((32, 32, 3), 128, np.uint8)  # grey: every patch embeds to about bias + position
    photo[8:16, 16:24] = 255  # patch (1, 2): pixels 1.0 after normalising, its embedding far longer
    photo[24:32, 0:8] = 255  # patch (3, 0)
    record = attention_record(vit, photo)
    marked = np.argwhere(record.extras["artifacts"]).tolist()
    assert marked == [[1, 2], [3, 0]] and record.meta["artifacts"] == 2
    norms = record.extras["norms"][-1, 1:]
    assert norms[[6, 12]].min() > 2 * np.median(norms) and record.meta["artifact_threshold"] < norms[[6, 12]].min()
    np.testing.assert_allclose(record.extras["norms"][0], record.extras["norms"][-1], rtol=1e-6)  # passthrough
    grey = attention_record(vit, np.full((32, 32, 3), 128, np.uint8))
    assert grey.meta["artifacts"] == 0


def test_the_registry_entry_builds_each_view():
    mechanism = VIT_MECHANISMS[0]
    options = {"model_dir": str(FIXTURES / "dino"), "image": str(PHOTO)}
    shapes = {
        view: mechanism.build({**options, "view": view, "query_patch": "r1c2"}).weights.shape
        for view in ("all", "cls", "rollout", "patch")
    }
    assert shapes == {"all": (2, 4, 26, 26), "cls": (2, 4, 1, 5, 5), "rollout": (1, 5, 5), "patch": (2, 4, 1, 5, 5)}
    assert mechanism.estimated_bytes(options) >= 4 * 2 * 4 * 26 * 26
    with pytest.raises(InputError):
        mechanism.build({**options, "view": "everything"})


def test_cli_export_writes_every_map(tmp_path):
    import cli

    out = tmp_path / "vit.npz"
    status = cli.main(
        [
            "export",
            "--mechanism",
            "vit",
            "--model-dir",
            str(FIXTURES / "deit"),
            "--image",
            str(PHOTO),
            "--format",
            "npz",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    saved = np.load(out)
    assert saved["weights"].shape == (2, 4, 18, 18) and list(saved["query_labels"][:3]) == ["[CLS]", "[DIST]", "r0c0"]
    reference = np.load(FIXTURES / "deit" / "reference.npz")
    np.testing.assert_allclose(saved["weights"], reference["attention_0"], atol=1e-4)  # the same photo
    assert (
        cli.main(
            [
                "export",
                "--mechanism",
                "vit",
                "--model-dir",
                str(tmp_path),
                "--image",
                str(PHOTO),
                "--format",
                "npz",
                "--out",
                str(tmp_path / "x.npz"),
            ]
        )
        == 2
    )  # not a model folder: one line

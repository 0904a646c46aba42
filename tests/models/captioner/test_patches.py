"""Patch self-attention: features as documented, a numpy oracle for α, hard modes, bad input."""

import numpy as np
import pytest

from models.captioner.patches import patch_attention, patch_features
from models.record import InputError
from models.registry import get_mechanism

PATCHES = get_mechanism("patch-self-attention")


def two_colour_photo():
    photo = np.full((64, 96, 3), 255, np.uint8)
    photo[:, :48] = (200, 0, 0)  # left half red, right half white
    return photo


def test_features_are_centred_mean_colour_and_position():
    photo = two_colour_photo()
    x = patch_features(photo, 16)
    assert x.shape == (4 * 6, 5)
    np.testing.assert_allclose(x.mean(0), 0, atol=1e-6)
    raw_red = np.array([200, 0, 0]) / 255
    raw_mean = (raw_red + 1.0) / 2
    np.testing.assert_allclose(x[0, :3], raw_red - raw_mean, atol=1e-6)


def test_soft_weights_match_a_numpy_oracle_and_prefer_the_same_colour():
    photo = two_colour_photo()
    result = patch_attention(photo, patch=16, query=(1, 1), temperature=0.2)
    x = patch_features(photo, 16)
    scores = x @ x[1 * 6 + 1] / np.sqrt(x.shape[1]) / 0.2
    oracle = np.exp(scores - scores.max())
    oracle /= oracle.sum()
    np.testing.assert_allclose(result.weights.ravel(), oracle, rtol=1e-4, atol=1e-6)
    assert result.weights[:, :3].sum() > 0.9  # the red half


def test_hard_modes_and_temperature():
    photo = two_colour_photo()
    argmax = patch_attention(photo, patch=16, query=(0, 0), mode="argmax")
    assert argmax.weights.sum() == 1 and argmax.weights.max() == 1
    assert argmax.weights.ravel().argmax() == argmax.soft.ravel().argmax()
    sampled = patch_attention(photo, patch=16, query=(0, 0), mode="sample", samples=4000, seed=1)
    assert sampled.samples.shape == (4000,)
    np.testing.assert_allclose(sampled.weights, sampled.soft, atol=0.03)
    flat = patch_attention(photo, patch=16, query=(0, 0), temperature=100.0)
    assert flat.weights.max() < 2.0 / flat.weights.size


def test_record_and_bad_input():
    record = PATCHES.build({"image": two_colour_photo(), "patch": 32, "query_patch": "r1c2", "mode": "sample", "samples": 10})
    assert record.axes == ("query", "row", "col") and record.weights.shape == (1, 2, 3)
    assert record.query_labels == ("r1c2",) and record.key_labels[-1] == "r1c2"
    assert record.extras["samples"].shape == (1, 10)
    query = PATCHES.option("query_patch")
    assert query.read("2,3") == (2, 3) and query.read("r4c5") == (4, 5) and query.read(None) == (0, 0)
    with pytest.raises(InputError, match="outside"):
        patch_attention(two_colour_photo(), patch=32, query=(5, 0))
    with pytest.raises(InputError, match="patch size"):
        patch_attention(two_colour_photo(), patch=2)
    with pytest.raises(InputError, match="smaller than one 8-px patch; use an image of at least 4×4 px"):
        patch_attention(np.zeros((3, 3, 3), np.uint8), patch=8)  # no patch size fits: the advice is the image
    with pytest.raises(InputError, match="smaller than one 8-px patch; choose a patch size of at most 6 px"):
        patch_attention(np.zeros((6, 20, 3), np.uint8), patch=8)
    with pytest.raises(InputError, match="two whole numbers"):
        query.read("middle")
    with pytest.raises(InputError, match="temperature must be a number from 0.01 to 2"):
        PATCHES.build({"image": two_colour_photo(), "temperature": 100})

"""The shared strict checkpoint check."""

import numpy as np
import pytest

from models.checkpoint import check_tensors


def test_exact_match_passes_and_every_mismatch_is_named():
    expected = {"a.kernel": (2, 3), "a.bias": (3,)}
    check_tensors(expected, {"a.kernel": np.zeros((2, 3)), "a.bias": np.zeros(3)}, where="f")
    with pytest.raises(ValueError, match=r"f: .*missing tensors \['a.bias'\]; unknown tensors \['b'\]"):
        check_tensors(expected, {"a.kernel": np.zeros((2, 3)), "b": np.zeros(1)}, where="f")
    with pytest.raises(ValueError, match=r"a.kernel has shape \(3, 2\), expected \(2, 3\)"):
        check_tensors(expected, {"a.kernel": np.zeros((3, 2)), "a.bias": np.zeros(3)}, where="f")


def test_apply_mode_soft_argmax_sample():
    from models.attention import apply_mode

    w = np.array([0.1, 0.6, 0.3], np.float32)
    soft, none = apply_mode(w, "soft")
    assert none is None and np.array_equal(soft, w)
    hard, _ = apply_mode(w, "argmax")
    assert hard.tolist() == [0, 1, 0]
    freq, drawn = apply_mode(w, "sample", seed=3, num_samples=4000)
    assert drawn.shape == (4000,) and abs(freq.sum() - 1) < 1e-6 and np.abs(freq - w).max() < 0.05
    with pytest.raises(ValueError, match="unknown mode"):
        apply_mode(w, "maybe")

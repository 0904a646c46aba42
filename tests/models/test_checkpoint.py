"""The shared checkpoint format: strict matching, the header, snapshots, atomic writes."""

from dataclasses import dataclass

import numpy as np
import pytest
from safetensors.numpy import save_file

from models import checkpoint as ck


def test_exact_match_passes_and_every_mismatch_is_named():
    expected = {"a.kernel": (2, 3), "a.bias": (3,)}
    ck.check_tensors(expected, {"a.kernel": np.zeros((2, 3)), "a.bias": np.zeros(3)}, where="f")
    with pytest.raises(ck.CheckpointError, match=r"f: .*missing tensors \['a.bias'\]; unknown tensors \['b'\]"):
        ck.check_tensors(expected, {"a.kernel": np.zeros((2, 3)), "b": np.zeros(1)}, where="f")
    with pytest.raises(ValueError, match=r"a.kernel has shape \(3, 2\), expected \(2, 3\)"):
        ck.check_tensors(expected, {"a.kernel": np.zeros((3, 2)), "a.bias": np.zeros(3)}, where="f")


def test_round_trip_with_snapshots_keeps_float32_weights_and_float16_snapshots(tmp_path):
    rng = np.random.default_rng(0)
    final = {"w": rng.normal(size=(3, 4)).astype(np.float32), "b": np.ones(4, np.float32)}
    early = {k: v * 0.5 for k, v in final.items()}
    path = ck.save(tmp_path / "m.safetensors", "demo", {"width": 4}, final, info={"steps": 9}, snapshots={3: early})
    loaded = ck.load(path, "demo")
    assert loaded.config == {"width": 4} and loaded.info == {"steps": 9} and loaded.snapshots == {}
    assert all(np.array_equal(loaded.tensors[k], final[k]) for k in final)
    with_snaps = ck.load(path, "demo", snapshots=True)
    assert list(with_snaps.snapshots) == [3]
    np.testing.assert_array_equal(with_snaps.snapshots[3]["w"], early["w"].astype(np.float16).astype(np.float32))
    assert ck.read_info(path, "demo") == ({"width": 4}, {"steps": 9}, [3])
    from_bytes = ck.from_bytes(path.read_bytes(), "demo")
    assert np.array_equal(from_bytes.tensors["w"], final["w"]) and 3 in from_bytes.snapshots
    assert not list(tmp_path.glob(".m.safetensors.*"))  # the temporary file was renamed into place


def test_the_header_names_what_is_wrong(tmp_path):
    path = ck.save(tmp_path / "m.safetensors", "demo", {}, {"w": np.zeros(2, np.float32)})
    with pytest.raises(ck.CheckpointError, match="holds a 'demo' model, not a 'han' one"):
        ck.load(path, "han")
    bare = tmp_path / "bare.safetensors"
    save_file({"w": np.zeros(2, np.float32)}, str(bare))
    with pytest.raises(ck.CheckpointError, match="not an Attention Lab checkpoint"):
        ck.load(bare, "demo")
    future = tmp_path / "future.safetensors"
    save_file({"w": np.zeros(2, np.float32)}, str(future),
              metadata={"format": ck.FORMAT, "version": "99", "family": "demo", "config": "{}"})
    with pytest.raises(ck.CheckpointError, match="version '99'"):
        ck.load(future, "demo")
    with pytest.raises(FileNotFoundError, match="python -m models.train demo"):
        ck.load(tmp_path / "nope.safetensors", "demo")
    with pytest.raises(ck.CheckpointError, match="not a checkpoint file"):
        ck.from_bytes(b"garbage", "demo")


@dataclass(frozen=True)
class _Config:
    heads: tuple[tuple[str, tuple[str, ...]], ...]
    channels: tuple[int, ...] = (1, 2)
    width: int = 3


def test_configs_come_back_as_the_frozen_dataclass_they_were():
    cfg = _Config(heads=(("sentiment", ("neg", "pos")),), channels=(4, 8))
    raw = ck.config_dict(cfg)
    import json

    assert ck.config_from_dict(_Config, json.loads(json.dumps(raw))) == cfg
    with pytest.raises(ck.CheckpointError, match=r"unknown _Config keys \['depth'\]"):
        ck.config_from_dict(_Config, {**json.loads(json.dumps(raw)), "depth": 2})


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

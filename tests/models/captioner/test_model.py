"""The captioner on tiny configs: shapes, attention sums, strict checkpoints, a training smoke test."""

import argparse
from dataclasses import replace

import numpy as np
import pytest
from flax import nnx

from models.captioner import task as S
from models.captioner.model import (
    BOS,
    CHECKPOINT,
    EOS,
    PRESETS,
    STEPS,
    Captioner,
    CaptionerRunner,
    encode_captions,
    teacher_forced,
    tokens_to_words,
)


def tiny(variant="soft"):
    return Captioner(replace(PRESETS["tiny"], variant=variant), rngs=nnx.Rngs(0))


def scene_images(n=3, seed=0):
    return S.scene_batch(np.random.default_rng(seed), n)


def test_encode_captions_shifts_targets_and_masks_padding():
    inputs, targets, mask = encode_captions(["a red circle", "a red circle left of a blue square"])
    assert inputs.shape == targets.shape == mask.shape == (2, STEPS)
    assert inputs[0, 0] == BOS and targets[0, 3] == EOS and mask[0].sum() == 4
    assert np.array_equal(inputs[1, 1:], targets[1, :-1]) and mask[1].sum() == STEPS
    assert tokens_to_words(targets[1]) == "a red circle left of a blue square".split()


@pytest.mark.parametrize("variant", ["soft", "hard"])
def test_teacher_forced_shapes_and_attention_is_a_distribution(variant):
    import jax

    model = tiny(variant)
    images, scenes = scene_images()
    inputs, _, _ = encode_captions([s.caption for s in scenes])
    logits, alphas, locs, used_soft = teacher_forced(model, images, inputs, jax.random.key(1))
    assert logits.shape == (3, STEPS, model.cfg.vocab)
    assert alphas.shape == (3, STEPS, 64) and locs.shape == (3, STEPS)
    np.testing.assert_allclose(np.asarray(alphas).sum(-1), 1.0, atol=1e-5)
    assert np.all((np.asarray(locs) >= 0) & (np.asarray(locs) < 64))
    if variant == "soft":
        assert np.asarray(used_soft).all()


def test_encoder_is_local_a_far_away_change_leaves_a_cell_unchanged():
    # Receptive field 23 px: the top-left cell (pixels 0-7) cannot see pixels beyond ~20.
    model = tiny()
    image = np.full((1, 64, 64, 3), 255, np.uint8)
    changed = image.copy()
    changed[0, 40:, 40:] = 0
    a = np.asarray(model.encoder(image))[0]
    b = np.asarray(model.encoder(changed))[0]
    assert np.allclose(a[0], b[0]) and not np.allclose(a[63], b[63])
    assert a.shape == (64, model.cfg.annotation)


def test_runner_decodes_and_sampling_is_seeded():
    runner = CaptionerRunner(tiny("hard"))
    images, _ = scene_images(2)
    t1, a1, l1 = runner.decode(images, mode="sample", seed=3)
    t2, a2, l2 = runner.decode(images, mode="sample", seed=3)
    assert t1.shape == (2, STEPS) and a1.shape == (2, STEPS, 64)
    assert np.array_equal(l1, l2) and np.array_equal(t1, t2)
    _, a3, l3 = runner.decode(images, mode="argmax")
    assert np.array_equal(l3[:, 0], a3[:, 0].argmax(-1))


def test_checkpoint_round_trip_and_strict_loading(tmp_path):
    from safetensors.numpy import load_file, save_file

    model = tiny()
    path = tmp_path / "c.safetensors"
    CHECKPOINT.save(path, model.cfg, model, info={"steps": 1})
    loaded = CHECKPOINT.load_module(path)
    images, _ = scene_images(2)
    np.testing.assert_allclose(np.asarray(model.encoder(images)), np.asarray(loaded.encoder(images)), atol=1e-6)
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        meta = f.metadata()
    tensors = load_file(str(path))
    name = sorted(tensors)[0]
    extra = {**tensors, "unexpected.weight": np.zeros(3, np.float32)}
    save_file(extra, str(tmp_path / "extra.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="unexpected.weight"):
        CHECKPOINT.load_module(tmp_path / "extra.safetensors")
    missing = {k: v for k, v in tensors.items() if k != name}
    save_file(missing, str(tmp_path / "missing.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="missing"):
        CHECKPOINT.load_module(tmp_path / "missing.safetensors")
    wrong = {**tensors, name: np.zeros((1, 1), np.float32)}
    save_file(wrong, str(tmp_path / "shape.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="shape"):
        CHECKPOINT.load_module(tmp_path / "shape.safetensors")


@pytest.mark.parametrize("variant", ["soft", "hard"])
def test_a_few_training_steps_lower_the_loss_and_save_the_trained_weights(tmp_path, variant):
    from models.captioner.train import add_arguments, initial_model, train
    from models.checkpoint import flat_params

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / f"{variant}.safetensors"
    args = parser.parse_args(
        ["--variant", variant, "--preset", "tiny", "--steps", "40", "--batch", "8", "--lr", "1e-2",
         "--eval-every", "0", "--out", str(out), "--quiet"]
    )
    initial = flat_params(initial_model(args))
    assert train(args) == out
    model = CHECKPOINT.load_module(out)
    assert model.cfg.variant == variant and model.cfg.channels == PRESETS["tiny"].channels
    saved = flat_params(model)
    assert saved.keys() == initial.keys()
    assert all(not np.array_equal(saved[k], initial[k]) for k in ("att_v", "out.kernel", "encoder.conv1.kernel"))
    log = CHECKPOINT.read_info(out)["log"]  # [step, loss, cross-entropy]
    assert [row[0] for row in log] == list(range(1, 41))
    cross_entropy = np.array([row[2] for row in log])
    assert cross_entropy[-10:].mean() < cross_entropy[:10].mean() - 0.3, cross_entropy

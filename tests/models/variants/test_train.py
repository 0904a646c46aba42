"""Training of the variants (models/variants/train.py): one step lowers the loss on a tiny batch, for every kind of
variant, and a run writes a checkpoint that loads back strictly."""

import argparse

import numpy as np
import optax
import pytest
from flax import nnx

from models.training import make_train_step
from models.variants import tasks, train
from models.variants.model import VariantConfig, make_model, masked_loss


@pytest.mark.parametrize("variant", ["mha", "mla", "differential", "linear", "sink"])
def test_one_step_lowers_the_loss(variant):
    cfg = VariantConfig(variant=variant, vocab=tasks.MQAR_VOCAB, max_length=tasks.MQAR_LENGTH, width=16, mlp=8)
    graphdef, params = make_model(cfg, seed=0)
    batch = tasks.mqar_batch(np.random.default_rng(0), 4)
    loss = lambda p, *b: masked_loss(nnx.merge(graphdef, p), *b)  # noqa: E731
    before = float(loss(params, *batch))
    step = make_train_step(loss, optax.sgd(0.1), donate=False)
    params, _, first, _ = step(params, optax.sgd(0.1).init(params), *batch)
    assert float(first) == pytest.approx(before, rel=1e-5)
    assert float(loss(params, *batch)) < before


def test_a_short_run_writes_a_checkpoint_that_loads(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    args = parser.parse_args(["--variant", "gqa", "--task", "induction", "--steps", "3", "--out", str(tmp_path)])
    assert train.run(args) == 0
    cfg, _, params, info = train.CHECKPOINT.load(tmp_path / "induction-gqa-s0.safetensors")
    assert cfg.variant == "gqa" and info["steps"] == 3 and info["seed"] == 0
    assert '"accuracy"' in capsys.readouterr().out

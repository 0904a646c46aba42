"""Feed-forward attention on tiny configs: numpy oracle, masking, checkpoints, a few training steps."""

import numpy as np
import pytest
from flax import nnx
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from models.checkpoint import flat_params as state_to_tensors
from models.feedforward.checkpoint import CHECKPOINT
from models.feedforward.model import TINY, FeedForwardAttention, FeedForwardConfig, FeedForwardRunner
from models.feedforward.quality import evaluate
from models.feedforward.records import nearest_paper_length, stacked_record, tanh_bound
from models.feedforward.task import make_sequence
from models.feedforward.train import train
from models.record import InputError
from models.registry import get_mechanism


def numpy_forward(tensors, inputs, score, leak=0.01):
    """The paper's equations in numpy, for one unpadded sequence inputs [T, 2]."""
    lrelu = lambda x: np.where(x >= 0, x, leak * x)  # noqa: E731
    h = lrelu(inputs @ tensors["w_xh.kernel"] + tensors["w_xh.bias"])
    e = (h @ tensors["w_hc.kernel"] + tensors["w_hc.bias"])[:, 0]
    if score == "tanh":
        e = np.tanh(e)
    alpha = np.exp(e - e.max())
    alpha /= alpha.sum()
    c = alpha @ h
    s = lrelu(c @ tensors["w_cs.kernel"] + tensors["w_cs.bias"])
    return (s @ tensors["w_sy.kernel"] + tensors["w_sy.bias"])[0], alpha


@pytest.mark.parametrize("score", ["tanh", "linear"])
def test_forward_matches_numpy_oracle_and_ignores_padding(score):
    model = FeedForwardAttention(FeedForwardConfig(score=score, hidden=8, output_hidden=6), rngs=nnx.Rngs(1))
    tensors = {k: v.astype(np.float64) for k, v in state_to_tensors(model).items()}
    runner = FeedForwardRunner(model)
    inputs, marked, _ = make_sequence(37, seed=5)
    prediction, alpha, seconds = runner.run_one(inputs)  # padded to the 128 bucket
    expected_y, expected_alpha = numpy_forward(tensors, inputs, score)
    assert alpha.shape == (37,) and seconds >= 0
    np.testing.assert_allclose(alpha, expected_alpha, rtol=1e-5, atol=1e-7)
    assert prediction == pytest.approx(expected_y, rel=1e-4, abs=1e-5)
    # padding steps get exactly zero weight
    padded = np.zeros((1, 128, 2), np.float32)
    padded[0, :37] = inputs
    padded[0, 37:, 1] = 1.0  # garbage in the padding must not matter
    _, full_alpha = runner(padded, np.array([37]))
    assert np.all(full_alpha[0, 37:] == 0) and full_alpha[0].sum() == pytest.approx(1.0, abs=1e-6)


def test_tanh_score_bounds_the_weight_ratio_by_e_squared():
    model = FeedForwardAttention(TINY, rngs=nnx.Rngs(0))
    model.w_hc.kernel[...] = model.w_hc.kernel[...] * 1000.0  # saturate the score
    inputs, _, _ = make_sequence(500, seed=1)
    _, alpha, _ = FeedForwardRunner(model).run_one(inputs)
    assert alpha.max() / alpha.min() <= np.e**2 * (1 + 1e-4)


def test_checkpoint_round_trip_and_strict_loading(tmp_path):
    model = FeedForwardAttention(TINY, rngs=nnx.Rngs(2))
    path = tmp_path / "tiny.safetensors"
    CHECKPOINT.save(path, model.cfg, model, info={"note": "test"})
    loaded = CHECKPOINT.load_module(path)
    assert loaded.cfg == TINY
    for key, value in state_to_tensors(model).items():
        np.testing.assert_array_equal(state_to_tensors(loaded)[key], value)

    tensors = load_file(str(path))
    with safe_open(str(path), framework="numpy") as f:
        metadata = f.metadata()
    extra = dict(tensors, **{"w_extra.kernel": np.zeros(3, np.float32)})
    save_file(extra, str(tmp_path / "extra.safetensors"), metadata=metadata)
    with pytest.raises(ValueError, match="unknown tensors.*w_extra.kernel"):
        CHECKPOINT.load_module(tmp_path / "extra.safetensors")
    missing = {k: v for k, v in tensors.items() if k != "w_hc.bias"}
    save_file(missing, str(tmp_path / "missing.safetensors"), metadata=metadata)
    with pytest.raises(ValueError, match="missing tensors.*w_hc.bias"):
        CHECKPOINT.load_module(tmp_path / "missing.safetensors")
    wrong = dict(tensors, **{"w_xh.kernel": np.zeros((3, 8), np.float32)})
    save_file(wrong, str(tmp_path / "wrong.safetensors"), metadata=metadata)
    with pytest.raises(ValueError, match="w_xh.kernel has shape"):
        CHECKPOINT.load_module(tmp_path / "wrong.safetensors")


def test_a_few_training_steps_reduce_the_loss():
    result = train("paper", 20, steps=60, batch=32, learning_rate=1e-2, cfg=TINY, seed=0)
    assert result.losses.shape == (60,) and np.all(np.isfinite(result.losses))
    assert result.losses[-10:].mean() < result.losses[:10].mean()
    scores = evaluate(result.model, np.full(20, 20))
    assert set(scores) == {"mse", "top2", "mass"} and 0 <= scores["top2"] <= 1 and 0 < scores["mass"] <= 1


def test_nearest_paper_length_marked_parsing_and_the_tanh_bound():
    assert [nearest_paper_length(t) for t in (2, 300, 317, 999, 3_000, 3_200, 10_000)] == [
        100, 100, 1_000, 1_000, 1_000, 10_000, 10_000,
    ]
    marked = get_mechanism("feedforward").option("marked")
    assert marked.read("3, 42") == (3, 42) and marked.read("") is None and marked.read(None) is None
    with pytest.raises(InputError):
        marked.read("three,4")
    # The best case of e ∈ [−1, 1]: two steps at e = +1 and T − 2 at −1; α of one marked step.
    for length in (3, 100, 10_000):
        e = np.array([1.0, 1.0] + [-1.0] * (length - 2))
        assert tanh_bound(length) == pytest.approx(float(np.exp(e[0]) / np.exp(e).sum()), rel=1e-12)
    assert tanh_bound(2) == 0.5


def test_record_rejects_bad_options():
    for options in ({"length": 1}, {"length": 20_000}, {"length": 100, "seed": -1}, {"length": 100, "seed": "x"},
                    {"length": 100, "marked": "5,5"}, {"length": 100, "temperature": 2}):
        with pytest.raises(InputError):
            get_mechanism("feedforward").build(options)


def test_layer_lr_gives_the_per_step_layers_their_own_rate():
    init = FeedForwardAttention(TINY, rngs=nnx.Rngs(3))
    before = state_to_tensors(init)
    result = train("paper", 20, steps=5, batch=8, learning_rate=1e-2, cfg=TINY, seed=0, init=init, layer_lr={"w_xh": 0.0, "w_hc": 0.0})
    after = state_to_tensors(result.model)
    for name in ("w_xh.kernel", "w_xh.bias", "w_hc.kernel", "w_hc.bias"):
        np.testing.assert_array_equal(after[name], before[name])
    assert not np.allclose(after["w_cs.kernel"], before["w_cs.kernel"])
    assert not np.allclose(after["w_sy.kernel"], before["w_sy.kernel"])
    # A small non-zero rate moves the per-step layers, by Adam's ~rate per step, not by learning_rate.
    small = train("paper", 20, steps=5, batch=8, learning_rate=1e-2, cfg=TINY, seed=0,
                  init=FeedForwardAttention(TINY, rngs=nnx.Rngs(3)), layer_lr={"w_xh": 1e-4, "w_hc": 1e-4})
    moved = np.abs(state_to_tensors(small.model)["w_xh.kernel"] - before["w_xh.kernel"]).max()
    assert 0 < moved <= 5 * 1e-4 * 1.01
    readout_moved = np.abs(state_to_tensors(small.model)["w_cs.kernel"] - before["w_cs.kernel"]).max()
    assert readout_moved > 10 * moved


def test_lbfgs_trains_every_layer_and_lowers_the_full_batch_loss():
    from models.feedforward.train import train_lbfgs

    init = FeedForwardAttention(TINY, rngs=nnx.Rngs(5))
    before = state_to_tensors(init)
    result = train_lbfgs(20, iterations=15, sequences=64, seed=0, init=init)
    assert result.losses.shape == (15,) and np.all(np.isfinite(result.losses))
    assert result.losses[-1] < 0.5 * result.losses[0]
    after = state_to_tensors(result.model)
    for name in ("w_xh.kernel", "w_hc.kernel", "w_cs.kernel", "w_sy.kernel"):
        assert not np.allclose(after[name], before[name]), name


def test_layer_lr_freezes_the_named_layers_and_rejects_unknown_ones():
    from models.feedforward.train import parse_layer_lr

    init = FeedForwardAttention(TINY, rngs=nnx.Rngs(4))
    before = state_to_tensors(init)
    rates = parse_layer_lr(["w_xh=0", "w_hc=0", "w_cs=0"])
    result = train("paper", 20, steps=5, batch=8, learning_rate=1e-2, cfg=TINY, seed=0, init=init, layer_lr=rates)
    after = state_to_tensors(result.model)
    for name in ("w_xh", "w_hc", "w_cs"):
        np.testing.assert_array_equal(after[f"{name}.kernel"], before[f"{name}.kernel"])
    assert not np.allclose(after["w_sy.kernel"], before["w_sy.kernel"])
    with pytest.raises(SystemExit, match="unknown layer"):
        parse_layer_lr(["w_zz=1"])
    with pytest.raises(SystemExit, match="LAYER=RATE"):
        parse_layer_lr(["w_sy=fast"])


def test_stacked_record_keeps_each_models_row_and_prediction():
    options = {"length": 120, "seed": 3, "marked": None}
    paper, unbounded = (get_mechanism(m).build(options) for m in ("feedforward", "feedforward-unbounded"))
    both = stacked_record([paper, unbounded], ["paper", "unbounded"])
    assert both.axes == ("model", "time") and both.query_labels == ("paper", "unbounded")
    np.testing.assert_array_equal(both.weights, np.stack([paper.weights, unbounded.weights]))
    np.testing.assert_array_equal(both.extras["prediction"], [paper.extras["prediction"], unbounded.extras["prediction"]])
    assert both.meta["models"] == [paper.meta["model"], unbounded.meta["model"]]
    assert both.meta["marked"] == paper.meta["marked"] == unbounded.meta["marked"]
    with pytest.raises(ValueError, match="one sequence length"):
        stacked_record([paper, get_mechanism("feedforward").build({**options, "length": 90})], ["a", "b"])

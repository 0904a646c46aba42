"""The seq2seq model on tiny configs: shapes, masks, row sums, windows, strict loading, training."""

import numpy as np
import pytest

from models.checkpoint import CheckpointError, filled_state, flat_params
from models.seq2seq import model as s2s
from models.seq2seq import task as dates
from models.seq2seq.checkpoint import CHECKPOINT

TINY = s2s.PRESETS["tiny"]
TEXTS = ["Wednesday, May 9, 2018", "2018-5-9", "9.5.2018"]


def _batch(texts, bucket=s2s.LENGTH_BUCKETS[-1]):
    src, lengths = s2s.pad_batch([dates.encode_source(t).ids for t in texts], bucket)
    return src, lengths, np.zeros((len(texts), dates.OUTPUT_LENGTH), np.int32)


@pytest.fixture(scope="module", params=s2s.VARIANTS)
def tiny_model(request):
    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": request.param})
    graphdef, params = s2s.make_model(cfg, seed=1)
    return cfg, graphdef, params


def test_shapes_row_sums_masks_and_windows(tiny_model):
    cfg, graphdef, params = tiny_model
    src, lengths, tgt = _batch(TEXTS)
    logits, alpha, centers = s2s.apply(graphdef, params, src, lengths, tgt, np.float32(2.0))
    logits, alpha, centers = np.asarray(logits), np.asarray(alpha), np.asarray(centers)
    b, t = src.shape
    assert logits.shape == (b, dates.OUTPUT_LENGTH, cfg.target_vocab)
    assert alpha.shape == (b, dates.OUTPUT_LENGTH, t) and centers.shape == (b, dates.OUTPUT_LENGTH)
    assert np.all(alpha >= 0) and np.all(np.isfinite(alpha))
    sums = alpha.sum(-1)
    padding = np.arange(t)[None, None, :] >= lengths[:, None, None]
    assert np.all(alpha[np.broadcast_to(padding, alpha.shape)] == 0.0), "padded positions must get exactly 0"
    if cfg.variant in s2s.LOCAL_VARIANTS:
        assert np.all(sums <= 1 + 1e-5)
        positions = np.arange(t)[None, None, :]
        outside = np.abs(positions - centers[..., None]) > 2.0
        assert np.all(alpha[outside] == 0.0), "keys outside [p_t − D, p_t + D] must get exactly 0"
        if cfg.variant == "local-m":
            assert np.array_equal(centers, np.broadcast_to(np.arange(10, dtype=np.float32), centers.shape))
        else:
            assert np.all(centers >= 0) and np.all(centers <= lengths[:, None])
    else:
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)


@pytest.mark.parametrize("variant", ["bahdanau", "local-p"])  # the two masking paths: global, local window
def test_padding_does_not_change_the_result(variant):
    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": variant})
    graphdef, params = s2s.make_model(cfg, seed=1)
    short = _batch(["2018-5-9"], bucket=12)
    long = _batch(["2018-5-9"], bucket=40)
    lo_s, a_s, c_s = (np.asarray(x) for x in s2s.apply(graphdef, params, *short, np.float32(3.0)))
    lo_l, a_l, c_l = (np.asarray(x) for x in s2s.apply(graphdef, params, *long, np.float32(3.0)))
    np.testing.assert_allclose(lo_s, lo_l, atol=1e-5)
    np.testing.assert_allclose(a_s, a_l[..., :12], atol=1e-6)
    np.testing.assert_allclose(c_s, c_l, atol=1e-5)


def test_reverse_within_length_is_a_per_row_involution():
    x = np.arange(2 * 5, dtype=np.float32).reshape(2, 5, 1)
    lengths = np.array([3, 5])
    rev = np.asarray(s2s._reverse_within_length(x, lengths))
    assert rev[0, :, 0].tolist() == [2, 1, 0, 3, 4]
    assert rev[1, :, 0].tolist() == [9, 8, 7, 6, 5]
    np.testing.assert_array_equal(np.asarray(s2s._reverse_within_length(rev, lengths)), x)


def test_gru_step_matches_numpy():
    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": "bahdanau"})
    model = s2s.Seq2Seq(cfg, rngs=s2s.nnx.Rngs(0))
    cell = model.encoder_fwd
    rng = np.random.default_rng(0)
    x, h = rng.normal(size=(2, cfg.embed_dim)).astype(np.float32), rng.normal(size=(2, 8)).astype(np.float32)
    wx, wh = np.asarray(cell.w_x[...]), np.asarray(cell.w_h[...])
    got = np.asarray(s2s.gru_step(cell, x @ wx, h))
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    xr, xz, xn = np.split(x @ wx, 3, -1)
    hr, hz, hn = np.split(h @ wh, 3, -1)
    r, z = sig(xr + hr), sig(xz + hz)
    n = np.tanh(xn + r * hn)
    np.testing.assert_allclose(got, (1 - z) * n + z * h, atol=1e-5)


def test_strict_loading_names_missing_unknown_and_bad_shapes():
    graphdef, params = s2s.make_model(s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": "luong-general"}))
    flat = flat_params(params)
    assert "att_w" in flat and "decoder.w_x" in flat
    missing = {k: v for k, v in flat.items() if k != "att_w"}
    with pytest.raises(ValueError, match="missing tensors \\['att_w'\\]"):
        filled_state(params, missing, where='t')
    with pytest.raises(ValueError, match="unknown tensors \\['extra'\\]"):
        filled_state(params, {**flat, "extra": np.zeros(1)}, where="t")
    with pytest.raises(ValueError, match="att_w"):
        filled_state(params, {**flat, "att_w": np.zeros((3, 3), np.float32)}, where="t")
    reloaded = flat_params(filled_state(params, flat, where="test"))
    assert all(np.array_equal(reloaded[k], flat[k]) for k in flat)


def test_checkpoint_round_trip_with_float16_snapshots(tmp_path):
    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": "local-p"})
    _, params = s2s.make_model(cfg, seed=3)
    flat = flat_params(params)
    path = tmp_path / "local-p.safetensors"
    CHECKPOINT.save(path, cfg, flat, {0: flat}, {"final_step": 5, "log": []})
    cfg2, _, params2, info = CHECKPOINT.load(path)
    assert cfg2 == cfg and info["snapshot_steps"] == [0] and info["final_step"] == 5
    assert all(np.array_equal(v, flat_params(params2)[k]) for k, v in flat.items())
    snaps = CHECKPOINT.load_snapshots(path, params2)
    np.testing.assert_allclose(flat_params(snaps[0])["att_w"], flat["att_w"], atol=2e-3)
    with pytest.raises(CheckpointError, match="missing"):
        other = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": "bahdanau"})
        filled_state(s2s.make_model(other)[1], flat, where="t")
    with pytest.raises(CheckpointError, match="holds a 'seq2seq' model, not a 'han' one"):
        from models import checkpoint

        checkpoint.load(path, "han")


def test_config_rejects_unknown_variant_and_dot_width():
    with pytest.raises(ValueError, match="unknown variant"):
        s2s.Seq2SeqConfig(variant="luong-magic")
    with pytest.raises(ValueError, match="luong-dot"):
        s2s.Seq2SeqConfig(variant="luong-dot", encoder_hidden=8, decoder_hidden=20)


def test_a_few_training_steps_lower_the_loss():
    import optax

    from models.seq2seq.train import batch_arrays, make_train_step

    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": "luong-general"})
    graphdef, params = s2s.make_model(cfg, seed=0)
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)
    step = make_train_step(graphdef, optimizer)
    batch = batch_arrays(dates.generate(32, seed=11), dates.MAX_INPUT_CHARS)
    losses = []
    for _ in range(15):
        params, opt_state, loss = step(params, opt_state, *batch, np.float32(3.0))
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0], losses


def _tiny(variant):
    return s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": variant})


def test_warm_start_copies_shared_weights_and_fits_only_the_head():
    from models.seq2seq.train import distill_loss, fit_head, warm_start_params

    t_graphdef, t_params = s2s.make_model(_tiny("luong-general"), seed=1)
    graphdef, params = s2s.make_model(_tiny("local-p"), seed=2)
    teacher = flat_params(t_params)
    params, kept = warm_start_params(params, teacher)
    assert kept == ["pos_v", "pos_w"]
    flat = flat_params(params)
    for name, value in teacher.items():
        np.testing.assert_array_equal(flat[name], value)

    rng = np.random.default_rng(0)
    fitted, _ = fit_head("local-p", graphdef, params, (t_graphdef, t_params), rng, 5, 16, 1e-2, np.float32(3.0))
    after = flat_params(fitted)
    assert not np.allclose(after["pos_w"], flat["pos_w"])
    for name in teacher:
        np.testing.assert_array_equal(after[name], flat[name])  # only the head moves

    # The distance to the teacher's mean position, and cross-entropy for whole distributions.
    teacher_alpha = np.zeros((1, 1, 4), np.float32)
    teacher_alpha[0, 0, [1, 3]] = 0.5  # mean position 2
    assert float(distill_loss("local-p", None, np.array([[5.0]]), teacher_alpha)) == pytest.approx(9.0)
    uniform = np.full((1, 1, 4), 0.25, np.float32)
    assert float(distill_loss("luong-location", uniform, None, teacher_alpha)) == pytest.approx(np.log(4), rel=1e-5)


def test_guided_step_adds_the_distance_to_the_teacher_only_when_asked():
    import jax
    import optax

    from models.seq2seq.train import batch_arrays, distill_loss, make_train_step

    t_graphdef, t_params = s2s.make_model(_tiny("luong-general"), seed=1)
    graphdef, params = s2s.make_model(_tiny("luong-location"), seed=2)
    src, lengths, tgt_in, targets = batch_arrays(dates.generate(8, seed=3), dates.MAX_INPUT_CHARS)
    window = np.float32(3.0)
    flat = flat_params(params)
    copy = lambda: filled_state(params, flat, where="test")  # noqa: E731 (steps donate their input)

    def nll(p):
        logits, _, _ = s2s.apply(graphdef, p, src, lengths, tgt_in, window, teacher_forcing=True)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    def distance(p):
        _, alpha, centers = s2s.apply(graphdef, p, src, lengths, tgt_in, window, teacher_forcing=True)
        _, t_alpha, _ = s2s.apply(t_graphdef, t_params, src, lengths, tgt_in, window, teacher_forcing=True)
        return distill_loss("luong-location", alpha, centers, t_alpha)

    loss_0, g_nll = jax.jit(jax.value_and_grad(nll))(copy())
    g_nll = flat_params(g_nll)["att_w"]
    g_distance = flat_params(jax.jit(jax.grad(distance))(copy()))["att_w"]
    assert np.abs(g_distance).max() > 0

    sgd = optax.sgd(1.0)  # new = old − gradient, so the update is the gradient itself
    guided = make_train_step(graphdef, sgd, "luong-location", (t_graphdef, t_params))
    plain = make_train_step(graphdef, sgd)
    for guide in (0.0, 5.0):
        p = copy()
        new, _, loss = guided(p, sgd.init(p), src, lengths, tgt_in, targets, window, np.float32(guide))
        step = flat["att_w"] - flat_params(new)["att_w"]
        np.testing.assert_allclose(step, g_nll + guide * g_distance, rtol=1e-4, atol=1e-6)
        assert float(loss) == pytest.approx(float(loss_0), rel=1e-5)  # the reported loss is the NLL
    p = copy()
    new, _, _ = plain(p, sgd.init(p), src, lengths, tgt_in, targets, window)
    np.testing.assert_allclose(flat["att_w"] - flat_params(new)["att_w"], g_nll, rtol=1e-4, atol=1e-6)

"""The encoder–decoder on the tiny preset: numpy oracles, masks (hypothesis), padding, the causal mask,
checkpoints, training. (The views of one forward agree with each other: test_views_agree.py.)

Every jitted call uses batch 3 and the 40-character bucket (the padding test adds 12), so each compiles once.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.capture import Capture
from models.checkpoint import CheckpointError, filled_state, flat_params
from models.encdec import forward as fwd
from models.encdec import model as ed
from models.encdec.checkpoint import CHECKPOINT
from models.seq2seq import task as dates
from tests.models.encdec.tiny_model import TEXTS, TINY, layer_norm, sources, tiny_model, tiny_params

# Every kind's maps and the logits.
EVERYTHING = fwd.KindCapture(encoder=fwd.MAPS.encoder, decoder=Capture(maps=True), cross=fwd.MAPS.cross)


def _maps(out, kind):
    return np.stack(out[kind]["maps"], axis=1)  # [B, L, H, queries, keys]


@pytest.fixture(scope="module")
def tiny():
    return tiny_model()


def test_sinusoidal_positions_match_the_paper_formula():
    table = ed.sinusoidal_positions(40, 16)
    p, i = 7, 3
    assert table[p, 2 * i] == pytest.approx(np.sin(p / 10_000 ** (2 * i / 16)), abs=1e-6)
    assert table[p, 2 * i + 1] == pytest.approx(np.cos(p / 10_000 ** (2 * i / 16)), abs=1e-6)
    assert np.array_equal(table[0, 1::2], np.ones(8, np.float32))


def test_first_encoder_attention_matches_a_numpy_oracle(tiny):
    graphdef, params = tiny
    flat = flat_params(params)
    src, lengths = sources()
    out = fwd.teacher_forced(graphdef, params, src, lengths, np.zeros((3, 10), np.int32), capture=fwd.MAPS)
    encoder = _maps(out, "encoder")
    d, h = TINY.model_dim, TINY.num_heads
    x = flat["source_embed"][src] * np.sqrt(d) + ed.sinusoidal_positions(40, d)[None]
    x = layer_norm(x, flat["encoder.0.norm_1.scale"], flat["encoder.0.norm_1.bias"])
    q = x @ flat["encoder.0.self_attention.w_q"] + flat["encoder.0.self_attention.b_q"]
    k = x @ flat["encoder.0.self_attention.w_k"] + flat["encoder.0.self_attention.b_k"]
    split = lambda a: a.reshape(3, 40, h, d // h).transpose(0, 2, 1, 3)  # noqa: E731
    scores = split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(d // h)
    scores = np.where(np.arange(40)[None, None, None, :] < lengths[:, None, None, None], scores, -np.inf)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(encoder[:, 0], expected, atol=2e-5)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, len(dates.SOURCE_VOCAB) - 1), min_size=1, max_size=40))
def test_masks_are_exact_zeros_and_rows_sum_to_one(source_ids):
    graphdef, params = tiny_model()
    rows = [np.asarray(source_ids, np.int32)] + [dates.encode_source(t).ids for t in TEXTS[1:]]
    src, lengths = ed.pad_batch(rows, 40)
    _, out = fwd.read_own_output(graphdef, params, src, lengths)
    encoder, decoder, cross = (_maps(out, kind)[:1] for kind in ed.RECORD_KINDS)
    n = len(source_ids)
    above = np.triu(np.ones((10, 10), bool), k=1)
    assert np.all(decoder[..., above] == 0.0), "a decoder position must give exactly 0 to later positions"
    assert np.all(decoder[..., ~above] > 0.0)
    assert np.all(encoder[..., n:] == 0.0) and np.all(cross[..., n:] == 0.0), "padding keys get exactly 0"
    for weights in (encoder, decoder, cross):
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_padding_does_not_change_the_result(tiny):
    graphdef, params = tiny
    texts = ["2018-5-9", "9.5.2018", "2018年5月9日"]
    short, long = (fwd.read_own_output(graphdef, params, *sources(texts, bucket), capture=EVERYTHING)
                   for bucket in (12, 40))
    np.testing.assert_array_equal(short[0], long[0])
    np.testing.assert_allclose(short[1]["logits"], long[1]["logits"], atol=1e-5)
    np.testing.assert_allclose(_maps(short[1], "encoder"), _maps(long[1], "encoder")[..., :12, :12], atol=1e-6)
    np.testing.assert_allclose(_maps(short[1], "cross"), _maps(long[1], "cross")[..., :12], atol=1e-6)


def test_the_decoder_is_blind_to_the_future(tiny):
    graphdef, params = tiny
    src, lengths = sources()
    fed = ed.teacher_inputs(np.asarray(fwd.read_own_output(graphdef, params, src, lengths)[0]))
    changed = fed.copy()
    changed[:, 6:] = (changed[:, 6:] + 3) % TINY.target_vocab  # rewrite the future of position 5
    again, future = (fwd.teacher_forced(graphdef, params, src, lengths, tgt, capture=EVERYTHING) for tgt in (fed, changed))
    np.testing.assert_allclose(future["logits"][:, :6], again["logits"][:, :6], atol=1e-5)
    np.testing.assert_allclose(_maps(future, "decoder")[..., :6, :], _maps(again, "decoder")[..., :6, :], atol=1e-6)


def test_checkpoint_round_trip_with_float16_snapshots_and_strict_loading(tmp_path, tiny):
    _, params = tiny
    flat = flat_params(params)
    path = tmp_path / "transformer.safetensors"
    CHECKPOINT.save(path, TINY, flat, {0: flat}, {"final_step": 5, "validation_best_cross_head": [0, 1]})
    cfg, _, params2, info = CHECKPOINT.load(path)
    assert cfg == TINY and info["snapshot_steps"] == [0] and info["final_step"] == 5
    assert all(np.array_equal(v, flat_params(params2)[k]) for k, v in flat.items())
    snap = flat_params(CHECKPOINT.load_snapshots(path, params2)[0])
    np.testing.assert_allclose(snap["output"], flat["output"], atol=2e-3)
    with pytest.raises(CheckpointError, match="missing tensors"):
        filled_state(params, {k: v for k, v in flat.items() if k != "decoder.0.cross_attention.w_q"}, where="t")
    with pytest.raises(CheckpointError, match="unknown tensors"):
        filled_state(params, {**flat, "decoder.1.norm_1.scale": np.ones(16, np.float32)}, where="t")
    with pytest.raises(CheckpointError, match="output has shape"):
        filled_state(params, {**flat, "output": np.zeros((16, 3), np.float32)}, where="t")


def test_config_rejects_heads_that_do_not_divide_the_width():
    with pytest.raises(ValueError, match="divisible"):
        ed.EncDecConfig(model_dim=30, num_heads=4)


def test_training_lowers_the_cross_entropy_of_the_forward_logits():
    import optax

    from models.encdec.train import batch_arrays, cross_entropy_step

    graphdef, template = CHECKPOINT.abstract_model(TINY)
    params = tiny_params(template, seed=0)  # not the cached weights: the step donates its input buffers
    optimizer = optax.adam(1e-2)
    batch = batch_arrays(dates.generate(3, seed=11), dates.MAX_INPUT_CHARS)
    logits = np.asarray(fwd.teacher_forced(graphdef, params, *batch[:3])["logits"], np.float64)
    log_p = logits - logits.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    expected = -np.take_along_axis(log_p, batch[3][..., None], -1).mean()
    step, state, losses = cross_entropy_step(graphdef, optimizer), (params, optimizer.init(params)), []
    while len(losses) < 15:
        *state, loss, _ = step(*state, *batch)
        losses.append(float(loss))
    assert losses[0] == pytest.approx(expected, rel=1e-5) and losses[-1] < 0.7 * losses[0], losses


def test_snapshots_are_picked_over_the_steps_run_and_early_stop_needs_a_streak():
    from models.encdec.train import EarlyStop, kept_steps, pick_snapshots

    held = {s: {} for s in kept_steps(6000) if s <= 1000}
    picked = pick_snapshots(held, 1000)
    assert list(picked) == [0, 25, 50, 100, 150, 250, 400, 600, 800]
    assert 1000 not in pick_snapshots({**held, 1000: {}}, 1000), "the final weights are stored apart"
    early = EarlyStop(0.99, 2)
    assert [early.update(x) for x in (0.995, 0.98, 0.999, 1.0)] == [False, False, False, True]
    assert not any(EarlyStop(0.5, 0).update(1.0) for _ in range(5)), "patience 0 never stops"

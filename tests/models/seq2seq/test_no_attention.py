"""The encoder–decoder without attention: its decoder reads c = q(h_1, …, h_T) and nothing else.

Property tests on tiny configs (the last-state variant ignores h_1 … h_{T−1}; the mean variant
ignores anything that keeps the mean), a numpy oracle for c, the checkpoint round trip, and the
committed model: its record (c, no α), its exact match on held-out dates.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.record import InputError
from models.registry import get_mechanism
from models.seq2seq import model as s2s
from models.seq2seq import task as dates
from models.seq2seq.checkpoint import CHECKPOINT

TINY = s2s.PRESETS["tiny"]
TEXTS = ["Wednesday, May 9, 2018", "2018-5-9", "9.5.2018"]


def _tiny(variant, seed=1):
    cfg = s2s.Seq2SeqConfig(**{**TINY.__dict__, "variant": variant})
    return (cfg, *s2s.make_model(cfg, seed=seed))


def _batch(texts, bucket=40):
    src, lengths = s2s.pad_batch([dates.encode_source(t).ids for t in texts], bucket)
    return src, lengths, np.zeros((len(texts), dates.OUTPUT_LENGTH), np.int32)


@pytest.fixture(scope="module", params=s2s.NO_ATTENTION_VARIANTS)
def tiny(request):
    cfg, graphdef, params = _tiny(request.param)
    src, lengths, tgt = _batch(TEXTS)
    enc, s0 = s2s.nnx.merge(graphdef, params).encode(src, lengths)
    return cfg, graphdef, params, (src, lengths, tgt), np.asarray(enc), np.asarray(s0)


def _decode(graphdef, params, enc, s0, lengths, tgt):
    return np.asarray(s2s.apply_decoder(graphdef, params, enc, s0, lengths, tgt, np.float32(3))[0])


def test_context_is_the_last_state_or_the_mean_numpy_oracle(tiny):
    cfg, graphdef, params, (src, lengths, _), enc, _ = tiny
    c, weights = (np.asarray(x) for x in s2s.apply_context(graphdef, params, src, lengths))
    for b, n in enumerate(lengths):
        expected = enc[b, n - 1] if cfg.variant == "no-attention" else enc[b, :n].mean(0)
        np.testing.assert_allclose(c[b], expected, atol=1e-6)
        q = np.zeros(enc.shape[1], np.float32)
        q[n - 1] = 1.0
        if cfg.variant == "no-attention-mean":
            q = np.where(np.arange(enc.shape[1]) < n, 1.0 / n, 0.0)
        np.testing.assert_allclose(weights[b], q, atol=1e-7)


def test_alpha_is_qs_fixed_weights_the_same_at_every_step(tiny):
    cfg, graphdef, params, batch, _, _ = tiny
    _, alpha, centers = (np.asarray(x) for x in s2s.apply(graphdef, params, *batch, np.float32(3)))
    _, weights = s2s.apply_context(graphdef, params, *batch[:2])
    np.testing.assert_array_equal(alpha, np.broadcast_to(np.asarray(weights)[:, None, :], alpha.shape))
    assert np.all(centers == -1.0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.1, 3.0))
def test_last_state_decoder_never_reads_h1_to_hT_minus_1_nor_s0(seed, scale):
    # Oracle: change every annotation but h_T (and the bridged s0 the attention models use): the output
    # of the last-state variant does not move. Changing h_T does move it.
    cfg, graphdef, params = _tiny("no-attention")
    src, lengths, tgt = _batch(TEXTS)
    model = s2s.nnx.merge(graphdef, params)
    enc, s0 = (np.asarray(x) for x in model.encode(src, lengths))
    rng = np.random.default_rng(seed)
    changed = enc.copy()
    for b, n in enumerate(lengths):
        changed[b, : n - 1] = scale * rng.standard_normal(changed[b, : n - 1].shape)
    base = _decode(graphdef, params, enc, s0, lengths, tgt)
    np.testing.assert_array_equal(base, _decode(graphdef, params, changed, s0 + scale, lengths, tgt))
    last = changed.copy()
    last[0, lengths[0] - 1] += scale
    assert not np.allclose(base[0], _decode(graphdef, params, last, s0, lengths, tgt)[0], atol=1e-6)


def test_mean_decoder_reads_only_the_mean():
    cfg, graphdef, params = _tiny("no-attention-mean")
    src, lengths, tgt = _batch(TEXTS)
    enc, s0 = (np.asarray(x) for x in s2s.nnx.merge(graphdef, params).encode(src, lengths))
    rng = np.random.default_rng(0)
    changed = enc.copy()
    for b, n in enumerate(lengths):
        noise = rng.standard_normal(changed[b, :n].shape).astype(np.float32)
        changed[b, :n] += noise - noise.mean(0)  # a change that keeps the mean
    base = _decode(graphdef, params, enc, s0, lengths, tgt)
    np.testing.assert_allclose(base, _decode(graphdef, params, changed, s0 - 1.0, lengths, tgt), atol=2e-5)
    changed[0, 0] += 1.0
    assert not np.allclose(base[0], _decode(graphdef, params, changed, s0, lengths, tgt)[0], atol=1e-4)


@pytest.mark.parametrize("variant", s2s.NO_ATTENTION_VARIANTS)
def test_padding_does_not_change_the_result(variant):
    _, graphdef, params = _tiny(variant)
    short = s2s.apply(graphdef, params, *_batch(["2018-5-9"], bucket=12), np.float32(3))
    long = s2s.apply(graphdef, params, *_batch(["2018-5-9"], bucket=40), np.float32(3))
    np.testing.assert_allclose(np.asarray(short[0]), np.asarray(long[0]), atol=1e-5)


def test_same_encoder_and_decoder_as_bahdanau_without_its_attention_head():
    from models.checkpoint import flat_params

    bahdanau = flat_params(_tiny("bahdanau")[2])
    none = flat_params(_tiny("no-attention")[2])
    assert set(bahdanau) - set(none) == {"att_w", "att_u", "att_v"} and set(none) <= set(bahdanau)
    assert all(none[k].shape == bahdanau[k].shape for k in none)


def test_checkpoint_round_trip(tmp_path):
    from models.checkpoint import flat_params

    cfg, graphdef, params = _tiny("no-attention", seed=3)
    path = CHECKPOINT.save(tmp_path / "no-attention.safetensors", cfg, flat_params(params), {}, {"steps": 0,
                                                                                                   "final_step": 0})
    cfg2, graphdef2, params2, info = CHECKPOINT.load(path)
    assert cfg2 == cfg and info["steps"] == 0
    batch = _batch(TEXTS)
    for a, b in zip(s2s.apply(graphdef, params, *batch, np.float32(3)), s2s.apply(graphdef2, params2, *batch,
                                                                                   np.float32(3))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ------------------------------------------------------------------ the committed model


def test_committed_record_holds_c_and_says_there_is_no_alpha():
    from models.seq2seq.records import load_variant

    record = get_mechanism("no-attention").build({"text": "Wednesday, May 9, 2018"})
    assert record.meta["output"] == "2018-05-09" and record.meta["attention"] is False
    cfg, graphdef, params, _ = load_variant("no-attention")
    assert record.axes == ("unit",) and record.weights.shape == (2 * cfg.encoder_hidden,)
    assert record.key_labels[0] == "fwd 0" and record.key_labels[-1] == f"bwd {cfg.encoder_hidden - 1}"
    src, lengths, _ = _batch(["Wednesday, May 9, 2018"])
    c, _ = s2s.apply_context(graphdef, params, src, lengths)
    np.testing.assert_allclose(record.weights, np.asarray(c)[0], atol=1e-5)
    with pytest.raises(InputError, match="window"):
        get_mechanism("no-attention").read({"text": "9 May 2018", "window": 3})


@pytest.mark.parametrize("variant, bar", [("no-attention", 0.85), ("no-attention-mean", 0.97)])
def test_committed_models_decode_held_out_dates(variant, bar):
    # Measured on these 1,000 dates: 87.9 % (last state) and 99.4 % (mean), docs/models/seq2seq.md.
    from models.seq2seq.quality import evaluate, held_out_examples

    quality = evaluate(variant, held_out_examples())
    assert quality.exact_match >= bar and quality.alignment_accuracy is None, quality.per_format

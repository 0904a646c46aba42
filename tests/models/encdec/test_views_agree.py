"""Every view of the encoder–decoder is one forward (models/encdec/forward.py), and they agree: the decoder and
cross records (a teacher-forced pass over the model's own greedy output) are the rows of step-by-step cached
decoding; cached greedy decoding writes what decoding without a cache writes; knocking out no heads is the
plain forward; a cross-attention override and value zeroing match a numpy oracle; the committed checkpoint
still measures the validation exact match it stored."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from flax import nnx

from models.capture import Capture, Interventions
from models.checkpoint import filled_state, flat_params
from models.encdec import forward as fwd
from models.encdec import model as ed
from models.encdec.records import decoding_step_record, load_model
from models.registry import get_mechanism
from models.seq2seq import task as dates
from tests.models.encdec.tiny_model import TINY, layer_norm, sources, tiny_model

TEXT = "Wednesday, 9 May 2018"
STEP = fwd.KindCapture(decoder=Capture(maps=True), cross=Capture(logits=False, maps=True))
EVERYTHING = fwd.KindCapture(encoder=Capture(logits=False, maps=True, heads=True),
                             decoder=Capture(maps=True, heads=True, residual=True),
                             cross=Capture(logits=False, maps=True, heads=True))


@functools.partial(jax.jit, static_argnames="graphdef")
def _memory(graphdef, params, src, lengths):
    return fwd.encode(nnx.merge(graphdef, params), src, lengths)["memory"]


@functools.partial(jax.jit, static_argnames="graphdef")
def _cached_step(graphdef, params, token, memory, lengths, position, cache):
    return fwd.decode(nnx.merge(graphdef, params), token, memory, lengths, start=position, cache=cache, capture=STEP)


def step_by_step(graphdef, params, src, lengths):
    """Returns (tokens [B, 10], decoder rows [steps, L, B, H, 10], cross rows [steps, L, B, H, S]) of greedy
    decoding one cached step at a time, in Python."""
    cfg = nnx.merge(graphdef, params).cfg
    memory = _memory(graphdef, params, src, lengths)
    token, cache = np.full((len(src), 1), ed.BOS_ID, np.int32), fwd.empty_cache(cfg, len(src), cfg.output_length)
    tokens, own, cross = [], [], []
    for position in range(cfg.output_length):
        out = _cached_step(graphdef, params, token, memory, lengths, np.int32(position), cache)
        token, cache = np.argmax(out["logits"], -1).astype(np.int32), out["cache"]
        tokens.append(token[:, 0])
        own.append([np.asarray(m)[:, :, 0] for m in out["decoder"]["maps"]])
        cross.append([np.asarray(m)[:, :, 0] for m in out["cross"]["maps"]])
    return np.stack(tokens, 1), np.asarray(own), np.asarray(cross)


def uncached_greedy(graphdef, params, src, lengths) -> np.ndarray:
    """Returns greedy tokens [B, 10] written without a cache: every step runs the whole prefix again."""
    fed = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
    fed[:, 0] = ed.BOS_ID
    for position in range(fed.shape[1]):
        logits = np.asarray(fwd.teacher_forced(graphdef, params, src, lengths, fed)["logits"])
        chosen = logits[:, position].argmax(-1)
        if position + 1 < fed.shape[1]:
            fed[:, position + 1] = chosen
    return np.append(fed[:, 1:], chosen[:, None], axis=1)


@pytest.fixture(scope="module")
def committed():
    return load_model()[1:]  # (graphdef, params, info)


def test_the_records_are_the_rows_of_cached_step_by_step_decoding(committed):
    graphdef, params, _ = committed
    records = {kind: get_mechanism(f"transformer-{kind}").build({"text": TEXT}) for kind in ed.RECORD_KINDS}
    src, lengths = sources([TEXT])
    tokens, own, cross = step_by_step(graphdef, params, src, lengths)
    assert dates.decode_target(tokens[0]) == records["cross"].meta["output"] == "2018-05-09"
    n = len(TEXT)
    np.testing.assert_allclose(np.moveaxis(own[:, :, 0], 0, 2), records["decoder"].weights, atol=1e-6)
    np.testing.assert_allclose(np.moveaxis(cross[:, :, 0, :, :n], 0, 2), records["cross"].weights, atol=1e-6)
    assert np.all(cross[..., n:] == 0.0), "padding keys get exactly 0 in every step"
    last = decoding_step_record(records["decoder"], 9)  # the decoding-step view of the last character
    np.testing.assert_allclose(last.weights, own[9, :, 0].reshape(-1, 10), atol=1e-6)
    encoder = fwd.teacher_forced(graphdef, params, src, lengths, ed.teacher_inputs(tokens), capture=fwd.MAPS)["encoder"]
    np.testing.assert_allclose(np.stack(encoder["maps"], 1)[0, :, :, :n, :n], records["encoder"].weights, atol=1e-6)


@pytest.mark.parametrize("weights", ["committed", "tiny"])
def test_cached_greedy_decoding_writes_what_decoding_without_a_cache_writes(weights, committed):
    graphdef, params = committed[:2] if weights == "committed" else tiny_model()
    examples = dates.generate(16, seed=5)
    src, lengths = sources([e.source for e in examples])
    tokens = np.asarray(fwd.read_own_output(graphdef, params, src, lengths)[0])
    np.testing.assert_array_equal(tokens, uncached_greedy(graphdef, params, src, lengths))
    np.testing.assert_array_equal(tokens, step_by_step(graphdef, params, src, lengths)[0])
    if weights == "committed":
        assert sum(dates.decode_target(t) == e.target for t, e in zip(tokens, examples)) >= 15


def _kinds(make):
    return fwd.KindInterventions(**{kind: make(kind) for kind in ed.RECORD_KINDS})


@pytest.mark.parametrize("mode", ["zero", "first"])
def test_knocking_out_no_heads_is_the_plain_forward_and_one_head_changes_it(mode, committed):
    graphdef, params, _ = committed
    src, lengths = sources(["9 May 2018", "2018/05/09", "May 9, 2018"])
    fed = ed.teacher_inputs(np.asarray(fwd.read_own_output(graphdef, params, src, lengths)[0]))
    plain = fwd.teacher_forced(graphdef, params, src, lengths, fed, capture=EVERYTHING)

    def knock_out(cross_keep):  # one head mask per kind: the same compile for both calls
        return fwd.teacher_forced(graphdef, params, src, lengths, fed, capture=EVERYTHING, change=_kinds(
            lambda kind: Interventions(head_keep=cross_keep if kind == "cross" else np.ones((2, 4), np.float32),
                                       head_mode=mode)))

    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(knock_out(np.ones((2, 4), np.float32)))):
        np.testing.assert_array_equal(a, b)
    keep = np.ones((2, 4), np.float32)
    keep[0, 2] = 0.0  # the cross head best aligned with the source
    out = knock_out(keep)
    head = np.asarray(out["cross"]["heads"][0])[:, 2]  # [B, T, d]
    want = 0.0 if mode == "zero" else _first_value(graphdef, params, src, lengths)  # every row reads key 0
    np.testing.assert_allclose(head, np.broadcast_to(want, head.shape), atol=1e-5)
    assert np.abs(np.asarray(out["logits"]) - np.asarray(plain["logits"])).max() > 1e-2
    np.testing.assert_array_equal(out["cross"]["maps"][0], plain["cross"]["maps"][0])  # a mask changes no map


def _first_value(graphdef, params, src, lengths):
    # Cross-attention head 2 of layer 0's value vector of the first source character: [B, 1, d].
    memory = np.asarray(_memory(graphdef, params, src, lengths))
    block = flat_params(params)
    v = memory[:, :1] @ block["decoder.0.cross_attention.w_v"] + block["decoder.0.cross_attention.b_v"]
    return v.reshape(len(src), 1, 4, -1)[:, :, 2]


# ----------------------------------------------------------------------------- a numpy oracle of the forward


def oracle(flat, src, lengths, fed, *, cross_first=False, value_keep=None):
    """Returns (logits [B, T, V], cross maps [L, B, H, T, S]) of the whole model in float64; cross_first puts
    every cross-attention row on the first source character; value_keep [B, S] scales the source's values in
    every encoder and cross-attention layer."""
    d, h = TINY.model_dim, TINY.num_heads

    def mha(name, xq, xkv, allowed, keep=None, first=False):
        split = lambda a: a.reshape(*a.shape[:2], h, d // h).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = (split(x @ flat[f"{name}.w_{p}"] + flat[f"{name}.b_{p}"]) for x, p in ((xq, "q"), (xkv, "k"), (xkv, "v")))
        v = v if keep is None else v * keep[:, None, :, None]
        scores = np.where(allowed, q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // h), -np.inf)
        a = np.exp(scores - scores.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        if first:
            a = np.zeros_like(a)
            a[..., 0] = 1.0
        out = (a @ v).transpose(0, 2, 1, 3).reshape(*xq.shape[:2], d)
        return out @ flat[f"{name}.w_o"] + flat[f"{name}.b_o"], a

    def norm(x, name):
        return layer_norm(x, flat[f"{name}.scale"], flat[f"{name}.bias"])

    def ffn(x, name):
        return np.maximum(x @ flat[f"{name}.w_1"] + flat[f"{name}.b_1"], 0) @ flat[f"{name}.w_2"] + flat[f"{name}.b_2"]

    real = (np.arange(src.shape[1])[None] < lengths[:, None])[:, None, None]  # [B, 1, 1, S]
    x = flat["source_embed"][src] * np.sqrt(d) + ed.sinusoidal_positions(src.shape[1], d)
    for i in range(TINY.encoder_layers):
        normed = norm(x, f"encoder.{i}.norm_1")
        x = x + mha(f"encoder.{i}.self_attention", normed, normed, real, value_keep)[0]
        x = x + ffn(norm(x, f"encoder.{i}.norm_2"), f"encoder.{i}.feed_forward")
    memory = norm(x, "encoder_norm")
    y = flat["target_embed"][fed] * np.sqrt(d) + ed.sinusoidal_positions(fed.shape[1], d)
    causal, maps = np.tril(np.ones((fed.shape[1],) * 2, bool)), []
    for i in range(TINY.decoder_layers):
        normed = norm(y, f"decoder.{i}.norm_1")
        y = y + mha(f"decoder.{i}.self_attention", normed, normed, causal)[0]
        out, a = mha(f"decoder.{i}.cross_attention", norm(y, f"decoder.{i}.norm_2"), memory, real, value_keep,
                     cross_first)
        y, maps = y + out, maps + [a]
        y = y + ffn(norm(y, f"decoder.{i}.norm_3"), f"decoder.{i}.feed_forward")
    return norm(y, "decoder_norm") @ flat["output"] + flat["output_b"], np.asarray(maps)


@pytest.fixture(scope="module")
def biased():
    """Returns (graphdef, params, flat float64) of the tiny model with random biases and norm parameters."""
    graphdef, params = tiny_model()
    rng = np.random.default_rng(8)
    flat = {k: v + rng.normal(0, 0.3, v.shape).astype(np.float32) if v.ndim == 1 else v
            for k, v in flat_params(params).items()}
    return graphdef, filled_state(params, flat, where="biased"), {k: v.astype(np.float64) for k, v in flat.items()}


@pytest.mark.parametrize("cross_first, zeroed", [(False, False), (True, False), (False, True), (True, True)])
def test_cross_override_on_the_first_character_and_value_zeroing_match_the_oracle(biased, cross_first, zeroed):
    graphdef, params, flat = biased
    src, lengths = sources()
    fed = ed.teacher_inputs(np.asarray(fwd.read_own_output(graphdef, params, src, lengths)[0]))
    value_keep = np.ones(src.shape, np.float32)  # all ones: no value zeroed (and one compile for both cases)
    if zeroed:
        value_keep[:, 1:4] = 0.0  # the second to fourth characters' values
    first = np.zeros((3, TINY.num_heads, 10, src.shape[1]), np.float32)
    first[..., 0] = 1.0
    layers = range(TINY.decoder_layers)
    change = fwd.KindInterventions(
        encoder=Interventions(value_keep={i: value_keep for i in range(TINY.encoder_layers)}),
        cross=Interventions(attention={i: first for i in layers} if cross_first else None,
                            value_keep={i: value_keep for i in layers}))
    out = fwd.teacher_forced(graphdef, params, src, lengths, fed, capture=STEP, change=change)
    logits, maps = oracle(flat, src, lengths, fed, cross_first=cross_first, value_keep=value_keep if zeroed else None)
    np.testing.assert_allclose(out["logits"], logits, atol=2e-4)
    np.testing.assert_allclose(np.asarray(out["cross"]["maps"]), maps, atol=2e-5)
    if cross_first:  # the head mask's "first" mode is the same override
        masked = fwd.KindInterventions(encoder=change.encoder, cross=Interventions(
            head_keep=np.zeros((1, TINY.num_heads), np.float32), head_mode="first", value_keep=change.cross.value_keep))
        again = fwd.teacher_forced(graphdef, params, src, lengths, fed, change=masked)
        np.testing.assert_allclose(again["logits"], out["logits"], atol=1e-5)


def test_the_committed_checkpoint_still_measures_its_stored_validation_exact_match(committed):
    from models.encdec.quality import evaluate_params
    from models.encdec.train import VALIDATION_SEED, VALIDATION_SIZE

    graphdef, params, info = committed
    measured = evaluate_params(graphdef, params, dates.generate(VALIDATION_SIZE, VALIDATION_SEED))
    assert measured.exact_match == info["validation_exact_match"]
    assert list(measured.best_head) == info["validation_best_cross_head"]

"""The methods that apply to the date encoder–decoder, on its tiny random model: norm-based against numpy from the
forward's α and the memory, value zeroing and occlusion against the forward run one change at a time, IG's
completeness, the refusals, and the records' shapes and labels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from models.attribution.adapters import average_token
from models.attribution.contributions import cosine_distance
from models.attribution.records import APPLIES, attribution_record
from models.capture import Capture, Interventions
from models.encdec.forward import KindCapture, KindInterventions, encode, forward, read_own_output
from models.encdec.model import BOS_ID
from models.record import InputError
from tests.models.encdec.tiny_model import sources, tiny_model

TEXT = "9 May 2018"
METHODS = [m for m, where in APPLIES.items() if where["encdec"] is True]


@pytest.fixture(scope="module")
def case():
    weights = tiny_model()
    records = {method: attribution_record("encdec", method, weights, TEXT, steps=64) for method in METHODS}
    src, lengths = sources([TEXT])
    tokens = np.asarray(read_own_output(*weights, src, lengths)[0], np.int32)
    fed = np.concatenate([np.full((1, 1), BOS_ID, np.int32), tokens[:, :-1]], axis=1)
    return weights, records, (jnp.asarray(src), jnp.asarray(lengths), jnp.asarray(fed), tokens)


@jax.jit
def _pass(params, src, lengths, fed, keep, stream):
    # One teacher-forced pass with a cross-attention value mask ({layer: [1, S]}) and the source stream given.
    graphdef = tiny_model()[0]
    return forward(
        nnx.merge(graphdef, params),
        src,
        lengths,
        fed,
        stream=stream,
        capture=KindCapture(decoder=Capture(logits=True, residual=True), cross=Capture(logits=False, maps=True)),
        change=KindInterventions(cross=Interventions(value_keep=keep)),
    )


def _stream(model, src):
    from models.encdec.forward import embed
    from models.encdec.model import sinusoidal_positions

    return embed(model.source_embed[...], src, jnp.asarray(sinusoidal_positions(src.shape[1], model.cfg.model_dim)))


def _log_p(out, tokens):
    log_p = np.asarray(jax.nn.log_softmax(out["logits"][0], -1))
    return log_p[np.arange(tokens.shape[1]), tokens[0]]


def test_norm_based_matches_numpy(case):
    (graphdef, params), records, (src, lengths, fed, tokens) = case
    model = nnx.merge(graphdef, params)
    memory = np.asarray(encode(model, src, lengths)["memory"][0], np.float64)
    ones = {0: jnp.ones((1, src.shape[1]))}
    maps = np.asarray(_pass(params, src, lengths, fed, ones, _stream(model, src))["cross"]["maps"][0][0])
    block = model.decoder[0].cross_attention
    w_v, b_v, w_o = (np.asarray(a[...], np.float64) for a in (block.w_v, block.b_v, block.w_o))
    heads, n = maps.shape[0], records["norm"].weights.shape[-1]
    width = w_v.shape[1] // heads
    f = np.stack(
        [(memory @ w_v + b_v)[:, h * width : (h + 1) * width] @ w_o[h * width : (h + 1) * width] for h in range(heads)]
    )  # [H, S, D]: (x W_V + b_V) W_O per head
    expected = np.linalg.norm(np.einsum("hts,hsd->tsd", maps, f), axis=-1)[:, :n]
    np.testing.assert_allclose(records["norm"].weights[0], expected, rtol=1e-4, atol=1e-6)


def test_value_zeroing_and_occlusion_match_one_change_at_a_time(case):
    (graphdef, params), records, (src, lengths, fed, tokens) = case
    model = nnx.merge(graphdef, params)
    s, n = src.shape[1], records["norm"].weights.shape[-1]
    stream = _stream(model, src)
    plain = _pass(params, src, lengths, fed, {0: jnp.ones((1, s))}, stream)
    distance = np.zeros((tokens.shape[1], n))
    for j in range(n):
        out = _pass(params, src, lengths, fed, {0: jnp.asarray((np.arange(s) != j)[None], jnp.float32)}, stream)
        distance[:, j] = np.maximum(
            np.asarray(cosine_distance(out["decoder"]["residual"][1, 0], plain["decoder"]["residual"][1, 0])), 0
        )
    expected = distance / distance.sum(-1, keepdims=True)
    np.testing.assert_allclose(records["value-zeroing"].weights[0], expected, rtol=2e-3, atol=2e-5)
    table = model.source_embed[...]
    baseline = stream[0] + (average_token(table) - table[src[0]]) * np.sqrt(model.cfg.model_dim)
    base = _log_p(plain, tokens)
    np.testing.assert_allclose(records["occlusion"].extras["targets"], base, rtol=1e-4, atol=1e-5)
    for j in range(n):
        out = _pass(params, src, lengths, fed, {0: jnp.ones((1, s))}, stream.at[0, j].set(baseline[j]))
        np.testing.assert_allclose(records["occlusion"].weights[:, j], base - _log_p(out, tokens), rtol=1e-3, atol=2e-5)


def test_integrated_gradients_completeness(case):
    gap = np.abs(case[1]["integrated-gradients"].extras["completeness_gap"])
    assert np.all(gap < 5e-3), gap  # ReLU kinks on the path: 64 Gauss–Legendre points leave up to ~2e-3 here


def test_records_have_the_cross_attention_shape_and_labels(case):
    _, records, (src, lengths, fed, tokens) = case
    n = int(lengths[0])
    for method, record in records.items():
        assert record.weights.shape[-2:] == (tokens.shape[1], n), method
        assert len(record.key_labels) == n and record.key_labels[0] == TEXT[0]
        assert record.meta["output"] and np.all(np.isfinite(record.weights))


def test_alti_and_chefer_say_why_not():
    for method in ("alti", "chefer"):
        assert isinstance(APPLIES[method]["encdec"], str)
        with pytest.raises(InputError, match="not implemented"):
            attribution_record("encdec", method, tiny_model(), TEXT)


def test_unknown_methods_and_architectures_are_refused_in_one_line():
    from models.attribution.records import check_applies

    with pytest.raises(InputError, match="choose one of"):
        check_applies("saliency", "encoder")
    with pytest.raises(InputError, match="choose one of"):
        check_applies("norm", "rnn")

"""Every variant entry (models/registry_variants.py) builds a record on the Playground's input whose weights
equal the numpy oracle, under the defaults and under another input; options are checked on the server."""

import math

import numpy as np
import pytest

from models.playground.records import DEFAULT_KEYS, DEFAULT_QUERY, DEFAULT_VALUES
from models.record import InputError
from models.registry_variants import VARIANT_MECHANISMS
from models.variants.records import DEFAULTS, LAMBDA_VECTORS, VARIANTS, mla_weights, stacked_rows
from tests.models.variants import oracle

BY_ID = {m.id: m for m in VARIANT_MECHANISMS}
OTHER = {
    "query": "-1,2",
    "keys": "1,0; 0,1; 1,1; -1,0.5; 0.3,-2; 2,2",
    "values": "1,0,0; 0,1,0; 0,0,1; 1,1,0; 0,1,1; 1,0,1",
    "temperature": 0.7,
}


def _inputs(raw):
    if raw is None:
        return DEFAULT_QUERY.astype(np.float64), DEFAULT_KEYS.astype(np.float64), DEFAULT_VALUES.astype(np.float64), 1.0
    parse = lambda text: np.array([[float(x) for x in row.split(",")] for row in text.split(";")])  # noqa: E731
    return parse(raw["query"])[0], parse(raw["keys"]), parse(raw["values"]), raw["temperature"]


def _mix(num):
    angles = np.full(1, np.pi / 4) if num == 1 else (np.pi / 2) * np.arange(num) / (num - 1)
    return math.sqrt(2) * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _rotary(x):
    return np.concatenate([np.repeat(x[..., :1], 8, -1), np.repeat(x[..., 1:2], 8, -1)], axis=-1)


def expected(variant, q, k, v, options):
    """The oracle's weights of one entry: keys at positions 0 … n − 1, the query at n − 1."""
    n = len(k)
    scores = (q @ k.T / math.sqrt(2))[None]  # [1, n]
    if variant in ("mha", "mqa", "gqa"):
        heads = options.get("num_heads", 4)
        kv = {"mha": heads, "mqa": 1}.get(variant, options.get("kv_heads", 2))
        qh = (_mix(heads) * q)[:, None, :]
        kh = _mix(kv)[:, None, :] * k[None]
        return oracle.grouped(qh, kh, np.broadcast_to(v, (kv, *v.shape)))[1]
    if variant == "mla":
        v2 = np.zeros((n, 2))
        v2[:, : min(2, v.shape[1])] = v[:, :2]
        x_kv, x_q = np.concatenate([k, v2], axis=1), np.concatenate([q, q])[None]
        return oracle.mla(x_q, x_kv, mla_weights(), [n - 1], np.arange(n), [1.0])[1]
    if variant == "sliding-window":
        return oracle.softmax(scores, np.arange(n) > n - 1 - options.get("sliding_window", 3))
    if variant == "local-global":
        window, period = options.get("sliding_window", 3), options.get("local_per_global", 5) + 1
        rows = [
            oracle.softmax(scores, None if (layer + 1) % period == 0 else np.arange(n) > n - 1 - window)
            for layer in range(options.get("num_layers", 6))
        ]
        return np.stack(rows)
    if variant == "alibi":
        slopes = np.array(oracle.alibi_slopes(options.get("num_heads", 4)))
        return oracle.softmax(scores[None] - slopes[:, None, None] * (n - 1 - np.arange(n)))
    if variant in ("rope", "no-pe", "p-rope"):
        share = {"rope": 1.0, "no-pe": 0.0}.get(variant, options.get("rope_fraction", 0.75))
        base = options.get("rope_base", 10_000.0)
        inv_freq = [base ** (-2 * m / 16) if m < round(share * 8) else 0.0 for m in range(8)]
        q_rot = oracle.rotate_pairs(_rotary(q)[None], [n - 1], inv_freq)
        k_rot = oracle.rotate_pairs(_rotary(k), np.arange(n), inv_freq)
        return oracle.softmax(q_rot @ k_rot.T / 4.0)
    if variant == "sigmoid":
        return 1 / (1 + np.exp(-(scores - np.log(n))))
    if variant in ("sink", "softmax1"):
        return oracle.sink_softmax(scores, options.get("sink_logit", 1.0) if variant == "sink" else 0.0)
    if variant == "gated":
        return oracle.softmax(scores) / (1 + np.exp(-(q[0] - q[1])))
    if variant == "differential":
        layer = options.get("diff_layer", 1)
        init = 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))
        lq1, lk1, lq2, lk2 = (float(x[0]) for x in LAMBDA_VECTORS)
        lam = math.exp(lq1 * lk1) - math.exp(lq2 * lk2) + init
        return oracle.differential(q[None], k, v, lam, layer)[1]
    if variant == "linear":
        return oracle.linear_parallel(q[None], k, v, causal=False)[1]
    if variant == "online-softmax":
        return oracle.softmax(scores)
    raise AssertionError(variant)


def test_every_variant_has_an_entry_and_every_entry_a_variant():
    assert sorted(BY_ID) == sorted(VARIANTS)
    for m in VARIANT_MECHANISMS:
        assert m.family == "variants" and m.variant == m.id and m.paper and m.formula and m.summary
        assert {"query", "keys", "values", "labels", "temperature", "mode", "seed", "samples"} <= {
            o.name for o in m.options
        }


@pytest.mark.parametrize("raw", [None, OTHER], ids=["defaults", "other"])
@pytest.mark.parametrize("mechanism_id", sorted(BY_ID))
def test_record_weights_equal_the_oracle(mechanism_id, raw):
    q, k, v, temperature = _inputs(raw)
    record = BY_ID[mechanism_id].build(raw or {})
    scaled = q if mechanism_id == "linear" else q / temperature
    want = expected(mechanism_id, scaled, k, v, {})
    assert record.mechanism == mechanism_id and record.weights.dtype == np.float32
    assert record.axes[-2:] == ("query", "key") and record.weights.shape[-1] == len(k)
    np.testing.assert_allclose(record.weights, want.reshape(record.weights.shape), atol=2e-6)
    assert record.extras["context"].shape[-1] == (2 if mechanism_id == "mla" else v.shape[1])  # MLA: W_uv's width
    rows = record.weights.reshape(-1, len(k))
    if record.meta["rows"] == "distribution":
        np.testing.assert_allclose(rows.sum(-1), 1.0, atol=1e-5)
    elif record.meta["rows"] == "at most 1":
        assert np.all(rows.sum(-1) <= 1 + 1e-6) and np.all(rows >= 0)


@pytest.mark.parametrize(
    "mechanism_id, options",
    [
        ("gqa", {"num_heads": 6, "kv_heads": 3}),
        ("mha", {"num_heads": 3}),
        ("alibi", {"num_heads": 5}),
        ("sliding-window", {"sliding_window": 1}),
        ("local-global", {"num_layers": 4, "local_per_global": 1}),
        ("p-rope", {"rope_fraction": 0.25, "rope_base": 50.0}),
        ("sink", {"sink_logit": -2.0}),
        ("differential", {"diff_layer": 7}),
        ("online-softmax", {"block_size": 3}),
    ],
)
def test_variant_options_change_the_weights_as_the_oracle_says(mechanism_id, options):
    q, k, v, _ = _inputs(None)
    record = BY_ID[mechanism_id].build(options)
    np.testing.assert_allclose(
        record.weights, expected(mechanism_id, q, k, v, options).reshape(record.weights.shape), atol=2e-6
    )


def test_the_other_forms_agree_inside_the_records():
    mla = BY_ID["mla"].build({})
    np.testing.assert_allclose(mla.extras["absorbed_weights"], mla.weights, atol=1e-6)
    np.testing.assert_allclose(mla.extras["absorbed_context"], mla.extras["context"], atol=1e-6)
    assert (
        mla.extras["latent_cache"].shape == (5, 2)
        and mla.extras["kv_bytes_per_token"] < mla.extras["mha_kv_bytes_per_token"]
    )
    lin = BY_ID["linear"].build(OTHER)
    np.testing.assert_allclose(lin.extras["recurrent_context"], lin.extras["context"], atol=1e-5)
    flash = BY_ID["online-softmax"].build({"block_size": 2})
    assert flash.meta["naive_max_difference"] < 1e-6 and flash.meta["blocks"] == 3
    sink = BY_ID["sink"].build({})
    assert float(sink.extras["sink_weight"]) == pytest.approx(1 - sink.weights.sum(), abs=1e-6)


def test_hard_modes_apply_to_distributions_only():
    hard = BY_ID["gqa"].build({"mode": "argmax"})
    soft = BY_ID["gqa"].build({})
    np.testing.assert_array_equal(hard.weights.argmax(-1), soft.weights.argmax(-1))
    assert set(np.unique(hard.weights)) == {0.0, 1.0} and hard.meta["mode"] == "argmax"
    sampled = BY_ID["alibi"].build({"mode": "sample", "samples": 300, "seed": 2})
    assert sampled.extras["samples"].shape == (4, 1, 300)
    np.testing.assert_allclose(sampled.weights.sum(-1), 1.0, atol=1e-6)
    sigmoid = BY_ID["sigmoid"].build({"mode": "argmax"})
    assert sigmoid.meta["mode"] == "soft"  # a sigmoid row is not a distribution: no hard form


@pytest.mark.parametrize(
    "mechanism_id, options, message",
    [
        ("gqa", {"num_heads": 4, "kv_heads": 3}, "do not divide"),
        ("mha", {"num_heads": 9}, "num_heads must be a whole number from 1 to 8"),
        ("p-rope", {"rope_fraction": 1.5}, "rope_fraction"),
        ("sink", {"window": 3}, "does not take --window"),
        ("sigmoid", {"keys": "1,2,3; 4,5,6"}, "every key needs exactly 2 numbers"),
    ],
)
def test_bad_input_gets_one_line(mechanism_id, options, message):
    with pytest.raises(InputError, match=message):
        BY_ID[mechanism_id].build(options)


def test_stacked_rows_put_every_head_in_one_map():
    record = BY_ID["alibi"].build({"num_heads": 3})
    rows = stacked_rows(record)
    assert rows.axes == ("query", "key") and rows.query_labels == ("head 0", "head 1", "head 2")
    np.testing.assert_array_equal(rows.weights, record.weights[:, 0, :])
    single = BY_ID["sigmoid"].build({})
    assert stacked_rows(single) is single


def test_builder_fallbacks_are_the_declared_defaults():
    declared = {o.name: o.default for m in VARIANT_MECHANISMS for o in m.options}
    assert {name: declared[name] for name in DEFAULTS} == dict(DEFAULTS)

"""Head knock-out: no heads equals the plain forward, one head equals the same run done by hand on the
weights, the vmap sweep equals a loop of single knock-outs, and the options are checked on the server."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest
from flax import nnx

from models.capture import Capture, Interventions
from models.lm import knockout
from models.lm.forward import decoder, unembed, unembed_scores
from models.lm.knockout import (
    SweepTooLarge,
    knocked_runs,
    knockout_record_size,
    parse_heads,
    sweep_runs,
)
from models.lm.lens import residual_stream
from models.lm.model import pad_ids, run
from models.lm.records import shared_runner
from models.record import InputError
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
TEXT = "the lazy dog sleeps on the mat"


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def case(request):
    runner = shared_runner(str(FIXTURES / request.param))
    ids = runner.encode(TEXT).ids
    padded, mask = pad_ids(ids[None], runner.buckets)
    return runner, ids, padded[0], mask[0]


def plain(runner, ids, state=None):
    """Returns (softmax of the last position's logits [V], mean next-token loss) of the plain forward, in numpy."""
    state = runner.lm.state if state is None else state
    logits, _ = run(runner.lm.graphdef, state, ids[None], attention=False)
    last = logits[0, -1].astype(np.float64)
    probs = np.exp(last - last.max())
    log_probs = logits[0].astype(np.float64) - logits[0].max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    return probs / probs.sum(), -log_probs[np.arange(len(ids) - 1), ids[1:]].mean()


def by_hand(runner, ids, layer, head, mode):
    """The same knock-out done on the weights: the head's rows of the output projection set to 0; for "first",
    the output bias also gets the first token's value (the head's every row would copy it) times those rows."""
    cfg, state = runner.lm.config, jax.tree.map(np.array, runner.lm.state)
    hd, g = cfg.head_dim, cfg.queries_per_kv
    o = state["layers"][layer]["o"]
    rows = np.array(o["kernel"][...])
    cut = rows[head * hd:(head + 1) * hd].copy()
    rows[head * hd:(head + 1) * hd] = 0.0
    o["kernel"][...] = rows
    if mode == "first":
        padded, mask = pad_ids(ids[None], runner.buckets)
        x0 = np.asarray(residual_stream(runner.lm.state, padded, mask, graphdef=runner.lm.graphdef))[layer, 0, 0]
        p = state["layers"][layer]
        norm = p["attn_norm"]
        if "bias" in norm:
            centred = x0 - x0.mean()
            normed = centred / np.sqrt((centred**2).mean() + cfg.norm_eps) * norm["scale"][...] + norm["bias"][...]
        else:
            normed = x0 / np.sqrt((x0**2).mean() + cfg.norm_eps) * norm["scale"][...]
        value = normed @ p["v"]["kernel"][...] + (p["v"]["bias"][...] if "bias" in p["v"] else 0.0)
        kv = head // g
        o["bias"][...] = np.array(o["bias"][...]) + value[kv * hd:(kv + 1) * hd] @ cut
    return plain(runner, ids, state)


def test_knocking_out_no_heads_is_the_plain_forward(case):
    runner, ids, padded, mask = case
    cfg = runner.config
    probs, loss = plain(runner, ids)
    for mode in knockout.MODES:
        out = knocked_runs(runner.lm.state, padded, mask, np.ones((1, cfg.num_layers, cfg.num_heads), np.float32),
                           graphdef=runner.lm.graphdef, mode=mode)
        knocked_prob, knocked_loss, answer, plain_prob, plain_loss = (np.asarray(a) for a in out)
        assert int(answer) == probs.argmax()
        np.testing.assert_allclose([knocked_prob[0], plain_prob], probs.max(), atol=1e-6)
        np.testing.assert_allclose([knocked_loss[0], plain_loss], loss, atol=1e-5)


@pytest.mark.parametrize("mode", knockout.MODES)
def test_one_knock_out_is_the_same_run_done_by_hand(case, mode):
    runner, ids, padded, mask = case
    cfg = runner.config
    answer = plain(runner, ids)[0].argmax()
    keep = np.ones((2, cfg.num_layers, cfg.num_heads), np.float32)
    keep[0, 0, 1] = 0.0
    keep[1, cfg.num_layers - 1, cfg.num_heads - 1] = 0.0
    probs, losses, *_ = (np.asarray(a) for a in knocked_runs(runner.lm.state, padded, mask, keep,
                                                            graphdef=runner.lm.graphdef, mode=mode))
    for row, (layer, head) in enumerate([(0, 1), (cfg.num_layers - 1, cfg.num_heads - 1)]):
        expected_probs, expected_loss = by_hand(runner, ids, layer, head, mode)
        assert probs[row] == pytest.approx(expected_probs[answer], abs=1e-5)
        assert losses[row] == pytest.approx(expected_loss, abs=1e-4)
        assert abs(losses[row] - plain(runner, ids)[1]) > 1e-4  # the knock-out changed something


@pytest.mark.parametrize("mode", knockout.MODES)
def test_the_sweep_equals_a_loop_of_single_knock_outs(case, mode):
    runner, ids, padded, mask = case
    cfg = runner.config
    probs, losses, answer, plain_prob, plain_loss = (np.asarray(a) for a in sweep_runs(
        runner.lm.state, padded, mask, graphdef=runner.lm.graphdef, mode=mode))
    assert probs.shape == losses.shape == (cfg.num_layers, cfg.num_heads)
    for layer in range(cfg.num_layers):
        for head in range(cfg.num_heads):
            keep = np.ones((1, cfg.num_layers, cfg.num_heads), np.float32)
            keep[0, layer, head] = 0.0
            one_prob, one_loss, *_ = knocked_runs(runner.lm.state, padded, mask, keep, graphdef=runner.lm.graphdef,
                                                  mode=mode)
            assert probs[layer, head] == pytest.approx(float(one_prob[0]), abs=1e-5)
            assert losses[layer, head] == pytest.approx(float(one_loss[0]), abs=1e-5)


def test_the_read_out_unembeds_in_blocks_what_the_logits_give(case):
    # unembed_scores: a running logsumexp over vocabulary blocks (here 7 tokens, which leaves a shorter last
    # block) and the logits of the picked tokens, equal to the full logits' numbers
    runner, ids, padded, mask = case
    model = nnx.merge(runner.lm.graphdef, runner.lm.state)
    x = np.asarray(residual_stream(runner.lm.state, padded[None], mask[None], graphdef=runner.lm.graphdef))[-1, 0]
    assert runner.config.vocab_size % 7
    picks = np.stack([padded, np.roll(padded, 1)], axis=-1)
    lse, picked = (np.asarray(a) for a in unembed_scores(model, x, picks, block=7))
    logits = np.asarray(unembed(model, x), np.float64)
    top = logits.max(-1)
    np.testing.assert_allclose(lse, top + np.log(np.exp(logits - top[:, None]).sum(-1)), atol=2e-5)
    np.testing.assert_allclose(picked, np.take_along_axis(logits, picks, -1), atol=1e-5)


@pytest.mark.parametrize("mode", knockout.MODES)
def test_the_sweep_equals_a_loop_of_plain_forwards_with_one_head_knocked_out(case, mode):
    # Each head alone through the one forward (decoder) with a head mask, its logits read in numpy: the sweep
    # (which starts each layer's runs from the plain stream and patches the head in) computes the same numbers.
    runner, ids, padded, mask = case
    cfg = runner.config
    model = nnx.merge(runner.lm.graphdef, runner.lm.state)
    probs, losses, answer, *_ = (np.asarray(a) for a in sweep_runs(runner.lm.state, padded, mask,
                                                                    graphdef=runner.lm.graphdef, mode=mode))
    t = len(ids)
    for layer in range(cfg.num_layers):
        for head in range(cfg.num_heads):
            keep = np.ones((cfg.num_layers, cfg.num_heads), np.float32)
            keep[layer, head] = 0.0
            out = decoder(model, padded[None], key_mask=mask[None], capture=Capture(logits=True),
                          interventions=Interventions(head_keep=keep, head_mode=mode))
            logits = np.asarray(out["logits"][0, :t], np.float64)
            log_probs = logits - logits.max(-1, keepdims=True)
            log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
            assert probs[layer, head] == pytest.approx(np.exp(log_probs[-1, answer]), abs=1e-5)
            assert losses[layer, head] == pytest.approx(-log_probs[np.arange(t - 1), ids[1:]].mean(), abs=1e-5)


def test_records_of_chosen_heads_and_of_the_sweep():
    folder = str(FIXTURES / "gpt2")
    chosen = get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": folder, "heads": "1.3, 0.1,0.1", "mode": "zero"})
    assert chosen.mechanism == "lm-knockout" and chosen.axes == ("knockout",)
    assert chosen.key_labels == ("L1H3", "L0H1", "all chosen") and chosen.meta["mode"] == "zero"
    assert chosen.extras["loss_change"].shape == (3,) and not chosen.meta["sweep"]
    swept = get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": folder, "heads": "0.1", "sweep": "yes"})
    assert swept.axes == ("layer", "head") and swept.weights.shape == (2, 4)
    assert swept.weights[0, 1] == pytest.approx(chosen.weights[1], abs=1e-6)
    assert swept.extras["loss_change"][1, 3] == pytest.approx(chosen.extras["loss_change"][0], abs=1e-5)
    np.testing.assert_allclose(swept.weights, swept.extras["knocked_prob"] - swept.meta["plain_prob"], atol=1e-6)
    assert get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": folder}).axes == ("layer", "head")  # no heads: the sweep
    size = knockout_record_size(None, {"text": TEXT, "model_dir": folder, "sweep": "yes"})
    assert size > swept.weights.nbytes


@pytest.mark.parametrize("options, words", [({"heads": "2.0"}, "heads"), ({"heads": "0-1"}, "heads"),
                                            ({"heads": "a.b"}, "heads"), ({"mode": "mean"}, "mode"),
                                            ({"sweep": "maybe"}, "sweep"), ({"text": ""}, "type some text")])
def test_bad_options_get_one_line(options, words):
    # The registry reads the options (mode, sweep), the builder what depends on the model (the heads).
    with pytest.raises(InputError, match=words) as error:
        get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": str(FIXTURES / "gpt2"), **options})
    assert "\n" not in str(error.value)


def test_a_sweep_above_the_operators_bound_asks_first(monkeypatch):
    monkeypatch.setenv(knockout.SWEEP_ENV, "10")
    with pytest.raises(SweepTooLarge, match="ask before running it") as error:
        get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": str(FIXTURES / "gpt2"), "sweep": "yes"})
    assert "\n" not in str(error.value) and isinstance(error.value, InputError)
    assert parse_heads("0.1", 2, 4) == ((0, 1),)  # chosen heads alone are not bounded by the sweep's size
    get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": str(FIXTURES / "gpt2"), "heads": "0.1"})


def test_the_knock_out_figures_centre_at_zero():
    from viz.lm_lens import knockout_bars, knockout_grid

    record = get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": str(FIXTURES / "gpt2"), "heads": "0.1,1.2",
                                    "sweep": "yes", "mode": "first"})
    fig = knockout_grid(record)
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z, np.float64), record.weights, atol=1e-7)
    assert heat.zmid == 0 and heat.zmin == -heat.zmax and heat.zmax == pytest.approx(np.abs(record.weights).max())
    assert "attention put on the first token" in fig.layout.title.text
    bars = knockout_bars(record)
    assert list(bars.data[0].x) == ["L0H1", "L1H2", "all chosen"]
    np.testing.assert_allclose(bars.data[1].y, record.meta["loss_change"])

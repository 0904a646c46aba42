"""The induction model's views are the decoder LMs' one forward (models/lm/forward.py) and agree: the record's maps,
its head scores and the page's prediction table are what the forward captures; the training loss reads the same
logits; the residual stream's last row unembeds to the logits; knocking out no heads is the plain forward, the
"first" knock-out is an attention override onto the first token, and without layer 1's heads (or layer 0's) the
committed model no longer copies."""

from __future__ import annotations

import numpy as np
import pytest
from flax import nnx

from models.capture import Capture, Interventions
from models.induction import model as m
from models.induction import quality, task
from models.induction.records import load_model, prediction_rows
from models.lm.forward import unembed
from models.registry import get_mechanism

EVERYTHING = Capture(maps=True, heads=True, residual=True)


@pytest.fixture(scope="module")
def committed():
    return load_model()[1:3]  # (graphdef, params)


@pytest.fixture(scope="module")
def repeats():
    """Returns (tokens [64, 63] of [BOS] + r + r, their targets: the second copy after its first token)."""
    return task.repeated_batch(quality.HELD_OUT_SEED, 64, quality.HALF), quality.repeat_targets(64, quality.HALF)


def test_the_record_its_scores_and_the_prediction_table_are_the_forward(committed):
    graphdef, params = committed
    record = get_mechanism("induction").build({"text": "e cat w sky n bee h jam t map r car e cat w sky n bee h jam"})
    ids = record.extras["tokens"]
    out = m.run(graphdef, params, m.pad_tokens([ids]))
    t = len(ids)
    maps = np.stack(out["maps"], 1)[:1, :, :, :t, :t]
    logits = np.asarray(out["logits"])[0, :t]
    np.testing.assert_allclose(record.weights, maps[0], atol=1e-6)
    np.testing.assert_array_equal(record.extras["predicted"], logits.argmax(-1))
    for title, scores in quality.head_scores(maps, ids[None]).items():
        np.testing.assert_allclose(record.meta["scores"][quality.SCORE_TITLES[title]], scores, atol=1e-5)
    layer, head = record.meta["induction_head"]
    rows = prediction_rows(record)
    assert [r["predicted next"] for r in rows] == [task.VOCAB[i] for i in logits.argmax(-1)]
    assert [int(r["induction head reads"].split(":")[0]) for r in rows] == maps[0, layer, head].argmax(-1).tolist()


def test_the_training_loss_and_the_residual_stream_read_the_forward_logits(committed, repeats):
    graphdef, params = committed
    tokens = repeats[0][:8]
    out = m.run(graphdef, params, tokens, capture=EVERYTHING)
    model = nnx.merge(graphdef, params)
    np.testing.assert_allclose(m.training_logits(model, tokens), out["logits"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(unembed(m.decoder_view(model), out["residual"][-1]), out["logits"], rtol=1e-5, atol=1e-5)
    # No MLP: each block adds exactly its heads' outputs, projected (models/induction/model.py's formula).
    for layer, heads in enumerate(out["heads"]):
        w_o = np.asarray(model.layers[layer].w_o[...])  # [H, d, D]
        added = np.einsum("bhtd,hdm->btm", np.asarray(heads), w_o)
        np.testing.assert_allclose(out["residual"][layer + 1] - out["residual"][layer], added, atol=1e-4)


@pytest.mark.parametrize("mode", ["zero", "first"])
def test_knocking_out_no_heads_is_the_plain_forward(committed, repeats, mode):
    graphdef, params = committed
    tokens = repeats[0][:8]
    plain = m.run(graphdef, params, tokens, capture=EVERYTHING)
    kept = m.run(graphdef, params, tokens, capture=EVERYTHING,
                 interventions=Interventions(head_keep=np.ones((2, 4), np.float32), head_mode=mode))
    for name in ("logits", "maps", "heads", "residual"):
        np.testing.assert_array_equal(np.asarray(kept[name]), np.asarray(plain[name]))


def test_the_first_token_knock_out_is_an_override_onto_the_first_token(committed, repeats):
    graphdef, params = committed
    tokens = repeats[0][:8]
    keep = np.ones((2, 4), np.float32)
    keep[1, 3] = 0.0
    knocked = m.run(graphdef, params, tokens, interventions=Interventions(head_keep=keep, head_mode="first"))
    maps = np.stack(m.run(graphdef, params, tokens)["maps"])  # [L, B, H, T, T]
    override = maps[1].copy()
    override[:, 3] = 0.0
    override[:, 3, :, 0] = 1.0
    overridden = m.run(graphdef, params, tokens, interventions=Interventions(attention={1: override}))
    np.testing.assert_allclose(knocked["logits"], overridden["logits"], atol=1e-5)


@pytest.mark.parametrize("layer", [0, 1])
def test_without_one_layers_heads_the_model_stops_copying(committed, repeats, layer):
    # The induction circuit needs both layers: layer 0's previous-token heads, layer 1's induction heads.
    graphdef, params = committed
    tokens, targets = repeats
    plain = quality.copy_accuracy(np.asarray(m.run(graphdef, params, tokens)["logits"]), tokens, targets)
    keep = np.ones((2, 4), np.float32)
    keep[layer] = 0.0
    out = m.run(graphdef, params, tokens, interventions=Interventions(head_keep=keep))
    assert plain > 0.95 and quality.copy_accuracy(np.asarray(out["logits"]), tokens, targets) < 0.1
